//! The rate search's reasoning, apart from running it: which rate to try next (a
//! bisection), and whether a step met (its rate reached, its thresholds held).
//!
//! The bisection tries the bottom of the range first, then its top, then the geometric
//! middle of the highest rate that met and the lowest that failed, until they are within
//! the precision of each other or the steps run out. The geometric middle halves the
//! ratio between them with every step, so a range of 10 to 100,000 operations per
//! second narrows to 5 % in as many steps as 100 to 1,000 takes to narrow to 0.4 %.

use super::thresholds::{Metric, Threshold, ThresholdOutcome};
use super::{add_encoded, empty_histogram, primary_latency};
use crate::report::numbers::grouped_decimal;
use crate::results::{PhaseResult, SearchStep, build, per_second};

/// A step reaches its rate when it achieves at least this share of it: the phase's
/// wall-clock time runs on while its last answers come in, so a step that kept up
/// achieves a little less than its schedule.
pub const REACHED: f64 = 0.95;

/// What a search is asked: a range of rates, steps of a length, how many at most, and
/// how close the answer must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchPlan {
    pub low: f64,
    pub high: f64,
    pub step: std::time::Duration,
    pub most_steps: u32,
    /// As a fraction: 0.05 stops when the lowest rate that failed is within 5 % above
    /// the highest that met.
    pub precision: f64,
}

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The highest rate that met and the lowest that failed are within the precision.
    Converged,
    /// The steps ran out first.
    MostSteps,
    /// The top of the range met: the database may sustain more.
    TopMet,
    /// The bottom of the range failed: no rate of the range met.
    BottomFailed,
    /// Stopped by Ctrl-C.
    Interrupted,
}

impl Ending {
    pub fn name(self) -> &'static str {
        match self {
            Ending::Converged => "converged",
            Ending::MostSteps => "most_steps",
            Ending::TopMet => "top_met",
            Ending::BottomFailed => "bottom_failed",
            Ending::Interrupted => "interrupted",
        }
    }
}

/// The search's state: what met and what failed so far.
#[derive(Clone, Debug)]
pub struct Bisection {
    plan: SearchPlan,
    tried: u32,
    /// The highest rate that met.
    met: Option<f64>,
    /// The lowest rate that failed.
    failed: Option<f64>,
}

impl Bisection {
    pub fn new(plan: SearchPlan) -> Bisection {
        Bisection {
            plan,
            tried: 0,
            met: None,
            failed: None,
        }
    }

    /// Steps recorded so far.
    pub fn tried(&self) -> u32 {
        self.tried
    }

    pub fn answer(&self) -> Option<f64> {
        self.met
    }

    pub fn lowest_failed(&self) -> Option<f64> {
        self.failed
    }

    /// The next rate to try, or why the search is over.
    pub fn next(&self) -> Result<f64, Ending> {
        let (low, high) = (self.plan.low, self.plan.high);
        let next = match (self.met, self.failed) {
            (None, None) => low,
            (None, Some(_)) => return Err(Ending::BottomFailed),
            (Some(met), None) if met >= high => return Err(Ending::TopMet),
            (Some(_), None) => high,
            (Some(met), Some(failed)) => {
                if failed <= met * (1.0 + self.plan.precision) {
                    return Err(Ending::Converged);
                }
                middle(met, failed).ok_or(Ending::Converged)?
            }
        };
        if self.tried >= self.plan.most_steps {
            return Err(Ending::MostSteps);
        }
        Ok(next)
    }

    /// Records whether the step at `rate` met.
    pub fn record(&mut self, rate: f64, meets: bool) {
        self.tried += 1;
        if meets {
            self.met = Some(self.met.map_or(rate, |m| m.max(rate)));
        } else {
            self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
        }
    }
}

/// The geometric middle of `met` and `failed`, rounded to three significant digits when
/// that keeps it strictly between them (rates people read, e.g. 283 rather than
/// 282.8427); `None` when nothing lies between.
fn middle(met: f64, failed: f64) -> Option<f64> {
    let exact = (met * failed).sqrt();
    // Whole powers of ten, multiplied or divided by, so that 31.6 comes out as 31.6.
    let exponent = exact.log10().floor() as i32 - 2;
    let scale = 10f64.powi(exponent.abs());
    let rounded = if exponent >= 0 {
        (exact / scale).round() * scale
    } else {
        (exact * scale).round() / scale
    };
    [rounded, exact]
        .into_iter()
        .find(|&rate| rate > met && rate < failed && rate.is_finite())
}

/// How a step went, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub step: SearchStep,
    /// Each threshold on the step.
    pub outcomes: Vec<ThresholdOutcome>,
}

/// Whether a threshold speaks of errors: then it, not the rule that nothing may fail,
/// says how many a step may have.
fn counts_errors(threshold: &Threshold) -> bool {
    matches!(
        threshold.metric,
        Metric::Errors | Metric::ErrorRate | Metric::DocErrors | Metric::DocErrorRate
    )
}

