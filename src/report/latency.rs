//! The latency table under each result block, from the merged HdrHistograms.

use std::fmt::Write as _;

use super::numbers::grouped;
use crate::metrics::{ConnectionMetrics, OperationMetrics};
use crate::workload::Operation;

/// The operations of a step merged over its connections, in [`Operation::ALL`] order,
/// leaving out kinds the step never attempted.
pub fn merged(connections: &[ConnectionMetrics]) -> Vec<(Operation, OperationMetrics)> {
    Operation::ALL
        .into_iter()
        .filter_map(|op| {
            let mut total = OperationMetrics::default();
            for c in connections {
                total.merge(c.of(op));
            }
            (total.succeeded + total.failures.total() > 0).then_some((op, total))
        })
        .collect()
}

fn ms(microseconds: f64) -> String {
    format!("{:.3}", microseconds / 1_000.0)
}

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
pub fn table(connections: &[ConnectionMetrics], which: Latency) -> String {
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
    for (op, metrics) in merged(connections) {
        let h = match which {
            Latency::Service => &metrics.latency,
            Latency::Response => &metrics.response,
        };
        let at = |q: f64| {
            if h.is_empty() {
                "-".to_string()
            } else {
                ms(h.value_at_quantile(q) as f64)
            }
        };
        let mean = if h.is_empty() {
            "-".to_string()
        } else {
            ms(h.mean())
        };
        let max = if h.is_empty() {
            "-".to_string()
        } else {
            ms(h.max() as f64)
        };
        let _ = writeln!(
            out,
            "  {:<12} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            op.name(),
            grouped(metrics.succeeded),
            grouped(metrics.failures.total()),
            mean,
            at(0.5),
            at(0.9),
            at(0.99),
            at(0.999),
            max
        );
    }
    out
}

/// One line per operation that had failures, by kind: `read: 404 x2, timeout x1`.
pub fn failures(connections: &[ConnectionMetrics]) -> String {
    let mut out = String::new();
    for (op, metrics) in merged(connections) {
        let sorted = metrics.failures.sorted();
        if sorted.is_empty() {
            continue;
        }
        let parts: Vec<String> = sorted
            .iter()
            .map(|(failure, n)| format!("{failure} x{}", grouped(*n)))
            .collect();
        let _ = writeln!(out, "  failed {}: {}", op.name(), parts.join(", "));
    }
    out
}
