//! What a run prints after its last phase, made from its result alone, so that the run
//! and `sofabench report` print it the same way: the reference benchmark's own lines after
//! each pass's phases, then how repetitions spread, the notes said once for the whole
//! run, the thresholds and the SUMMARY with the verdict (or a rate search's block).

use std::collections::BTreeMap;

use super::closing::{self, Closing};
use super::{Detail, forms, repetitions, search, server};
use crate::analysis::thresholds;
use crate::results::{PhaseResult, RunResult};
use crate::scenario::Form;

/// The reference benchmark's lines for `phases` (one pass of a run whose result's config
/// is `config`), for a run of the built-in scenario that reproduces one (`titan`,
/// `scaling`); empty otherwise.
pub fn form_lines(config: &BTreeMap<String, serde_json::Value>, phases: &[PhaseResult]) -> String {
    let form = config
        .get("scenario")
        .and_then(|name| name.as_str())
        .and_then(crate::scenario::builtin)
        .map(|builtin| builtin.form());
    match form {
        Some(Form::Titan) => format!(
            "TITAN LOADTEST LINES (phase, duration s, writes, write rate, reads, read rate, hits):\n{}",
            forms::titan(phases)
        ),
        Some(Form::Scaling) => format!("SCALING TABLE:\n{}", forms::scaling(phases)),
        Some(Form::Fabric) => format!(
            "FABRIC_BENCH STEPS (per second of each step's wall-clock time):\n{}",
            forms::fabric(phases)
        ),
        Some(Form::Standard) | None => String::new(),
    }
}

/// What the server did not tell (its statistics refused, …), each said once for the run
/// under NOTES, however many phases and repetitions met it.
pub fn notes(result: &RunResult) -> String {
    let repeated = result.repetitions.iter().flat_map(|r| &r.phases);
    let lines = server::notes(result.phases.iter().chain(repeated));
    if lines.is_empty() {
        lines
    } else {
        format!("NOTES:\n{lines}")
    }
}

/// The end of the run's text: the repetitions' spread, the notes (with
/// [`Detail::Verbose`]), the THRESHOLDS block and the SUMMARY; for a rate search, its
/// block instead of the last two, its steps having been judged one by one.
pub fn text(closing: &Closing, detail: Detail) -> String {
    let result = closing.result;
    let mut out = repetitions::spread(result);
    if detail == Detail::Verbose {
        out.push_str(&notes(result));
    }
    if let Some(search) = &result.search {
        out.push_str(&search::block(search));
        return out;
    }
    if !closing.thresholds.is_empty() {
        out.push_str(&thresholds::report(closing.thresholds));
    }
    out.push_str(&closing::text(closing));
    out
}
