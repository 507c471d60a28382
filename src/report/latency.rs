//! The latency table under each result block.

use std::fmt::Write as _;

use super::numbers::grouped;
use crate::metrics::Failure;
use crate::metrics::errors::label;
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
    let w = super::name_width(phase);
    let title = match which {
        Latency::Service => "latency(ms)",
        Latency::Response => "response(ms)",
    };
    let _ = writeln!(
        out,
        "  {:<w$} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        title, "count", "errors", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    for op in &phase.operations {
        let l: &Figures = match which {
            Latency::Service => &op.latency,
            Latency::Response => &op.response,
        };
        let show = |v: f64| milliseconds(l, v);
        let _ = writeln!(
            out,
            "  {:<w$} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
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

/// The failures of `op` whose kind counts documents (or operations), most frequent first.
fn failure_counts(op: &OperationResult, of_documents: bool) -> Vec<String> {
    let counts_documents =
        |kind: &str| Failure::named(kind).is_some_and(|failure| failure.counts_documents());
    let mut sorted: Vec<(&String, &u64)> = op
        .failures
        .iter()
        .filter(|(kind, _)| counts_documents(kind) == of_documents)
        .collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted
        .iter()
        .map(|(failure, n)| format!("{} x{}", label(failure), grouped(**n)))
        .collect()
}

/// One line per operation that had failures, by kind: `failed read: 404 x2, timeout x1`.
/// A bulk insert's documents refused one by one (`doc:*`) count documents, not requests:
/// they get their own line, `failed bulk_insert documents: doc:conflict x15`. Under
/// them: examples of what the server said and how long the failures took (and what
/// 429s said, retried ones too).
pub fn failures(phase: &PhaseResult) -> String {
    let mut out = String::new();
    for op in &phase.operations {
        accounting_lines(op, &mut out);
        if !op.failures.is_empty() {
            failure_lines(op, &mut out);
        }
        for (failure, examples) in &op.failure_samples {
            for example in examples {
                let _ = writeln!(out, "    e.g. {}: {example}", label(failure));
            }
        }
    }
    out
}

/// The failures of one operation, by kind, and how long they took.
fn failure_lines(op: &OperationResult, out: &mut String) {
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
    if let Some(l) = &op.failed_latency {
        let _ = writeln!(
            out,
            "    the failures took (ms): p50 {:.3}, p99 {:.3}, max {:.3}",
            l.p50_ms, l.p99_ms, l.max_ms
        );
    }
}

/// Operations that were not simply done or failed: resent, sent again after a 429, with
/// an unknown outcome, or never run.
fn accounting_lines(op: &crate::results::OperationResult, out: &mut String) {
    let name = &op.operation;
    if op.resends > 0 {
        let _ = writeln!(
            out,
            "  resent {name}: {} (sent again after the connection closed before any answer; their time counts in full)",
            grouped(op.resends)
        );
    }
    if op.retried_429 > 0 || op.retry_429_wait_ns > 0 {
        let _ = writeln!(
            out,
            "  retried {name}: {} after a 429 (rate limited); {:.3} s waiting to send again (--retry-429; the waits count in the operations' latency)",
            grouped(op.retried_429),
            op.retry_429_wait_ns as f64 / 1e9
        );
    }
    if let Some(hot) = &op.hot {
        hot_line(name, hot, out);
    }
    if let Some(existing) = &op.existing {
        existing_line(op, existing, out);
    }
    if op.unknown_outcomes > 0 {
        let _ = writeln!(
            out,
            "  unknown {name}: {} documents (the answer was lost after the request went out, or could not be paired with them: they may or may not be in the database)",
            grouped(op.unknown_outcomes)
        );
    }
    if op.not_run > 0 {
        let _ = writeln!(
            out,
            "  not run {name}: {} planned operations (their connection stopped early: see why below)",
            grouped(op.not_run)
        );
    }
}

/// Operations on existing data: what they found, what was missing, the 409s of writes
/// that met another revision and the revisions fetched; none of it failed.
fn existing_line(
    op: &crate::results::OperationResult,
    existing: &crate::metrics::ExistingCounts,
    out: &mut String,
) {
    let found = existing.found(op.succeeded);
    let mut parts = vec![
        format!("{} found", grouped(found)),
        format!("{} missing (404)", grouped(existing.misses)),
    ];
    if op.operation != "read" {
        parts.push(format!("{} conflicts (409)", grouped(existing.conflicts)));
        parts.push(format!(
            "{} revisions fetched first",
            grouped(existing.fetches)
        ));
    }
    let _ = writeln!(
        out,
        "  existing {}: {} (not failures)",
        op.operation,
        parts.join(", ")
    );
}

/// Updates of hot documents: their 409s (expected, not failures), the revisions fetched
/// and how many PUTs each update took.
fn hot_line(name: &str, hot: &crate::results::HotResult, out: &mut String) {
    let _ = writeln!(
        out,
        "  hot {name}: {} PUTs, 409 ×{} ({:.1} % of PUTs, each followed by a fetch of the current revision and another PUT), {} fetches; succeeded at attempt {}; gave up after {} PUTs: {}",
        grouped(hot.attempts),
        grouped(hot.conflicts),
        hot.conflict_rate * 100.0,
        grouped(hot.fetches),
        hot.attempts_text(),
        crate::metrics::hot::MOST_ATTEMPTS,
        grouped(hot.gave_up)
    );
}

/// Per node of the target, when it has several: what each answered and how fast, so a
/// slow or dead node stands out.
pub fn target_nodes(phase: &PhaseResult) -> String {
    let mut out = String::new();
    if phase.target_nodes.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "  {:<28} {:>10} {:>8} {:>9} {:>9} {:>9}",
        "node", "answered", "failed", "p50", "p99", "max"
    );
    for node in &phase.target_nodes {
        let l = &node.latency;
        let show = |v: f64| milliseconds(l, v);
        let _ = writeln!(
            out,
            "  {:<28} {:>10} {:>8} {:>9} {:>9} {:>9}",
            node.address,
            grouped(node.answered),
            grouped(node.failed),
            show(l.p50_ms),
            show(l.p99_ms),
            show(l.max_ms)
        );
    }
    out
}

/// A figure of `l` in milliseconds, or `-` when `l` holds no values.
fn milliseconds(l: &Figures, value: f64) -> String {
    if l.count == 0 {
        "-".to_string()
    } else {
        format!("{value:.3}")
    }
}
