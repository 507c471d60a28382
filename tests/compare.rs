//! `sofabench compare` as a user runs it, on result files built here from a real run's
//! result (tests/fixtures/result-v2.json: a bulk insert, then creates, reads, updates and
//! deletes) with figures set per repetition, so that what each comparison must find is
//! known: the environment that differs comes first, three results stand side by side,
//! alike repetitions give `~`, a clear shift is found once there are repetitions enough
//! for Holm's correction, and too few say how many would do. No test runs a server: the
//! figures are made, so none depends on the machine's speed.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, repository, sofabench};
use sofabench::analysis::empty_histogram;
use sofabench::results::environment::{ServerEnvironment, ServerNode};
use sofabench::results::{RepetitionResult, RunResult, build};

fn fixture() -> RunResult {
    RunResult::read(&repository().join("tests/fixtures/result-v2.json")).unwrap()
}

/// The fixture's phases with every rate times `factor` plus `step`, and every latency
/// one value: `latency_us` plus `step` microseconds.
fn figures(base: &RunResult, factor: f64, step: u64, latency_us: u64) -> RunResult {
    let mut result = base.clone();
    for phase in &mut result.phases {
        for op in &mut phase.operations {
            op.throughput = op.throughput * factor + step as f64;
            op.documents = (op.documents as f64 * factor) as u64 + step;
            let mut histogram = empty_histogram();
            histogram.record(latency_us + step).unwrap();
            op.latency = build::latency(&histogram);
        }
    }
    result
}

/// A result of `runs` repetitions, the k-th (from 0) with [`figures`] at step k.
fn repeated(runs: u64, factor: f64, latency_us: u64) -> RunResult {
    let base = fixture();
    let mut result = figures(&base, factor, 0, latency_us);
    result.repetitions = (0..runs)
        .map(|k| RepetitionResult {
            index: k + 1,
            database_name: format!("db-run{}", k + 1),
            id_prefix: format!("p-r{}", k + 1),
            started_at: base.started_at.clone(),
            ended_at: base.ended_at.clone(),
            interrupted: false,
            database_deleted: false,
            phases: figures(&base, factor, k, latency_us).phases,
        })
        .collect();
    result
}

/// The result as the server `version` answered it.
fn against(mut result: RunResult, version: &str) -> RunResult {
    result.nodes[0].server = Some(ServerEnvironment {
        product: Some("Apache CouchDB".to_string()),
        nodes: vec![ServerNode {
            address: "http://127.0.0.1:5984/".to_string(),
            answered: "welcome".to_string(),
            version: Some(version.to_string()),
            ..ServerNode::default()
        }],
        ..ServerEnvironment::default()
    });
    result
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        Files {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn write(&self, name: &str, result: &RunResult) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, result.to_json()).unwrap();
        path
    }
}

fn compare(files: &[&Path], flags: &[&str]) -> Run {
    let mut args = vec!["compare"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(flags);
    sofabench(&args)
}

fn compared(files: &[&Path], flags: &[&str]) -> String {
    let run = compare(files, flags);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout
}

/// The lines of the table rows whose metric is `metric`, words joined by one space.
fn rows(text: &str, metric: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| l.contains(metric))
        .collect()
}

#[test]
fn a_pair_differing_only_in_server_version_says_so_first() {
    let files = Files::new();
    let a = files.write("3.4.json", &against(fixture(), "3.4.2"));
    let b = files.write("3.5.json", &against(fixture(), "3.5.0"));
    let text = compared(&[&a, &b], &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("A: ") && lines[0].contains("3.4.json (baseline; 1 run"));
    assert!(lines[1].starts_with("B: ") && lines[1].contains("3.5.json (1 run"));
    assert!(
        lines[2].starts_with("WARNING: A and B ran against a different server"),
        "{text}"
    );
    assert_eq!(lines[3], "  server.version: A 3.4.2, B 3.5.0", "{text}");
    assert!(lines[4].starts_with("noise: no test possible"), "{text}");
    assert_eq!(text.matches("WARNING").count(), 1, "{text}");
}

