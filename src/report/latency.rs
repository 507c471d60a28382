//! The latency table under each result block.

use std::fmt::Write as _;

use super::numbers::grouped;
use crate::results::{Latency as Figures, OperationResult, PhaseResult};

/// Which latency a table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    /// From the request's first byte out to the answer's last byte in.
    Service,
    /// From the operation's scheduled start (open model) to the answer's last byte.
    Response,
}

/// The table: per operation, successful count, failures, and latency percentiles in
/// milliseconds (of successful operations).
pub fn table(phase: &PhaseResult, which: Latency) -> String {
    let mut out = String::new();
    let title = match which {
        Latency::Service => "latency(ms)",
        Latency::Response => "response(ms)",
    };
    let _ = writeln!(
        out,
        "  {:<12} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        title, "count", "errors", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    for op in &phase.operations {
        let l: &Figures = match which {
            Latency::Service => &op.latency,
            Latency::Response => &op.response,
        };
        let show = |v: f64| {
            if l.count == 0 {
                "-".to_string()
            } else {
                format!("{v:.3}")
            }
        };
        let _ = writeln!(
            out,
            "  {:<12} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            op.operation,
            grouped(op.succeeded),
            grouped(op.failed),
            show(l.mean_ms),
            show(l.p50_ms),
            show(l.p90_ms),
            show(l.p99_ms),
            show(l.p999_ms),
            show(l.max_ms)
        );
    }
    out
}

/// The failures of `op` whose kind is (or is not) a document's, most frequent first.
fn failure_counts(op: &OperationResult, of_documents: bool) -> Vec<String> {
    let mut sorted: Vec<(&String, &u64)> = op
        .failures
        .iter()
        .filter(|(kind, _)| kind.starts_with("doc:") == of_documents)
        .collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted
        .iter()
        .map(|(failure, n)| format!("{failure} x{}", grouped(**n)))
        .collect()
}

/// One line per operation that had failures, by kind: `failed read: 404 x2, timeout x1`.
/// A bulk insert's documents refused one by one (`doc:*`) count documents, not requests:
/// they get their own line, `failed bulk_insert documents: doc:conflict x15`.
pub fn failures(phase: &PhaseResult) -> String {
    let mut out = String::new();
    for op in &phase.operations {
        if op.failures.is_empty() {
            continue;
        }
        let operations = failure_counts(op, false);
        if !operations.is_empty() {
            let _ = writeln!(out, "  failed {}: {}", op.operation, operations.join(", "));
        }
        let documents = failure_counts(op, true);
        if !documents.is_empty() {
            let _ = writeln!(
                out,
                "  failed {} documents: {}",
                op.operation,
                documents.join(", ")
            );
        }
        for (failure, examples) in &op.failure_samples {
            for example in examples {
                let _ = writeln!(out, "    e.g. {failure}: {example}");
            }
        }
    }
    out
}
