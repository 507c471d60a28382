//! Comparing two results (`sofabench compare A.json B.json`): per phase and operation,
//! matched by name, the throughput and the latency percentiles of both side by side with
//! the relative change from A to B.
//!
//! # Settings
//!
//! The settings in which the two runs differ come first, under a warning (closed model
//! against `--rate`, 1 against 8 connections, another mix, database, auth mode, TLS …;
//! see [`super::differences`]): a change may come from them rather than from what the
//! user meant to compare.
//!
//! # Repetitions and noise
//!
//! A change means little unless it is larger than the difference between two runs of the
//! same thing. When both results hold repetitions (`run --runs N`; see
//! [`super::repetitions::samples`]), each side's value is the mean over its repetitions
//! (± their standard deviation), and Welch's t-test over the repetitions says whether a
//! change in throughput, documents per second, p50 or p99 is beyond their noise: its
//! two-sided p-value is shown, and a change with p < 0.05 is marked `*` with whether it
//! is better or worse. A figure whose repetitions all gave one value on both sides has no
//! noise to test against and says so. When either side has a single run, no test is
//! possible and nothing is marked, however large the change.
//!
//! Phases that logged in (session cookies, IAM tokens) show their logins' count and mean
//! time. Latencies are those of [`super::primary_latency`] (response time under
//! `--rate`, service time otherwise), in milliseconds; the throughput is successful
//! operations per second. A bulk insert also shows its documents per second (`docs/s`),
//! the figure users compare bulk loads by; its throughput counts requests.

use std::fmt::Write as _;

use super::measure::{self, Measure};
use super::repetitions::{count, samples};
use super::statistics::{self, NoTest, Summary};
use crate::report::numbers::grouped_decimal;
use crate::report::table::columns;
use crate::results::{PhaseResult, RunResult};

/// A change is marked beyond the noise when Welch's test gives a p-value below this.
pub const ALPHA: f64 = 0.05;

/// `+5.3%`; `n/a` from zero.
fn change(a: f64, b: f64) -> String {
    if a == b {
        "0.0%".to_string()
    } else if a == 0.0 {
        "n/a".to_string()
    } else {
        format!("{:+.1}%", (b - a) / a * 100.0)
    }
}

fn describe(name: &str, result: &RunResult) -> String {
    let repetitions = count(result);
    let runs = if repetitions > 1 {
        format!("{repetitions} repetitions")
    } else {
        "1 run".to_string()
    };
    let interrupted = result.repetitions.len() - result.finished_repetitions().count();
    let cut = if interrupted > 0 {
        format!(" (and {interrupted} interrupted, left out)")
    } else {
        String::new()
    };
    let nodes = if result.nodes.len() > 1 {
        format!(", {} nodes", result.nodes.len())
    } else {
        String::new()
    };
    format!(
        "{name} ({runs}{cut}{nodes}, started {}, sofabench {})",
        result.started_at, result.tool.version
    )
}

fn find<'r>(samples: &[(&str, Vec<&'r PhaseResult>)], name: &str) -> Option<Vec<&'r PhaseResult>> {
    samples
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| p.clone())
}

/// A side's value: the mean of its repetitions, with their sd when there are several.
fn cell(measure: Measure, values: &[f64]) -> String {
    match Summary::of(values) {
        None => "-".to_string(),
        Some(s) if s.n > 1 => format!("{} ± {}", measure.show(s.mean), measure.show(s.sd)),
        Some(s) => measure.show(s.mean),
    }
}

/// The test's cell for a measure: the p-value, marked when the change is beyond the
/// noise, or why there is no test.
fn test_cell(measure: Measure, a: &[f64], b: &[f64]) -> String {
    match statistics::welch(a, b) {
        Ok(test) => {
            let p = if test.p < 0.001 {
                "p<0.001".to_string()
            } else {
                format!("p={:.3}", test.p)
            };
            if test.p >= ALPHA {
                return p;
            }
            // t > 0: A's mean is the larger.
            let better = (test.t < 0.0) == measure.higher_is_better();
            format!("{p} * {}", if better { "better" } else { "worse" })
        }
        Err(NoTest::TooFew { a, b }) => format!("no test (n={a}+{b})"),
        Err(NoTest::NoSpread) => "no test (no spread)".to_string(),
        Err(NoTest::NotFinite) => "no test".to_string(),
    }
}

/// What the comparison can say about noise, as its header line.
fn noise_line(a: &RunResult, b: &RunResult, tested: bool) -> String {
    if tested {
        return format!(
            "noise: Welch's t-test over the repetitions (two-sided) on docs/s, throughput, p50 and p99; * marks a change with p < {ALPHA}. Values are means over the repetitions ± their standard deviation"
        );
    }
    let runs = |r: &RunResult| match count(r) {
        1 => "1 run".to_string(),
        n => format!("{n} repetitions"),
    };
    format!(
        "noise: no test possible: A has {}, B {}; Welch's t-test needs at least {} repetitions on each side (sofabench run --runs N), so no change is marked as beyond run-to-run noise",
        runs(a),
        runs(b),
        statistics::LEAST_REPETITIONS
    )
}

