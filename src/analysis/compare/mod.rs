//! Comparing results (`sofabench compare BASELINE CONTENDER…`): a baseline (A) and one
//! or more contenders (B, C, …) side by side, per phase and operation matched by name,
//! each contender's change from the baseline beside it.
//!
//! # What differs first
//!
//! For each contender, before any figure: the facts of the environment in which it
//! differs from the baseline (server version, product, nodes, q and n, client machine:
//! a warning; the load average and what is known on one side only: a quiet note; see
//! [`environment`]), then the settings (closed model against `--rate`, 1 against 8
//! connections, another mix…; see [`super::differences`]). A change may come from them
//! rather than from what the user meant to compare.
//!
//! # Repetitions and noise
//!
//! With repetitions on both sides (`run --runs N`; see [`super::repetitions::samples`])
//! each value is the median over them with a distribution-free confidence interval, and
//! a Mann–Whitney U test per judged row says whether the contender differs, Holm-corrected
//! over the rows judged (by default each operation's rate, p50 and p99; `--judge` names
//! others). `~` marks no significant change, `better`/`worse` one with adjusted p ≤ 0.05.
//! `--test welch` uses means and Welch's t-test instead. A line says how many repetitions
//! a side the exact U test needs before any change can pass the correction, when the
//! sides have fewer. With a single run on either side no test is possible and nothing is
//! marked, however large the change. A last line gives the geometric mean of each
//! contender's throughput ratios.
//!
//! Latencies are those of [`super::primary_latency`] (response time under `--rate`,
//! service time otherwise), in milliseconds; the throughput is successful operations per
//! second, and a bulk insert's rate is its documents per second (`docs/s`).

pub mod environment;
pub mod judge;
pub mod rows;
pub mod table;

use std::fmt::Write as _;

use super::repetitions::count;
use super::statistics::median::{LEVEL, least_for};
use super::statistics::{self, median};
use crate::results::RunResult;
use crate::text::visible;
use judge::{ALPHA, Judgement, Test};
use rows::Row;

/// How to compare.
#[derive(Clone, Debug)]
pub struct Options {
    pub test: Test,
    /// Rows to judge (`[PHASE.]OPERATION.METRIC`); empty for the default rows.
    pub judge: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            test: Test::U,
            judge: Vec::new(),
        }
    }
}

/// The most results compared at once: one letter each.
pub const MOST_SIDES: usize = 26;

/// The comparison of the contenders against the baseline (the first), each with a name
/// (its file). Refused: fewer than two results, more than [`MOST_SIDES`], a `--judge`
/// row that none has.
pub fn compare(sides: &[(&str, &RunResult)], options: &Options) -> Result<String, String> {
    if sides.len() < 2 || sides.len() > MOST_SIDES {
        return Err(format!(
            "compare takes a baseline and 1 to {} contenders; {} results given",
            MOST_SIDES - 1,
            sides.len()
        ));
    }
    let results: Vec<&RunResult> = sides.iter().map(|(_, r)| *r).collect();
    let letters: Vec<char> = ('A'..='Z').take(sides.len()).collect();
    let phases = rows::phases(&results);
    let all: Vec<&Row> = phases.iter().flat_map(|p| &p.rows).collect();
    let selected = judge::selection(&all, &options.judge)?;
    let counts: Vec<usize> = results.iter().map(|r| count(r)).collect();
    let judgements: Vec<Vec<Judgement>> = (1..sides.len())
        .map(|side| {
            if tested(counts[0], counts[side]) {
                judge::judge(&all, &selected, side, options.test)
            } else {
                vec![Judgement::NotJudged; all.len()]
            }
        })
        .collect();
    // Holm's family: the rows tested, or those that would be with repetitions.
    let judged: Vec<usize> = (1..sides.len())
        .map(|side| match tested(counts[0], counts[side]) {
            true => judgements[side - 1]
                .iter()
                .filter(|j| matches!(j, Judgement::Judged(_)))
                .count(),
            false => judge::judged_count(&all, &selected, side),
        })
        .collect();

    let mut out = String::new();
    for ((name, result), letter) in sides.iter().zip(&letters) {
        let role = if *letter == 'A' { "baseline; " } else { "" };
        let _ = writeln!(
            out,
            "{letter}: {} ({role}{})",
            visible(name),
            describe(result)
        );
    }
    for side in 1..sides.len() {
        out.push_str(&what_differs(
            results[0],
            results[side],
            (letters[0], letters[side]),
        ));
    }
    out.push_str(&noise(&counts, &letters, &judged, options.test));

    let mut offset = 0;
    for phase in &phases {
        let rows = offset..offset + phase.rows.len();
        offset = rows.end;
        let _ = write!(out, "\nPHASE {}:", visible(&phase.name));
        if !phase.present[0] || phase.present.iter().filter(|p| **p).count() < 2 {
            let _ = writeln!(out, " only in {}", in_sides(&phase.present, &letters));
            continue;
        }
        out.push('\n');
        let per_contender: Vec<&[Judgement]> =
            judgements.iter().map(|j| &j[rows.clone()]).collect();
        out.push_str(&table::phase_table(
            phase,
            &per_contender,
            options.test,
            &letters,
        ));
    }
    out.push_str(&rate_ratios(&all, &letters, options.test));
    Ok(out)
}

