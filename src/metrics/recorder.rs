//! Where every connection records its latencies: one set of histograms per runtime
//! thread, not per connection.
//!
//! A histogram with three significant digits takes 16 KB empty and tens of KB once it has
//! seen a few milliseconds. Per connection, with two histograms per operation kind plus the
//! interval's, that made 10,000 connections take gigabytes. Shards keep the memory fixed
//! whatever the connection count, and since each runtime thread records into its own
//! shard, a shard's lock is only ever contended when the monitor takes the interval.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use hdrhistogram::Histogram;

use super::connection::ConnectionMetrics;
use super::errors::{Failure, FailureCounts};
use super::interval::IntervalMetrics;
use super::setup::SetupTally;
use crate::workload::{Operation, PerOperation};

/// Latencies are recorded in microseconds, with three significant digits.
pub const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

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

/// Latencies of one operation kind, microseconds.
#[derive(Clone, Debug)]
pub struct OperationLatencies {
    /// Service time: first byte of the request out to the last byte of the answer in.
    pub latency: Histogram<u64>,
    /// Response time: from the moment the schedule meant the operation to start (open
    /// model) or from sending (closed model). Under a rate, this shows a stalled server.
    pub response: Histogram<u64>,
    /// Failed operations: from the first attempt's start to the failure (a timeout, a
    /// broken connection, an error status). Kept apart so that failures neither vanish
    /// from the figures nor pass for fast successes.
    pub failed: Histogram<u64>,
}

impl Default for OperationLatencies {
    fn default() -> OperationLatencies {
        OperationLatencies {
            latency: new_histogram(),
            response: new_histogram(),
            failed: new_histogram(),
        }
    }
}

impl OperationLatencies {
    pub fn record(&mut self, service_ns: u64, response_ns: u64) {
        record_micros(&mut self.latency, service_ns);
        record_micros(&mut self.response, response_ns);
    }

    pub fn merge(&mut self, other: &OperationLatencies) {
        let _ = self.latency.add(&other.latency);
        let _ = self.response.add(&other.response);
        let _ = self.failed.add(&other.failed);
    }

    fn clear(&mut self) {
        self.latency.reset();
        self.response.reset();
        self.failed.reset();
    }
}

/// The latencies of a step, per operation kind.
pub type StepLatencies = PerOperation<OperationLatencies>;

/// What one node of the target answered in a step: requests answered (with their
/// service times) and requests that failed there, whatever the operation.
#[derive(Clone, Debug)]
pub struct NodeLatencies {
    /// Answers with a status below 400.
    pub answered: u64,
    /// Error statuses, timeouts, broken and refused connections.
    pub failed: u64,
    /// Service time of the answered requests, microseconds.
    pub latency: Histogram<u64>,
}

impl Default for NodeLatencies {
    fn default() -> NodeLatencies {
        NodeLatencies {
            answered: 0,
            failed: 0,
            latency: new_histogram(),
        }
    }
}

impl NodeLatencies {
    pub fn merge(&mut self, other: &NodeLatencies) {
        self.answered = self.answered.saturating_add(other.answered);
        self.failed = self.failed.saturating_add(other.failed);
        let _ = self.latency.add(&other.latency);
    }
}

struct Shard {
    step: StepLatencies,
    /// From each operation's scheduled start to its actual start (open model), µs.
    send_lag: Histogram<u64>,
    interval: IntervalMetrics,
    /// Per node of the target, only when it has several.
    nodes: Vec<NodeLatencies>,
    setup: SetupTally,
}

impl Default for Shard {
    fn default() -> Shard {
        Shard {
            step: StepLatencies::default(),
            send_lag: new_histogram(),
            interval: IntervalMetrics::default(),
            nodes: Vec::new(),
            setup: SetupTally::default(),
        }
    }
}

