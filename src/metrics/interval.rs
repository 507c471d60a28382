//! What happened in the current interval (a second by default), for the live lines, and
//! the compact row each finished interval leaves behind.

use hdrhistogram::Histogram;

use super::coarse::Coarsen;
use super::errors::{Failure, FailureCounts};
use super::histogram;
use super::late::LateCauses;
use super::recorder::{new_histogram, record_micros};
use super::setup::SetupTally;
use crate::workload::{Operation, PerOperation};

/// One operation kind within one interval, while it is being recorded.
#[derive(Clone, Debug)]
pub struct IntervalOperation {
    pub succeeded: u64,
    pub failed: u64,
    pub timeouts: u64,
    /// Failures that were 429s (in `failed`).
    pub rate_limited: u64,
    /// 429 answers after which the operation was sent again (not failures).
    pub retried_429: u64,
    /// Documents the successful operations stored or touched (a bulk insert's documents).
    pub documents: u64,
    /// Request and answer body bytes of the operations answered in the interval.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Response times of successful operations, microseconds.
    pub response: Histogram<u64>,
    /// Failures by kind: of whole operations (adding up to `failed`), and of single
    /// documents in bulk answers (`doc:*`). Not in the row: the live metrics endpoint
    /// takes them from here.
    pub failures: FailureCounts,
}

impl Default for IntervalOperation {
    fn default() -> IntervalOperation {
        IntervalOperation {
            succeeded: 0,
            failed: 0,
            timeouts: 0,
            rate_limited: 0,
            retried_429: 0,
            documents: 0,
            bytes_sent: 0,
            bytes_received: 0,
            response: new_histogram(),
            failures: FailureCounts::default(),
        }
    }
}

impl IntervalOperation {
    pub fn merge(&mut self, other: &IntervalOperation) {
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.timeouts += other.timeouts;
        self.rate_limited += other.rate_limited;
        self.retried_429 += other.retried_429;
        self.documents += other.documents;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        let _ = self.response.add(&other.response);
        self.failures.merge(&other.failures);
    }

    fn summary(&self) -> IntervalSummary {
        let at = |q: f64| {
            if self.response.is_empty() {
                0
            } else {
                self.response.value_at_quantile(q)
            }
        };
        let mut summary = IntervalSummary {
            succeeded: self.succeeded,
            failed: self.failed,
            timeouts: self.timeouts,
            rate_limited: self.rate_limited,
            retried_429: self.retried_429,
            documents: self.documents,
            bytes_sent: self.bytes_sent,
            bytes_received: self.bytes_received,
            p50_us: at(0.5),
            p99_us: at(0.99),
            histogram: String::new(),
        };
        // Kinds the interval never saw need no histogram; the results leave them out.
        if summary.answered() > 0 {
            summary.histogram = histogram::encode(&self.response);
        }
        summary
    }
}

/// Everything of one interval, per operation kind.
#[derive(Clone, Debug, Default)]
pub struct IntervalMetrics {
    pub operations: PerOperation<IntervalOperation>,
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
    /// Connections opened (not in the row; the live metrics endpoint takes it from here).
    pub setup: SetupTally,
}

impl IntervalMetrics {
    pub fn succeeded(&mut self, operation: Operation, response_ns: u64) {
        let op = &mut self.operations[operation];
        op.succeeded += 1;
        record_micros(&mut op.response, response_ns);
    }

    /// Documents a successful operation stored or touched.
    pub fn documents(&mut self, operation: Operation, documents: u64) {
        self.operations[operation].documents += documents;
    }

    /// Body bytes an answered exchange sent and received.
    pub fn transferred(&mut self, operation: Operation, sent: u64, received: u64) {
        let op = &mut self.operations[operation];
        op.bytes_sent += sent;
        op.bytes_received += received;
    }

    pub fn failed(&mut self, operation: Operation, failure: &Failure) {
        let op = &mut self.operations[operation];
        op.failed += 1;
        op.timeouts += u64::from(*failure == Failure::Timeout);
        op.rate_limited += u64::from(*failure == Failure::RateLimited);
        op.failures.add(failure.clone(), 1);
    }

    /// Documents a bulk answer `refused`, by kind (`doc:*`).
    pub fn refused(&mut self, operation: Operation, refused: &FailureCounts) {
        self.operations[operation].failures.merge(refused);
    }

    /// A 429 after which the operation goes out again.
    pub fn retried_429(&mut self, operation: Operation) {
        self.operations[operation].retried_429 += 1;
    }

