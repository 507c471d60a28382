//! The text of a run with repetitions (`--runs N`): the line that opens each repetition,
//! and how each phase's figures spread over the repetitions that finished.

use crate::analysis::measure::{self, Measure};
use crate::analysis::repetitions::samples;
use crate::analysis::statistics::Summary;
use crate::results::{RepetitionResult, RunResult};

use super::table::columns;

/// The line that opens repetition `index` of `count`, before its phases.
pub fn heading(index: u64, count: u64, database: &str, id_prefix: &str) -> String {
    format!(
        "\nREPETITION {index} of {count}: database {database:?}, document ids {id_prefix}-NNNNNNNNNN\n"
    )
}

/// The heading of a repetition as its result keeps it.
pub fn heading_of(repetition: &RepetitionResult, count: usize) -> String {
    heading(
        repetition.index,
        count as u64,
        &repetition.database_name,
        &repetition.id_prefix,
    )
}

/// How each phase's throughput and latency spread over the finished repetitions, and
/// which databases the repetitions left; empty for a result without repetitions.
pub fn spread(result: &RunResult) -> String {
    if result.repetitions.is_empty() {
        return String::new();
    }
    let total = planned(result);
    let finished = result.finished_repetitions().count();
    let mut out = format!("\nREPETITIONS: {finished} of {total} finished");
    let mut missing: Vec<String> = result
        .repetitions
        .iter()
        .filter(|r| r.interrupted)
        .map(|r| format!("repetition {} interrupted, left out", r.index))
        .collect();
    let not_started = total.saturating_sub(result.repetitions.len());
    if not_started > 0 {
        missing.push(format!("{not_started} not started"));
    }
    if !missing.is_empty() {
        out.push_str(&format!(" ({})", missing.join("; ")));
    }
    if finished < 2 {
        out.push_str("; too few for a spread\n");
    } else {
        out.push_str("; each phase's figures over them (mean ± sd, min..max):\n");
        out.push_str(&tables(result));
    }
    out.push_str(
        "  the result's phases merge the repetitions (all their operations together, as one phase doing them in turn); thresholds are judged on them\n",
    );
    out.push_str(&databases(&result.repetitions));
    out
}

/// How many repetitions the run was to make (`--runs`), however many it made.
pub fn planned(result: &RunResult) -> usize {
    let runs = result
        .config
        .get("runs")
        .and_then(serde_json::Value::as_u64);
    runs.map_or(0, |runs| runs as usize)
        .max(result.repetitions.len())
}

fn tables(result: &RunResult) -> String {
    let mut out = String::new();
    for (name, phases) in samples(result) {
        out.push_str(&format!("  phase {name}\n"));
        let mut rows = vec![
            ["operation", "metric", "mean ± sd", "min..max", ""]
                .map(str::to_string)
                .to_vec(),
        ];
        for operation in measure::operations(phases.iter().copied()) {
            let measures = Measure::TESTED
                .into_iter()
                .filter(|m| m.applies_to(operation));
            for (i, measure) in measures.enumerate() {
                let Some(s) = Summary::of(&measure.values(&phases, operation)) else {
                    continue;
                };
                rows.push(vec![
                    if i == 0 { operation } else { "" }.to_string(),
                    measure.label().to_string(),
                    format!("{} ± {}", measure.show(s.mean), measure.show(s.sd)),
                    format!("{}..{}", measure.show(s.min), measure.show(s.max)),
                    String::new(),
                ]);
            }
        }
        for line in columns(&rows).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// Which databases are left on the server, or that `--cleanup` deleted them.
fn databases(repetitions: &[RepetitionResult]) -> String {
    let left: Vec<String> = repetitions
        .iter()
        .filter(|r| !r.database_deleted)
        .map(|r| format!("{:?}", r.database_name))
        .collect();
    if left.is_empty() {
        "  databases: deleted (--cleanup)\n".to_string()
    } else {
        format!(
            "  databases left on the server: {} (--cleanup deletes the ones a run creates)\n",
            left.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::results::{OperationResult, PhaseResult, build};

    fn reads(throughput: f64, latency_us: u64) -> PhaseResult {
        let mut h = crate::analysis::empty_histogram();
        h.record(latency_us).unwrap();
        let op = OperationResult {
            operation: "read".to_string(),
            succeeded: 1,
            failed: 0,
            documents: 1,
            documents_failed: 0,
            throughput,
            documents_per_sec: throughput,
            latency: build::latency(&h),
            response: build::latency(&h),
            ..OperationResult::unmeasured()
        };
        PhaseResult::of_operations("crud", 1.0, vec![op])
    }

    fn repeated(figures: &[(f64, u64, bool, bool)]) -> RunResult {
        let mut result = RunResult::of_phases(vec![reads(0.0, 1)]);
        result.repetitions = figures
            .iter()
            .enumerate()
            .map(
                |(i, &(throughput, latency, interrupted, deleted))| RepetitionResult {
                    index: i as u64 + 1,
                    database_name: format!("db-run{}", i + 1),
                    id_prefix: format!("p-r{}", i + 1),
                    started_at: String::new(),
                    ended_at: String::new(),
                    interrupted,
                    database_deleted: deleted,
                    phases: vec![reads(throughput, latency)],
                },
            )
            .collect();
        result
    }

    fn words(line: &str) -> String {
        line.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn each_phase_shows_its_spread_over_the_finished_repetitions() {
        let result = repeated(&[
            (100.0, 1_000, false, false),
            (110.0, 1_200, false, false),
            (90.0, 1_100, false, false),
            (1.0, 9_000, true, false),
        ]);
        let text = spread(&result);
        let lines: Vec<String> = text.lines().map(words).collect();
        assert_eq!(
            lines[1],
            "REPETITIONS: 3 of 4 finished (repetition 4 interrupted, left out); each phase's figures over them (mean ± sd, min..max):"
        );
        assert_eq!(lines[2], "phase crud");
        assert_eq!(lines[3], "operation metric mean ± sd min..max");
        assert_eq!(lines[4], "read throughput/s 100.0 ± 10.0 90.0..110.0");
        assert_eq!(lines[5], "p50 ms 1.100 ± 0.100 1.000..1.200");
        assert_eq!(lines[6], "p99 ms 1.100 ± 0.100 1.000..1.200");
        assert!(lines[7].starts_with("the result's phases merge the repetitions"));
        assert_eq!(
            lines[8],
            "databases left on the server: \"db-run1\", \"db-run2\", \"db-run3\", \"db-run4\" (--cleanup deletes the ones a run creates)"
        );
    }

    #[test]
    fn too_few_finished_repetitions_have_no_spread() {
        let mut result = repeated(&[(100.0, 1_000, false, true), (1.0, 1_000, true, true)]);
        result
            .config
            .insert("runs".to_string(), serde_json::json!(5));
        let text = spread(&result);
        assert!(
            text.contains("REPETITIONS: 1 of 5 finished (repetition 2 interrupted, left out; 3 not started); too few for a spread\n"),
            "{text}"
        );
        assert!(!text.contains("mean ± sd"), "{text}");
        assert!(
            text.ends_with("  databases: deleted (--cleanup)\n"),
            "{text}"
        );
        let plain = RunResult::of_phases(Vec::new());
        assert_eq!(spread(&plain), "");
    }

    #[test]
    fn a_heading_names_the_database_and_the_ids() {
        assert_eq!(
            heading(2, 3, "bench-run2", "sb1-r2"),
            "\nREPETITION 2 of 3: database \"bench-run2\", document ids sb1-r2-NNNNNNNNNN\n"
        );
    }
}
