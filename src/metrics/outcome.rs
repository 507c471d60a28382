//! What one phase did, as the engine hands it over: its tally, its intervals and what
//! happened around it (a background action, connections that stopped early).

use std::time::{Duration, SystemTime};

use super::interval::IntervalRow;
use super::tally::PhaseTally;
use crate::workload::Operation;

/// What one phase measured.
#[derive(Debug)]
pub struct PhaseOutcome {
    pub name: String,
    /// The operations the phase's mix includes.
    pub operations: Vec<Operation>,
    /// Wall-clock time of the phase's start.
    pub started_at: SystemTime,
    /// From the phase's start to its slowest connection's finish (Iron Cushion's `timeTaken`).
    pub wall: Duration,
    /// Everything the connections counted and timed.
    pub tally: PhaseTally,
    /// Why connections stopped early, if any did.
    pub aborted: Vec<String>,
    /// The phase's intervals, as the live lines showed them.
    pub intervals: Vec<IntervalRow>,
    /// How many live intervals each of `intervals` covers (the last may cover fewer): 1
    /// unless the phase reached `--max-intervals` and they were merged.
    pub interval_width: u64,
    /// The operations per second the phase aimed at (open model); under a ramp, its
    /// mean over the time the phase ran.
    pub target_rate: Option<f64>,
    /// This node's rate (open model), constant or a ramp.
    pub rate: Option<crate::workload::Rate>,
    /// True when the run was stopped (Ctrl-C) during this phase.
    pub interrupted: bool,
    /// What the phase's background action did, if it had one.
    pub action: Option<ActionReport>,
    /// What the phase's `_changes` consumers measured, if it had any.
    pub changes: Option<super::changes::ChangesReport>,
    /// What the phase's continuous replications measured, if it had any.
    pub replication: Option<super::replication::ReplicationReport>,
    /// What the phase's fleet of devices measured, if it had one.
    pub devices: Option<super::devices::DevicesReport>,
    /// Logins (session cookies, IAM tokens) since the previous phase ended, or for the
    /// first phase since the run started: outside every operation's times.
    pub logins: super::LoginTally,
    /// The database's sizes before the phase's operations began and after they ended.
    pub disk: crate::disk::PhaseDisk,
    /// What could not be asked of the servers about themselves (an endpoint a node
    /// lacks or refused), each said once.
    pub server_notes: Vec<String>,
}

/// What an action did, with times in seconds from the phase's start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActionReport {
    /// `compact`, `replicate` or `replicate (two-way)`.
    pub kind: String,
    pub started: Option<f64>,
    /// `None` when it had not finished when sofabench stopped waiting (see `note`).
    pub finished: Option<f64>,
    /// The database file's size before and after, in bytes, when the server says.
    pub size_before: Option<u64>,
    pub size_after: Option<u64>,
    /// Which field gave the size (`sizes.file` on CouchDB, `disk_size` on PouchDB Server).
    pub size_field: Option<String>,
    pub error: Option<String>,
    /// What the figures mean when they are not plain: how the end was known, or that it
    /// was not.
    pub note: Option<String>,
    /// A database this action created (the replica), which `--cleanup` may delete.
    pub created_database: Option<String>,
}

impl ActionReport {
    pub fn failed(error: String) -> ActionReport {
        ActionReport {
            error: Some(error),
            ..ActionReport::default()
        }
    }
}
