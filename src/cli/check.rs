//! `sofabench check RESULT --threshold EXPR… --expect NAME=VALUE…`: thresholds and the
//! environment expected of a saved result; exit 1 when one fails or the run was
//! interrupted (unless `--allow-interrupted`), 2 on bad input (see `analysis::thresholds`
//! and `analysis::expectations`).

use super::CheckArgs;
use crate::analysis::expectations::{self, Expectation};
use crate::analysis::thresholds::Threshold;
use crate::exit::{Failed, RUN_FAILED};
use crate::results::RunResult;
use crate::results::environment::facts;
use crate::run::thresholds::{failed, print_outcomes};
use crate::words::counted;

pub fn execute(args: CheckArgs) -> Result<(), Failed> {
    let checks = Threshold::parse_all(&args.threshold).map_err(Failed::bad_input)?;
    let expected = Expectation::parse_all(&args.expect).map_err(Failed::bad_input)?;
    let result = RunResult::read(&args.result).map_err(Failed::bad_input)?;
    crate::results::tally::check_readable(&result.phases, &args.result.display().to_string())
        .map_err(Failed::bad_input)?;
    refuse_interrupted(&result, &args)?;
    let unmet = judge_environment(&expected, &result)?;
    let judged = judged_phases(result)?;
    let outcomes = if checks.is_empty() {
        Vec::new()
    } else {
        print_outcomes(&checks, &judged)?
    };
    let mut failures = Vec::new();
    let failed = failed(&outcomes);
    if failed > 0 {
        failures.push(format!("{failed} of {} thresholds", outcomes.len()));
    }
    if unmet > 0 {
        failures.push(format!(
            "{unmet} of {}",
            counted(expected.len() as u64, "expectation")
        ));
    }
    if !failures.is_empty() {
        crate::text::sink::err(&format!("sofabench: {} failed", failures.join(" and ")));
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    Ok(())
}

/// The ENVIRONMENT block of `expected` judged on `result`'s facts (none printed when none
/// is expected); how many were not met.
fn judge_environment(expected: &[Expectation], result: &RunResult) -> Result<usize, Failed> {
    if expected.is_empty() {
        return Ok(0);
    }
    let facts = facts(result);
    let outcomes: Vec<_> = expected.iter().map(|e| e.judge(&facts)).collect();
    crate::text::sink::out(&expectations::report(&outcomes)).map_err(Failed::output)?;
    Ok(outcomes.iter().filter(|o| !o.met).count())
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

    #[test]
    fn help_of_expect_names_every_fact() {
        let command = Cli::command();
        let check = command.find_subcommand("check").unwrap();
        let expect = check
            .get_arguments()
            .find(|a| a.get_id() == "expect")
            .unwrap();
        let help = expect.get_long_help().unwrap().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for name in crate::results::environment::names() {
            assert!(
                help.contains(&format!("{name},")) || help.contains(&format!("{name} (")),
                "{name}: {help}"
            );
        }
    }
}
