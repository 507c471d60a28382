//! `sofabench check RESULT --threshold EXPR…`: thresholds on a saved result; exit 1 when
//! one fails or the run was interrupted (unless `--allow-interrupted`), 2 on bad input
//! (see `analysis::thresholds`).

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
    refuse_interrupted(&result, &args)?;
    let judged = judged_phases(result)?;
    let outcomes = print_outcomes(&checks, &judged)?;
    let failed = failed(&outcomes);
    if failed > 0 {
        crate::text::sink::err(&format!(
            "sofabench: {failed} of {} thresholds failed",
            outcomes.len()
        ));
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    Ok(())
}

/// A run stopped before its end (Ctrl-C, or killed: a result written after each phase
/// says `interrupted` until the run ends) holds a phase cut short and misses the phases
/// after it, so thresholds met by what it did say nothing of the run asked for: it fails
/// the check unless the user asks for it to be judged anyway.
fn refuse_interrupted(result: &RunResult, args: &CheckArgs) -> Result<(), Failed> {
    if !result.interrupted {
        return Ok(());
    }
    let file = args.result.display();
    if args.allow_interrupted {
        crate::text::sink::out(&format!(
            "{file}: the run was interrupted; judged on what it did (--allow-interrupted)\n"
        ))
        .map_err(Failed::output)?;
        return Ok(());
    }
    crate::text::sink::err(&format!(
        "sofabench: {file}: the run was interrupted (interrupted: true in the result): its last phase was cut short and the phases after it never ran, so it is not judged; add --allow-interrupted to judge what it did anyway"
    ));
    Err(Failed::Quiet { code: RUN_FAILED })
}

/// The result whose phases the thresholds judge. A rate search's steps above its answer
/// failed by design (that is how the answer was found), so a search is judged on its
/// answer step and the phases before the steps, and says so; a search without an answer
/// fails the check. The result is taken, not copied: a result file may be large.
fn judged_phases(mut result: RunResult) -> Result<RunResult, Failed> {
    let Some(search) = &result.search else {
        return Ok(result);
    };
    let steps: Vec<String> = search.steps.iter().map(|s| s.phase.clone()).collect();
    let answer = search
        .steps
        .iter()
        .filter(|s| s.meets && Some(s.rate) == search.answer)
        .map(|s| s.phase.clone())
        .next_back();
    let Some(answer) = answer else {
        crate::text::sink::err(&format!(
            "sofabench: the rate search of phase {} found no rate that met its thresholds: there is no step to judge",
            search.phase
        ));
        return Err(Failed::Quiet { code: RUN_FAILED });
    };
    crate::text::sink::out(&format!(
        "a rate search: judged on its answer step {answer} and the phases before the steps; the other {} steps are left out\n",
        steps.len().saturating_sub(1)
    ))
    .map_err(Failed::output)?;
    result
        .phases
        .retain(|p| p.name == answer || !steps.contains(&p.name));
    Ok(result)
}
