//! Comparing two results (`sofabench compare A.json B.json`): per phase and operation,
//! matched by name, the throughput and the latency percentiles of both side by side with
//! the relative change from A to B.
//!
//! # Repetitions and noise
//!
//! A change means little unless it is larger than the difference between two runs of the
//! same thing. A result holds *repetitions* when several of its phases share a name up to
//! a `#N` suffix (`crud#1`, `crud#2`, …, or the same name several times, as a result with
//! `repetitions` in its config would have them). Then:
//!
//! - the value shown for that side is the median over its repetitions;
//! - a change is marked `*` (with whether it is better or worse) when the ranges
//!   (min–max over repetitions) of A and B do not overlap; a side with a single run has
//!   a range of one value. A change inside the ranges is within run-to-run noise and is
//!   not marked.
//!
//! When neither side has repetitions, the noise is unknown and the output says so: no
//! change is marked, however large.
//!
//! The settings in which the two runs differ are named first (e.g. the auth mode: `auth:
//! A basic, B cookie`), so that two runs of the same workload in two modes read side by
//! side; the seed and the id prefix, drawn anew by every run, are left out. Phases that
//! logged in (session cookies, IAM tokens) show their logins' count and mean time.
//!
//! Latencies are those of [`super::primary_latency`] (response time under `--rate`,
//! service time otherwise), in milliseconds; the throughput is successful operations per
//! second. A bulk insert also shows its documents per second (`docs/s`), the figure users
//! compare bulk loads by; its throughput counts requests.

use std::fmt::Write as _;

use super::{base_name, primary_latency};
use crate::report::numbers::grouped_decimal;
use crate::results::{OperationResult, PhaseResult, RunResult, per_second};
use crate::workload::Operation;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    DocsPerSec,
    Throughput,
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl Measure {
    const ALL: [Measure; 7] = [
        Measure::DocsPerSec,
        Measure::Throughput,
        Measure::P50,
        Measure::P90,
        Measure::P99,
        Measure::P999,
        Measure::Max,
    ];

    fn label(self) -> &'static str {
        match self {
            Measure::DocsPerSec => "docs/s",
            Measure::Throughput => "throughput/s",
            Measure::P50 => "p50 ms",
            Measure::P90 => "p90 ms",
            Measure::P99 => "p99 ms",
            Measure::P999 => "p99.9 ms",
            Measure::Max => "max ms",
        }
    }

    fn higher_is_better(self) -> bool {
        matches!(self, Measure::Throughput | Measure::DocsPerSec)
    }

    /// Whether the measure is shown for `operation`: documents per second only where an
    /// operation carries many documents.
    fn applies_to(self, operation: &str) -> bool {
        self != Measure::DocsPerSec || operation == Operation::BulkInsert.name()
    }

    /// The value in one phase, if there is one (no latency without successes).
    fn of(self, phase: &PhaseResult, op: &OperationResult) -> Option<f64> {
        match self {
            Measure::Throughput => return Some(op.throughput),
            // From the counts, so that results written before `documents_per_sec` compare.
            Measure::DocsPerSec => return Some(per_second(op.documents, phase.wall_seconds)),
            _ => {}
        }
        let l = primary_latency(phase, op);
        if l.count == 0 {
            return None;
        }
        Some(match self {
            Measure::P50 => l.p50_ms,
            Measure::P90 => l.p90_ms,
            Measure::P99 => l.p99_ms,
            Measure::P999 => l.p999_ms,
            _ => l.max_ms,
        })
    }

    fn show(self, value: f64) -> String {
        let decimals = if self.higher_is_better() { 1 } else { 3 };
        grouped_decimal(value, decimals)
    }
}

/// A result's phases grouped by name without the `#N` suffix, in order.
fn groups(result: &RunResult) -> Vec<(&str, Vec<&PhaseResult>)> {
    let mut groups: Vec<(&str, Vec<&PhaseResult>)> = Vec::new();
    for phase in &result.phases {
        let name = base_name(&phase.name);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, phases)) => phases.push(phase),
            None => groups.push((name, vec![phase])),
        }
    }
    groups
}

fn has_repetitions(result: &RunResult) -> bool {
    let configured = result
        .config
        .get("repetitions")
        .and_then(|v| v.as_u64())
        .is_some_and(|n| n > 1);
    configured || groups(result).iter().any(|(_, phases)| phases.len() > 1)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn range(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        })
}

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

