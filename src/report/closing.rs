//! The summary that ends a run's report, the part a person reads first: per phase what
//! it achieved, its latency and errors; then the thresholds, the verdict and where the
//! result files are.
//!
//! ```text
//! SUMMARY:
//!   phase          ops/s  succeeded  errors   p50 ms   p99 ms  latency
//!   bulk_insert    687.9          8       0   10.352   10.462  service  (68,790.9 documents/s)
//!   crud           186.8        564       0   16.527   63.967  service
//!   thresholds: 1 of 1 failed: p99<50ms (actual 86.335ms)
//!   verdict: FAILED: 1 threshold failed
//!   result files in /tmp/out: result.json, result.csv, result.html
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use super::numbers::{grouped, grouped_decimal};
use crate::analysis::thresholds::ThresholdOutcome;
use crate::analysis::{add_encoded, empty_histogram, primary_latency};
use crate::results::{PhaseResult, RunResult};
use crate::words::counted;

/// What the summary is made from.
pub struct Closing<'a> {
    pub result: &'a RunResult,
    pub thresholds: &'a [ThresholdOutcome],
    /// The result files the run wrote; `None` where they are not known (`report` reads
    /// the result again), and then not said.
    pub files: Option<&'a [PathBuf]>,
    /// Why the run failed apart from its thresholds (failed operations, actions, files
    /// that could not be written); empty when nothing did.
    pub problems: &'a [String],
}

/// One phase's row.
struct Row {
    phase: String,
    throughput: f64,
    succeeded: u64,
    failed: u64,
    /// Milliseconds, all the phase's operations together; `None` without a success.
    p50: Option<f64>,
    p99: Option<f64>,
    /// "response" for a phase under a rate (from the scheduled start), else "service".
    latency: &'static str,
    /// Bulk inserts' documents per second, when the phase made any.
    documents_per_sec: Option<f64>,
}

fn row(phase: &PhaseResult) -> Row {
    let ops = &phase.operations;
    let mut histogram: Histogram<u64> = empty_histogram();
    for op in ops {
        // A histogram that cannot be read leaves the percentiles out, as the tables above do.
        let _ = add_encoded(&mut histogram, &primary_latency(phase, op).histogram);
    }
    let percentile =
        |q: f64| (!histogram.is_empty()).then(|| histogram.value_at_quantile(q) as f64 / 1_000.0);
    let bulk: Vec<_> = ops
        .iter()
        .filter(|o| o.operation == "bulk_insert")
        .collect();
    Row {
        phase: phase.name.clone(),
        throughput: ops.iter().map(|o| o.throughput).sum(),
        succeeded: ops.iter().map(|o| o.succeeded).sum(),
        failed: ops.iter().map(|o| o.failed).sum(),
        p50: percentile(0.5),
        p99: percentile(0.99),
        latency: if phase.target_rate.is_some() {
            "response"
        } else {
            "service"
        },
        documents_per_sec: (!bulk.is_empty())
            .then(|| bulk.iter().map(|o| o.documents_per_sec).sum()),
    }
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn phase_table(phases: &[PhaseResult], out: &mut String) {
    let rows: Vec<Row> = phases.iter().map(row).collect();
    let width = rows
        .iter()
        .map(|r| r.phase.chars().count())
        .max()
        .unwrap_or(0)
        .max("phase".len());
    let _ = writeln!(
        out,
        "  {:<width$}  {:>12}  {:>11}  {:>8}  {:>10}  {:>10}  latency",
        "phase", "ops/s", "succeeded", "errors", "p50 ms", "p99 ms"
    );
    for r in rows {
        let _ = write!(
            out,
            "  {:<width$}  {:>12}  {:>11}  {:>8}  {:>10}  {:>10}  {}",
            r.phase,
            grouped_decimal(r.throughput, 1),
            grouped(r.succeeded),
            grouped(r.failed),
            ms(r.p50),
            ms(r.p99),
            r.latency
        );
        if let Some(documents) = r.documents_per_sec {
            let _ = write!(out, "  ({} documents/s)", grouped_decimal(documents, 1));
        }
        out.push('\n');
    }
}

fn thresholds_line(outcomes: &[ThresholdOutcome]) -> String {
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed).collect();
    if outcomes.is_empty() {
        "  thresholds: none given (--threshold)\n".to_string()
    } else if failed.is_empty() {
        format!("  thresholds: {0} of {0} passed\n", outcomes.len())
    } else {
        let named: Vec<String> = failed
            .iter()
            .map(|o| format!("{} (actual {})", o.expression, o.actual))
            .collect();
        format!(
            "  thresholds: {} of {} failed: {}\n",
            failed.len(),
            outcomes.len(),
            named.join("; ")
        )
    }
}

