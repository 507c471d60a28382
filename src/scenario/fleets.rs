//! The built-in scenarios of devices that sync: sizes a PouchDB Server on 2 cores
//! carries, each scaled by the `--device*` flags (a built-in fleet takes every flag
//! given) and `--duration`. Their fleet phases run devices only: no connections.

use std::time::Duration;

use super::BuiltinOptions;
use super::builtin::Built;
use super::settings::{Keys, Layers, Spec};
use crate::workload::changes::FeedKind;
use crate::workload::fleet::{ColdJoin, Fleet, FleetScope, Offline, SyncEvery, WriteMix};
use crate::workload::{Operation, Weights};

/// A phase of devices alone, for `seconds` unless `--duration` says otherwise.
fn devices_only(name: &str, fleet: Fleet, seconds: u64) -> Spec {
    let mut spec = Spec::new(name, Weights::only(Operation::Read, 1));
    // The phase's own: the devices are its load, whatever --num_connections says.
    spec.own.connections = Some(0);
    spec.scenario = Keys {
        duration: Some(Duration::from_secs(seconds)),
        ..Keys::default()
    };
    spec.fleet = Some(fleet);
    spec
}

fn decided(specs: Vec<Spec>, layers: &Layers) -> Built {
    Ok(specs.into_iter().map(|s| s.decide(layers)).collect())
}

/// Devices writing and syncing live, each following its own documents and 20 shared
/// ones, a tenth of their writes on the shared ones: time to visible in the steady state.
pub fn steady_fleet(layers: &Layers, _: &BuiltinOptions) -> Built {
    let fleet = Fleet {
        devices: 50,
        scope: FleetScope::DocIds,
        feed: FeedKind::Longpoll,
        sync: SyncEvery::Live,
        writes_per_second: 0.2,
        mix: WriteMix {
            create: 45,
            edit_own: 45,
            edit_shared: 10,
        },
        shared_documents: 20,
        ..Fleet::default()
    };
    decided(vec![devices_only("steady_fleet", fleet, 60)], layers)
}

/// Every device offline from the start, writing fast (25/s for 45 s: 1,125 edits each,
/// nearly all of its own ~22 documents: ~1,100 edits per device, no chain past `_revs_limit`), then all online at
/// once with their backlogs: the rush, and the catch-up time.
pub fn morning_rush(layers: &Layers, _: &BuiltinOptions) -> Built {
    let fleet = Fleet {
        devices: 20,
        scope: FleetScope::DocIds,
        sync: SyncEvery::Live,
        writes_per_second: 25.0,
        mix: WriteMix {
            create: 2,
            edit_own: 96,
            edit_shared: 2,
        },
        shared_documents: 10,
        offline: Some(Offline {
            share: 100,
            from: Duration::ZERO,
            lasting: Duration::from_secs(45),
        }),
        ..Fleet::default()
    };
    decided(vec![devices_only("morning_rush", fleet, 50)], layers)
}

/// A bulk load (20 requests of 500 documents by 2 connections unless the flags say
/// otherwise), then devices joining empty and pulling the whole database: with
/// `--databases 1` each device's own database is the run's.
pub fn cold_start(layers: &Layers, _: &BuiltinOptions) -> Built {
    let mut load = Spec::new("cold_start_load", Weights::only(Operation::BulkInsert, 1));
    load.scenario = Keys {
        connections: Some(2),
        batch_size: Some(500),
        total: Some(20),
        ..Keys::default()
    };
    let devices = 5;
    let fleet = Fleet {
        devices,
        scope: FleetScope::OwnDatabase,
        writes_per_second: 0.0,
        cold: Some(ColdJoin {
            devices,
            at: Duration::ZERO,
        }),
        ..Fleet::default()
    };
    decided(vec![load, devices_only("cold_start", fleet, 60)], layers)
}

/// Many devices editing the same few documents between syncs every 5 s: conflicts made
/// on the devices, seen by the others, and checked against the server's `_conflicts`.
pub fn conflict_storm(layers: &Layers, _: &BuiltinOptions) -> Built {
    let fleet = Fleet {
        devices: 30,
        scope: FleetScope::DocIds,
        sync: SyncEvery::Every(Duration::from_secs(5)),
        writes_per_second: 0.5,
        mix: WriteMix {
            create: 0,
            edit_own: 0,
            edit_shared: 100,
        },
        shared_documents: 10,
        ..Fleet::default()
    };
    decided(vec![devices_only("conflict_storm", fleet, 60)], layers)
}

#[cfg(test)]
mod tests {
    use super::super::builtin::{find, tests::options};
    use crate::workload::fleet_input::{FLAG_NAMES, problems};

    #[test]
    fn every_fleet_scenario_is_listed_and_its_fleets_can_work() {
        let layers = super::Layers::default();
        for name in [
            "steady-fleet",
            "morning-rush",
            "cold-start",
            "conflict-storm",
        ] {
            let scenario = find(name).unwrap().build(&layers, &options()).unwrap();
            let fleets: Vec<_> = scenario
                .phases
                .iter()
                .filter_map(|p| p.fleet.as_ref())
                .collect();
            assert_eq!(fleets.len(), 1, "{name}");
            assert!(problems(fleets[0], &FLAG_NAMES).is_empty(), "{name}");
            let last = scenario.phases.last().unwrap();
            assert_eq!(last.connections, 0, "{name}: devices alone");
            assert!(last.bound.duration.is_some(), "{name}: runs for a while");
        }
        let rush = find("morning-rush")
            .unwrap()
            .build(&layers, &options())
            .unwrap();
        let fleet = rush.phases[0].fleet.as_ref().unwrap();
        let offline = fleet.offline.unwrap();
        let backlog = fleet.writes_per_second * offline.lasting.as_secs_f64();
        assert!(backlog > 1000.0, "a backlog past _revs_limit: {backlog}");
    }
}