/// The values of a measure over a group's repetitions.
fn values(phases: &[&PhaseResult], operation: &str, measure: Measure) -> Vec<f64> {
    phases
        .iter()
        .filter_map(|p| {
            p.operations
                .iter()
                .find(|o| o.operation == operation)
                .and_then(|o| measure.of(p, o))
        })
        .collect()
}

fn describe(name: &str, result: &RunResult) -> String {
    let repetitions = groups(result)
        .iter()
        .map(|(_, p)| p.len())
        .max()
        .unwrap_or(0);
    let runs = if repetitions > 1 {
        format!("{repetitions} repetitions")
    } else {
        "1 run".to_string()
    };
    let nodes = if result.nodes.len() > 1 {
        format!(", {} nodes", result.nodes.len())
    } else {
        String::new()
    };
    format!(
        "{name} ({runs}{nodes}, started {}, sofabench {})",
        result.started_at, result.tool.version
    )
}

/// Pads the cells into columns: the first two left-aligned, the rest right-aligned.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let width = widths[c];
            if c < 2 || c == columns - 1 {
                let _ = write!(line, "  {cell:<width$}");
            } else {
                let _ = write!(line, "  {cell:>width$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn find<'r>(groups: &[(&str, Vec<&'r PhaseResult>)], name: &str) -> Option<Vec<&'r PhaseResult>> {
    groups
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| p.clone())
}

/// Settings every run draws anew, which say nothing about what was compared.
const DRAWN: [&str; 2] = ["seed", "id_prefix"];

/// `key: A value, B value` for each setting the two results' configs differ in.
fn differing_settings(a: &RunResult, b: &RunResult) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> =
        a.config.keys().chain(b.config.keys()).collect();
    let show = |v: Option<&serde_json::Value>| match v {
        None => "missing".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    keys.into_iter()
        .filter(|key| !DRAWN.contains(&key.as_str()))
        .filter(|key| a.config.get(*key) != b.config.get(*key))
        .map(|key| {
            format!(
                "{key}: A {}, B {}",
                show(a.config.get(key)),
                show(b.config.get(key))
            )
        })
        .collect()
}