/// The recorders of one engine, shared by all its connections and its monitor.
pub struct Recorder {
    shards: Box<[Mutex<Shard>]>,
    /// Operations begun and ended in the step, per thread: the difference of the sums is
    /// what is in flight, which tells a server that stopped answering from a client that
    /// stopped asking. Per thread, so that connections do not fight over one cache line
    /// at every operation.
    flights: Box<[Flights]>,
}

/// One thread's counts of operations begun and ended, and of waits after a 429 begun and
/// ended, on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
struct Flights {
    begun: AtomicU64,
    ended: AtomicU64,
    rested: AtomicU64,
    resumed: AtomicU64,
}

/// Gives each thread that records its own shard number, in the order threads first record.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

impl Recorder {
    /// A recorder with one shard per thread that may record; more threads than shards
    /// share shards, which only costs some lock contention.
    pub fn new(threads: usize) -> Recorder {
        Recorder {
            shards: (0..threads.max(1))
                .map(|_| Mutex::new(Shard::default()))
                .collect(),
            flights: (0..threads.max(1)).map(|_| Flights::default()).collect(),
        }
    }

    fn flights(&self) -> &Flights {
        &self.flights[thread_number() % self.flights.len()]
    }

    fn shard(&self) -> MutexGuard<'_, Shard> {
        let shard = &self.shards[thread_number() % self.shards.len()];
        shard.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn each_shard(&self) -> impl Iterator<Item = MutexGuard<'_, Shard>> {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A successful operation that stored or touched `documents` documents, with its
    /// service and response times: counted on its connection `on` and timed here in one
    /// call, so that the counts and the histograms cannot disagree.
    pub fn succeeded(
        &self,
        on: &mut ConnectionMetrics,
        operation: Operation,
        documents: u64,
        service_ns: u64,
        response_ns: u64,
    ) {
        let counts = on.operation(operation);
        counts.succeeded += 1;
        counts.documents += documents;
        let mut shard = self.shard();
        shard.step[operation].record(service_ns, response_ns);
        shard.interval.succeeded(operation, response_ns);
        shard.interval.documents(operation, documents);
    }

    /// The documents a bulk answer refused, by kind (`doc:*`), which its connection
    /// counted: only the interval takes them (the step's are counted on the
    /// connection), for the live metrics endpoint.
    /// Body bytes an answered exchange of `operation` sent and received, for the
    /// interval (the step's are counted on the connection).
    pub fn transferred(&self, operation: Operation, sent: u64, received: u64) {
        self.shard().interval.transferred(operation, sent, received);
    }

    pub fn refused_documents(&self, operation: Operation, refused: &FailureCounts) {
        self.shard().interval.refused(operation, refused);
    }

    /// A failed operation, which took `took_ns` until it failed: counted on its
    /// connection `on` by what went wrong, and timed here, in one call.
    pub fn failed(
        &self,
        on: &mut ConnectionMetrics,
        operation: Operation,
        failure: Failure,
        took_ns: u64,
    ) {
        let mut shard = self.shard();
        record_micros(&mut shard.step[operation].failed, took_ns);
        shard.interval.failed(operation, &failure);
        drop(shard);
        on.operation(operation).fail(failure);
    }

    /// A 429 after which the operation was sent again, `waited_ns` later: counted on its
    /// connection `on` and in the interval, in one call.
    pub fn retried_429(&self, on: &mut ConnectionMetrics, operation: Operation, waited_ns: u64) {
        let counts = on.operation(operation);
        counts.retried_429 += 1;
        counts.retry_429_wait_ns = counts.retry_429_wait_ns.saturating_add(waited_ns);
        self.shard().interval.retried_429(operation);
    }

    /// A request to node `node` (its place in the target) that was answered with
    /// `status` after `service_ns`, or failed (`status` `None`).
    pub fn at_node(&self, node: usize, status: Option<u16>, service_ns: u64) {
        let mut shard = self.shard();
        if shard.nodes.len() <= node {
            shard.nodes.resize_with(node + 1, NodeLatencies::default);
        }
        let entry = &mut shard.nodes[node];
        match status {
            Some(status) if status < 400 => {
                entry.answered += 1;
                record_micros(&mut entry.latency, service_ns);
            }
            _ => entry.failed += 1,
        }
    }

