//! Turning measurements into what users read.

pub mod achieved;
pub mod changes;
pub mod closing;
pub mod connections;
pub mod devices;
pub mod disk;
pub mod ending;
pub mod environment;
pub mod forms;
pub mod indexes;
pub mod ironcushion;
pub mod late_cause;
pub mod latency;
pub mod live;
pub mod logins;
pub mod numbers;
pub mod ramp;
pub mod repetitions;
pub mod replication;
pub mod search;
pub mod server;
pub mod summary;
pub mod table;
pub mod transfer;

use std::collections::BTreeMap;

use crate::results::{PhaseResult, RunResult};

/// Warnings about how the whole run was made, from its result's config: printed before
/// its phases wherever a result is shown.
pub fn run_warnings(config: &BTreeMap<String, serde_json::Value>) -> String {
    let unverified = config
        .get("tls")
        .and_then(|tls| tls.get("verified"))
        .is_some_and(|verified| verified == false);
    if unverified {
        "WARNING: --insecure: the servers' TLS certificates were not checked; the figures may come from another server than the one meant\n".to_string()
    } else {
        String::new()
    }
}

/// How much a text report says: the answer by default, everything with `-v`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// Iron Cushion's blocks, a latency table, the histograms, failures and warnings per
    /// phase, and the SUMMARY: what most people read.
    #[default]
    Brief,
    /// Also what each operation carried, the disk, the connections, the logins, the
    /// server's figures, and the notes about what the server did not tell.
    Verbose,
}

/// The text report of a whole result, as its run printed it after its live lines: its
/// phases, or with repetitions each repetition's phases and how their figures spread, then
/// the run's ending ([`ending::text`]); first the header's lines the result keeps (its
/// warnings, what it ran against and from).
pub fn run_text(result: &RunResult, detail: Detail) -> String {
    let mut text = run_warnings(&result.config);
    text.push_str(&environment::header(&result.nodes, detail));
    text.push_str(&passes_text(result, detail));
    text
}

/// Every pass of the result (the run, or each repetition) as the run printed it: a
/// repetition's heading, its phases and its reference benchmark's lines.
fn passes_text(result: &RunResult, detail: Detail) -> String {
    if result.repetitions.is_empty() {
        let mut text = phases_text(&result.phases, result.interrupted, detail);
        text.push_str(&ending::form_lines(&result.config, &result.phases));
        return text;
    }
    let count = repetitions::planned(result);
    let mut text = String::new();
    for repetition in &result.repetitions {
        text.push_str(&repetitions::heading_of(repetition, count));
        text.push_str(&phases_text(
            &repetition.phases,
            repetition.interrupted,
            detail,
        ));
        text.push_str(&ending::form_lines(&result.config, &repetition.phases));
    }
    text
}

/// Phases one after the other; the last one cut short when `interrupted`.
fn phases_text(phases: &[PhaseResult], interrupted: bool, detail: Detail) -> String {
    let last = phases.len().saturating_sub(1);
    phases
        .iter()
        .enumerate()
        .map(|(index, phase)| phase_text(phase, interrupted && index == last, detail))
        .collect()
}

/// Everything printed for one phase: Iron Cushion's block, the latency tables, failures,
/// the histograms and warnings, and why connections stopped early; with
/// [`Detail::Verbose`] also what it achieved per operation, what the operations carried,
/// the disk, the connections, the logins and the server's figures. Notes about what the
/// server did not tell are said once per run, by [`ending::notes`].
pub fn phase_text(phase: &PhaseResult, interrupted: bool, detail: Detail) -> String {
    if phase.connections == 0 && phase.devices.is_some() {
        return devices_alone_text(phase, interrupted, detail);
    }
    let verbose = detail == Detail::Verbose;
    let mut out = ironcushion::title(phase);
    out.push('\n');
    if verbose {
        out.push_str(&achieved::table(phase));
    }
    out.push_str(&indexes::lines(&phase.index_builds));
    out.push_str(&ironcushion::fields(phase));
    if interrupted {
        out.push_str("  INTERRUPTED: the figures cover what was done before the stop\n");
    }
    out.push_str(&latency::table(phase, latency::Latency::Service));
    if phase.target_rate.is_some() {
        out.push_str(&latency::table(phase, latency::Latency::Response));
    }
    if verbose {
        out.push_str(&transfer::table(phase));
    }
    out.push_str(&transfer::row_checks(phase));
    out.push_str(&latency::target_nodes(phase));
    out.push_str(&latency::failures(phase));
    out.push_str(&summary::summary(phase, detail));
    if verbose {
        out.push_str(&connections::lines(phase));
        out.push_str(&logins::line(phase));
    }
    out.push_str(&summary::action(phase));
    if verbose {
        out.push_str(&server::lines(phase));
    }
    out.push_str(&changes::lines(phase));
    out.push_str(&replication::lines(phase));
    out.push_str(&devices::lines(phase));
    out.push_str(&stopped_early(phase));
    out
}

/// A phase of devices alone: its title and the devices' block, without the
/// operations' fields and tables, which would all be zeros.
fn devices_alone_text(phase: &PhaseResult, interrupted: bool, detail: Detail) -> String {
    let mut out = ironcushion::title(phase);
    out.push('\n');
    if interrupted {
        out.push_str("  INTERRUPTED: the figures cover what was done before the stop\n");
    }
    out.push_str(&format!("  timeTaken={:.6} secs\n", phase.wall_seconds));
    if detail == Detail::Verbose {
        out.push_str(&logins::line(phase));
        out.push_str(&server::lines(phase));
    }
    out.push_str(&devices::lines(phase));
    out
}

/// Why the phase's connections stopped early: the first three reasons, and how many more.
fn stopped_early(phase: &PhaseResult) -> String {
    let mut out = String::new();
    let mut reasons = phase.aborted.clone();
    reasons.sort();
    reasons.dedup();
    for reason in reasons.iter().take(3) {
        out.push_str(&format!("  stopped early: {reason}\n"));
    }
    if reasons.len() > 3 {
        out.push_str(&format!(
            "  stopped early: … and {} more\n",
            reasons.len() - 3
        ));
    }
    out
}

/// The width of the operation column of a phase's tables: 12, or the longest operation
/// name (`attachment_write`, a query's name) so that the figures stay in their columns.
pub fn name_width(phase: &crate::results::PhaseResult) -> usize {
    phase
        .operations
        .iter()
        .map(|op| op.operation.chars().count())
        .max()
        .unwrap_or(0)
        .max(12)
}
