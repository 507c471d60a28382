//! The run's verdict: it failed when any operation failed, left its outcome unknown or
//! was not run, or a background action failed; each reason gets one line on stderr.

use crate::engine::PhaseOutcome;
use crate::exit::{Failed, RUN_FAILED};
use crate::report::numbers::grouped;

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
            eprintln!("sofabench: {line}");
        }
        if !self.operations.is_empty() {
            eprintln!(
                "sofabench: {} (see \"failed\", \"unknown\", \"not run\" and \"stopped early\" lines above)",
                self.operations.join("; ")
            );
        }
        if self.failed() {
            Err(Failed::Quiet { code: RUN_FAILED })
        } else {
            Ok(())
        }
    }
}

/// Background actions that failed, one line each.
fn action_failures(outcomes: &[PhaseOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter_map(|o| {
            let action = o.action.as_ref()?;
            let error = action.error.as_ref()?;
            Some(format!(
                "background action {} of phase {} failed: {error}",
                action.kind, o.name
            ))
        })
        .collect()
}

/// The run failed when any operation failed, left its outcome unknown or was not run,
/// or a background action failed.
pub fn judge(outcomes: &[PhaseOutcome]) -> Verdict {
    let operations = || {
        outcomes
            .iter()
            .flat_map(|o| o.tally.operations.values())
            .map(|op| &op.counts)
    };
    // Operations, and a bulk insert's documents refused one by one: apart, never added.
    let failed: u64 = operations().map(|op| op.failures.total()).sum();
    let failed_operations: u64 = operations().map(|m| m.failures.of_operations()).sum();
    let unknown: u64 = operations().map(|op| op.unknown).sum();
    let not_run: u64 = operations().map(|op| op.not_run).sum();
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
    if outcomes.iter().any(|o| !o.aborted.is_empty()) {
        parts.push("connections stopped early".to_string());
    }
    Verdict {
        actions: action_failures(outcomes),
        operations: parts,
    }
}