/// Rows for the logins of a phase's repetitions (means), when either side logged in.
fn login_rows(a: &[&PhaseResult], b: &[&PhaseResult]) -> Vec<Vec<String>> {
    let logins = |phases: &[&PhaseResult]| -> (Vec<f64>, Vec<f64>) {
        let counts = phases
            .iter()
            .map(|p| p.logins.as_ref().map_or(0.0, |l| l.count as f64));
        let means = phases
            .iter()
            .filter_map(|p| p.logins.as_ref())
            .map(|l| l.latency.mean_ms);
        (counts.collect(), means.collect())
    };
    let ((a_counts, a_means), (b_counts, b_means)) = (logins(a), logins(b));
    if a_means.is_empty() && b_means.is_empty() {
        return Vec::new();
    }
    let mean = |values: &[f64]| Summary::of(values).map(|s| s.mean);
    let cell = |values: &[f64], decimals: usize| {
        mean(values).map_or("-".to_string(), |m| grouped_decimal(m, decimals))
    };
    let delta = |a: &[f64], b: &[f64]| match (mean(a), mean(b)) {
        (Some(a), Some(b)) => change(a, b),
        _ => "-".to_string(),
    };
    vec![
        vec![
            "logins".to_string(),
            "count".to_string(),
            cell(&a_counts, 0),
            cell(&b_counts, 0),
            delta(&a_counts, &b_counts),
            String::new(),
        ],
        vec![
            String::new(),
            "mean ms".to_string(),
            cell(&a_means, 3),
            cell(&b_means, 3),
            delta(&a_means, &b_means),
            String::new(),
        ],
    ]
}

/// The rows of one operation of a phase both sides ran.
fn operation_rows(
    operation: &str,
    (a, b): (&[&PhaseResult], &[&PhaseResult]),
    tested: bool,
) -> Vec<Vec<String>> {
    let measures = Measure::ALL.into_iter().filter(|m| m.applies_to(operation));
    measures
        .enumerate()
        .map(|(i, measure)| {
            let (va, vb) = (measure.values(a, operation), measure.values(b, operation));
            let (delta, note) = match (Summary::of(&va), Summary::of(&vb)) {
                (Some(sa), Some(sb)) => {
                    let note = if tested && measure.is_tested() {
                        test_cell(measure, &va, &vb)
                    } else {
                        String::new()
                    };
                    (change(sa.mean, sb.mean), note)
                }
                (None, Some(_)) => ("only in B".to_string(), String::new()),
                (Some(_), None) => ("only in A".to_string(), String::new()),
                (None, None) => ("-".to_string(), String::new()),
            };
            vec![
                if i == 0 {
                    operation.to_string()
                } else {
                    String::new()
                },
                measure.label().to_string(),
                cell(measure, &va),
                cell(measure, &vb),
                delta,
                note,
            ]
        })
        .collect()
}

