//! What one connection measured during one step. Each connection records into its own
//! value without locks; the report merges them afterwards.

use hdrhistogram::Histogram;

use super::errors::{Failure, FailureCounts};
use crate::workload::Operation;

/// Latencies are recorded in microseconds, with three significant digits.
pub const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// One operation kind on one connection.
#[derive(Clone, Debug)]
pub struct OperationMetrics {
    /// Operations that succeeded.
    pub succeeded: u64,
    /// Documents stored (bulk insert: per document; others: per operation).
    pub documents: u64,
    pub failures: FailureCounts,
    /// Service time of successful operations (first byte of the request out to the last
    /// byte of the answer in), in microseconds.
    pub latency: Histogram<u64>,
    /// Response time of successful operations, from the moment the schedule meant them to
    /// start (open model) or from sending (closed model), in microseconds. Under a rate,
    /// this is the figure that shows a stalled server.
    pub response: Histogram<u64>,
    /// Every answer's HTTP status.
    pub statuses: StatusCounts,
    /// Nanoseconds spent waiting for the server's answer to begin (Iron Cushion's
    /// `remoteProcessing`, per operation kind).
    pub remote_ns: u64,
}

impl Default for OperationMetrics {
    fn default() -> OperationMetrics {
        OperationMetrics {
            succeeded: 0,
            documents: 0,
            failures: FailureCounts::default(),
            latency: new_histogram(),
            response: new_histogram(),
            statuses: StatusCounts::default(),
            remote_ns: 0,
        }
    }
}

/// An auto-resizing histogram of microseconds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(LATENCY_SIGNIFICANT_DIGITS)
        .expect("3 significant digits is a valid histogram precision")
}

/// Records nanoseconds as microseconds; auto-resizing histograms accept any value, and
/// anything under 1 µs counts as 1 µs.
pub fn record_micros(histogram: &mut Histogram<u64>, nanoseconds: u64) {
    let _ = histogram.record((nanoseconds / 1_000).max(1));
}

/// Counts of HTTP statuses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    counts: Vec<(u16, u64)>,
}

impl StatusCounts {
    pub fn add(&mut self, status: u16, n: u64) {
        match self.counts.iter_mut().find(|(s, _)| *s == status) {
            Some((_, count)) => *count += n,
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

impl OperationMetrics {
    pub fn record_latency(&mut self, nanoseconds: u64) {
        record_micros(&mut self.latency, nanoseconds);
    }

    pub fn fail(&mut self, failure: Failure) {
        self.failures.add(failure, 1);
    }

    pub fn merge(&mut self, other: &OperationMetrics) {
        self.succeeded += other.succeeded;
        self.documents += other.documents;
        self.failures.merge(&other.failures);
        let _ = self.latency.add(&other.latency);
        let _ = self.response.add(&other.response);
        self.statuses.merge(&other.statuses);
        self.remote_ns += other.remote_ns;
    }
}

/// Everything one connection measured in one step.
#[derive(Clone, Debug, Default)]
pub struct ConnectionMetrics {
    pub operations: [OperationMetrics; 5],
    /// Preparing requests and reading answers (`localProcessing`), nanoseconds.
    pub local_ns: u64,
    /// Writing requests to the socket (`sendData`), nanoseconds.
    pub send_ns: u64,
    /// Reading answers from the socket (`receiveData`), nanoseconds.
    pub receive_ns: u64,
    /// Bytes of JSON in request bodies (`totalJsonBytesSent`).
    pub json_sent: u64,
    /// Bytes of JSON in response bodies (`totalJsonBytesReceived`).
    pub json_received: u64,
    /// How long the connection took for its share of the step, nanoseconds.
    pub elapsed_ns: u64,
    /// Operations that started later than the schedule meant by more than the threshold
    /// (open model only): the client could not keep up.
    pub late: u64,
}

impl ConnectionMetrics {
    pub fn operation(&mut self, operation: Operation) -> &mut OperationMetrics {
        &mut self.operations[operation.index()]
    }

    pub fn of(&self, operation: Operation) -> &OperationMetrics {
        &self.operations[operation.index()]
    }

    /// Sum of the remote processing times over all operation kinds.
    pub fn remote_ns(&self) -> u64 {
        self.operations.iter().map(|o| o.remote_ns).sum()
    }

    pub fn failures(&self) -> u64 {
        self.operations.iter().map(|o| o.failures.total()).sum()
    }
}
