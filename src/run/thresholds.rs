//! Thresholds on a result, as a run ends and as `sofabench check` does it later: one way
//! to evaluate and print them.

use crate::analysis::thresholds::{self, Threshold, ThresholdOutcome};
use crate::exit::Failed;
use crate::results::RunResult;

/// Evaluates `checks` on `result`, prints the THRESHOLDS block, and returns the outcomes
/// (a check without a phase has one per phase).
pub fn print_outcomes(
    checks: &[Threshold],
    result: &RunResult,
) -> Result<Vec<ThresholdOutcome>, Failed> {
    let outcomes = thresholds::evaluate_all(checks, result);
    crate::text::sink::out(&thresholds::report(&outcomes)).map_err(Failed::output)?;
    Ok(outcomes)
}

/// How many of `outcomes` failed.
pub fn failed(outcomes: &[ThresholdOutcome]) -> usize {
    outcomes.iter().filter(|o| !o.passed).count()
}
