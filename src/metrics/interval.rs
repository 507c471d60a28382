//! What happened in the current interval (a second by default), for the live lines, and
//! the compact row each finished interval leaves behind.

use hdrhistogram::Histogram;

use super::histogram;
use super::recorder::{new_histogram, record_micros};
use crate::workload::{Operation, PerOperation};

/// One operation kind within one interval, while it is being recorded.
#[derive(Clone, Debug)]
pub struct IntervalOperation {
    pub succeeded: u64,
    pub failed: u64,
    pub timeouts: u64,
    /// Response times of successful operations, microseconds.
    pub response: Histogram<u64>,
}

impl Default for IntervalOperation {
    fn default() -> IntervalOperation {
        IntervalOperation {
            succeeded: 0,
            failed: 0,
            timeouts: 0,
            response: new_histogram(),
        }
    }
}

impl IntervalOperation {
    pub fn merge(&mut self, other: &IntervalOperation) {
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.timeouts += other.timeouts;
        let _ = self.response.add(&other.response);
    }

    fn summary(&self) -> IntervalSummary {
        let at = |q: f64| {
            if self.response.is_empty() {
                0
            } else {
                self.response.value_at_quantile(q)
            }
        };
        IntervalSummary {
            succeeded: self.succeeded,
            failed: self.failed,
            timeouts: self.timeouts,
            p50_us: at(0.5),
            p99_us: at(0.99),
            // Kinds the interval never saw need no histogram; the results leave them out.
            histogram: if self.succeeded + self.failed > 0 {
                histogram::encode(&self.response)
            } else {
                String::new()
            },
        }
    }
}

/// Everything of one interval, per operation kind.
#[derive(Clone, Debug, Default)]
pub struct IntervalMetrics {
    pub operations: PerOperation<IntervalOperation>,
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
}

impl IntervalMetrics {
    pub fn succeeded(&mut self, operation: Operation, response_ns: u64) {
        let op = &mut self.operations[operation];
        op.succeeded += 1;
        record_micros(&mut op.response, response_ns);
    }

    pub fn failed(&mut self, operation: Operation, timeout: bool) {
        let op = &mut self.operations[operation];
        op.failed += 1;
        op.timeouts += u64::from(timeout);
    }

    pub fn merge(&mut self, other: &IntervalMetrics) {
        self.operations
            .merge_with(&other.operations, IntervalOperation::merge);
        self.late += other.late;
    }

    /// Sums the interval up into the compact row the live line and the results use.
    pub fn row(&self, elapsed: f64, length: f64, cpu: f64) -> IntervalRow {
        IntervalRow {
            elapsed,
            length,
            operations: self.operations.map(|_, op| op.summary()),
            late: self.late,
            cpu,
            machine_cpu: None,
            in_flight: 0,
            stalled: false,
            after_stall: false,
        }
    }

    /// Starts the next interval, keeping the histograms' memory.
    pub fn clear(&mut self) {
        for (_, op) in self.operations.iter_mut() {
            op.succeeded = 0;
            op.failed = 0;
            op.timeouts = 0;
            op.response.reset();
        }
        self.late = 0;
    }
}

/// One operation kind in a finished interval. A long run keeps one row per interval, so a
/// row holds its histogram encoded (a few hundred bytes) rather than live (tens of KB).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalSummary {
    pub succeeded: u64,
    pub failed: u64,
    pub timeouts: u64,
    /// Response time percentiles of successful operations, microseconds (0 when none).
    pub p50_us: u64,
    pub p99_us: u64,
    /// The response time histogram in `results::histogram`'s encoding.
    pub histogram: String,
}

/// One finished interval of a step, merged over connections.
#[derive(Clone, Debug)]
pub struct IntervalRow {
    /// Seconds from the step's start to the interval's end.
    pub elapsed: f64,
    /// The interval's length in seconds.
    pub length: f64,
    pub operations: PerOperation<IntervalSummary>,
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
    /// The client's CPU use in the interval, as a fraction of the cores it may use.
    pub cpu: f64,
    /// The whole machine's CPU use, as a fraction of all its cores, where known.
    pub machine_cpu: Option<f64>,
    /// Operations begun and not ended at the interval's end.
    pub in_flight: u64,
    /// Operations were in flight all through the interval and none was answered: the
    /// server did not answer (see [`stalled`]).
    pub stalled: bool,
    /// Catching up after a stall: the interval before was stalled, or was catching up
    /// and this one has late starts too.
    pub after_stall: bool,
}

impl IntervalRow {
    pub fn of(&self, operation: Operation) -> &IntervalSummary {
        &self.operations[operation]
    }
}

/// An interval that began with operations in flight and ended without any answer (or
/// failure) held them up the whole interval: the server, not the client, stopped.
pub fn stalled(in_flight_at_start: u64, answered: u64) -> bool {
    in_flight_at_start > 0 && answered == 0
}