/// Whether both sides have the repetitions a test needs.
fn tested(a: usize, b: usize) -> bool {
    a >= statistics::LEAST_REPETITIONS && b >= statistics::LEAST_REPETITIONS
}

fn runs(count: usize) -> String {
    match count {
        1 => "1 run".to_string(),
        n => format!("{n} repetitions"),
    }
}

fn describe(result: &RunResult) -> String {
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
        "{}{cut}{nodes}, started {}, sofabench {}",
        runs(count(result)),
        visible(&result.started_at),
        visible(&result.tool.version)
    )
}

fn in_sides(present: &[bool], letters: &[char]) -> String {
    let names: Vec<String> = letters
        .iter()
        .zip(present)
        .filter(|(_, p)| **p)
        .map(|(l, _)| l.to_string())
        .collect();
    names.join(", ")
}

/// The environment and then the settings in which `b` differs from `a`.
fn what_differs(a: &RunResult, b: &RunResult, (la, lb): (char, char)) -> String {
    let mut out = String::new();
    let facts = environment::differences(a, b, (la, lb));
    if !facts.identity.is_empty() {
        let _ = writeln!(
            out,
            "WARNING: {la} and {lb} ran against a different server or database, or from a different client machine; a change below may come from that rather than from what you meant to compare:"
        );
        for line in &facts.identity {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !facts.noted.is_empty() {
        let _ = writeln!(out, "noted, {la} and {lb} (not a warning):");
        for line in &facts.noted {
            let _ = writeln!(out, "  {line}");
        }
    }
    let settings = super::differences::differing_between(a, b, (la, lb));
    if !settings.is_empty() {
        let _ = writeln!(
            out,
            "WARNING: {la} and {lb} were run with different settings; a change below may come from them rather than from what you meant to compare:"
        );
        for line in &settings {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// What the comparison can say about noise: how values read and verdicts were made, or
/// why there are none, and how many repetitions would be needed.
fn noise(counts: &[usize], letters: &[char], judged: &[usize], test: Test) -> String {
    let mut out = String::new();
    let sides = 1..counts.len();
    if sides.clone().any(|s| tested(counts[0], counts[s])) {
        let _ = writeln!(
            out,
            "noise: {}",
            method(test, &rows_judged(letters, judged))
        );
        if test == Test::U {
            out.push_str(&interval_levels(counts, letters));
        }
    }
    for side in sides {
        let (la, lb, m) = (letters[0], letters[side], judged[side - 1]);
        if !tested(counts[0], counts[side]) {
            let _ = writeln!(
                out,
                "noise: no test possible: {la} has {}, {lb} {}; a test needs at least {} repetitions on each side (sofabench run --runs N), so no change is marked as beyond run-to-run noise{}",
                runs(counts[0]),
                runs(counts[side]),
                statistics::LEAST_REPETITIONS,
                needed_note(test, m)
            );
        } else if let Some(short) = judge::shortfall(test, counts[0], counts[side], m) {
            let _ = writeln!(
                out,
                "WARNING: too few repetitions for any change between {la} and {lb} to show as significant: with {la} {} and {lb} {}, the smallest p the exact U test can give is {:.4}, and Holm's correction over {m} rows needs p ≤ {:.4} for the first; run at least {} repetitions per side (sofabench run --runs {}), or judge fewer rows (--judge)",
                runs(counts[0]),
                runs(counts[side]),
                short.smallest_p,
                short.threshold,
                short.needed,
                short.needed
            );
        }
    }
    out
}

fn method(test: Test, rows: &str) -> String {
    let values = match test {
        Test::U => format!(
            "values are medians over the repetitions ± the farther end of the median's {:.0} % confidence interval (distribution-free, from order statistics; {} repetitions reach {:.0} %)",
            LEVEL * 100.0,
            least_for(LEVEL),
            LEVEL * 100.0
        ),
        Test::Welch => {
            "values are means over the repetitions ± their standard deviation".to_string()
        }
    };
    let approximate = if test == Test::U {
        " (p= from the exact distribution, p≈ from the normal approximation with tie correction, used where values tie)"
    } else {
        ""
    };
    format!(
        "{values}\nverdicts: each by the two-sided {}{approximate} with Holm's correction over {rows}: each p shown is Holm-adjusted; better or worse where it is ≤ {ALPHA}, ~ where nothing changed significantly",
        test.name()
    )
}

/// `the 6 rows judged`, or per contender where they differ.
fn rows_judged(letters: &[char], judged: &[usize]) -> String {
    if judged.iter().all(|m| *m == judged[0]) {
        let rows = if judged[0] == 1 { "row" } else { "rows" };
        return format!("the {} {rows} judged", judged[0]);
    }
    let each: Vec<String> = letters[1..]
        .iter()
        .zip(judged)
        .map(|(l, m)| format!("{l} {m}"))
        .collect();
    format!("the rows judged ({})", each.join(", "))
}

/// The sides whose interval falls short of the level asked.
fn interval_levels(counts: &[usize], letters: &[char]) -> String {
    let mut out = String::new();
    for (count, letter) in counts.iter().zip(letters) {
        if *count >= least_for(LEVEL) {
            continue;
        }
        let said = if *count < 2 {
            "too few for an interval".to_string()
        } else {
            // To a tenth first: the binomial's last digit must not turn 87.5 into 87.
            let level = (median::coverage(*count, 1) * 1000.0).round() / 10.0;
            format!("its intervals (smallest to largest) reach only {level:.0} %")
        };
        let _ = writeln!(out, "  {letter}: {}: {said}", runs(*count));
    }
    out
}

/// For a side without repetitions: what the U test would need under Holm.
fn needed_note(test: Test, rows: usize) -> String {
    match judge::shortfall(test, 1, 1, rows) {
        Some(short) => format!(
            "; for any change to show as significant under Holm's correction over {rows} rows, the exact U test needs {} repetitions per side",
            short.needed
        ),
        None => String::new(),
    }
}

/// The geometric mean of each contender's throughput ratios to the baseline.
fn rate_ratios(rows: &[&Row], letters: &[char], test: Test) -> String {
    let each: Vec<String> = (1..letters.len())
        .filter_map(|side| {
            let (ratio, n) = judge::rate_ratio(rows, side, test)?;
            let operations = if n == 1 { "operation" } else { "operations" };
            Some(format!(
                "{}/{} {} ({n} {operations})",
                letters[side],
                letters[0],
                table::change(1.0, ratio)
            ))
        })
        .collect();
    if each.is_empty() {
        return String::new();
    }
    format!(
        "\ngeometric mean of the throughput ratios (documents per second for bulk inserts): {}\n",
        each.join(", ")
    )
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::results::{OperationResult, PhaseResult, RepetitionResult, build};

    /// `b` against `a` by Welch's t-test.
    fn welch(a: (&str, &RunResult), b: (&str, &RunResult)) -> String {
        let options = Options {
            test: Test::Welch,
            ..Options::default()
        };
        compare(&[a, b], &options).unwrap()
    }

    /// `b` against `a`, with the default options.
    fn two(a: (&str, &RunResult), b: (&str, &RunResult)) -> String {
        compare(&[a, b], &Options::default()).unwrap()
    }

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
        let text = two(("a.json", &a), ("b.json", &b));
        let expected = "\
A: a.json (baseline; 1 run, started 1970-01-01T00:00:00Z, sofabench 0.1.0)
B: b.json (1 run, started 1970-01-01T00:00:00Z, sofabench 0.1.0)
noise: no test possible: A has 1 run, B 1 run; a test needs at least 2 repetitions on each side (sofabench run --runs N), so no change is marked as beyond run-to-run noise; for any change to show as significant under Holm's correction over 3 rows, the exact U test needs 5 repetitions per side

PHASE bulk_insert: only in A

PHASE crud:
  operation  metric              A        B    B vs A
  read       throughput/s  1,000.0  1,250.0    +25.0%
             p50 ms          1.000    1.000      0.0%
             p90 ms          2.000    1.000    -50.0%
             p99 ms          2.000    1.000    -50.0%
             p99.9 ms        2.000    1.000    -50.0%
             max ms          2.000    1.000    -50.0%
  delete     throughput/s      5.0        -  not in B
             p50 ms          1.000        -  not in B
             p90 ms          1.000        -  not in B
             p99 ms          1.000        -  not in B
             p99.9 ms        1.000        -  not in B
             max ms          1.000        -  not in B
  create     throughput/s        -      7.0  not in A
             p50 ms              -    0.500  not in A
             p90 ms              -    0.500  not in A
             p99 ms              -    0.500  not in A
             p99.9 ms            -    0.500  not in A
             max ms              -    0.500  not in A

PHASE query: only in B

geometric mean of the throughput ratios (documents per second for bulk inserts): B/A +25.0% (1 operation)
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
        let text = two(("a", &bulk(10.0, 10_000)), ("b", &bulk(10.0, 15_000)));
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
        assert!(!two(("a", &reads), ("b", &reads)).contains("docs/s"));
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
        let text = welch(("a.json", &a), ("b.json", &b));
        assert!(
            text.contains("A: a.json (baseline; 3 repetitions,"),
            "{text}"
        );
        assert!(
            text.contains("noise: values are means over the repetitions ± their standard deviation\nverdicts: each by the two-sided Welch's t-test with Holm's correction over the 3 rows judged"),
            "{text}"
        );
        // Welch's test gives no floor to p: no warning of too few repetitions.
        assert!(!text.contains("WARNING"), "{text}");
        // Throughput 105 ± 1 against 100 ± 10: scipy's ttest_ind(equal_var=False) gives
        // p = 0.478, the largest of the three, so Holm leaves it as it is.
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 100.0 ± 10.0 105.0 ± 1.0 +5.0% ~ p=0.478"
        );
        // p50 1.1 ± 0.1 ms against 2.013 ± 0.023 ms: scipy gives p = 0.0027, as for p99
        // (one latency a repetition): Holm makes it 3 × 0.0027, still marked.
        assert_eq!(
            line_with(&text, "p50 ms"),
            "p50 ms 1.100 ± 0.100 2.013 ± 0.023 +83.0% worse p=0.008"
        );
        // p90 is shown but not judged.
        assert!(line_with(&text, "p90 ms").ends_with('%'), "{text}");
        let faster = repeated(&[(200.0, 500), (210.0, 500), (190.0, 500)]);
        let text = welch(("a.json", &a), ("c.json", &faster));
        // scipy: p = 0.000255; Holm over 3 rows still below 0.001.
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 100.0 ± 10.0 200.0 ± 10.0 +100.0% better p<0.001"
        );
        // Every repetition of both sides gave the same p50: no noise to test against.
        let text = welch(("c.json", &faster), ("c.json", &faster));
        assert!(line_with(&text, "p50 ms").ends_with("no test (no spread)"));
    }

    #[test]
    fn a_single_run_against_repetitions_is_never_marked() {
        let a = repeated(&[(100.0, 1_000), (101.0, 1_000), (99.0, 1_000)]);
        let single = result(vec![phase("crud", vec![op("read", 500.0, &[100])])]);
        let text = two(("a.json", &a), ("b.json", &single));
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
        let text = welch(("a.json", &a), ("b.json", &a.clone()));
        assert!(
            text.contains("A: a.json (baseline; 2 repetitions (and 1 interrupted, left out),"),
            "{text}"
        );
        assert_eq!(
            line_with(&text, "throughput/s"),
            "read throughput/s 105.0 ± 7.1 105.0 ± 7.1 0.0% ~ p=1.000"
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
        let text = two(("basic.json", &basic), ("cookie.json", &cookie));
        assert!(
            text.contains("\nWARNING: A and B were run with different settings; a change below may come from them rather than from what you meant to compare:\n  auth mode: A basic, B cookie\nnoise:"),
            "{text}"
        );
        assert_eq!(line_with(&text, "logins"), "logins count 0 1 n/a");
        assert!(
            line_with(&text, "mean ms").starts_with("mean ms - 12."),
            "{text}"
        );
        assert!(!two(("a", &basic), ("b", &basic)).contains("WARNING"));
    }
}
