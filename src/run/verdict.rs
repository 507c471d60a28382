//! The run's verdict: it failed when any operation failed, left its outcome unknown or
//! was not run, or a background action failed; each reason gets one line on stderr.
//!
//! What the verdict needs is counted as each pass ends ([`Counts::add`]), so a run of
//! many repetitions keeps counts, not every phase's tallies.

use crate::engine::PhaseOutcome;
use crate::exit::{Failed, RUN_FAILED};
use crate::report::numbers::grouped;

/// What went wrong in the phases so far.
#[derive(Debug, Default)]
pub struct Counts {
    /// Failures: operations, and a bulk insert's documents refused one by one.
    failed: u64,
    /// Of those, whole operations.
    failed_operations: u64,
    unknown: u64,
    not_run: u64,
    /// Whether connections stopped early anywhere.
    aborted: bool,
    /// A line per background action that failed.
    actions: Vec<String>,
}

impl Counts {
    /// Adds the phases of a pass; `pass` names it in the actions' lines when the run
    /// repeats (`repetition 2: `), else is empty.
    pub fn add(&mut self, outcomes: &[PhaseOutcome], pass: &str) {
        for outcome in outcomes {
            for op in outcome.tally.operations.values() {
                let counts = &op.counts;
                self.failed = self.failed.saturating_add(counts.failures.total());
                self.failed_operations = self
                    .failed_operations
                    .saturating_add(counts.failures.of_operations());
                self.unknown = self.unknown.saturating_add(counts.unknown);
                self.not_run = self.not_run.saturating_add(counts.not_run);
            }
            self.aborted |= !outcome.aborted.is_empty();
            if let Some(action) = &outcome.action
                && let Some(error) = &action.error
            {
                self.actions.push(format!(
                    "{pass}background action {} of phase {} failed: {error}",
                    action.kind, outcome.name
                ));
            }
        }
    }
}

/// The run failed when any operation failed, left its outcome unknown or was not run,
/// or a background action failed.
pub fn verdict(counts: &Counts) -> Result<(), Failed> {
    for line in &counts.actions {
        eprintln!("sofabench: {line}");
    }
    let Counts {
        failed,
        failed_operations,
        unknown,
        not_run,
        aborted,
        ..
    } = *counts;
    if failed == 0 && unknown == 0 && not_run == 0 && !aborted {
        return if counts.actions.is_empty() {
            Ok(())
        } else {
            Err(Failed::Quiet { code: RUN_FAILED })
        };
    }
    let mut parts = Vec::new();
    if failed_operations > 0 {
        parts.push(format!("{} operations failed", grouped(failed_operations)));
    }
    if failed > failed_operations {
        parts.push(format!(
            "{} documents failed in bulk insert answers",
            grouped(failed - failed_operations)
        ));
    }
    if unknown > 0 {
        parts.push(format!(
            "{} documents have an unknown outcome",
            grouped(unknown)
        ));
    }
    if not_run > 0 {
        parts.push(format!(
            "{} planned operations were not run",
            grouped(not_run)
        ));
    }
    if aborted {
        parts.push("connections stopped early".to_string());
    }
    eprintln!(
        "sofabench: {} (see \"failed\", \"unknown\", \"not run\" and \"stopped early\" lines above)",
        parts.join("; ")
    );
    Err(Failed::Quiet { code: RUN_FAILED })
}