/// The verdict of a run that failed for `reasons` (none: it passed): `PASSED`, `FAILED`,
/// or `INTERRUPTED`, whose first reason is then that its figures cover what was done.
/// The SUMMARY and the HTML page say it alike.
pub fn verdict_word(interrupted: bool, reasons: &mut Vec<String>) -> &'static str {
    if interrupted {
        reasons.insert(0, "the figures cover what was done".to_string());
        "INTERRUPTED"
    } else if reasons.is_empty() {
        "PASSED"
    } else {
        "FAILED"
    }
}

fn verdict_line(closing: &Closing) -> String {
    let failed = closing.thresholds.iter().filter(|o| !o.passed).count();
    let mut reasons = Vec::new();
    if failed > 0 {
        reasons.push(format!("{} failed", counted(failed as u64, "threshold")));
    }
    reasons.extend(closing.problems.iter().cloned());
    let verdict = verdict_word(closing.result.interrupted, &mut reasons);
    match reasons.is_empty() {
        true => format!("  verdict: {verdict}\n"),
        false => format!("  verdict: {verdict}: {}\n", reasons.join("; ")),
    }
}

/// The files, a line per folder: `result files in DIR: a, b, c`.
fn files_lines(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return "  result files: none written (--out, --json, --csv, --html)\n".to_string();
    }
    // In the order written, a line per folder.
    let mut folders: Vec<(&Path, Vec<String>)> = Vec::new();
    for file in files {
        let folder = file.parent().unwrap_or(Path::new(""));
        let name = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match folders.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, names)) => names.push(name),
            None => folders.push((folder, vec![name])),
        }
    }
    let mut out = String::new();
    for (folder, names) in folders {
        let folder = match folder.display().to_string() {
            f if f.is_empty() => ".".to_string(),
            f => f,
        };
        let _ = writeln!(out, "  result files in {folder}: {}", names.join(", "));
    }
    out
}

