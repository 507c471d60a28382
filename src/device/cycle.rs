//! What one push or pull did, for the fleet's figures.

use std::time::Instant;

use crate::workload::Rev;

/// Where a push or pull began reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartedFrom {
    /// Where the device's last cycle ended (a device already replicating).
    Continuing,
    /// From the sequence both replication logs agree on.
    Checkpoint,
    /// From the start.
    Zero { because: ZeroBecause },
}

/// Why a replication started from the beginning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroBecause {
    /// One of the logs (the device's or the server's) is not there.
    NoLog,
    /// Both are there, but their session histories share no session.
    NoCommonSession,
}

/// What one push or pull did.
#[derive(Clone, Debug)]
pub struct Cycle {
    /// Requests sent (every one, failed or not).
    pub requests: u32,
    /// Request bodies' bytes.
    pub bytes_sent: u64,
    /// Answer bodies' bytes.
    pub bytes_received: u64,
    /// Writes of the server's replication log.
    pub checkpoint_writes: u32,
    pub started_from: StartedFrom,
    /// Rows of the changes feed read (pull), or local changes read (push).
    pub changes_read: u64,
    /// Revisions the other side lacked.
    pub missing: u64,
    /// Revisions written (pull: stored on the device; push: sent in `_bulk_docs` and not
    /// refused).
    pub written: u64,
    /// Revisions that could not be written (push: the error rows of `_bulk_docs`; pull:
    /// revisions `_bulk_get` could not give).
    pub failures: u64,
    /// Push: what the server said of the first revision it refused (quoted, safe to
    /// show).
    pub refused_said: Option<String>,
    /// Pull: documents that hold conflicts after it.
    pub conflicts_seen: u64,
    /// Push: the revisions the server acknowledged; pull: the revisions stored.
    pub landed: Vec<(Box<str>, Rev)>,
    pub started: Instant,
    pub finished: Instant,
}

impl Cycle {
    pub(crate) fn begin(started_from: StartedFrom) -> Cycle {
        let now = Instant::now();
        Cycle {
            requests: 0,
            bytes_sent: 0,
            bytes_received: 0,
            checkpoint_writes: 0,
            started_from,
            changes_read: 0,
            missing: 0,
            written: 0,
            failures: 0,
            refused_said: None,
            conflicts_seen: 0,
            landed: Vec::new(),
            started: now,
            finished: now,
        }
    }
}
