//! The per-interval series as CSV: one row per interval and operation kind of its phase,
//! with a header row. An operation with nothing in an interval gets a row of zeros, so
//! every phase forms a regular grid; latency cells are empty when no operation
//! succeeded. docs/RESULTS.md lists the columns.

use std::io::{self, Write};

use super::phase_operations;
use crate::results::{IntervalOperation, RunResult};

/// The columns, in order; later ones are added at the end, so that readers by position
/// keep working.
pub const COLUMNS: [&str; 18] = [
    "phase",
    "end_ms",
    "elapsed_seconds",
    "operation",
    "succeeded",
    "failed",
    "timeouts",
    "throughput",
    "p50_ms",
    "p99_ms",
    "cpu",
    "late",
    "rate_limited",
    "retried_429",
    "disk_file_bytes",
    "disk_active_bytes",
    "disk_external_bytes",
    "disk_doc_count",
];

/// A size the server gave, or an empty cell when it did not (never 0).
fn known(value: Option<u64>) -> String {
    value.map_or(String::new(), |v| v.to_string())
}

fn decimal(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        String::new()
    }
}

/// Writes the series of every phase.
pub fn write(result: &RunResult, out: &mut impl Write) -> io::Result<()> {
    let mut writer = ::csv::Writer::from_writer(out);
    writer.write_record(COLUMNS)?;
    for phase in &result.phases {
        let operations = phase_operations(phase);
        for interval in &phase.intervals {
            let disk = interval.disk.as_ref();
            for &name in &operations {
                let found = interval.operations.iter().find(|o| o.operation == name);
                let none = IntervalOperation {
                    operation: name.to_string(),
                    succeeded: 0,
                    failed: 0,
                    timeouts: 0,
                    rate_limited: 0,
                    retried_429: 0,
                    documents: None,
                    throughput: 0.0,
                    p50_ms: 0.0,
                    p99_ms: 0.0,
                    histogram: String::new(),
                };
                let op = found.unwrap_or(&none);
                let latency = |ms: f64| {
                    if op.succeeded == 0 {
                        String::new()
                    } else {
                        decimal(ms, 3)
                    }
                };
                writer.write_record([
                    phase.name.clone(),
                    interval.end_ms.to_string(),
                    decimal(interval.elapsed_seconds, 3),
                    name.to_string(),
                    op.succeeded.to_string(),
                    op.failed.to_string(),
                    op.timeouts.to_string(),
                    decimal(op.throughput, 3),
                    latency(op.p50_ms),
                    latency(op.p99_ms),
                    decimal(interval.cpu, 4),
                    interval.late.to_string(),
                    op.rate_limited.to_string(),
                    op.retried_429.to_string(),
                    known(disk.and_then(|d| d.file)),
                    known(disk.and_then(|d| d.active)),
                    known(disk.and_then(|d| d.external)),
                    known(disk.and_then(|d| d.doc_count)),
                ])?;
            }
        }
    }
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_interval_and_operation() {
        let mut out = Vec::new();
        write(&super::super::sample::result(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            &lines[1..],
            [
                "crud,1700000001000,1.000,create,0,0,0,0.000,,,0.2500,1,0,0,,,,",
                "crud,1700000001000,1.000,read,4,0,0,4.000,1.000,25.007,0.2500,1,0,0,,,,",
                "crud,1700000002000,2.000,create,3,0,0,3.000,3.001,4.001,0.2500,1,0,0,48000,,,3",
                "crud,1700000002000,2.000,read,2,1,0,2.000,0.800,1.200,0.2500,1,1,3,48000,,,3",
            ]
        );
    }
}
