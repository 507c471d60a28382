//! `sofabench check RESULT --threshold EXPR…`: thresholds on a saved result; exit 1 when
//! one fails, 2 on bad input (see `analysis::thresholds`).

use std::io::Write;

use super::CheckArgs;
use crate::analysis::thresholds::{self, Threshold};
use crate::exit::{Failed, RUN_FAILED};
use crate::results::RunResult;

pub fn execute(args: CheckArgs) -> Result<(), Failed> {
    let checks = Threshold::parse_all(&args.threshold).map_err(Failed::bad_input)?;
    let result = RunResult::read(&args.result).map_err(Failed::bad_input)?;
    let outcomes = thresholds::evaluate_all(&checks, &result);
    let mut out = std::io::stdout().lock();
    out.write_all(thresholds::report(&outcomes).as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failed::output)?;
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    if failed > 0 {
        eprintln!(
            "sofabench: {failed} of {} thresholds failed",
            outcomes.len()
        );
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    Ok(())
}