/// The comparison of `b` against `a` (the baseline), each with a name (its file).
pub fn compare(a: (&str, &RunResult), b: (&str, &RunResult)) -> String {
    let (a_samples, b_samples) = (samples(a.1), samples(b.1));
    let tested =
        count(a.1) >= statistics::LEAST_REPETITIONS && count(b.1) >= statistics::LEAST_REPETITIONS;
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", describe(a.0, a.1));
    let _ = writeln!(out, "B: {}", describe(b.0, b.1));
    let differences = super::differences::differing(a.1, b.1);
    if !differences.is_empty() {
        let _ = writeln!(
            out,
            "WARNING: A and B were run with different settings; a change below may come from them rather than from what you meant to compare:"
        );
        for line in &differences {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "{}", noise_line(a.1, b.1, tested));

    let mut names: Vec<&str> = a_samples.iter().map(|(n, _)| *n).collect();
    for (name, _) in &b_samples {
        if !names.contains(name) {
            names.push(name);
        }
    }
    for name in names {
        let (pa, pb) = match (find(&a_samples, name), find(&b_samples, name)) {
            (Some(pa), Some(pb)) => (pa, pb),
            (Some(_), None) => {
                let _ = writeln!(out, "\nPHASE {name}: only in A");
                continue;
            }
            (None, _) => {
                let _ = writeln!(out, "\nPHASE {name}: only in B");
                continue;
            }
        };
        let _ = writeln!(out, "\nPHASE {name}:");
        let header = ["operation", "metric", "A", "B", "change", ""];
        let mut rows = vec![header.map(str::to_string).to_vec()];
        if tested {
            rows[0][5] = "test".to_string();
        }
        for operation in measure::operations(pa.iter().chain(&pb).copied()) {
            rows.extend(operation_rows(operation, (&pa, &pb), tested));
        }
        rows.extend(login_rows(&pa, &pb));
        out.push_str(&columns(&rows));
    }
    out
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::results::{OperationResult, RepetitionResult, build};

    fn op(name: &str, throughput: f64, latencies_us: &[u64]) -> OperationResult {
        let mut h = super::super::empty_histogram();
        for v in latencies_us {
            h.record(*v).unwrap();
        }
        OperationResult {
            operation: name.to_string(),
            succeeded: latencies_us.len() as u64,
            failed: 0,
            documents: 0,
            documents_failed: 0,
            throughput,
            documents_per_sec: 0.0,
            latency: build::latency(&h),
            response: build::latency(&super::super::empty_histogram()),
            ..OperationResult::unmeasured()
        }
    }

    fn phase(name: &str, operations: Vec<OperationResult>) -> PhaseResult {
        PhaseResult::of_operations(name, 1.0, operations)
    }

    fn result(phases: Vec<PhaseResult>) -> RunResult {
        let mut r = RunResult::of_phases(phases);
        r.tool.version = "0.1.0".into();
        r
    }

    /// The first line of `text` holding `label`, its words joined by single spaces.
    fn line_with(text: &str, label: &str) -> String {
        text.lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label}: {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn single_runs_compare_side_by_side_with_noise_unknown() {
        let a = result(vec![
            phase("bulk_insert", vec![op("bulk_insert", 10.0, &[100_000])]),
            phase(
                "crud",
                vec![
                    op("read", 1000.0, &[1_000, 2_000]),
                    op("delete", 5.0, &[1_000]),
                ],
            ),
        ]);
        let b = result(vec![
            phase(
                "crud",
                vec![
                    op("read", 1250.0, &[1_000, 1_000]),
                    op("create", 7.0, &[500]),
                ],
            ),
            phase("query", vec![]),
        ]);
        let text = compare(("a.json", &a), ("b.json", &b));
        let expected = "\
A: a.json (1 run, started 1970-01-01T00:00:00Z, sofabench 0.1.0)
B: b.json (1 run, started 1970-01-01T00:00:00Z, sofabench 0.1.0)
noise: no test possible: A has 1 run, B 1 run; Welch's t-test needs at least 2 repetitions on each side (sofabench run --runs N), so no change is marked as beyond run-to-run noise

PHASE bulk_insert: only in A

PHASE crud:
  operation  metric              A        B     change
  read       throughput/s  1,000.0  1,250.0     +25.0%
             p50 ms          1.000    1.000       0.0%
             p90 ms          2.000    1.000     -50.0%
             p99 ms          2.000    1.000     -50.0%
             p99.9 ms        2.000    1.000     -50.0%
             max ms          2.000    1.000     -50.0%
  delete     throughput/s      5.0        -  only in A
             p50 ms          1.000        -  only in A
             p90 ms          1.000        -  only in A
             p99 ms          1.000        -  only in A
             p99.9 ms        1.000        -  only in A
             max ms          1.000        -  only in A
  create     throughput/s        -      7.0  only in B
             p50 ms              -    0.500  only in B
             p90 ms              -    0.500  only in B
             p99 ms              -    0.500  only in B
             p99.9 ms            -    0.500  only in B
             max ms              -    0.500  only in B

PHASE query: only in B
";
        assert_eq!(text, expected, "\n{text}");
    }

    #[test]
    fn bulk_inserts_compare_documents_per_second() {
        let bulk = |requests: f64, documents: u64| {
            let mut o = op("bulk_insert", requests, &[100_000]);
            o.documents = documents;
            result(vec![phase("bulk_insert", vec![o])])
        };
        // Phases of 1 s: 10 requests of 1,000 documents against 10 of 1,500.
        let text = compare(("a", &bulk(10.0, 10_000)), ("b", &bulk(10.0, 15_000)));
        let rows: Vec<String> = text
            .lines()
            .skip_while(|l| !l.starts_with("PHASE bulk_insert"))
            .skip(2)
            .take(2)
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            rows,
            [
                "bulk_insert docs/s 10,000.0 15,000.0 +50.0%",
                "throughput/s 10.0 10.0 0.0%"
            ],
            "{text}"
        );
        let reads = result(vec![phase("crud", vec![op("read", 1.0, &[1_000])])]);
        assert!(!compare(("a", &reads), ("b", &reads)).contains("docs/s"));
    }

    /// A result of `--runs`: one repetition per (throughput, p50 in µs) of a `crud`
    /// phase with reads, merged phase included.
    fn repeated(figures: &[(f64, u64)]) -> RunResult {
        let phases: Vec<PhaseResult> = figures
            .iter()
            .map(|(t, l)| phase("crud", vec![op("read", *t, &[*l])]))
            .collect();
        let mut r = result(vec![phases[0].clone()]);
        r.repetitions = phases
            .into_iter()
            .enumerate()
            .map(|(i, phase)| RepetitionResult {
                index: i as u64 + 1,
                database_name: format!("db-run{}", i + 1),
                id_prefix: String::new(),
                started_at: String::new(),
                ended_at: String::new(),
                interrupted: false,
                database_deleted: false,
                phases: vec![phase],
            })
            .collect();
        r
    }

    #[test]
    fn repetitions_mark_a_change_only_when_welchs_test_finds_it_beyond_noise() {
        let a = repeated(&[(100.0, 1_000), (110.0, 1_100), (90.0, 1_200)]);
        let b = repeated(&[(104.0, 2_000), (106.0, 2_000), (105.0, 2_040)]);
        let text = compare(("a.json", &a), ("b.json", &b));
        assert!(text.contains("A: a.json (3 repetitions,"), "{text}");
        assert!(
            text.contains("noise: Welch's t-test over the repetitions"),
            "{text}"
        );
        // Throughput 105 ± 1 against 100 ± 10: scipy's ttest_ind(equal_var=False) gives
        // p = 0.478, within the noise.
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 100.0 ± 10.0 105.0 ± 1.0 +5.0% p=0.478"
        );
        // p50 1.1 ± 0.1 ms against 2.013 ± 0.023 ms: scipy gives p = 0.0027, marked.
        assert_eq!(
            line_with(&text, "p50 ms"),
            "p50 ms 1.100 ± 0.100 2.013 ± 0.023 +83.0% p=0.003 * worse"
        );
        // p90 is shown but not tested.
        assert!(line_with(&text, "p90 ms").ends_with('%'), "{text}");
        let faster = repeated(&[(200.0, 500), (210.0, 500), (190.0, 500)]);
        let text = compare(("a.json", &a), ("c.json", &faster));
        // scipy: p = 0.000255.
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 100.0 ± 10.0 200.0 ± 10.0 +100.0% p<0.001 * better"
        );
        // Every repetition of both sides gave the same p50: no noise to test against.
        let text = compare(("c.json", &faster), ("c.json", &faster));
        assert!(line_with(&text, "p50 ms").ends_with("no test (no spread)"));
    }

    #[test]
    fn a_single_run_against_repetitions_is_never_marked() {
        let a = repeated(&[(100.0, 1_000), (101.0, 1_000), (99.0, 1_000)]);
        let single = result(vec![phase("crud", vec![op("read", 500.0, &[100])])]);
        let text = compare(("a.json", &a), ("b.json", &single));
        assert!(
            text.contains("noise: no test possible: A has 3 repetitions, B 1 run;"),
            "{text}"
        );
        assert!(!text.contains('*'), "{text}");
        assert!(!text.contains("p="), "{text}");
    }

    #[test]
    fn an_interrupted_repetition_is_left_out_and_said() {
        let mut a = repeated(&[(100.0, 1_000), (110.0, 1_000), (1.0, 1_000)]);
        a.repetitions[2].interrupted = true;
        let text = compare(("a.json", &a), ("b.json", &a.clone()));
        assert!(
            text.contains("A: a.json (2 repetitions (and 1 interrupted, left out),"),
            "{text}"
        );
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 105.0 ± 7.1 105.0 ± 7.1 0.0% p=1.000"
        );
    }

    #[test]
    fn runs_in_two_auth_modes_name_the_mode_and_show_the_logins() {
        let run = |mode: &str, seed: u64| {
            let mut r = result(vec![phase("crud", vec![op("read", 100.0, &[1_000])])]);
            r.config.insert("auth".into(), serde_json::json!(mode));
            r.config.insert("seed".into(), serde_json::json!(seed));
            r.config
                .insert("num_connections".into(), serde_json::json!(10));
            r
        };
        let basic = run("basic", 1);
        let mut cookie = run("cookie", 2);
        let mut logins = crate::metrics::LoginTally::default();
        logins.record(std::time::Duration::from_millis(12), true);
        cookie.phases[0].logins = Some(build::logins(&logins));
        let text = compare(("basic.json", &basic), ("cookie.json", &cookie));
        assert!(
            text.contains("\nWARNING: A and B were run with different settings; a change below may come from them rather than from what you meant to compare:\n  auth mode: A basic, B cookie\nnoise:"),
            "{text}"
        );
        assert_eq!(line_with(&text, "logins"), "logins count 0 1 n/a");
        assert!(
            line_with(&text, "mean ms").starts_with("mean ms - 12."),
            "{text}"
        );
        assert!(!compare(("a", &basic), ("b", &basic)).contains("WARNING"));
    }
}
