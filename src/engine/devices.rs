//! A phase's fleet of devices, as the engine runs it beside the connections (see
//! `crate::fleet`): started before the operations, begun with them, finished after.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::Endpoint;
use crate::fleet::{FleetSettings, Running};
use crate::workload::Phase;

use super::{NodeSlice, RunSettings, stop::Stop};

/// Starts `phase`'s fleet, if it has one: its shared documents written and its warm
/// devices synced; Ctrl-C ends the wait.
pub async fn start(
    phase: &Phase,
    settings: &RunSettings,
    (endpoints, database_paths): (&[Arc<Endpoint>], &[String]),
    stop: &Stop,
) -> Result<Option<Running>, String> {
    let Some(fleet) = &phase.fleet else {
        return Ok(None);
    };
    let fleet_settings = FleetSettings {
        endpoints: endpoints.to_vec(),
        database_paths: database_paths.to_vec(),
        node: NodeSlice {
            index: settings.node_index,
            count: settings.client_nodes.max(1),
        },
        id_prefix: settings.ids.prefix().to_string(),
        seed: settings.seed,
        timeout: settings.timeout,
        duration: phase.bound.duration,
        logins: settings.device_logins.clone().filter(|_| fleet.users),
    };
    tokio::select! {
        running = Running::start(fleet, fleet_settings) => running.map(Some),
        () = stop.stop.raised() => Err("stopped while the fleet's devices were starting, before the phase's first operation".to_string()),
    }
}

/// A phase of devices only (no connection): it lasts its duration, or until Ctrl-C.
pub async fn devices_only(phase: &Phase, stop: &Stop) {
    let lasting = phase.bound.duration.unwrap_or(Duration::ZERO);
    tokio::select! {
        () = tokio::time::sleep(lasting) => {}
        () = stop.stop.raised() => {}
    }
}