/// Rows for the logins of a phase's repetitions (medians), when either side logged in.
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
    let cell = |values: &[f64], decimals: usize| {
        if values.is_empty() {
            "-".to_string()
        } else {
            grouped_decimal(median(values), decimals)
        }
    };
    let delta = |a: &[f64], b: &[f64]| {
        if a.is_empty() || b.is_empty() {
            "-".to_string()
        } else {
            change(median(a), median(b))
        }
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

/// The comparison of `b` against `a` (the baseline), each with a name (its file).
pub fn compare(a: (&str, &RunResult), b: (&str, &RunResult)) -> String {
    let (a_groups, b_groups) = (groups(a.1), groups(b.1));
    let noise_known = has_repetitions(a.1) || has_repetitions(b.1);
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", describe(a.0, a.1));
    let _ = writeln!(out, "B: {}", describe(b.0, b.1));
    let differences = differing_settings(a.1, b.1);
    if !differences.is_empty() {
        let _ = writeln!(out, "settings that differ: {}", differences.join("; "));
    }
    if noise_known {
        let _ = writeln!(
            out,
            "noise: values are medians over repetitions; * marks a change whose min-max ranges over repetitions do not overlap (beyond run-to-run noise)"
        );
    } else {
        let _ = writeln!(
            out,
            "noise: unknown (neither result has repetitions), so no change is marked as beyond run-to-run noise"
        );
    }

    let mut names: Vec<&str> = a_groups.iter().map(|(n, _)| *n).collect();
    for (name, _) in &b_groups {
        if !names.contains(name) {
            names.push(name);
        }
    }
    for name in names {
        let (pa, pb) = match (find(&a_groups, name), find(&b_groups, name)) {
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
        let mut operations: Vec<&str> = Vec::new();
        for phase in pa.iter().chain(&pb) {
            for op in &phase.operations {
                if !operations.contains(&op.operation.as_str()) {
                    operations.push(&op.operation);
                }
            }
        }
        let mut rows = vec![vec![
            "operation".to_string(),
            "metric".to_string(),
            "A".to_string(),
            "B".to_string(),
            "change".to_string(),
            String::new(),
        ]];
        for operation in operations {
            let measures = Measure::ALL.into_iter().filter(|m| m.applies_to(operation));
            for (i, measure) in measures.enumerate() {
                let (va, vb) = (
                    values(&pa, operation, measure),
                    values(&pb, operation, measure),
                );
                let show = |v: &[f64]| {
                    if v.is_empty() {
                        "-".to_string()
                    } else {
                        measure.show(median(v))
                    }
                };
                let (delta, note) = match (va.is_empty(), vb.is_empty()) {
                    (false, false) => {
                        let (ma, mb) = (median(&va), median(&vb));
                        let ((a_lo, a_hi), (b_lo, b_hi)) = (range(&va), range(&vb));
                        let beyond = (va.len() > 1 || vb.len() > 1) && (b_lo > a_hi || b_hi < a_lo);
                        let better = (mb > ma) == measure.higher_is_better();
                        let note = match (beyond, better) {
                            (true, true) => "* better",
                            (true, false) => "* worse",
                            _ => "",
                        };
                        (change(ma, mb), note.to_string())
                    }
                    (true, false) => ("only in B".to_string(), String::new()),
                    (false, true) => ("only in A".to_string(), String::new()),
                    (true, true) => ("-".to_string(), String::new()),
                };
                rows.push(vec![
                    if i == 0 {
                        operation.to_string()
                    } else {
                        String::new()
                    },
                    measure.label().to_string(),
                    show(&va),
                    show(&vb),
                    delta,
                    note,
                ]);
            }
        }
        rows.extend(login_rows(&pa, &pb));
        out.push_str(&table(&rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::{NodeInfo, build};

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
            failures: BTreeMap::new(),
            failure_samples: Default::default(),
            failed_latency: None,
            resends: 0,
            retried_429: 0,
            retry_429_wait_ns: 0,
            unknown_outcomes: 0,
            not_run: 0,
            statuses: BTreeMap::new(),
            latency: build::latency(&h),
            response: build::latency(&super::super::empty_histogram()),
        }
    }

    fn phase(name: &str, operations: Vec<OperationResult>) -> PhaseResult {
        PhaseResult::of_operations(name, 1.0, operations)
    }

    fn result(phases: Vec<PhaseResult>) -> RunResult {
        let mut r = build::run(
            BTreeMap::new(),
            std::time::UNIX_EPOCH,
            std::time::UNIX_EPOCH,
            false,
            NodeInfo {
                index: 0,
                count: 1,
                host: String::new(),
            },
            phases,
        );
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
noise: unknown (neither result has repetitions), so no change is marked as beyond run-to-run noise

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

    #[test]
    fn repetitions_mark_changes_beyond_their_range() {
        let reps = |name: &str, throughputs: &[f64], p50s_us: &[u64]| {
            result(
                throughputs
                    .iter()
                    .zip(p50s_us)
                    .enumerate()
                    .map(|(i, (t, l))| {
                        phase(&format!("{name}#{}", i + 1), vec![op("read", *t, &[*l])])
                    })
                    .collect(),
            )
        };
        let a = reps("crud", &[100.0, 110.0, 90.0], &[1_000, 1_100, 1_200]);
        // Throughput 105 is inside A's 90..110; latency 2 ms is beyond A's 1.0..1.2 ms.
        let b = reps("crud", &[104.0, 106.0, 105.0], &[2_000, 2_000, 2_100]);
        let text = compare(("a.json", &a), ("b.json", &b));
        assert!(text.contains("A: a.json (3 repetitions,"), "{text}");
        assert!(text.contains("noise: values are medians"), "{text}");
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 100.0 105.0 +5.0%"
        );
        assert_eq!(
            line_with(&text, "p50 ms"),
            "p50 ms 1.100 2.000 +81.8% * worse"
        );
        let faster = reps("crud", &[200.0], &[500]);
        let text = compare(("a.json", &a), ("c.json", &faster));
        assert!(
            text.lines()
                .any(|l| l.contains("throughput/s") && l.ends_with("* better")),
            "a single run outside A's range is marked:\n{text}"
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
            text.contains("\nsettings that differ: auth: A basic, B cookie\n"),
            "{text}"
        );
        assert_eq!(line_with(&text, "logins"), "logins count 0 1 n/a");
        assert!(
            line_with(&text, "mean ms").starts_with("mean ms - 12."),
            "{text}"
        );
        assert!(!compare(("a", &basic), ("b", &basic)).contains("settings that differ"));
    }

    #[test]
    fn a_configured_repetition_count_makes_the_noise_known() {
        let mut a = result(vec![phase("crud", vec![op("read", 1.0, &[1_000])])]);
        a.config.insert("repetitions".into(), serde_json::json!(3));
        let text = compare(("a", &a), ("b", &a.clone()));
        assert!(text.contains("noise: values are medians"), "{text}");
    }
}
