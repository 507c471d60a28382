//! A phase's continuous replications as the result file keeps them. No password is
//! kept: replicas are named by database, jobs by their `_replicator` document.

use serde::{Deserialize, Serialize};

use super::changes::{ChangesResult, changes};
use crate::metrics::replication::{JobLook, ReplicaReport, ReplicationReport};

/// What the phase's replications measured (absent for a phase without them).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReplicationResult {
    /// Each replica was also replicated back to the run's database.
    pub two_way: bool,
    pub replicas: Vec<ReplicaResult>,
    /// Each job's state at each interval's end, from `_scheduler/jobs`; empty where the
    /// server has none (see `notes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobLook>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// With several client machines (`--node-count`): how many wrote. The replications
    /// ran from the first, which tracked its writes only; absent for one machine.
    #[serde(
        default = "super::changes::one",
        skip_serializing_if = "super::changes::is_one"
    )]
    pub client_nodes: u64,
}

/// One replica's lag and what replicated to it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReplicaResult {
    /// The replica's database name.
    pub database: String,
    /// Its URL without credentials, when it is on another server than the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The `_replicator` documents that ran its jobs (deleted at the phase's end).
    pub documents: Vec<String>,
    /// The run created the database.
    pub created: bool,
    /// The replica's feed, read by one consumer: `latency` is the replication lag (from
    /// a write's answer on the source to its sighting on the replica), `changes` the
    /// documents replicated, and each interval's `changes_per_second` the documents
    /// replicated per second.
    pub lag: ChangesResult,
}

impl ReplicaResult {
    /// How the report names it: its URL when on another server, else its name.
    pub fn shown(&self) -> &str {
        self.url.as_deref().unwrap_or(&self.database)
    }
}

pub fn replication(report: &ReplicationReport) -> ReplicationResult {
    ReplicationResult {
        two_way: report.two_way,
        replicas: report.replicas.iter().map(replica).collect(),
        jobs: report.jobs.clone(),
        notes: report.notes.clone(),
        client_nodes: report.client_nodes,
    }
}

fn replica(report: &ReplicaReport) -> ReplicaResult {
    ReplicaResult {
        database: report.database.clone(),
        url: report.url.clone(),
        documents: report.documents.clone(),
        created: report.created,
        lag: changes(&report.lag),
    }
}