    pub fn merge(&mut self, other: &IntervalMetrics) {
        self.operations
            .merge_with(&other.operations, IntervalOperation::merge);
        self.late += other.late;
        self.setup.merge(&other.setup);
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
            waiting_after_429: 0,
            stalled: false,
            after_stall: false,
            polling: false,
            target_rate: None,
            disk: None,
            server: Vec::new(),
            late_causes: LateCauses::default(),
            stalled_seconds: 0.0,
        }
    }

    /// Starts the next interval, keeping the histograms' memory.
    pub fn clear(&mut self) {
        for (_, op) in self.operations.iter_mut() {
            op.succeeded = 0;
            op.failed = 0;
            op.timeouts = 0;
            op.rate_limited = 0;
            op.retried_429 = 0;
            op.documents = 0;
            op.response.reset();
            op.bytes_sent = 0;
            op.bytes_received = 0;
            op.failures.clear();
        }
        self.late = 0;
        self.setup.clear();
    }
}

/// One operation kind in a finished interval. A long run keeps one row per interval, so a
/// row holds its histogram encoded (a few hundred bytes) rather than live (tens of KB).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalSummary {
    pub succeeded: u64,
    pub failed: u64,
    pub timeouts: u64,
    /// Failures that were 429s (in `failed`).
    pub rate_limited: u64,
    /// 429 answers after which the operation was sent again.
    pub retried_429: u64,
    /// Documents the successful operations stored or touched.
    pub documents: u64,
    /// Request and answer body bytes of the operations answered in the interval.
    pub bytes_sent: u64,
    pub bytes_received: u64,
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
    /// Operations begun and not ended at the interval's end (not counting those waiting
    /// after a 429).
    pub in_flight: u64,
    /// Operations waiting to be sent again after a 429 at the interval's end.
    pub waiting_after_429: u64,
    /// Operations were in flight all through the interval and none was answered: the
    /// server did not answer (see [`stalled`]).
    pub stalled: bool,
    /// Catching up after a stall: the interval before was stalled, or was catching up
    /// and this one has late starts too.
    pub after_stall: bool,
    /// The client's threads polled instead of sleeping (`--busy-poll`): its CPU share
    /// was full by design and says nothing of how loaded it was.
    pub polling: bool,
    /// The operations per second the schedule aimed at over this interval (open model):
    /// under a ramp, the ramp's mean over the interval.
    pub target_rate: Option<f64>,
    /// The database's sizes as looked at during the interval; `None` when no look
    /// answered in it.
    pub disk: Option<crate::disk::DiskSizes>,
    /// What each node said about itself as the interval ended (`server_stats`), joined
    /// in after the phase; empty when no node was asked or none answered in time.
    pub server: Vec<crate::server_stats::NodeInterval>,
    /// The late starts by cause, put down live interval by live interval (exact once
    /// intervals are merged, where a one-second stall would vanish).
    pub late_causes: LateCauses,
    /// How long the server stalled in the interval: its length when stalled; in a merged
    /// interval, the stalled live intervals' lengths added up.
    pub stalled_seconds: f64,
}

impl IntervalRow {
    pub fn of(&self, operation: Operation) -> &IntervalSummary {
        &self.operations[operation]
    }
}

impl IntervalSummary {
    /// Answers (and failures without one) of this kind in the interval: operations that
    /// ended, and 429s after which an operation went out again.
    pub fn answered(&self) -> u64 {
        self.succeeded + self.failed + self.retried_429
    }

    /// Whether anything of this kind happened in the interval.
    pub fn saw_anything(&self) -> bool {
        self.answered() > 0
    }
}

/// An interval that began with operations in flight and ended without any answer (or
/// failure) held them up the whole interval: the server, not the client, stopped.
pub fn stalled(in_flight_at_start: u64, answered: u64) -> bool {
    in_flight_at_start > 0 && answered == 0
}

impl Coarsen for IntervalSummary {
    /// Counts add up, and the histograms exactly; the percentiles are the sum's.
    fn absorb(&mut self, later: IntervalSummary) {
        self.succeeded += later.succeeded;
        self.failed += later.failed;
        self.timeouts += later.timeouts;
        self.rate_limited += later.rate_limited;
        self.retried_429 += later.retried_429;
        self.documents += later.documents;
        self.bytes_sent += later.bytes_sent;
        self.bytes_received += later.bytes_received;
        if later.histogram.is_empty() {
            return;
        }
        if self.histogram.is_empty() {
            (self.histogram, self.p50_us, self.p99_us) =
                (later.histogram, later.p50_us, later.p99_us);
            return;
        }
        // Both were encoded here: a decoding error cannot happen, and would keep the
        // earlier histogram rather than lose both.
        let (Ok(mut sum), Ok(next)) = (
            histogram::decode(&self.histogram),
            histogram::decode(&later.histogram),
        ) else {
            return;
        };
        let _ = sum.add(&next);
        if !sum.is_empty() {
            self.p50_us = sum.value_at_quantile(0.5);
            self.p99_us = sum.value_at_quantile(0.99);
        }
        self.histogram = histogram::encode(&sum);
    }
}

