//! A phase of a comparison as a table: each side's value per row, and per contender its
//! change from the baseline with the verdict on it. Rendering only: the rows and the
//! verdicts come made (see `rows` and `judge`).

use super::super::measure::Measure;
use super::super::statistics::median::{LEVEL, median};
use super::super::statistics::{NoTest, Summary};
use super::judge::{Judgement, Mark, Test};
use super::rows::{Logins, Phase, Row};
use crate::report::numbers::grouped_decimal;
use crate::report::table::columns;

/// `+5.3%`; `n/a` from zero.
pub fn change(a: f64, b: f64) -> String {
    if a == b {
        "0.0%".to_string()
    } else if a == 0.0 {
        "n/a".to_string()
    } else {
        format!("{:+.1}%", (b - a) / a * 100.0)
    }
}

/// The table of `phase`; `judgements[c][i]` is the verdict on its row `i` for the
/// contender `c + 1`.
pub fn phase_table(
    phase: &Phase,
    judgements: &[&[Judgement]],
    test: Test,
    letters: &[char],
) -> String {
    let mut header = vec!["operation".to_string(), "metric".to_string()];
    header.push(letters[0].to_string());
    for letter in &letters[1..] {
        header.push(letter.to_string());
        header.push(format!("{letter} vs {}", letters[0]));
    }
    let mut rows = vec![header];
    for (i, row) in phase.rows.iter().enumerate() {
        let first = i == 0 || phase.rows[i - 1].operation != row.operation;
        let verdicts: Vec<Judgement> = judgements.iter().map(|j| j[i]).collect();
        rows.push(row_cells(row, first, &verdicts, test, letters));
    }
    if let Some(logins) = &phase.logins {
        rows.extend(login_rows(logins, letters));
    }
    // An empty last column (the table's note), so that every change aligns right.
    for row in &mut rows {
        row.push(String::new());
    }
    columns(&rows)
}

fn row_cells(
    row: &Row,
    first: bool,
    verdicts: &[Judgement],
    test: Test,
    letters: &[char],
) -> Vec<String> {
    let operation = if first {
        row.operation.clone()
    } else {
        String::new()
    };
    let mut cells = vec![operation, row.measure.label().to_string()];
    cells.push(value(row.measure, &row.values[0], test));
    for (side, verdict) in (1..row.values.len()).zip(verdicts) {
        cells.push(value(row.measure, &row.values[side], test));
        let (a, b) = (test.center(&row.values[0]), test.center(&row.values[side]));
        cells.push(match (a, b) {
            (Some(a), Some(b)) => format!("{}{}", change(a, b), verdict_note(*verdict)),
            (None, Some(_)) => format!("not in {}", letters[0]),
            (Some(_), None) => format!("not in {}", letters[side]),
            (None, None) => "-".to_string(),
        });
    }
    cells
}

/// A side's value: its median ± the farther end of the median's interval, as a percent
/// of it (benchstat's form), or its mean ± the standard deviation for Welch's test.
fn value(measure: Measure, values: &[f64], test: Test) -> String {
    match test {
        Test::U => match median(values, LEVEL) {
            None => "-".to_string(),
            Some(m) => match m.interval {
                Some(i) if m.median != 0.0 => {
                    let far = (i.high - m.median).max(m.median - i.low) / m.median.abs();
                    format!("{} ±{}", measure.show(m.median), percent(far * 100.0))
                }
                _ => measure.show(m.median),
            },
        },
        Test::Welch => match Summary::of(values) {
            None => "-".to_string(),
            Some(s) if s.n > 1 => format!("{} ± {}", measure.show(s.mean), measure.show(s.sd)),
            Some(s) => measure.show(s.mean),
        },
    }
}

fn percent(value: f64) -> String {
    if value < 1.0 && value > 0.0 {
        format!("{value:.1}%")
    } else {
        format!("{value:.0}%")
    }
}

/// After a change: its verdict and adjusted p (`p≈` from the normal approximation), or
/// why it has none; nothing for a row not judged.
fn verdict_note(judgement: Judgement) -> String {
    match judgement {
        Judgement::NotJudged | Judgement::NoTest(NoTest::TooFew { .. }) => String::new(),
        Judgement::NoTest(NoTest::NoSpread) => " no test (no spread)".to_string(),
        Judgement::NoTest(NoTest::NotFinite) => " no test".to_string(),
        Judgement::Judged(v) => {
            let mark = match v.mark {
                Mark::Same => "~",
                Mark::Better => "better",
                Mark::Worse => "worse",
            };
            let sign = if v.approximate { "≈" } else { "=" };
            if v.p < 0.001 {
                format!(" {mark} p<0.001")
            } else {
                format!(" {mark} p{sign}{:.3}", v.p)
            }
        }
    }
}

/// The logins' count and mean time, means over the repetitions, when a side logged in.
fn login_rows(logins: &Logins, letters: &[char]) -> Vec<Vec<String>> {
    let mean = |values: &[f64]| Summary::of(values).map(|s| s.mean);
    let line = |label: &str, metric: &str, sides: &[Vec<f64>], decimals: usize| {
        let cell = |v: &[f64]| mean(v).map_or("-".to_string(), |m| grouped_decimal(m, decimals));
        let mut cells = vec![label.to_string(), metric.to_string(), cell(&sides[0])];
        for side in 1..letters.len() {
            cells.push(cell(&sides[side]));
            cells.push(match (mean(&sides[0]), mean(&sides[side])) {
                (Some(a), Some(b)) => change(a, b),
                _ => "-".to_string(),
            });
        }
        cells
    };
    vec![
        line("logins", "count", &logins.counts, 0),
        line("", "mean ms", &logins.means, 3),
    ]
}
