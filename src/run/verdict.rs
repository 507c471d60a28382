//! The run's verdict: it failed when any operation failed, left its outcome unknown or
//! was not run, or a background action failed; each reason gets one line on stderr.
//!
//! What the verdict needs is counted as each pass of the run ends ([`Counts::add`]), so
//! a run of many repetitions keeps counts, not every phase's tallies.

use crate::exit::{Failed, RUN_FAILED};
use crate::metrics::Failure;
use crate::report::numbers::grouped;
use crate::results::{PhaseResult, RunResult};

/// Why the operations and actions of a run failed it; empty parts when nothing did.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// One line per background action that failed.
    pub actions: Vec<String>,
    /// What went wrong with the operations, one part each ("3 operations failed").
    pub operations: Vec<String>,
}

impl Verdict {
    pub fn failed(&self) -> bool {
        !self.actions.is_empty() || !self.operations.is_empty()
    }

    /// Every reason, as the closing summary lists them.
    pub fn reasons(&self) -> Vec<String> {
        self.operations
            .iter()
            .chain(&self.actions)
            .cloned()
            .collect()
    }

    /// Prints the reasons on stderr; an error to exit with when there is one.
    pub fn print(&self) -> Result<(), Failed> {
        for line in &self.actions {
            crate::text::sink::err(&format!("sofabench: {line}"));
        }
        if !self.operations.is_empty() {
            crate::text::sink::err(&format!(
                "sofabench: {} (see \"failed\", \"unknown\", \"not run\" and \"stopped early\" lines above)",
                self.operations.join("; ")
            ));
        }
        if self.failed() {
            Err(Failed::Quiet { code: RUN_FAILED })
        } else {
            Ok(())
        }
    }
}

/// What went wrong in the phases so far.
#[derive(Debug, Default)]
pub struct Counts {
    /// Failures: operations, and a bulk insert's documents refused one by one.
    failed: u64,
    /// Of those, whole operations.
    failed_operations: u64,
    /// Of those, rows of bulk answers for documents never sent (`unknown_row`).
    unknown_rows: u64,
    unknown: u64,
    not_run: u64,
    /// Whether connections stopped early anywhere.
    aborted: bool,
    /// A line per background action that failed.
    actions: Vec<String>,
}

impl Counts {
    /// Adds the phases of a pass as its result keeps them; `pass` names it in the
    /// actions' lines when the run repeats (`repetition 2: `), else is empty.
    pub fn add(&mut self, phases: &[PhaseResult], pass: &str) {
        for phase in phases {
            for op in &phase.operations {
                let all = op
                    .failures
                    .values()
                    .fold(0u64, |sum, n| sum.saturating_add(*n));
                self.failed = self.failed.saturating_add(all);
                self.failed_operations = self.failed_operations.saturating_add(op.failed);
                let rows = op.failures.get(&Failure::UnknownRow.to_string());
                self.unknown_rows = self.unknown_rows.saturating_add(rows.copied().unwrap_or(0));
                self.unknown = self.unknown.saturating_add(op.unknown_outcomes);
                self.not_run = self.not_run.saturating_add(op.not_run);
            }
            self.aborted |= !phase.aborted.is_empty();
            if let Some(action) = &phase.action
                && let Some(error) = &action.error
            {
                self.actions.push(format!(
                    "{pass}background action {} of phase {} failed: {error}",
                    action.kind, phase.name
                ));
            }
            self.actions.extend(unconverged(phase, pass));
        }
    }

    /// What went wrong in the whole of `result`: each repetition's phases, or the run's;
    /// a rate search's steps are judged by its thresholds, not here.
    pub fn of_result(result: &RunResult) -> Counts {
        let mut counts = Counts::default();
        let steps = result.search.as_ref().map_or(0, |s| s.steps.len());
        let judged = |phases: &[PhaseResult]| phases.len().saturating_sub(steps);
        if result.repetitions.is_empty() {
            counts.add(&result.phases[..judged(&result.phases)], "");
        }
        for repetition in &result.repetitions {
            let phases = &repetition.phases[..judged(&repetition.phases)];
            counts.add(phases, &format!("repetition {}: ", repetition.index));
        }
        counts
    }
}