/// Judges one step, the phase `searched` run at `rate` (`step`): it meets when it
/// achieved at least [`REACHED`] of its rate, no connection stopped early, every
/// threshold holds, and nothing failed (unless a threshold on errors allows some). A
/// threshold naming the phase judges the step under the phase's name.
pub fn judge(step: &PhaseResult, searched: &str, rate: f64, checks: &[Threshold]) -> Judged {
    let succeeded: u64 = step.operations.iter().map(|op| op.succeeded).sum();
    let failed: u64 = step
        .operations
        .iter()
        .map(|op| op.failed.max(op.documents_failed) + op.unknown_outcomes + op.not_run)
        .sum();
    let achieved = per_second(succeeded, step.wall_seconds);
    let mut reasons = Vec::new();
    if achieved < rate * REACHED {
        reasons.push(format!(
            "achieved {}/s of {}/s",
            grouped_decimal(achieved, 1),
            grouped_decimal(rate, 1)
        ));
    }
    if !step.aborted.is_empty() {
        reasons.push("connections stopped early".to_string());
    }
    if failed > 0 && !checks.iter().any(counts_errors) {
        reasons.push(format!(
            "{failed} failed (no threshold on errors allows any)"
        ));
    }
    let as_searched = [PhaseResult {
        name: searched.to_string(),
        ..step.clone()
    }];
    let outcomes: Vec<ThresholdOutcome> = checks
        .iter()
        .map(|t| t.evaluate_phases(&as_searched))
        .collect();
    reasons.extend(
        outcomes
            .iter()
            .filter(|o| !o.passed)
            .map(|o| format!("{} (actual {})", o.expression, o.actual)),
    );
    Judged {
        step: SearchStep {
            phase: step.name.clone(),
            rate,
            achieved,
            p99_ms: p99_ms(step),
            late: step.late,
            failed,
            meets: reasons.is_empty(),
            reasons,
            interrupted: false,
        },
        outcomes,
    }
}

