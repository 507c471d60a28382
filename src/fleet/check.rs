//! The convergence check at a phase's end: each database the devices of this machine
//! replicate is read once from the server, and every device's replica is compared with
//! the documents of its scope.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::converge::{HeldDoc, ServerDocs, compare};
use super::device_run::DeviceRun;
use crate::driver::Endpoint;
use crate::metrics::devices::{Convergence, MOST_SAMPLES};
use crate::workload::fleet::FleetScope;

/// Which documents of a database a device's scope holds.
pub struct ScopeRule<'a> {
    pub scope: &'a FleetScope,
    pub shared: &'a HashSet<&'a str>,
}

impl ScopeRule<'_> {
    /// Whether `id` is in the scope of a device whose own ids start with `own_prefix`.
    pub fn holds(&self, own_prefix: &str, id: &str) -> bool {
        match self.scope {
            FleetScope::OwnDatabase => true,
            FleetScope::DocIds | FleetScope::Selector => {
                id.starts_with(own_prefix) || self.shared.contains(id)
            }
        }
    }
}

/// Compares every device with the server; `machine_prefix` starts the ids of every
/// device of this machine (only those documents are read into memory).
pub async fn check(
    endpoint: &Arc<Endpoint>,
    database_paths: &[String],
    runs: &[DeviceRun],
    rule: &ScopeRule<'_>,
    machine_prefix: &str,
) -> Convergence {
    let mut by_database: BTreeMap<usize, Vec<&DeviceRun>> = BTreeMap::new();
    for run in runs {
        by_database.entry(run.plan.database).or_default().push(run);
    }
    let mut convergence = Convergence {
        checked: runs.len() as u64,
        ..Convergence::default()
    };
    for (database, devices) in by_database {
        let Some(path) = database_paths.get(database) else {
            continue;
        };
        let keep = |id: &str| rule.holds(machine_prefix, id);
        let server = match super::server_docs::read(endpoint, path, keep).await {
            Ok(server) => server,
            Err(e) => {
                convergence.error.get_or_insert(e);
                continue;
            }
        };
        count_server(&mut convergence, &server);
        for run in devices {
            compare_device(&mut convergence, run, &server, rule);
        }
    }
    // A difference quotes ids and revisions the server gave: no secret of the run's
    // may leave in one, however the server wrote it.
    for (_, difference) in &mut convergence.diverged {
        *difference = crate::text::Quoted::message(difference, &endpoint.credential);
    }
    convergence
}

fn count_server(convergence: &mut Convergence, server: &ServerDocs) {
    convergence.server_documents += server.len() as u64;
    convergence.server_conflicts += server
        .values()
        .map(|d| d.conflicts.len() as u64)
        .sum::<u64>();
}

fn compare_device(
    convergence: &mut Convergence,
    run: &DeviceRun,
    server: &ServerDocs,
    rule: &ScopeRule<'_>,
) {
    let held: Vec<_> = run
        .device
        .documents()
        .map(|d| {
            (
                d.id,
                d.winner,
                d.conflicts.into_iter().cloned().collect::<Vec<_>>(),
                d.deleted,
            )
        })
        .collect();
    let docs = held.iter().map(|(id, winner, conflicts, deleted)| HeldDoc {
        id,
        winner,
        conflicts,
        deleted: *deleted,
    });
    let own = &run.plan.own_prefix;
    match compare(docs, server, |id| rule.holds(own, id)) {
        Ok(()) => convergence.converged += 1,
        Err(difference) => {
            if convergence.diverged.len() < MOST_SAMPLES {
                convergence
                    .diverged
                    .push((run.plan.name.clone(), difference));
            }
        }
    }
}
