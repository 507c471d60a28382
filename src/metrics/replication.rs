//! What a phase's continuous replications measured: each replica's lag (the `_changes`
//! consumers' figures, read on the replica), and the replication jobs' state over time.

use serde::{Deserialize, Serialize};

use super::changes::ChangesReport;

/// One replication job as `_scheduler/jobs` showed it at the end of an interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobLook {
    /// Seconds from the phase's start to the look.
    pub elapsed_seconds: f64,
    /// The `_replicator` document the job runs.
    pub document: String,
    /// The job's latest event (`started`, `crashed`, `added`, …); `None` when the server
    /// did not list the job (not scheduled yet, or no longer running).
    pub last_event: Option<String>,
    /// The job's own counts, where the server gives them.
    pub docs_written: Option<u64>,
    pub changes_pending: Option<u64>,
    pub doc_write_failures: Option<u64>,
}

/// One replica: where it is, what replicates to it, and when the writes showed there.
#[derive(Clone, Debug)]
pub struct ReplicaReport {
    pub database: String,
    /// The replica's URL without credentials when it is on another server.
    pub url: Option<String>,
    /// The `_replicator` documents of its jobs: to the replica, and back when two-way.
    pub documents: Vec<String>,
    /// The run created the database (so `--cleanup` may delete it, on the run's own
    /// server only).
    pub created: bool,
    /// From each write's answer on the source to its sighting on the replica's feed.
    pub lag: ChangesReport,
}

/// Everything a phase's replications measured.
#[derive(Clone, Debug, Default)]
pub struct ReplicationReport {
    pub two_way: bool,
    pub replicas: Vec<ReplicaReport>,
    pub jobs: Vec<JobLook>,
    /// What could not be asked or done (no `_scheduler/jobs`, a job left behind), once.
    pub notes: Vec<String>,
    /// The client machines writing (`--node-count`); the replications ran from the
    /// first, which tracked its writes only.
    pub client_nodes: u64,
}
