//! Why a push or a pull stopped, naming the step of the protocol that failed.

use std::fmt;

/// A step of a push or a pull.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Reading the server's replication log (`GET _local/<id>`).
    ReadLog,
    /// Reading the changes feed.
    Feed,
    /// Fetching missing revisions (`POST _bulk_get`).
    BulkGet,
    /// Fetching missing revisions one document at a time (`GET ?open_revs`).
    OpenRevs,
    /// Asking which revisions the server lacks (`POST _revs_diff`).
    RevsDiff,
    /// Writing revisions with their histories (`POST _bulk_docs`, `new_edits: false`).
    BulkDocs,
    /// Writing the server's replication log (`PUT _local/<id>`).
    WriteLog,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::ReadLog => "reading the replication log",
            Step::Feed => "reading _changes",
            Step::BulkGet => "_bulk_get",
            Step::OpenRevs => "GET ?open_revs",
            Step::RevsDiff => "_revs_diff",
            Step::BulkDocs => "_bulk_docs",
            Step::WriteLog => "writing the replication log",
        }
    }
}

/// Why a push or a pull stopped. What the server said is quoted (bounded, secrets hidden,
/// control characters escaped) before it is kept here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncError {
    /// No answer: the connection could not be made, broke, or timed out.
    Transport { step: Step, reason: String },
    /// An answer with a status the step cannot go on from.
    Status {
        step: Step,
        status: u16,
        said: String,
    },
    /// An answer the step cannot use (not JSON, the wrong shape, beyond a bound).
    BadAnswer { step: Step, what: String },
}

impl SyncError {
    pub fn step(&self) -> Step {
        match self {
            SyncError::Transport { step, .. }
            | SyncError::Status { step, .. }
            | SyncError::BadAnswer { step, .. } => *step,
        }
    }

    pub(crate) fn bad(step: Step, what: impl Into<String>) -> SyncError {
        SyncError::BadAnswer {
            step,
            what: what.into(),
        }
    }
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncError::Transport { step, reason } => {
                write!(f, "{}: no answer ({reason})", step.name())
            }
            SyncError::Status { step, status, said } => {
                write!(f, "{}: the server answered {status}: {said}", step.name())
            }
            SyncError::BadAnswer { step, what } => {
                write!(f, "{}: unusable answer: {what}", step.name())
            }
        }
    }
}

impl std::error::Error for SyncError {}
