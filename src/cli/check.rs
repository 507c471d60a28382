//! `sofabench check RESULT --threshold EXPR…`: thresholds on a saved result; exit 1 when
//! one fails, 2 on bad input (see `analysis::thresholds`).

use super::CheckArgs;
use crate::analysis::thresholds::Threshold;
use crate::exit::{Failed, RUN_FAILED};
use crate::results::RunResult;
use crate::run::thresholds::{failed, print_outcomes};

pub fn execute(args: CheckArgs) -> Result<(), Failed> {
    let checks = Threshold::parse_all(&args.threshold).map_err(Failed::bad_input)?;
    let result = RunResult::read(&args.result).map_err(Failed::bad_input)?;
    crate::results::tally::check_readable(&result.phases, &args.result.display().to_string())
        .map_err(Failed::bad_input)?;
    let outcomes = print_outcomes(&checks, &result)?;
    let failed = failed(&outcomes);
    if failed > 0 {
        eprintln!(
            "sofabench: {failed} of {} thresholds failed",
            outcomes.len()
        );
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    Ok(())
}
