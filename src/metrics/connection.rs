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
    /// Service time of operations that got an answer, in microseconds.
    pub latency: Histogram<u64>,
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
            latency: Histogram::new(LATENCY_SIGNIFICANT_DIGITS)
                .expect("3 significant digits is a valid histogram precision"),
            remote_ns: 0,
        }
    }
}

impl OperationMetrics {
    pub fn record_latency(&mut self, nanoseconds: u64) {
        // Auto-resizing histograms accept any value; 0 µs is kept as the lowest bucket.
        let _ = self.latency.record((nanoseconds / 1_000).max(1));
    }

    pub fn fail(&mut self, failure: Failure) {
        self.failures.add(failure, 1);
    }

    pub fn merge(&mut self, other: &OperationMetrics) {
        self.succeeded += other.succeeded;
        self.documents += other.documents;
        self.failures.merge(&other.failures);
        let _ = self.latency.add(&other.latency);
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
