//! Thresholds on a result, as a run ends, as `report` judges its result again, and as
//! `sofabench check` does it later: one way to evaluate and print them.

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

/// The thresholds the run of `result` was given (its config's `thresholds`), judged on
/// it as the run judged them; none for a result written before they were kept.
pub fn recorded(result: &RunResult, file: &str) -> Result<Vec<ThresholdOutcome>, Failed> {
    let Some(given) = result.config.get("thresholds") else {
        return Ok(Vec::new());
    };
    let expressions: Vec<String> = serde_json::from_value(given.clone()).map_err(|e| {
        Failed::bad_input(format!(
            "{file}: config.thresholds is not a list of expressions ({e}); it is what the run's --threshold flags were: remove it to show the result without them"
        ))
    })?;
    let checks = Threshold::parse_all(&expressions)
        .map_err(|e| Failed::bad_input(format!("{file}: config.thresholds: {e}")))?;
    Ok(thresholds::evaluate_all(&checks, result))
}

/// How many of `outcomes` failed.
pub fn failed(outcomes: &[ThresholdOutcome]) -> usize {
    outcomes.iter().filter(|o| !o.passed).count()
}
