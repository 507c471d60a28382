//! What a phase achieved, first in its report: operations per second over the phase's
//! wall-clock time, per operation and in total, and a bulk insert's documents per second.
//!
//! Iron Cushion's `remote*ProcessingRate` fields that follow divide by the time spent
//! waiting for the server only, so they can be many times the rate the database actually
//! served; this table is that rate.
//!
//! ```text
//!   achieved in 6.779 secs          per sec   succeeded     errors  error rate
//!   bulk_insert documents          14,752.3     100,000          0      0.000%
//!   bulk_insert requests               14.8         100          0      0.000%
//! ```

use std::fmt::Write as _;

use super::numbers::{grouped, grouped_decimal};
use crate::results::{OperationResult, PhaseResult, per_second};
use crate::workload::Operation;

/// `failed` of `succeeded + failed` as a percentage, `-` when there were none.
fn error_rate(succeeded: u64, failed: u64) -> String {
    let total = succeeded + failed;
    if total == 0 {
        "-".to_string()
    } else {
        format!("{:.3}%", failed as f64 * 100.0 / total as f64)
    }
}

fn row(out: &mut String, label: &str, succeeded: u64, failed: u64, seconds: f64) {
    let _ = writeln!(
        out,
        "  {:<26} {:>12} {:>11} {:>10} {:>11}",
        label,
        grouped_decimal(per_second(succeeded, seconds), 1),
        grouped(succeeded),
        grouped(failed),
        error_rate(succeeded, failed)
    );
}

fn is_bulk(op: &OperationResult) -> bool {
    op.operation == Operation::BulkInsert.name()
}

/// The table for one phase: a row per operation (a bulk insert has a row for its
/// documents above the one for its requests), and the total when there are several
/// operations. Counts are of operations (requests) unless the row says documents.
pub fn table(phase: &PhaseResult) -> String {
    let seconds = phase.wall_seconds;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<26} {:>12} {:>11} {:>10} {:>11}",
        format!("achieved in {seconds:.3} secs"),
        "per sec",
        "succeeded",
        "errors",
        "error rate"
    );
    for op in &phase.operations {
        if is_bulk(op) {
            let name = &op.operation;
            row(
                &mut out,
                &format!("{name} documents"),
                op.documents,
                op.documents_failed,
                seconds,
            );
            row(
                &mut out,
                &format!("{name} requests"),
                op.succeeded,
                op.failed,
                seconds,
            );
        } else {
            row(&mut out, &op.operation, op.succeeded, op.failed, seconds);
        }
    }
    if phase.operations.len() > 1 {
        let succeeded = phase.operations.iter().map(|o| o.succeeded).sum();
        let failed = phase.operations.iter().map(|o| o.failed).sum();
        row(&mut out, "all operations", succeeded, failed, seconds);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::Latency;

    fn op(
        name: &str,
        succeeded: u64,
        failed: u64,
        documents: u64,
        documents_failed: u64,
    ) -> OperationResult {
        let none = Latency {
            count: 0,
            mean_ms: 0.0,
            p50_ms: 0.0,
            p90_ms: 0.0,
            p99_ms: 0.0,
            p999_ms: 0.0,
            max_ms: 0.0,
            histogram: String::new(),
        };
        OperationResult {
            operation: name.to_string(),
            succeeded,
            failed,
            documents,
            documents_failed,
            throughput: 0.0,
            documents_per_sec: 0.0,
            failures: BTreeMap::new(),
            failure_samples: BTreeMap::new(),
            statuses: BTreeMap::new(),
            latency: none.clone(),
            response: none,
            failed_latency: None,
            resends: 0,
            retried_429: 0,
            retry_429_wait_ns: 0,
            unknown_outcomes: 0,
            not_run: 0,
            bytes_sent: 0,
            bytes_received: 0,
            rows: None,
            rows_per_sec: None,
            hot: None,
            existing: None,
            row_check: None,
        }
    }

    fn phase(wall_seconds: f64, operations: Vec<OperationResult>) -> PhaseResult {
        PhaseResult::of_operations("p", wall_seconds, operations)
    }

    fn cells(text: &str, label: &str) -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label}:\n{text}"));
        line[2 + 26..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_bulk_insert_shows_documents_and_requests_apart() {
        // 10 requests of 100 documents in 2 s; one had 15 documents refused, and 2 more
        // requests failed as a whole.
        let text = table(&phase(2.0, vec![op("bulk_insert", 10, 2, 985, 215)]));
        assert!(text.starts_with("  achieved in 2.000 secs"), "{text}");
        assert_eq!(
            cells(&text, "bulk_insert documents"),
            ["492.5", "985", "215", "17.917%"]
        );
        assert_eq!(
            cells(&text, "bulk_insert requests"),
            ["5.0", "10", "2", "16.667%"]
        );
        assert!(!text.contains("all operations"), "{text}");
    }

    #[test]
    fn several_operations_add_up_to_a_total() {
        let text = table(&phase(
            4.0,
            vec![
                op("create", 2_000, 0, 2_000, 0),
                op("read", 1_999, 1, 1_999, 1),
            ],
        ));
        assert_eq!(cells(&text, "create"), ["500.0", "2,000", "0", "0.000%"]);
        assert_eq!(cells(&text, "read"), ["499.8", "1,999", "1", "0.050%"]);
        assert_eq!(
            cells(&text, "all operations"),
            ["999.8", "3,999", "1", "0.025%"]
        );
        // A report says "failed" only where something failed: users and tests look for it.
        assert!(!text.contains("failed"), "{text}");
        let nothing = table(&phase(0.0, vec![op("read", 0, 0, 0, 0)]));
        assert_eq!(cells(&nothing, "read"), ["0.0", "0", "0", "-"]);
    }
}