#[test]
fn three_results_stand_side_by_side_each_against_the_baseline() {
    let files = Files::new();
    let a = files.write("3.3.json", &against(repeated(3, 1.0, 1_000), "3.3.0"));
    let b = files.write("3.4.json", &against(repeated(3, 2.0, 1_000), "3.4.2"));
    let c = files.write("3.5.json", &against(repeated(3, 0.5, 1_000), "3.5.0"));
    let text = compared(&[&a, &b, &c], &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("A: ") && lines[0].contains("3.3.json (baseline; 3 repetitions"));
    assert!(lines[1].starts_with("B: ") && lines[1].contains("3.4.json (3 repetitions"));
    assert!(lines[2].starts_with("C: ") && lines[2].contains("3.5.json (3 repetitions"));
    assert!(
        text.contains("\n  server.version: A 3.3.0, B 3.4.2\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  server.version: A 3.3.0, C 3.5.0\n"),
        "{text}"
    );
    let header = rows(&text, "operation metric");
    assert_eq!(header.len(), 2, "a table per phase: {text}");
    assert!(
        header
            .iter()
            .all(|h| h == "operation metric A B B vs A C C vs A")
    );
    // Reads' throughput: 150.6, 151.6, 152.6 (median 151.6) against twice and half.
    assert_eq!(
        rows(&text, "read throughput/s"),
        ["read throughput/s 151.6 ±0.7% 302.1 ±0.3% +99.3% ~ p=1.000 76.3 ±1% -49.7% ~ p=1.000"]
    );
    // Every rate doubles for B and halves for C: each geometric mean says as much.
    assert!(
        text.contains("geometric mean of the throughput ratios (documents per second for bulk inserts): B/A +9"),
        "{text}"
    );
    assert!(text.contains(", C/A -4"), "{text}");
}

#[test]
fn alike_repetitions_give_no_change_and_a_clear_shift_is_found_with_enough_of_them() {
    let files = Files::new();
    let a = files.write("a.json", &repeated(6, 1.0, 1_000));
    let same = files.write("same.json", &repeated(6, 1.0, 1_000));
    let text = compared(&[&a, &same], &[]);
    assert!(!text.contains("WARNING"), "{text}");
    assert!(
        text.contains("\nverdicts: each by the two-sided Mann-Whitney U test"),
        "{text}"
    );
    // Five operations, each judged on its rate, p50 and p99: all `~`.
    let judged: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" ~ p"))
        .map(str::to_string)
        .collect();
    assert_eq!(judged.len(), 15, "{text}");
    assert!(
        !text.contains(" better p") && !text.contains(" worse p"),
        "{text}"
    );

    // Twice the rates at twice the latency, six repetitions a side: the exact U test's
    // p is 2 / C(12, 6) = 0.00216 on every row, 15 × that after Holm is 0.032.
    let shifted = files.write("shifted.json", &repeated(6, 2.0, 2_000));
    let text = compared(&[&a, &shifted], &[]);
    assert!(!text.contains("WARNING"), "{text}");
    let (bulk, crud) = text.split_once("PHASE crud:").unwrap();
    let throughputs = rows(crud, "throughput/s");
    assert_eq!(throughputs.len(), 4, "{text}");
    for row in throughputs {
        assert!(row.ends_with("better p=0.032"), "{row}\n{text}");
    }
    assert!(
        rows(bulk, "docs/s")[0].ends_with("better p=0.032"),
        "{text}"
    );
    for row in rows(&text, "p99 ms").iter().chain(&rows(&text, "p50 ms")) {
        assert!(row.ends_with("worse p=0.032"), "{row}\n{text}");
    }
    // The bulk insert's throughput counts requests, not judged beside its documents.
    assert!(rows(bulk, "throughput/s")[0].ends_with('%'), "{text}");
    // Welch's test, asked for, finds the shift as well, and says so.
    let text = compared(&[&a, &shifted], &["--test", "welch"]);
    assert!(
        text.contains("\nverdicts: each by the two-sided Welch's t-test"),
        "{text}"
    );
    assert!(
        rows(&text, "p99 ms").iter().all(|r| r.contains("worse p")),
        "{text}"
    );
}

