//! Thresholds on a result, as a run ends and as `sofabench check` does it later: one way
//! to evaluate and print them.

use std::io::Write;

use crate::analysis::thresholds::{self, Threshold};
use crate::exit::Failed;
use crate::results::RunResult;

/// How many outcomes failed, of how many (a check without a phase has one per phase).
pub struct Tally {
    pub failed: usize,
    pub outcomes: usize,
}

/// Evaluates `checks` on `result` and prints the THRESHOLDS block.
pub fn print_outcomes(checks: &[Threshold], result: &RunResult) -> Result<Tally, Failed> {
    let outcomes = thresholds::evaluate_all(checks, result);
    let mut out = std::io::stdout().lock();
    out.write_all(thresholds::report(&outcomes).as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failed::output)?;
    Ok(Tally {
        failed: outcomes.iter().filter(|o| !o.passed).count(),
        outcomes: outcomes.len(),
    })
}
