//! The reference benchmarks' own result forms, printed after the standard report.

use std::fmt::Write as _;

use crate::report::numbers::grouped;
use crate::results::PhaseResult;

fn count(
    phase: &PhaseResult,
    operation: &str,
    f: impl Fn(&crate::results::OperationResult) -> u64,
) -> u64 {
    phase
        .operations
        .iter()
        .filter(|o| o.operation == operation)
        .map(f)
        .sum()
}

fn per_second(n: u64, seconds: f64) -> u64 {
    if seconds > 0.0 {
        (n as f64 / seconds).round() as u64
    } else {
        0
    }
}

/// titan-loadtest's line per phase, tab-separated: phase, duration (s), writes, write
/// rate, reads, read rate, read hits (reads that found their document).
pub fn titan(phases: &[PhaseResult]) -> String {
    let mut out = String::new();
    for p in phases {
        let writes = count(p, "create", |o| o.succeeded) + count(p, "bulk_insert", |o| o.documents);
        let reads = count(p, "read", |o| o.succeeded + o.failed);
        // A read of existing data that found nothing succeeded, but is no hit.
        let hits = count(p, "read", |o| {
            o.succeeded
                .saturating_sub(o.existing.as_ref().map_or(0, |e| e.misses))
        });
        // Plain numbers: the lines are pasted into spreadsheets, which read `1,059` as text.
        let _ = writeln!(
            out,
            "{}\t{:.3}\t{}\t{}\t{}\t{}\t{}",
            p.name,
            p.wall_seconds,
            writes,
            per_second(writes, p.wall_seconds),
            reads,
            per_second(reads, p.wall_seconds),
            hits
        );
    }
    out
}

/// couchbase-tests' table: per count, read and write durations (ms) and operations per
/// second, and the weighted average (all operations over all time).
pub fn scaling(phases: &[PhaseResult]) -> String {
    let mut rows: Vec<(String, Option<&PhaseResult>, Option<&PhaseResult>)> = Vec::new();
    for p in phases {
        let (kind, n) = p.name.split_once('_').unwrap_or((p.name.as_str(), ""));
        let slot = match rows.iter_mut().find(|r| r.0 == n) {
            Some(row) => row,
            None => {
                rows.push((n.to_string(), None, None));
                rows.last_mut().expect("just pushed")
            }
        };
        match kind {
            "read" => slot.1 = Some(p),
            _ => slot.2 = Some(p),
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>10} {:>14} {:>14} {:>14} {:>14}",
        "Count", "Read (ms)", "Write (ms)", "Read ops/s", "Write ops/s"
    );
    let (mut read_ops, mut read_secs, mut write_ops, mut write_secs) = (0u64, 0.0, 0u64, 0.0);
    for (n, read, write) in &rows {
        let cell = |p: &Option<&PhaseResult>, op: &str| -> (String, String, u64, f64) {
            match p {
                Some(p) => {
                    let ops = count(p, op, |o| o.succeeded);
                    (
                        grouped((p.wall_seconds * 1000.0).round() as u64),
                        format!("{}/sec", grouped(per_second(ops, p.wall_seconds))),
                        ops,
                        p.wall_seconds,
                    )
                }
                None => ("-".to_string(), "-".to_string(), 0, 0.0),
            }
        };
        let (read_ms, read_rate, r_ops, r_secs) = cell(read, "read");
        let (write_ms, write_rate, w_ops, w_secs) = cell(write, "create");
        read_ops += r_ops;
        read_secs += r_secs;
        write_ops += w_ops;
        write_secs += w_secs;
        let count = n.parse::<u64>().map(grouped).unwrap_or_else(|_| n.clone());
        let _ = writeln!(
            out,
            "{count:>10} {read_ms:>14} {write_ms:>14} {read_rate:>14} {write_rate:>14}"
        );
    }
    let _ = writeln!(
        out,
        "{:>10} {:>14} {:>14} {:>14} {:>14}",
        "Weighted",
        "",
        "",
        format!("{}/sec", grouped(per_second(read_ops, read_secs))),
        format!("{}/sec", grouped(per_second(write_ops, write_secs)))
    );
    out
}

/// CouchDB's `fabric_bench`: a line per step it runs, as it prints them, with its figure
/// (`Hz`): documents per second of the insert and the single writes, reads per second,
/// rows per second of the `_all_docs` and `_changes` reads. Unrounded: `fabric_bench`
/// rounds its own to 2 or 3 significant digits. Then the steps' time in all.
pub fn fabric(phases: &[PhaseResult]) -> String {
    let mut out = String::new();
    let mut seconds = 0.0;
    for (name, label) in crate::scenario::fabric::STEPS {
        let Some(p) = phases.iter().find(|p| p.name == name) else {
            continue;
        };
        seconds += p.wall_seconds;
        let (what, n) = match name {
            "fabric_insert" => ("docs", count(p, "bulk_insert", |o| o.documents)),
            "fabric_read" => ("reads", count(p, "read", |o| o.succeeded)),
            "fabric_single_docs" => ("docs", count(p, "create", |o| o.succeeded)),
            _ => (
                "rows",
                count(p, "all_docs", |o| o.rows.unwrap_or(0))
                    + count(p, "changes_read", |o| o.rows.unwrap_or(0)),
            ),
        };
        let step = format!("{label} ({} {what})", grouped(n));
        let _ = writeln!(
            out,
            " * {step:<44} (Hz): {:>9}",
            grouped(per_second(n, p.wall_seconds))
        );
    }
    let _ = writeln!(
        out,
        " * {:<44}  (s): {:>9.1}",
        "Time to run all steps", seconds
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::OperationResult;

    fn phase(name: &str, seconds: f64, op: OperationResult) -> PhaseResult {
        PhaseResult::of_operations(name, seconds, vec![op])
    }

    #[test]
    fn fabric_bench_s_lines_give_documents_reads_or_rows_per_second() {
        let op = |operation: &str, succeeded, documents, rows| OperationResult {
            operation: operation.to_string(),
            succeeded,
            documents,
            rows,
            ..OperationResult::unmeasured()
        };
        let phases = [
            phase("fabric_insert", 2.0, op("bulk_insert", 10, 10_000, None)),
            phase("fabric_read", 4.0, op("read", 10_000, 10_000, None)),
            phase("fabric_all_docs", 0.5, op("all_docs", 1, 1, Some(10_000))),
            phase(
                "fabric_changes",
                0.25,
                op("changes_read", 1, 1, Some(10_000)),
            ),
        ];
        let lines = fabric(&phases);
        let rates: Vec<&str> = lines
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(
            rates,
            ["5,000", "2,500", "20,000", "40,000", "6.8"],
            "{lines}"
        );
        assert!(lines.starts_with(" * Add docs (10,000 docs) "), "{lines}");
        assert!(lines.contains("Changes (10,000 rows)"), "{lines}");
        assert!(
            !lines.contains("include_docs"),
            "a step not run has no line"
        );
    }
}