#[test]
fn too_few_repetitions_say_how_many_would_let_a_change_show() {
    let files = Files::new();
    let a = files.write("a.json", &repeated(3, 1.0, 1_000));
    let b = files.write("b.json", &repeated(3, 2.0, 2_000));
    // 2 / C(6, 3) = 0.1 against Holm's 0.05 / 15: five a side give 0.0079, six 0.0022.
    let text = compared(&[&a, &b], &[]);
    assert!(
        text.contains("\nWARNING: too few repetitions for any change between A and B to show as significant: with A 3 repetitions and B 3 repetitions, the smallest p the exact U test can give is 0.1000, and Holm's correction over 15 rows needs p ≤ 0.0033 for the first; run at least 6 repetitions per side (sofabench run --runs 6)"),
        "{text}"
    );
    assert!(
        text.contains("  A: 3 repetitions: its intervals (smallest to largest) reach only 75 %")
    );
    // One row judged: 4 a side would do (2 / C(8, 4) = 0.029), and 4 find the shift.
    let one = ["--judge", "crud.read.throughput"];
    let text = compared(&[&a, &b], &one);
    assert!(
        text.contains("run at least 4 repetitions per side"),
        "{text}"
    );
    let a4 = files.write("a4.json", &repeated(4, 1.0, 1_000));
    let b4 = files.write("b4.json", &repeated(4, 2.0, 2_000));
    let text = compared(&[&a4, &b4], &one);
    assert!(!text.contains("WARNING"), "{text}");
    // 1 − 2 / 2⁴ = 87.5 %.
    assert!(
        text.contains("  A: 4 repetitions: its intervals (smallest to largest) reach only 88 %")
    );
    assert!(
        rows(&text, "read throughput/s")[0].ends_with("better p=0.029"),
        "{text}"
    );
    assert_eq!(
        text.matches(" p=").count(),
        1,
        "only the row judged has a verdict: {text}"
    );
    // Single runs: no test, said plainly, with what a test would need.
    let single = files.write("single.json", &fixture());
    let text = compared(&[&single, &b], &[]);
    assert!(
        text.contains("noise: no test possible: A has 1 run, B 3 repetitions;"),
        "{text}"
    );
    assert!(
        text.contains("the exact U test needs 6 repetitions per side"),
        "{text}"
    );
    assert!(!text.contains(" p="), "{text}");
}

#[test]
fn judged_rows_and_tests_are_checked_before_anything_is_compared() {
    let files = Files::new();
    let a = files.write("a.json", &fixture());
    let run = compare(&[&a, &a], &["--judge", "crud.read.p98"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--judge \"crud.read.p98\": no such row")
            && run.stderr.contains("crud.read.p99"),
        "{}",
        run.stderr
    );
    let run = compare(&[&a, &a], &["--test", "t"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = compare(&[&a], &[]);
    assert_eq!(run.code, 2, "a baseline alone: {}", run.stderr);
}

#[test]
fn old_results_compare_with_their_environment_unknown_and_no_false_warning() {
    let files = Files::new();
    let old = repository().join("tests/fixtures/result-v2.json");
    let text = compared(&[&old, &old], &[]);
    assert!(
        !text.contains("WARNING") && !text.contains("noted"),
        "{text}"
    );
    // Against a result that knows its server: noted, not a difference.
    let new = files.write("new.json", &against(fixture(), "3.5.0"));
    let text = compared(&[&old, &new], &[]);
    assert!(!text.contains("WARNING"), "{text}");
    assert!(
        text.contains("\n  server.version: A unknown, B 3.5.0 (recorded on one side only)\n"),
        "{text}"
    );
    // A result of schema 1 reads as one of schema 2.
    let mut first = serde_json::to_value(fixture()).unwrap();
    first["schema"] = serde_json::json!("sofabench-result/1");
    let first_path = files.dir.path().join("schema1.json");
    std::fs::write(&first_path, first.to_string()).unwrap();
    let text = compared(&[&first_path, &old], &[]);
    assert!(text.contains("PHASE crud:"), "{text}");
}