    /// A connection was opened: its TCP connect and TLS handshake times, and whether it
    /// replaced one its client had before.
    pub fn opened(&self, connect_ns: u64, handshake_ns: Option<u64>, reconnect: bool) {
        let mut shard = self.shard();
        shard.setup.record(connect_ns, handshake_ns, reconnect);
        shard
            .interval
            .setup
            .record(connect_ns, handshake_ns, reconnect);
    }

    /// The step's connection openings, merged over shards.
    pub fn setup(&self) -> SetupTally {
        let mut merged = SetupTally::default();
        for shard in self.each_shard() {
            merged.merge(&shard.setup);
        }
        merged
    }

    /// The step's figures per node, merged over shards.
    pub fn nodes(&self) -> Vec<NodeLatencies> {
        let mut merged: Vec<NodeLatencies> = Vec::new();
        for shard in self.each_shard() {
            if merged.len() < shard.nodes.len() {
                merged.resize_with(shard.nodes.len(), NodeLatencies::default);
            }
            for (total, node) in merged.iter_mut().zip(&shard.nodes) {
                total.merge(node);
            }
        }
        merged
    }

    /// An operation begins, `late` if it began after its scheduled start by more than
    /// the threshold (open model). `send_lag` is how long after its scheduled start it
    /// began, given when its connection was free at that moment: an operation whose
    /// connection was still waiting for an answer is late because of that answer, and
    /// counts in `late` and the response time instead.
    pub fn began(&self, send_lag: Option<std::time::Duration>, late: bool) {
        self.flights().begun.fetch_add(1, Ordering::Relaxed);
        if send_lag.is_some() || late {
            let mut shard = self.shard();
            if let Some(lag) = send_lag {
                record_micros(&mut shard.send_lag, lag.as_nanos() as u64);
            }
            shard.interval.late += u64::from(late);
        }
    }

    /// An operation ended, whatever its outcome.
    pub fn ended(&self) {
        self.flights().ended.fetch_add(1, Ordering::Relaxed);
    }

    /// An operation waits to be sent again after a 429: it is not in flight meanwhile,
    /// so that connections the server asked to wait do not pass for a stalled server.
    /// [`Recorder::resumed`] must follow.
    pub fn resting(&self) {
        let flights = self.flights();
        flights.ended.fetch_add(1, Ordering::Relaxed);
        flights.rested.fetch_add(1, Ordering::Relaxed);
    }

    /// The waiting operation is in flight again.
    pub fn resumed(&self) {
        let flights = self.flights();
        flights.resumed.fetch_add(1, Ordering::Relaxed);
        flights.begun.fetch_add(1, Ordering::Relaxed);
    }

    /// Operations begun and not yet ended.
    pub fn in_flight(&self) -> u64 {
        // Ended is read first: an operation that ends in between counts as in flight
        // rather than the difference going below zero.
        let ended = self.sum(|f| &f.ended);
        self.sum(|f| &f.begun).saturating_sub(ended)
    }

    /// Operations waiting to be sent again after a 429.
    pub fn waiting_after_429(&self) -> u64 {
        let resumed = self.sum(|f| &f.resumed);
        self.sum(|f| &f.rested).saturating_sub(resumed)
    }

    /// One count of every thread's flights, added up.
    fn sum(&self, count: fn(&Flights) -> &AtomicU64) -> u64 {
        self.flights
            .iter()
            .map(|f| count(f).load(Ordering::Relaxed))
            .sum()
    }

    /// The step's send lags so far, merged over shards, microseconds.
    pub fn send_lag(&self) -> Histogram<u64> {
        let mut merged = new_histogram();
        for shard in self.each_shard() {
            let _ = merged.add(&shard.send_lag);
        }
        merged
    }