/// A line when the phase's devices did not all agree with the server at the end: what
/// they wrote or read came out wrong, or could not be checked.
fn unconverged(phase: &PhaseResult, pass: &str) -> Option<String> {
    let check = &phase.devices.as_ref()?.convergence;
    let apart = check.checked.saturating_sub(check.converged);
    if apart == 0 && check.error.is_none() {
        return None;
    }
    let why = check
        .error
        .as_ref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    Some(format!(
        "{pass}phase {}: {} of {} devices did not converge with the server{why} (see the devices block)",
        phase.name,
        grouped(apart),
        grouped(check.checked)
    ))
}

/// The run failed when any operation failed, left its outcome unknown or was not run,
/// or a background action failed.
pub fn judge(counts: &Counts) -> Verdict {
    let mut parts = Vec::new();
    if counts.failed_operations > 0 {
        parts.push(format!(
            "{} operations failed",
            grouped(counts.failed_operations)
        ));
    }
    let documents = counts
        .failed
        .saturating_sub(counts.failed_operations)
        .saturating_sub(counts.unknown_rows);
    if documents > 0 {
        parts.push(format!(
            "{} documents failed in bulk insert answers",
            grouped(documents)
        ));
    }
    if counts.unknown_rows > 0 {
        parts.push(format!(
            "{} bulk insert answer rows were for documents never sent (unknown_row)",
            grouped(counts.unknown_rows)
        ));
    }
    if counts.unknown > 0 {
        parts.push(format!(
            "{} documents have an unknown outcome",
            grouped(counts.unknown)
        ));
    }
    if counts.not_run > 0 {
        parts.push(format!(
            "{} planned operations were not run",
            grouped(counts.not_run)
        ));
    }
    if counts.aborted {
        parts.push("connections stopped early".to_string());
    }
    Verdict {
        actions: counts.actions.clone(),
        operations: parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ActionResult, OperationResult, RepetitionResult};

    fn phase(failed: u64, not_run: u64, action_error: Option<&str>) -> PhaseResult {
        let mut failures = std::collections::BTreeMap::new();
        failures.insert("500".to_string(), failed);
        failures.insert("unknown_row".to_string(), 2);
        let op = OperationResult {
            operation: "create".to_string(),
            failed,
            failures,
            not_run,
            ..OperationResult::unmeasured()
        };
        let mut phase = PhaseResult::of_operations("crud", 1.0, vec![op]);
        phase.action = action_error.map(|error| ActionResult {
            kind: "compact".to_string(),
            started_seconds: None,
            finished_seconds: None,
            size_before: None,
            size_after: None,
            size_field: None,
            error: Some(error.to_string()),
            note: None,
        });
        phase
    }

    fn repetition(index: u64, phases: Vec<PhaseResult>) -> RepetitionResult {
        RepetitionResult {
            index,
            database_name: format!("db-{index}"),
            id_prefix: format!("p{index}"),
            started_at: String::new(),
            ended_at: String::new(),
            interrupted: false,
            database_deleted: false,
            phases,
        }
    }

    #[test]
    fn devices_that_did_not_converge_fail_the_run() {
        let mut all = phase(0, 0, None);
        all.devices = Some(crate::results::devices::sample(5));
        let verdict = judge(&Counts::of_result(&RunResult::of_phases(vec![all])));
        assert!(verdict.actions.is_empty(), "{:?}", verdict.actions);
        let mut some = phase(0, 0, None);
        some.name = "fleet".to_string();
        some.devices = Some(crate::results::devices::sample(3));
        let verdict = judge(&Counts::of_result(&RunResult::of_phases(vec![some])));
        assert_eq!(
            verdict.actions,
            [
                "phase fleet: 2 of 5 devices did not converge with the server (see the devices block)"
            ]
        );
    }

    #[test]
    fn a_result_is_judged_as_its_run_was() {
        let result = RunResult::of_phases(vec![phase(3, 4, None)]);
        let verdict = judge(&Counts::of_result(&result));
        assert_eq!(
            verdict.operations,
            [
                "3 operations failed",
                "2 bulk insert answer rows were for documents never sent (unknown_row)",
                "4 planned operations were not run"
            ]
        );
        assert!(verdict.actions.is_empty());
        // With repetitions, each one's own phases, an action named by its repetition.
        let mut repeated = RunResult::of_phases(vec![phase(9, 0, None)]);
        repeated.repetitions = vec![
            repetition(1, vec![phase(1, 0, None)]),
            repetition(2, vec![phase(0, 0, Some("boom"))]),
        ];
        let verdict = judge(&Counts::of_result(&repeated));
        assert_eq!(verdict.operations[0], "1 operations failed");
        assert_eq!(
            verdict.actions,
            ["repetition 2: background action compact of phase crud failed: boom"]
        );
    }
}
