//! A rate search in the text report: a line after each step, and the block of every
//! step with the answer at the end.
//!
//! ```text
//! RATE SEARCH of phase crud, 100/s to 5,000/s, steps of 10 s; thresholds: p99 < 50ms
//!   step  rate/s      achieved/s    p99(ms)   late  failed  verdict
//!   1     100.0       99.9          3.21      0     0       meets
//!   2     5,000.0     2,130.4       812.00    9,871 0       fails: achieved 2,130.4/s of 5,000.0/s
//! ANSWER: 1,410/s, the highest rate that met (1,500/s failed); within 5%
//! ```

use std::fmt::Write as _;

use super::numbers::{grouped, grouped_decimal};
use crate::results::{SearchResult, SearchStep};

fn verdict(step: &SearchStep) -> String {
    if step.interrupted {
        "interrupted before its end: not judged".to_string()
    } else if step.meets {
        "meets".to_string()
    } else {
        format!("fails: {}", step.reasons.join("; "))
    }
}

/// The line printed after a step, under its phase's report.
pub fn step_line(number: usize, step: &SearchStep) -> String {
    format!(
        "SEARCH STEP {number} at {}/s: achieved {}/s, p99 {}: {}\n",
        grouped_decimal(step.rate, 1),
        grouped_decimal(step.achieved, 1),
        step.p99_ms
            .map_or("-".to_string(), |ms| format!("{ms:.2} ms")),
        verdict(step)
    )
}

/// The whole search: every step, then the answer.
pub fn block(search: &SearchResult) -> String {
    let thresholds = if search.thresholds.is_empty() {
        "none (a step meets when it reaches its rate without errors)".to_string()
    } else {
        search.thresholds.join(", ")
    };
    let mut out = format!(
        "RATE SEARCH of phase {}, {}/s to {}/s, steps of {} s; thresholds: {thresholds}\n",
        search.phase,
        grouped_decimal(search.low, 1),
        grouped_decimal(search.high, 1),
        search.step_seconds
    );
    let _ = writeln!(
        out,
        "  {:<5} {:<14} {:>12} {:>12} {:>9} {:>7} {:>7}  verdict",
        "step", "phase", "rate/s", "achieved/s", "p99(ms)", "late", "failed"
    );
    for (i, step) in search.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:<5} {:<14} {:>12} {:>12} {:>9} {:>7} {:>7}  {}",
            i + 1,
            step.phase,
            grouped_decimal(step.rate, 1),
            grouped_decimal(step.achieved, 1),
            step.p99_ms.map_or("-".to_string(), |ms| format!("{ms:.2}")),
            grouped(step.late),
            grouped(step.failed),
            verdict(step)
        );
    }
    out.push_str(&answer(search));
    out
}

/// The answer, with how sure it is.
fn answer(search: &SearchResult) -> String {
    let rate = |r: f64| format!("{}/s", grouped_decimal(r, 1));
    let failed = search
        .lowest_failed
        .map_or(String::new(), |f| format!(" ({} failed)", rate(f)));
    let how = match search.ending.as_str() {
        "converged" => format!(
            "within {}% of the lowest rate that failed",
            (search.precision * 100_000.0).round() / 1_000.0
        ),
        "most_steps" => format!(
            "after the most steps, {} (--search-steps); more steps narrow it down",
            search.most_steps
        ),
        "top_met" => {
            "the top of the range met: the database may sustain more; raise the range's top"
                .to_string()
        }
        "interrupted" => "interrupted: the steps so far".to_string(),
        other => other.to_string(),
    };
    match search.answer {
        Some(answer) => format!(
            "ANSWER: {}, the highest rate that met{failed}; {how}\n",
            rate(answer)
        ),
        None if search.ending == "interrupted" => {
            "ANSWER: none yet: interrupted before a step met\n".to_string()
        }
        None => format!(
            "ANSWER: none: no rate from {} up met{failed}; lower the range's bottom, or see why each step failed above\n",
            rate(search.low)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rate: f64, meets: bool) -> SearchStep {
        SearchStep {
            phase: format!("crud@{rate}"),
            rate,
            achieved: rate * 0.99,
            p99_ms: Some(4.5),
            late: 0,
            failed: 0,
            meets,
            reasons: if meets {
                Vec::new()
            } else {
                vec![
                    "achieved 10.0/s of 2,000.0/s".to_string(),
                    "p99 < 50ms (actual 812ms)".to_string(),
                ]
            },
            interrupted: false,
        }
    }

    fn search(steps: Vec<SearchStep>, answer: Option<f64>, ending: &str) -> SearchResult {
        SearchResult {
            phase: "crud".to_string(),
            low: 100.0,
            high: 2_000.0,
            step_seconds: 10.0,
            most_steps: 12,
            precision: 0.05,
            thresholds: vec!["p99 < 50ms".to_string()],
            lowest_failed: steps
                .iter()
                .filter(|s| !s.meets)
                .map(|s| s.rate)
                .reduce(f64::min),
            steps,
            answer,
            ending: ending.to_string(),
        }
    }

    #[test]
    fn the_block_lists_every_step_then_the_answer() {
        let done = search(
            vec![step(100.0, true), step(2_000.0, false), step(447.0, true)],
            Some(447.0),
            "converged",
        );
        let text = block(&done);
        assert!(text.starts_with("RATE SEARCH of phase crud, 100.0/s to 2,000.0/s, steps of 10 s; thresholds: p99 < 50ms\n"), "{text}");
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(
            text.contains("fails: achieved 10.0/s of 2,000.0/s; p99 < 50ms (actual 812ms)"),
            "{text}"
        );
        assert!(
            text.ends_with("ANSWER: 447.0/s, the highest rate that met (2,000.0/s failed); within 5% of the lowest rate that failed\n"),
            "{text}"
        );
        let none = block(&search(vec![step(100.0, false)], None, "bottom_failed"));
        assert!(
            none.contains("ANSWER: none: no rate from 100.0/s up met (100.0/s failed)"),
            "{none}"
        );
        let top = block(&search(
            vec![step(100.0, true), step(2_000.0, true)],
            Some(2_000.0),
            "top_met",
        ));
        assert!(top.contains("raise the range's top"), "{top}");
        assert!(step_line(2, &step(2_000.0, false)).starts_with(
            "SEARCH STEP 2 at 2,000.0/s: achieved 1,980.0/s, p99 4.50 ms: fails: achieved"
        ));
    }
}
