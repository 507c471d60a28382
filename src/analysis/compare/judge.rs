//! Which rows a comparison judges, and its verdict on each: a test per row of a
//! contender against the baseline (Mann–Whitney U by default, or Welch's t-test), with
//! Holm's correction over the rows judged, so that testing many rows does not mark
//! changes by chance. Pure: rows in, verdicts out.

use super::super::measure::Measure;
use super::super::statistics::median::{self, LEVEL};
use super::super::statistics::{self, NoTest, Summary, holm, mann_whitney};
use super::rows::Row;

/// A change is significant when its Holm-adjusted p-value is at most this.
pub const ALPHA: f64 = 0.05;

/// The test each judged row gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// Mann–Whitney U, on medians: no distribution assumed.
    U,
    /// Welch's t-test, on means.
    Welch,
}

impl Test {
    /// `u` or `welch`, as `--test` takes it.
    pub fn parse(text: &str) -> Result<Test, String> {
        match text {
            "u" => Ok(Test::U),
            "welch" => Ok(Test::Welch),
            other => Err(format!("{other:?} is not a test: u or welch")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Test::U => "Mann-Whitney U test",
            Test::Welch => "Welch's t-test",
        }
    }

    /// A side's value: the median for the U test, the mean for Welch's.
    pub fn center(self, values: &[f64]) -> Option<f64> {
        match self {
            Test::U => median::median(values, LEVEL).map(|m| m.median),
            Test::Welch => Summary::of(values).map(|s| s.mean),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Nothing significant: `~`.
    Same,
    Better,
    Worse,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// Holm-adjusted.
    pub p: f64,
    pub mark: Mark,
    /// The U test's normal approximation (ties, or many repetitions).
    pub approximate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Judgement {
    NotJudged,
    NoTest(NoTest),
    Judged(Verdict),
}

/// One test's outcome, before the correction.
struct Tested {
    p: f64,
    contender_larger: bool,
    approximate: bool,
}

fn tested(test: Test, baseline: &[f64], contender: &[f64]) -> Result<Tested, NoTest> {
    match test {
        Test::U => mann_whitney::test(baseline, contender).map(|t| Tested {
            p: t.p,
            contender_larger: t.u_b > t.u_a,
            approximate: t.method == mann_whitney::Method::Normal,
        }),
        // t > 0: the baseline's mean is the larger.
        Test::Welch => statistics::welch(baseline, contender).map(|t| Tested {
            p: t.p,
            contender_larger: t.t < 0.0,
            approximate: false,
        }),
    }
}

/// Whether each row is judged: those `names` name (`[PHASE.]OPERATION.METRIC`), or by
/// default each operation's rate, p50 and p99. A name that names no row is refused,
/// with the rows there are.
pub fn selection(rows: &[&Row], names: &[String]) -> Result<Vec<bool>, String> {
    if names.is_empty() {
        let default = |r: &&Row| r.measure.judged_by_default(&r.operation);
        return Ok(rows.iter().map(default).collect());
    }
    let short = |r: &Row| format!("{}.{}", r.operation, r.measure.name());
    let matches = |r: &Row, name: &str| r.name() == name || short(r) == name;
    if let Some(unknown) = names.iter().find(|n| !rows.iter().any(|r| matches(r, n))) {
        let known: Vec<String> = rows.iter().map(|r| r.name()).collect();
        return Err(format!(
            "--judge {unknown:?}: no such row in these results; a row is [PHASE.]OPERATION.METRIC, one of: {}",
            known.join(", ")
        ));
    }
    Ok(rows
        .iter()
        .map(|r| names.iter().any(|n| matches(r, n)))
        .collect())
}

/// The verdict on each row for the contender at `side` against the baseline (side 0),
/// Holm-corrected over the rows judged that could be tested.
pub fn judge(rows: &[&Row], judged: &[bool], side: usize, test: Test) -> Vec<Judgement> {
    let outcomes: Vec<Option<Result<Tested, NoTest>>> = rows
        .iter()
        .zip(judged)
        .map(|(row, &judged)| {
            let (a, b) = (&row.values[0], &row.values[side]);
            (judged && !a.is_empty() && !b.is_empty()).then(|| tested(test, a, b))
        })
        .collect();
    let p: Vec<f64> = outcomes.iter().flatten().flatten().map(|t| t.p).collect();
    let mut adjusted = holm::adjusted(&p).into_iter();
    rows.iter()
        .zip(outcomes)
        .map(|(row, outcome)| match outcome {
            None => Judgement::NotJudged,
            Some(Err(why)) => Judgement::NoTest(why),
            Some(Ok(t)) => {
                let p = adjusted.next().unwrap_or(1.0);
                Judgement::Judged(verdict(row.measure, &t, p))
            }
        })
        .collect()
}

fn verdict(measure: Measure, tested: &Tested, p: f64) -> Verdict {
    let mark = if p > ALPHA {
        Mark::Same
    } else if tested.contender_larger == measure.higher_is_better() {
        Mark::Better
    } else {
        Mark::Worse
    };
    Verdict {
        p,
        mark,
        approximate: tested.approximate,
    }
}

/// How many rows a contender's comparison judges: those with figures on both sides.
pub fn judged_count(rows: &[&Row], judged: &[bool], side: usize) -> usize {
    let both = |r: &&&Row| !r.values[0].is_empty() && !r.values[side].is_empty();
    rows.iter()
        .zip(judged)
        .filter(|(r, j)| **j && both(r))
        .count()
}

/// Too few repetitions for the exact U test to pass Holm's first threshold over `rows`
/// rows at all: what it would take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shortfall {
    /// The smallest p the sides' repetitions allow, and the p Holm needs first.
    pub smallest_p: f64,
    pub threshold: f64,
    /// Repetitions a side that would be enough.
    pub needed: usize,
}

/// `None` when a change can show with `a` and `b` repetitions (or the test is Welch's,
/// whose p has no such floor).
pub fn shortfall(test: Test, a: usize, b: usize, rows: usize) -> Option<Shortfall> {
    if test != Test::U || rows == 0 {
        return None;
    }
    let threshold = holm::first_threshold(ALPHA, rows);
    let smallest_p = mann_whitney::smallest_p(a, b);
    (smallest_p > threshold).then(|| Shortfall {
        smallest_p,
        threshold,
        needed: mann_whitney::least_per_side(threshold),
    })
}

/// The geometric mean of the contender's rate over the baseline's, over the rows of each
/// operation's rate that both sides have (above zero), with how many there were.
pub fn rate_ratio(rows: &[&Row], side: usize, test: Test) -> Option<(f64, usize)> {
    let logs: Vec<f64> = rows
        .iter()
        .filter(|r| r.measure == Measure::rate_of(&r.operation))
        .filter_map(|r| Some((test.center(&r.values[0])?, test.center(&r.values[side])?)))
        .filter(|(a, b)| *a > 0.0 && *b > 0.0)
        .map(|(a, b)| (b / a).ln())
        .collect();
    (!logs.is_empty()).then(|| {
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        (mean.exp(), logs.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(operation: &str, measure: Measure, a: &[f64], b: &[f64]) -> Row {
        Row {
            phase: "crud".to_string(),
            operation: operation.to_string(),
            measure,
            values: vec![a.to_vec(), b.to_vec()],
        }
    }

    #[test]
    fn the_default_judges_each_rate_p50_and_p99_and_names_are_checked() {
        let rows = [
            row("bulk_insert", Measure::DocsPerSec, &[1.0], &[1.0]),
            row("bulk_insert", Measure::Throughput, &[1.0], &[1.0]),
            row("read", Measure::Throughput, &[1.0], &[1.0]),
            row("read", Measure::P90, &[1.0], &[1.0]),
            row("read", Measure::P99, &[1.0], &[1.0]),
        ];
        let rows: Vec<&Row> = rows.iter().collect();
        assert_eq!(
            selection(&rows, &[]).unwrap(),
            [true, false, true, false, true]
        );
        let named = [
            "read.p90".to_string(),
            "crud.bulk_insert.throughput".to_string(),
        ];
        assert_eq!(
            selection(&rows, &named).unwrap(),
            [false, true, false, true, false]
        );
        let error = selection(&rows, &["crud.read.p42".to_string()]).unwrap_err();
        assert!(
            error.starts_with("--judge \"crud.read.p42\": no such row"),
            "{error}"
        );
        assert!(error.contains("crud.read.p99"), "{error}");
    }

    /// Six values a side, wholly apart: the exact U test's p is 2 / C(12, 6) = 0.00216
    /// (scipy agrees, see mann_whitney's tests); over two rows Holm doubles it.
    #[test]
    fn verdicts_follow_each_measures_better_direction_after_holm() {
        let low = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let high = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        let rows = [
            row("read", Measure::Throughput, &low, &high),
            row("read", Measure::P99, &low, &high),
            row("read", Measure::P50, &low, &low),
        ];
        let rows: Vec<&Row> = rows.iter().collect();
        let judged = judge(&rows, &[true, true, false], 1, Test::U);
        let Judgement::Judged(up) = judged[0] else {
            panic!("{judged:?}")
        };
        assert_eq!(up.mark, Mark::Better);
        assert!((up.p - 2.0 * 0.0021645021645021645).abs() < 1e-12);
        assert!(matches!(judged[1], Judgement::Judged(v) if v.mark == Mark::Worse));
        assert_eq!(judged[2], Judgement::NotJudged);
        // The same with one side alike: nothing significant.
        let same = [row("read", Measure::Throughput, &low, &low)];
        let judged = judge(&[&same[0]], &[true], 1, Test::U);
        assert!(matches!(judged[0], Judgement::Judged(v) if v.mark == Mark::Same && v.p == 1.0));
    }

    #[test]
    fn too_few_repetitions_for_holm_say_how_many_would_do() {
        // 2 / C(6, 3) = 0.1 against 0.05 / 6: five a side give 2 / 252 = 0.0079.
        let short = shortfall(Test::U, 3, 3, 6).unwrap();
        assert!((short.smallest_p - 0.1).abs() < 1e-12);
        assert_eq!(short.needed, 5);
        assert_eq!(shortfall(Test::U, 5, 5, 6), None);
        assert_eq!(shortfall(Test::Welch, 3, 3, 6), None);
    }

    #[test]
    fn the_rate_ratio_is_a_geometric_mean_of_rates_only() {
        let rows = [
            row("read", Measure::Throughput, &[100.0], &[200.0]),
            row("create", Measure::Throughput, &[100.0], &[50.0]),
            row("bulk_insert", Measure::DocsPerSec, &[10.0], &[40.0]),
            row("read", Measure::P50, &[1.0], &[100.0]),
        ];
        let rows: Vec<&Row> = rows.iter().collect();
        let (ratio, count) = rate_ratio(&rows, 1, Test::U).unwrap();
        // (2 · 0.5 · 4)^(1/3)
        assert!((ratio - 4f64.powf(1.0 / 3.0)).abs() < 1e-12);
        assert_eq!(count, 3);
    }
}