impl Coarsen for IntervalRow {
    /// Counts add up; shares and rates are the mean over the merged length; what held
    /// at an interval's end (in flight, the disk look, the servers' levels) is the
    /// later one's.
    fn absorb(&mut self, mut later: IntervalRow) {
        let length = self.length + later.length;
        let mean = |a: f64, b: f64| {
            if length > 0.0 {
                (a * self.length + b * later.length) / length
            } else {
                b
            }
        };
        self.cpu = mean(self.cpu, later.cpu);
        self.machine_cpu = match (self.machine_cpu, later.machine_cpu) {
            (Some(a), Some(b)) => Some(mean(a, b)),
            (a, b) => b.or(a),
        };
        self.target_rate = match (self.target_rate, later.target_rate) {
            (Some(a), Some(b)) => Some(mean(a, b)),
            (a, b) => b.or(a),
        };
        for (operation, next) in later.operations.iter_mut() {
            self.operations[operation].absorb(std::mem::take(next));
        }
        self.late += later.late;
        self.late_causes.add(&later.late_causes);
        self.stalled_seconds += later.stalled_seconds;
        self.elapsed = later.elapsed;
        self.length = length;
        self.in_flight = later.in_flight;
        self.waiting_after_429 = later.waiting_after_429;
        self.stalled = later.stalled;
        self.after_stall = later.after_stall;
        self.polling |= later.polling;
        if later.disk.is_some() {
            self.disk = later.disk;
        }
        crate::server_stats::join::absorb(&mut self.server, later.server);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::coarse::Series;

    /// A one-second row of `reads` reads taking 1 ms, 2 ms, … and `late` late starts.
    fn row(end: f64, reads: u64, late: u64, stalled: bool) -> IntervalRow {
        let mut metrics = IntervalMetrics::default();
        for k in 1..=reads {
            metrics.succeeded(Operation::Read, k * 1_000_000);
        }
        metrics.late = late;
        let mut row = metrics.row(end, 1.0, 0.5);
        row.late_causes.stall = late;
        row.stalled_seconds = if stalled { 1.0 } else { 0.0 };
        row.in_flight = end as u64;
        row
    }

    #[test]
    fn merged_rows_hold_the_exact_sum_of_their_histograms_and_counts() {
        let mut series = Series::new(4);
        let mut whole = crate::metrics::recorder::new_histogram();
        for i in 1..=9u64 {
            series.push(row(i as f64, i * 10, i % 2, i == 3));
            for k in 1..=i * 10 {
                let _ = whole.record(k * 1_000);
            }
        }
        let (rows, width) = series.into_parts();
        // 9 rows in at most 4: two merges, each row 4 wide, the last with one.
        assert_eq!((rows.len(), width), (3, 4));
        let lengths: Vec<f64> = rows.iter().map(|r| r.length).collect();
        assert_eq!(lengths, [4.0, 4.0, 1.0]);
        let ends: Vec<u64> = rows.iter().map(|r| r.in_flight).collect();
        assert_eq!(ends, [4, 8, 9], "in flight as each merged row ended");
        let reads: u64 = rows.iter().map(|r| r.of(Operation::Read).succeeded).sum();
        assert_eq!(reads, 450);
        let mut sum = crate::metrics::recorder::new_histogram();
        for r in &rows {
            let _ = sum.add(histogram::decode(&r.of(Operation::Read).histogram).unwrap());
        }
        assert_eq!(sum, whole, "the histograms add up exactly");
        let first = rows[0].of(Operation::Read);
        let mut four = crate::metrics::recorder::new_histogram();
        for i in 1..=4u64 {
            for k in 1..=i * 10 {
                let _ = four.record(k * 1_000);
            }
        }
        assert_eq!(first.p99_us, four.value_at_quantile(0.99));
        assert_eq!(rows.iter().map(|r| r.late).sum::<u64>(), 5);
        assert_eq!(rows.iter().map(|r| r.late_causes.stall).sum::<u64>(), 5);
        assert_eq!(rows[0].stalled_seconds, 1.0);
        assert!(
            (rows[0].cpu - 0.5).abs() < 1e-9,
            "a mean share stays a share"
        );
    }
}
