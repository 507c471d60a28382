//! What one connection counted during one step. Each connection counts into its own
//! value without locks; the phase's [`PhaseTally`](super::PhaseTally) adds them up.
//! Latencies go to the shared [`Recorder`](super::Recorder) instead (histograms are too
//! big to keep per connection), in the same call that counts the outcome here.

use super::errors::{Failure, FailureCounts, FailureSamples};
use crate::workload::{Operation, PerOperation};

/// What happened to one operation kind's operations on one connection (or, added up,
/// on many).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationCounts {
    /// Operations that succeeded.
    pub succeeded: u64,
    /// Documents stored (bulk insert: per document; others: per operation).
    pub documents: u64,
    /// Bulk insert only: documents of answered requests whose storing was not confirmed,
    /// i.e. the ones the answer refused or did not account for (`doc:*` failures) and every
    /// document of a request that failed as a whole.
    pub documents_failed: u64,
    pub failures: FailureCounts,
    /// A few examples of what the server said, per failure kind.
    pub samples: FailureSamples,
    /// Every answer's HTTP status.
    pub statuses: StatusCounts,
    /// Requests sent a second time (a GET whose first attempt met a closed connection).
    pub resends: u64,
    /// 429 answers after which the operation was sent again (`--retry-429`).
    pub retried_429: u64,
    /// Time spent waiting to send operations again after a 429, nanoseconds.
    pub retry_429_wait_ns: u64,
    /// Writes whose answer was lost after the request went out: they may or may not have
    /// been applied. Counted in documents (a bulk insert counts its batch).
    pub unknown: u64,
    /// Operations the phase planned for this connection that it never started, because
    /// it gave up reconnecting or had no document to work on.
    pub not_run: u64,
    /// Bytes of request bodies sent, and of answer bodies received.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Queries only: rows (`rows` or `docs` elements) in successful answers.
    pub rows: u64,
    /// Updates of hot documents only (`--hot-docs`): their 409s, fetches and attempts.
    pub hot: super::HotCounts,
    /// Reads, updates and deletes of existing data only: misses, conflicts and fetches.
    pub existing: super::ExistingCounts,
    /// Answers whose rows were checked against the seed's documents, those that held
    /// another number, and the rows the checked answers should have held.
    pub rows_checked: u64,
    pub rows_wrong: u64,
    pub rows_expected: u64,
}

/// Counts of HTTP statuses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    counts: Vec<(u16, u64)>,
}

impl StatusCounts {
    pub fn add(&mut self, status: u16, n: u64) {
        match self.counts.iter_mut().find(|(s, _)| *s == status) {
            Some((_, count)) => *count = count.saturating_add(n),
            None => self.counts.push((status, n)),
        }
    }

    pub fn merge(&mut self, other: &StatusCounts) {
        for (status, n) in &other.counts {
            self.add(*status, *n);
        }
    }

    /// The counts, by status.
    pub fn sorted(&self) -> Vec<(u16, u64)> {
        let mut sorted = self.counts.clone();
        sorted.sort();
        sorted
    }
}

impl OperationCounts {
    pub fn fail(&mut self, failure: Failure) {
        self.failures.add(failure, 1);
    }

    pub fn merge(&mut self, other: &OperationCounts) {
        self.succeeded = self.succeeded.saturating_add(other.succeeded);
        self.documents = self.documents.saturating_add(other.documents);
        self.documents_failed = self.documents_failed.saturating_add(other.documents_failed);
        self.failures.merge(&other.failures);
        self.samples.merge(&other.samples);
        self.statuses.merge(&other.statuses);
        self.resends = self.resends.saturating_add(other.resends);
        self.retried_429 = self.retried_429.saturating_add(other.retried_429);
        self.retry_429_wait_ns = self
            .retry_429_wait_ns
            .saturating_add(other.retry_429_wait_ns);
        self.unknown = self.unknown.saturating_add(other.unknown);
        self.not_run = self.not_run.saturating_add(other.not_run);
        self.bytes_sent = self.bytes_sent.saturating_add(other.bytes_sent);
        self.bytes_received = self.bytes_received.saturating_add(other.bytes_received);
        self.rows = self.rows.saturating_add(other.rows);
        self.hot.merge(&other.hot);
        self.existing.merge(&other.existing);
        self.rows_checked = self.rows_checked.saturating_add(other.rows_checked);
        self.rows_wrong = self.rows_wrong.saturating_add(other.rows_wrong);
        self.rows_expected = self.rows_expected.saturating_add(other.rows_expected);
    }
}

/// Where one connection's time went in one step: Iron Cushion reports each as a spread
/// over connections, so these are kept per connection, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectionTimes {
    /// Preparing requests and reading answers (`localProcessing`).
    pub local_ns: u64,
    /// Writing requests to the socket (`sendData`).
    pub send_ns: u64,
    /// Reading answers from the socket (`receiveData`).
    pub receive_ns: u64,
    /// Waiting for the server's answer to begin, per operation kind (Iron Cushion's
    /// `remoteProcessing`, `remoteCreateProcessing` …).
    pub remote_ns: PerOperation<u64>,
}

impl ConnectionTimes {
    /// Adds `other` (the same connection's times in a later stretch of work), saturating.
    pub fn add(&mut self, other: &ConnectionTimes) {
        self.local_ns = self.local_ns.saturating_add(other.local_ns);
        self.send_ns = self.send_ns.saturating_add(other.send_ns);
        self.receive_ns = self.receive_ns.saturating_add(other.receive_ns);
        self.remote_ns.add(&other.remote_ns);
    }
}

/// Everything one connection measured in one step.
#[derive(Clone, Debug, Default)]
pub struct ConnectionMetrics {
    pub operations: PerOperation<OperationCounts>,
    pub times: ConnectionTimes,
    /// Bytes of JSON in request bodies (`totalJsonBytesSent`).
    pub json_sent: u64,
    /// Bytes of JSON in response bodies (`totalJsonBytesReceived`).
    pub json_received: u64,
    /// Operations that started later than the schedule meant by more than the threshold
    /// (open model only): the client could not keep up.
    pub late: u64,
}

impl ConnectionMetrics {
    pub fn operation(&mut self, operation: Operation) -> &mut OperationCounts {
        &mut self.operations[operation]
    }

    pub fn of(&self, operation: Operation) -> &OperationCounts {
        &self.operations[operation]
    }
}
