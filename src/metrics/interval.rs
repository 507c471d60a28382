//! What happened in the current interval (a second by default), for the live lines.
//!
//! Each connection records into its own [`SharedInterval`]; the monitor takes it over once
//! per interval. The lock is only ever contended at that hand-over.

use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;

use super::connection::{new_histogram, record_micros};
use crate::workload::Operation;

/// One operation kind within one interval.
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

/// Everything of one interval, per operation kind.
#[derive(Clone, Debug, Default)]
pub struct IntervalMetrics {
    pub operations: [IntervalOperation; 5],
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
}

impl IntervalMetrics {
    pub fn succeeded(&mut self, operation: Operation, response_ns: u64) {
        let op = &mut self.operations[operation.index()];
        op.succeeded += 1;
        record_micros(&mut op.response, response_ns);
    }

    pub fn failed(&mut self, operation: Operation, timeout: bool) {
        let op = &mut self.operations[operation.index()];
        op.failed += 1;
        op.timeouts += u64::from(timeout);
    }

    pub fn merge(&mut self, other: &IntervalMetrics) {
        for (mine, theirs) in self.operations.iter_mut().zip(&other.operations) {
            mine.succeeded += theirs.succeeded;
            mine.failed += theirs.failed;
            mine.timeouts += theirs.timeouts;
            let _ = mine.response.add(&theirs.response);
        }
        self.late += other.late;
    }
}

/// A connection's interval recorder, shared with the monitor.
pub type SharedInterval = Arc<Mutex<IntervalMetrics>>;

/// One finished interval of a step, merged over connections.
#[derive(Clone, Debug)]
pub struct IntervalRow {
    /// Seconds from the step's start to the interval's end.
    pub elapsed: f64,
    /// The interval's length in seconds.
    pub length: f64,
    pub metrics: IntervalMetrics,
    /// The client's CPU use in the interval, as a fraction of the cores it may use.
    pub cpu: f64,
}
