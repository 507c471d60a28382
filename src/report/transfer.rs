//! What each operation kind carried: bytes of request and answer bodies, and for queries
//! the rows their answers held, so that "p99 of a 100-row `_find`" has its row count.

use std::fmt::Write;

use super::numbers::{grouped, grouped_decimal};
use crate::results::{OperationResult, PhaseResult};

/// One line per operation kind: bytes sent and received in all and per answered
/// operation, and rows (queries). Empty for a result that kept no bytes.
pub fn table(phase: &PhaseResult) -> String {
    let mut out = String::new();
    let carried = |op: &OperationResult| op.bytes_sent + op.bytes_received > 0 || op.rows.is_some();
    if !phase.operations.iter().any(carried) {
        return out;
    }
    let w = super::name_width(phase);
    let _ = writeln!(
        out,
        "  {:<w$} {:>14} {:>14} {:>12} {:>12} {:>12} {:>10}",
        "bytes", "sent", "received", "sent/op", "recv/op", "rows", "rows/op"
    );
    for op in phase.operations.iter().filter(|op| carried(op)) {
        let answered = op.succeeded + op.failed;
        let per = |n: u64| match answered {
            0 => "-".to_string(),
            _ => grouped_decimal(n as f64 / answered as f64, 0),
        };
        let (rows, rows_per) = match op.rows {
            Some(rows) if op.succeeded > 0 => (
                grouped(rows),
                grouped_decimal(rows as f64 / op.succeeded as f64, 1),
            ),
            Some(rows) => (grouped(rows), "-".to_string()),
            None => ("-".to_string(), "-".to_string()),
        };
        let _ = writeln!(
            out,
            "  {:<w$} {:>14} {:>14} {:>12} {:>12} {:>12} {:>10}",
            op.operation,
            grouped(op.bytes_sent),
            grouped(op.bytes_received),
            per(op.bytes_sent),
            per(op.bytes_received),
            rows,
            rows_per
        );
    }
    out
}

/// A line per query whose rows were checked against the seed's documents: how many
/// answers held another number of rows than they should (said by default, the bytes
/// with `-v`: a wrong answer is a finding, not a detail).
pub fn row_checks(phase: &PhaseResult) -> String {
    let mut out = String::new();
    for op in &phase.operations {
        if let Some(check) = &op.row_check {
            let verdict = match check.wrong {
                0 => "all as expected".to_string(),
                wrong => format!("{} WRONG", grouped(wrong)),
            };
            let _ = writeln!(
                out,
                "  rows checked against the seed's documents: {} {} answers, {verdict} \
                 ({} rows expected in all)",
                op.operation,
                grouped(check.answers),
                grouped(check.expected_rows)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(operations: Vec<OperationResult>) -> PhaseResult {
        PhaseResult::of_operations("p", 1.0, operations)
    }

    #[test]
    fn shows_bytes_per_operation_and_rows_for_queries() {
        let read = OperationResult {
            operation: "read".to_string(),
            succeeded: 4,
            bytes_sent: 0,
            bytes_received: 4_000,
            ..OperationResult::unmeasured()
        };
        let find = OperationResult {
            operation: "find".to_string(),
            succeeded: 2,
            bytes_sent: 200,
            bytes_received: 10_000,
            rows: Some(50),
            ..OperationResult::unmeasured()
        };
        let text = table(&phase(vec![read, find]));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[1].contains("4,000") && lines[1].contains("1,000"),
            "{text}"
        );
        assert!(lines[1].trim_end().ends_with('-'), "{text}");
        assert!(
            lines[2].contains("25.0") && lines[2].contains("5,000"),
            "{text}"
        );
    }

    #[test]
    fn a_row_check_says_how_many_answers_were_wrong() {
        let find = |wrong| OperationResult {
            operation: "find".to_string(),
            succeeded: 40,
            bytes_received: 10_000,
            rows: Some(1_000),
            row_check: Some(crate::results::RowCheck {
                answers: 40,
                wrong,
                expected_rows: 1_003,
            }),
            ..OperationResult::unmeasured()
        };
        let text = row_checks(&phase(vec![find(0)]));
        assert!(
            text.lines().last().unwrap().ends_with(
                "rows checked against the seed's documents: find 40 answers, all as expected \
                 (1,003 rows expected in all)"
            ),
            "{text}"
        );
        let text = row_checks(&phase(vec![find(3)]));
        assert!(text.contains("find 40 answers, 3 WRONG (1,003"), "{text}");
    }

    #[test]
    fn says_nothing_for_a_result_without_bytes() {
        let old = OperationResult {
            operation: "read".to_string(),
            succeeded: 4,
            ..OperationResult::unmeasured()
        };
        assert_eq!(table(&phase(vec![old])), "");
    }
}
