//! What a phase's fleet hands the engine at its end: everything this machine's devices
//! measured, as one report.

use crate::metrics::devices::{Convergence, DevicesInterval, DevicesReport, keep_sample};
use crate::workload::fleet::SyncEvery;

use super::Running;
use super::device_run::DeviceRun;

/// What the end of the phase adds to what the devices measured.
pub struct Ending<'a> {
    pub runs: &'a [DeviceRun],
    pub intervals: Vec<DevicesInterval>,
    pub last_sync_seconds: f64,
    pub last_sync_unfinished: u64,
    pub convergence: Convergence,
}

pub fn build(running: &Running, ending: Ending<'_>) -> DevicesReport {
    let fleet = &running.ctx.fleet;
    let (figures, counts, over_budget_samples, mut failure_samples) =
        running.ctx.figures.take_phase();
    for failure in &running.warm_up.failures {
        keep_sample(&mut failure_samples, || {
            format!("before the phase: {failure}")
        });
    }
    let runs = ending.runs;
    DevicesReport {
        devices: fleet.devices,
        devices_here: runs.len() as u64,
        cold_devices: runs.iter().filter(|r| r.plan.is_cold()).count() as u64,
        offline_devices: runs.iter().filter(|r| r.plan.offline.is_some()).count() as u64,
        client_nodes: running.settings.node.count,
        scope: scope_name(&fleet.scope).to_string(),
        profile: fleet.profile.name().to_string(),
        feed: fleet.feed.name().to_string(),
        sync: match fleet.sync {
            SyncEvery::Live => "live".to_string(),
            SyncEvery::Every(every) => format!("every {} s", every.as_secs_f64()),
        },
        figures,
        counts,
        visible: running.ctx.figures.visible.close(),
        most_online: ending.intervals.iter().map(|i| i.online).max().unwrap_or(0),
        most_feeds_open: ending
            .intervals
            .iter()
            .map(|i| i.feeds_open)
            .max()
            .unwrap_or(0),
        over_budget_samples,
        failure_samples,
        warm_up_seconds: running.warm_up.seconds,
        warm_up_behind: running.warm_up.behind,
        last_sync_seconds: ending.last_sync_seconds,
        last_sync_unfinished: ending.last_sync_unfinished,
        convergence: ending.convergence,
        intervals: ending.intervals,
    }
}

/// The scope's name as the settings spell it.
pub fn scope_name(scope: &crate::workload::fleet::FleetScope) -> &'static str {
    use crate::workload::fleet::FleetScope;
    match scope {
        FleetScope::OwnDatabase => "own-database",
        FleetScope::DocIds => "doc-ids",
        FleetScope::Selector => "selector",
    }
}