    /// Adds the current interval of every shard to `into` and starts the next one.
    pub fn take_interval(&self, into: &mut IntervalMetrics) {
        for mut shard in self.each_shard() {
            into.merge(&shard.interval);
            shard.interval.clear();
        }
    }

    /// The step's latencies so far, merged over shards.
    pub fn step(&self) -> StepLatencies {
        let mut merged = StepLatencies::default();
        for shard in self.each_shard() {
            merged.merge_with(&shard.step, OperationLatencies::merge);
        }
        merged
    }

    /// Forgets everything recorded, for the next step; keeps the histograms' memory.
    pub fn clear(&self) {
        for mut shard in self.each_shard() {
            shard.step.iter_mut().for_each(|(_, op)| op.clear());
            shard.send_lag.reset();
            shard.interval.clear();
            shard.nodes.clear();
            shard.setup.clear();
        }
        for flights in self.flights.iter() {
            flights.begun.store(0, Ordering::Relaxed);
            flights.ended.store(0, Ordering::Relaxed);
            flights.rested.store(0, Ordering::Relaxed);
            flights.resumed.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_waiting_after_a_429_is_out_of_flight_until_it_resumes() {
        let recorder = Recorder::new(1);
        let mut on = ConnectionMetrics::default();
        recorder.began(None, false);
        recorder.began(None, false);
        recorder.resting();
        assert_eq!((recorder.in_flight(), recorder.waiting_after_429()), (1, 1));
        recorder.resumed();
        recorder.retried_429(&mut on, Operation::Read, 5_000);
        assert_eq!((recorder.in_flight(), recorder.waiting_after_429()), (2, 0));
        recorder.ended();
        recorder.ended();
        assert_eq!(recorder.in_flight(), 0);
        let read = on.of(Operation::Read);
        assert_eq!((read.retried_429, read.retry_429_wait_ns), (1, 5_000));
        let mut interval = IntervalMetrics::default();
        recorder.take_interval(&mut interval);
        assert_eq!(interval.operations[Operation::Read].retried_429, 1);
    }

    #[test]
    fn merges_what_threads_recorded_and_clears_intervals_apart_from_the_step() {
        let recorder = std::sync::Arc::new(Recorder::new(2));
        let threads: Vec<_> = (1..=4u64)
            .map(|t| {
                let recorder = recorder.clone();
                std::thread::spawn(move || {
                    let mut on = ConnectionMetrics::default();
                    for k in 0..100 {
                        recorder.succeeded(
                            &mut on,
                            Operation::Read,
                            1,
                            t * 1_000_000,
                            (t + k) * 1_000,
                        );
                    }
                    let failure = if t == 4 {
                        Failure::Timeout
                    } else {
                        Failure::Status(500)
                    };
                    recorder.failed(&mut on, Operation::Update, failure, t * 1_000_000);
                    on
                })
            })
            .collect();
        let counted: Vec<ConnectionMetrics> =
            threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(
            counted
                .iter()
                .all(|c| c.of(Operation::Read).succeeded == 100
                    && c.of(Operation::Read).documents == 100
                    && c.of(Operation::Update).failures.total() == 1)
        );
        let mut interval = IntervalMetrics::default();
        recorder.take_interval(&mut interval);
        let read = &interval.operations[Operation::Read];
        assert_eq!((read.succeeded, read.documents), (400, 400));
        assert_eq!(read.response.len(), 400);
        let update = &interval.operations[Operation::Update];
        assert_eq!((update.failed, update.timeouts), (4, 1));
        let mut next = IntervalMetrics::default();
        recorder.take_interval(&mut next);
        assert_eq!(next.operations[Operation::Read].succeeded, 0);
        let step = recorder.step();
        let read = &step[Operation::Read];
        assert_eq!(read.latency.len(), 400);
        assert_eq!(read.latency.max(), read.latency.highest_equivalent(4_000));
        let update = &step[Operation::Update];
        assert_eq!((update.failed.len(), update.latency.len()), (4, 0));
        recorder.clear();
        assert!(recorder.step()[Operation::Read].latency.is_empty());
    }
}