/// The SUMMARY block.
pub fn text(closing: &Closing) -> String {
    let mut out = String::from("SUMMARY:\n");
    phase_table(&closing.result.phases, &mut out);
    let repetitions = closing.result.repetitions.len();
    if repetitions > 1 {
        let _ = writeln!(
            out,
            "  each phase: its {repetitions} repetitions together (their spread: REPETITIONS above)"
        );
    }
    out.push_str(&thresholds_line(closing.thresholds));
    out.push_str(&verdict_line(closing));
    if let Some(files) = closing.files {
        out.push_str(&files_lines(files));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::results::{Latency, OperationResult, build};

    fn latency(values_us: &[u64]) -> Latency {
        let mut h = empty_histogram();
        for v in values_us {
            h.record(*v).unwrap();
        }
        build::latency(&h)
    }

    /// `succeeded` operations in 2 s whose service times are `values_us`, and response
    /// times ten times as long.
    fn op(name: &str, succeeded: u64, failed: u64, values_us: &[u64]) -> OperationResult {
        let response: Vec<u64> = values_us.iter().map(|v| v * 10).collect();
        OperationResult {
            operation: name.to_string(),
            succeeded,
            failed,
            documents: succeeded,
            documents_failed: failed,
            throughput: succeeded as f64 / 2.0,
            documents_per_sec: 0.0,
            latency: latency(values_us),
            response: latency(&response),
            ..OperationResult::unmeasured()
        }
    }

    fn result(rate: Option<f64>) -> RunResult {
        let mut bulk = op("bulk_insert", 4, 0, &[10_000; 4]);
        bulk.documents = 400;
        bulk.documents_per_sec = 200.0;
        // 99 reads at 1 ms and one update at 100 ms: p50 and p99 1 ms across both.
        let mut crud = PhaseResult::of_operations(
            "crud",
            2.0,
            vec![
                op("read", 99, 2, &[1_000; 99]),
                op("update", 1, 0, &[100_000]),
            ],
        );
        crud.target_rate = rate;
        let phases = vec![
            PhaseResult::of_operations("bulk_insert", 2.0, vec![bulk]),
            crud,
        ];
        RunResult::of_phases(phases)
    }

    fn outcome(expression: &str, passed: bool) -> ThresholdOutcome {
        ThresholdOutcome {
            expression: expression.to_string(),
            actual: "7ms".to_string(),
            passed,
        }
    }

    #[test]
    fn phases_thresholds_verdict_and_files() {
        let result = result(None);
        let thresholds = [outcome("p99<5ms", false), outcome("error_rate<1%", true)];
        let files = [
            PathBuf::from("/tmp/out/result.json"),
            PathBuf::from("/tmp/out/result.html"),
            PathBuf::from("other.csv"),
        ];
        let problems = ["2 operations failed".to_string()];
        let text = text(&Closing {
            result: &result,
            thresholds: &thresholds,
            files: Some(&files),
            problems: &problems,
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "SUMMARY:");
        let header = lines[1];
        assert!(header.starts_with("  phase        "), "{text}");
        let bulk = lines[2];
        assert!(bulk.starts_with("  bulk_insert  "), "{text}");
        assert!(
            bulk.ends_with(
                "2.0            4         0      10.007      10.007  service  (200.0 documents/s)"
            ),
            "{text}"
        );
        let crud = lines[3];
        assert!(
            crud.ends_with("50.0          100         2       1.000       1.000  service"),
            "{text}"
        );
        // Every row's columns line up with the header's.
        assert_eq!(header.find("latency"), crud.find("service"), "{text}");
        assert_eq!(
            lines[4],
            "  thresholds: 1 of 2 failed: p99<5ms (actual 7ms)"
        );
        assert_eq!(
            lines[5],
            "  verdict: FAILED: 1 threshold failed; 2 operations failed"
        );
        assert_eq!(
            lines[6],
            "  result files in /tmp/out: result.json, result.html"
        );
        assert_eq!(lines[7], "  result files in .: other.csv");
    }

    #[test]
    fn a_rate_phase_reports_response_time_and_a_clean_run_passes() {
        let result = result(Some(50.0));
        let text = text(&Closing {
            result: &result,
            thresholds: &[],
            files: Some(&[]),
            problems: &[],
        });
        let crud = text.lines().nth(3).unwrap();
        // Response times are ten times the service times in this result.
        assert!(crud.ends_with("10.007      10.007  response"), "{text}");
        assert!(text.contains("  thresholds: none given (--threshold)\n"));
        assert!(text.contains("  verdict: PASSED\n"));
        assert!(text.contains("  result files: none written"));
    }

    #[test]
    fn an_interrupted_run_says_so_first() {
        let mut result = result(None);
        result.interrupted = true;
        let thresholds = [outcome("p99<50ms", true)];
        let text = text(&Closing {
            result: &result,
            thresholds: &thresholds,
            files: Some(&[]),
            problems: &[],
        });
        assert!(text.contains("  thresholds: 1 of 1 passed\n"), "{text}");
        assert!(
            text.contains("  verdict: INTERRUPTED: the figures cover what was done\n"),
            "{text}"
        );
    }
}