/// The 99th percentile of all the step's operations together, from their histograms.
fn p99_ms(step: &PhaseResult) -> Option<f64> {
    let mut all = empty_histogram();
    for op in &step.operations {
        add_encoded(&mut all, &primary_latency(step, op).histogram).ok()?;
    }
    (!all.is_empty()).then(|| build::latency(&all).p99_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Latency, OperationResult};
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn plan(low: f64, high: f64, most_steps: u32) -> SearchPlan {
        SearchPlan {
            low,
            high,
            step: Duration::from_secs(1),
            most_steps,
            precision: 0.05,
        }
    }

    /// The rates a search tries against a database that sustains `capacity`, and how
    /// it ends.
    fn search(plan: SearchPlan, capacity: f64) -> (Vec<f64>, Ending, Option<f64>) {
        let mut bisection = Bisection::new(plan);
        let mut tried = Vec::new();
        loop {
            match bisection.next() {
                Ok(rate) => {
                    tried.push(rate);
                    bisection.record(rate, rate <= capacity);
                }
                Err(ending) => return (tried, ending, bisection.answer()),
            }
        }
    }

    #[test]
    fn the_bottom_then_the_top_then_geometric_middles() {
        let (tried, ending, answer) = search(plan(100.0, 10_000.0, 20), 1_234.0);
        assert_eq!(&tried[..3], [100.0, 10_000.0, 1_000.0]);
        assert_eq!(ending, Ending::Converged);
        let answer = answer.unwrap();
        assert!((1_234.0 / 1.05..=1_234.0).contains(&answer), "{answer}");
        // Each middle lies strictly between the bounds it came from.
        assert!(tried.windows(2).all(|w| w[0] != w[1]), "{tried:?}");
        assert!(tried.len() <= 2 + 7, "{tried:?}");
    }

    #[test]
    fn ends_below_and_above_the_range_and_when_steps_run_out() {
        let (tried, ending, answer) = search(plan(100.0, 1_000.0, 20), 50.0);
        assert_eq!(
            (tried, ending, answer),
            (vec![100.0], Ending::BottomFailed, None)
        );
        let (tried, ending, answer) = search(plan(100.0, 1_000.0, 20), 5_000.0);
        assert_eq!(
            (tried, ending, answer),
            (vec![100.0, 1_000.0], Ending::TopMet, Some(1_000.0))
        );
        let (tried, ending, answer) = search(plan(1.0, 1_000_000.0, 4), 777.0);
        assert_eq!(tried.len(), 4);
        assert_eq!(ending, Ending::MostSteps);
        assert_eq!(
            answer,
            Some(31.6),
            "1 met, 1,000,000 and 1,000 failed, 31.6 met"
        );
        let (tried, ending, _) = search(plan(1.0, 2.0, 1), 1.5);
        assert_eq!((tried.len(), ending), (1, Ending::MostSteps));
    }

    #[test]
    fn middles_are_rounded_only_while_they_stay_between() {
        assert_eq!(middle(100.0, 400.0), Some(200.0));
        assert_eq!(middle(200.0, 800.0), Some(400.0));
        assert_eq!(middle(1_000.0, 2_000.0), Some(1_410.0));
        let close = middle(1_000.0, 1_001.0).unwrap();
        assert!(close > 1_000.0 && close < 1_001.0, "{close}");
        assert_eq!(middle(1.0, 1.0), None);
        assert_eq!(middle(0.001, 10_000_000.0), Some(100.0));
        assert_eq!(middle(0.5, 2.0), Some(1.0));
        assert_eq!(middle(0.001, 0.002), Some(0.00141));
    }

    fn latency(values_us: &[u64]) -> Latency {
        let mut h = empty_histogram();
        for &v in values_us {
            h.record(v).unwrap();
        }
        build::latency(&h)
    }

    /// A step of `wall` seconds with `succeeded` reads of 1 ms, but the last 2 % of 80 ms.
    fn step(wall: f64, succeeded: u64, failed: u64) -> PhaseResult {
        let slow = succeeded / 50;
        let mut values = vec![1_000; (succeeded - slow) as usize];
        values.extend(vec![80_000; slow as usize]);
        let read = OperationResult {
            operation: "read".to_string(),
            succeeded,
            failed,
            documents: succeeded,
            documents_failed: failed,
            throughput: per_second(succeeded, wall),
            documents_per_sec: per_second(succeeded, wall),
            failures: BTreeMap::new(),
            failure_samples: BTreeMap::new(),
            statuses: BTreeMap::new(),
            latency: latency(&[500]),
            response: latency(&values),
            failed_latency: None,
            resends: 0,
            retried_429: 0,
            retry_429_wait_ns: 0,
            unknown_outcomes: 0,
            not_run: 0,
            bytes_sent: 0,
            bytes_received: 0,
            rows: None,
            rows_per_sec: None,
            hot: None,
            existing: None,
            row_check: None,
        };
        let mut phase = PhaseResult::of_operations("crud@100", wall, vec![read]);
        phase.target_rate = Some(100.0);
        phase
    }

    fn judge_crud(step: &PhaseResult, rate: f64, checks: &[Threshold]) -> Judged {
        judge(step, "crud", rate, checks)
    }

    fn thresholds(expressions: &[&str]) -> Vec<Threshold> {
        let given: Vec<String> = expressions.iter().map(|e| e.to_string()).collect();
        Threshold::parse_all(&given).unwrap()
    }

    #[test]
    fn a_step_meets_when_it_reaches_its_rate_and_its_thresholds() {
        let judged = judge_crud(&step(10.0, 1_000, 0), 100.0, &thresholds(&["p99 < 100ms"]));
        assert!(judged.step.meets, "{:?}", judged.step.reasons);
        assert!((judged.step.p99_ms.unwrap() - 80.0).abs() < 0.1);
        assert_eq!(judged.step.achieved, 100.0);
        assert_eq!(judged.outcomes.len(), 1);
        // The response time counts under a rate: its p99 is among the slow 2 %.
        let judged = judge_crud(
            &step(10.0, 1_000, 0),
            100.0,
            &thresholds(&["crud:p99 < 50ms"]),
        );
        assert!(!judged.step.meets);
        assert_eq!(judged.step.reasons.len(), 1);
        assert!(
            judged.step.reasons[0].starts_with("crud:p99 < 50ms (actual 80."),
            "{:?}",
            judged.step.reasons
        );
    }

    #[test]
    fn a_rate_not_reached_fails_its_step_even_when_latency_is_fine() {
        let judged = judge_crud(&step(10.0, 900, 0), 100.0, &thresholds(&["p99 < 1s"]));
        assert!(!judged.step.meets);
        assert_eq!(judged.step.reasons, ["achieved 90.0/s of 100.0/s"]);
        assert!(judge_crud(&step(10.0, 951, 0), 100.0, &[]).step.meets);
    }

    #[test]
    fn failures_fail_a_step_unless_a_threshold_on_errors_allows_them() {
        let judged = judge_crud(&step(10.0, 1_000, 3), 100.0, &thresholds(&["p99 < 1s"]));
        assert_eq!(
            judged.step.reasons,
            ["3 failed (no threshold on errors allows any)"]
        );
        assert!(
            judge_crud(
                &step(10.0, 1_000, 3),
                100.0,
                &thresholds(&["error_rate < 1%"])
            )
            .step
            .meets
        );
        let judged = judge_crud(
            &step(10.0, 1_000, 30),
            100.0,
            &thresholds(&["error_rate < 1%"]),
        );
        assert!(!judged.step.meets);
        let mut stopped = step(10.0, 1_000, 0);
        stopped.aborted.push("connection 0 gave up".to_string());
        assert_eq!(
            judge_crud(&stopped, 100.0, &[]).step.reasons,
            ["connections stopped early"]
        );
    }
}
