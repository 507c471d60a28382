//! One connection's share of each step: the bulk inserts, then the CRUD operations.
//!
//! A worker owns its connection, its documents and its buffers, and counts into its own
//! metrics. Only latencies go to the shared recorder, into its running thread's shard.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::alarm::Alarm;
use super::bulk_answer::{self, DocumentOutcome};
use super::stop::Stop;
use crate::driver::responses;
use crate::driver::{Call, Client, Exchange, Method, TransportError};
use crate::metrics::{ConnectionMetrics, Failure, Recorder};
use crate::seed::Rng;
use crate::template::DocumentWriter;
use crate::workload::{DocumentIds, DocumentPool, KeyChoice, Operation, OperationOrder};

/// Why a worker stopped before finishing its share.
pub type Abort = String;

/// What every worker shares, read-only.
pub struct Shared {
    pub writer: Arc<DocumentWriter>,
    pub ids: DocumentIds,
    /// The database's path below a node's base path, e.g. `/mydb`.
    pub database_path: String,
    /// Operations finished by all workers in the current step, for the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Stop,
    /// Starting later than the schedule by more than this makes an operation late.
    pub late_threshold: Duration,
    /// Latencies and the live interval of the current phase.
    pub recorder: Arc<Recorder>,
}

/// When a connection sends its operations.
#[derive(Clone, Copy, Debug)]
pub enum Pacing {
    /// The next operation as soon as the previous one finished.
    Closed,
    /// Operation `k` is meant to start at `first + k * every`; latency counts from then.
    Open { first: Instant, every: Duration },
}

/// How a connection numbers the documents it stores in a phase: its `j`-th new document
/// is `base + j * stride + index`, so connections take turns and never collide.
#[derive(Clone, Copy, Debug)]
pub struct Numbering {
    pub base: u64,
    pub stride: u64,
}

/// One connection's share of a phase.
pub struct PhaseWork {
    pub order: OperationOrder,
    pub numbering: Numbering,
    pub batch_size: u64,
    pub keys: KeyChoice,
    pub deadline: Option<Instant>,
    pub pacing: Pacing,
}

pub struct Worker {
    pub index: u64,
    pub client: Client,
    pub pool: DocumentPool,
    shared: Arc<Shared>,
    /// Chooses which live document a read, update or delete touches.
    pick_rng: Rng,
    /// How the current phase chooses documents.
    keys: KeyChoice,
    /// Resolves when requests in flight are to be given up; kept across requests, since
    /// subscribing to the signal for every request cost more than the rest of the wait.
    abandoned: Pin<Box<dyn Future<Output = ()> + Send>>,
    body: Vec<u8>,
    path: String,
    id: String,
    rev: String,
}

/// When an operation began (its local processing starts) and when the schedule meant it
/// to start (open model only).
#[derive(Clone, Copy)]
struct Start {
    begin: Instant,
    intended: Option<Instant>,
}

/// How an exchange ended, for the operation's bookkeeping.
enum Answer {
    Received(Exchange),
    /// Counted as failed already; the worker goes on.
    Lost,
}

impl Answer {
    /// When the request went out and when its answer was in, for an operation that began
    /// at `begin`. A lost exchange's time is not local processing: it spans it all.
    fn span(&self, begin: Instant) -> (Instant, Instant) {
        match self {
            Answer::Received(exchange) => (exchange.started.max(begin), exchange.finished),
            Answer::Lost => (begin, Instant::now()),
        }
    }
}

impl Worker {
    pub fn new(index: u64, client: Client, shared: Arc<Shared>, pick_rng: Rng) -> Worker {
        let abandoned = Box::pin(shared.stop.abandon.raised());
        Worker {
            abandoned,
            index,
            client,
            pool: DocumentPool::default(),
            shared,
            pick_rng,
            keys: KeyChoice::Uniform,
            body: Vec::new(),
            path: String::new(),
            id: String::new(),
            rev: String::new(),
        }
    }

    /// Sends one request to `self.path`, with `self.body` if `with_body`, records its
    /// timings and bytes, and counts transport failures. Returns `Err` when the node cannot
    /// be reached any more: the step ends there.
    async fn exchange(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        method: Method,
        with_body: bool,
    ) -> Result<Answer, Abort> {
        let body = with_body.then_some(self.body.as_slice());
        let sent = body.map_or(0, |b| b.len() as u64);
        let call = Call {
            method,
            path: &self.path,
            body,
        };
        let sent_or_abandoned = tokio::select! {
            biased;
            result = self.client.send(&call) => Some(result),
            () = self.abandoned.as_mut() => None,
        };
        let Some(result) = sent_or_abandoned else {
            // A finished future must not be polled again; a new one resolves at once.
            self.abandoned = Box::pin(self.shared.stop.abandon.raised());
            return Err(format!(
                "connection {} gave up a request in flight when interrupted",
                self.index
            ));
        };
        match result {
            Ok(answer) => {
                metrics.send_ns += answer.timing.send;
                metrics.receive_ns += answer.timing.receive;
                metrics.operation(operation).remote_ns += answer.timing.wait;
                metrics.json_sent += sent;
                metrics.json_received += answer.body.len() as u64;
                Ok(Answer::Received(answer))
            }
            Err(error) => {
                let timeout = matches!(error, TransportError::Timeout);
                let failure = if timeout {
                    Failure::Timeout
                } else {
                    Failure::Transport
                };
                let op = metrics.operation(operation);
                if op.samples.wants(&failure) {
                    op.samples.add(&failure, &error.to_string());
                }
                op.fail(failure);
                self.shared.recorder.failed(operation, timeout);
                if error.is_unreachable() {
                    Err(format!(
                        "connection {} lost {}: {error}",
                        self.index,
                        self.client.endpoint().node
                    ))
                } else {
                    Ok(Answer::Lost)
                }
            }
        }
    }

    fn set_document_path(&mut self, number: u64) {
        self.shared.ids.write(number, &mut self.id);
        self.path.clear();
        self.path.push_str(&self.shared.database_path);
        self.path.push('/');
        self.path.push_str(&self.id);
    }

    /// One bulk insert of the documents numbered `numbers`.
    async fn bulk(
        &mut self,
        metrics: &mut ConnectionMetrics,
        numbers: Vec<u64>,
        start: Start,
    ) -> Result<(), Abort> {
        self.path.clear();
        self.path.push_str(&self.shared.database_path);
        self.path.push_str("/_bulk_docs");
        self.body.clear();
        self.body.extend_from_slice(b"{\"docs\":[");
        for (i, &number) in numbers.iter().enumerate() {
            if i > 0 {
                self.body.push(b',');
            }
            self.shared.ids.write(number, &mut self.id);
            self.shared
                .writer
                .write(&mut self.body, number, 1, Some(&self.id), None);
        }
        self.body.extend_from_slice(b"]}");
        let answer = self
            .exchange(metrics, Operation::BulkInsert, Method::Post, true)
            .await?;
        let (ready, answered) = answer.span(start.begin);
        if let Answer::Received(answer) = answer {
            let response = answered
                .duration_since(start.intended.unwrap_or(ready))
                .as_nanos() as u64;
            self.record_bulk_answer(metrics, &answer, &numbers, response);
        }
        metrics.local_ns +=
            (ready - start.begin).as_nanos() as u64 + answered.elapsed().as_nanos() as u64;
        Ok(())
    }

    fn record_bulk_answer(
        &mut self,
        metrics: &mut ConnectionMetrics,
        answer: &Exchange,
        numbers: &[u64],
        response: u64,
    ) {
        let bulk = metrics.operation(Operation::BulkInsert);
        bulk.statuses.add(answer.status, 1);
        let service = answer.timing.service_time();
        let rows = if (200..300).contains(&answer.status) {
            responses::bulk_rows(&answer.body).ok_or(Failure::BadAnswer)
        } else {
            Err(Failure::Status(answer.status))
        };
        let rows = match rows {
            Ok(rows) => rows,
            Err(failure) => {
                bulk.samples.add_body(&failure, &answer.body);
                bulk.fail(failure);
                self.shared.recorder.failed(Operation::BulkInsert, false);
                return;
            }
        };
        bulk.succeeded += 1;
        self.shared
            .recorder
            .succeeded(Operation::BulkInsert, service, response);
        let paired = bulk_answer::pair(rows, numbers, &self.shared.ids);
        let unmatched = Failure::Document("bad_answer".to_string());
        for (&number, outcome) in numbers.iter().zip(paired.documents) {
            let failure = match outcome {
                DocumentOutcome::Stored(rev) => {
                    bulk.documents += 1;
                    self.pool.add(number, rev);
                    continue;
                }
                DocumentOutcome::Refused(word) => Failure::Document(word),
                DocumentOutcome::NoRow | DocumentOutcome::Repeated => {
                    if bulk.samples.wants(&unmatched) {
                        let what = if outcome == DocumentOutcome::NoRow {
                            "no row"
                        } else {
                            "more than one row"
                        };
                        let id = self.shared.ids.id(number);
                        bulk.samples
                            .add(&unmatched, &format!("{what} for document {id:?}"));
                    }
                    unmatched.clone()
                }
            };
            bulk.failures.add(failure, 1);
        }
        for stranger in &paired.strangers {
            bulk.samples.add(
                &unmatched,
                &format!("a row for {stranger}, which the request did not hold"),
            );
        }
    }

    /// The connection's share of a phase: the operations `work.order` yields, until they
    /// run out, the deadline passes, or the run is stopped. Returns the metrics and why it
    /// stopped early, if it did.
    pub async fn run(&mut self, work: PhaseWork) -> (ConnectionMetrics, Option<Abort>) {
        let mut metrics = ConnectionMetrics::default();
        let started = Instant::now();
        let mut created = 0;
        self.keys = work.keys;
        let (numbering, index) = (work.numbering, self.index);
        let number = move |j: u64| numbering.base + j * numbering.stride + index;
        let mut abort = None;
        let stop = self.shared.stop.stop.clone();
        let mut progress = ProgressShare::new(self.shared.progress.clone());
        // Made at the first wait, and only under a rate: it may hold a file descriptor.
        let mut alarm: Option<Alarm> = None;
        for (k, operation) in work.order.enumerate() {
            let intended = match work.pacing {
                Pacing::Closed => None,
                Pacing::Open { first, every } => Some(first + every.mul_f64(k as f64)),
            };
            // One clock read serves the checks and the operation's start, unless it waits.
            let mut begin = Instant::now();
            let not_before = intended.unwrap_or(begin);
            if stop.is_raised() || work.deadline.is_some_and(|d| not_before >= d) {
                break;
            }
            // Free at its slot: whatever lag follows is the client's own.
            let free_at_slot = intended.is_some_and(|at| at > begin);
            if let Some(at) = intended.filter(|&at| at > begin) {
                let alarm = alarm.get_or_insert_with(Alarm::new);
                // tokio's timer would wake a millisecond late; see `Alarm`.
                tokio::select! {
                    () = alarm.sleep_until(at) => {}
                    () = stop.raised() => break,
                }
                begin = Instant::now();
            }
            let lag = intended.map(|at| begin.saturating_duration_since(at));
            let late = lag.is_some_and(|lag| lag > self.shared.late_threshold);
            metrics.late += u64::from(late);
            self.shared
                .recorder
                .began(lag.filter(|_| free_at_slot), late);
            let start = Start { begin, intended };
            let outcome = match operation {
                Operation::Create => {
                    created += 1;
                    self.create(&mut metrics, number(created - 1), start).await
                }
                Operation::Read => self.read(&mut metrics, start).await,
                Operation::Update => self.update(&mut metrics, start).await,
                Operation::Delete => self.delete(&mut metrics, start).await,
                Operation::BulkInsert => {
                    let numbers = (created..created + work.batch_size).map(number).collect();
                    created += work.batch_size;
                    self.bulk(&mut metrics, numbers, start).await
                }
            };
            progress.done(begin);
            self.shared.recorder.ended();
            if let Err(reason) = outcome {
                abort = Some(reason);
                break;
            }
        }
        progress.flush();
        metrics.elapsed_ns = started.elapsed().as_nanos() as u64;
        (metrics, abort)
    }

    /// Sends the request prepared in `self.path` (and `self.body` if `with_body`), then lets
    /// `on_answer` judge the answer. Local processing is the time before sending and after
    /// the answer.
    async fn perform(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        method: Method,
        with_body: bool,
        start: Start,
        on_answer: impl FnOnce(&mut Worker, &mut ConnectionMetrics, &Exchange) -> Result<(), Failure>,
    ) -> Result<(), Abort> {
        let Start { begin, intended } = start;
        let answer = self.exchange(metrics, operation, method, with_body).await?;
        let (ready, answered) = answer.span(begin);
        if let Answer::Received(answer) = answer {
            metrics.operation(operation).statuses.add(answer.status, 1);
            match on_answer(self, metrics, &answer) {
                Ok(()) => {
                    let response = answered
                        .duration_since(intended.unwrap_or(ready))
                        .as_nanos() as u64;
                    let op = metrics.operation(operation);
                    op.succeeded += 1;
                    op.documents += 1;
                    let service = answer.timing.service_time();
                    self.shared.recorder.succeeded(operation, service, response);
                }
                Err(failure) => {
                    let op = metrics.operation(operation);
                    op.samples.add_body(&failure, &answer.body);
                    op.fail(failure);
                    self.shared.recorder.failed(operation, false);
                }
            }
        }
        metrics.local_ns +=
            (ready - begin).as_nanos() as u64 + answered.elapsed().as_nanos() as u64;
        Ok(())
    }

    async fn create(
        &mut self,
        metrics: &mut ConnectionMetrics,
        number: u64,
        start: Start,
    ) -> Result<(), Abort> {
        self.set_document_path(number);
        self.body.clear();
        self.shared
            .writer
            .write(&mut self.body, number, 1, Some(&self.id), None);
        self.perform(
            metrics,
            Operation::Create,
            Method::Put,
            true,
            start,
            |w, _, answer| {
                let rev = written(answer)?;
                w.pool.add(number, rev);
                Ok(())
            },
        )
        .await
    }

    /// Picks a live document and points the path at it; `None` (counted) when there is none.
    fn pick(&mut self, metrics: &mut ConnectionMetrics, operation: Operation) -> Option<usize> {
        let slot = self.pool.pick_by(&mut self.pick_rng, self.keys);
        match slot {
            Some(slot) => self.set_document_path(self.pool.get(slot).number),
            None => metrics.operation(operation).fail(Failure::NoDocument),
        }
        slot
    }

    async fn read(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        let Some(slot) = self.pick(metrics, Operation::Read) else {
            return Ok(());
        };
        self.perform(
            metrics,
            Operation::Read,
            Method::Get,
            false,
            start,
            |w, _, answer| {
                if answer.status != 200 {
                    return Err(Failure::Status(answer.status));
                }
                let rev = responses::read_rev(&answer.body).ok_or(Failure::BadAnswer)?;
                w.pool.set_rev(slot, rev);
                Ok(())
            },
        )
        .await
    }

    async fn update(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        let Some(slot) = self.pick(metrics, Operation::Update) else {
            return Ok(());
        };
        let document = self.pool.get(slot);
        let (number, version) = (document.number, document.rev.generation() + 1);
        self.rev.clear();
        document.rev.write_to(&mut self.rev);
        self.body.clear();
        self.shared.writer.write(
            &mut self.body,
            number,
            version,
            Some(&self.id),
            Some(&self.rev),
        );
        self.perform(
            metrics,
            Operation::Update,
            Method::Put,
            true,
            start,
            |w, _, answer| {
                let rev = written(answer)?;
                w.pool.set_rev(slot, rev);
                Ok(())
            },
        )
        .await
    }

    async fn delete(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        let Some(slot) = self.pick(metrics, Operation::Delete) else {
            return Ok(());
        };
        self.path.push_str("?rev=");
        self.pool.get(slot).rev.write_to(&mut self.path);
        self.perform(
            metrics,
            Operation::Delete,
            Method::Delete,
            false,
            start,
            |w, _, answer| {
                written(answer)?;
                w.pool.remove(slot);
                Ok(())
            },
        )
        .await
    }
}

/// A connection's finished operations, added to the shared progress count in batches:
/// every connection adding to one counter at every operation would make the threads
/// fight over its cache line.
struct ProgressShare {
    shared: Arc<AtomicU64>,
    pending: u64,
    since: Instant,
}

impl ProgressShare {
    /// At most this many operations, or this long, before the count is passed on.
    const BATCH: u64 = 64;
    const PERIOD: Duration = Duration::from_millis(50);

    fn new(shared: Arc<AtomicU64>) -> ProgressShare {
        ProgressShare {
            shared,
            pending: 0,
            since: Instant::now(),
        }
    }

    /// One more operation, which began at `began`.
    fn done(&mut self, began: Instant) {
        self.pending += 1;
        if self.pending >= Self::BATCH || began.duration_since(self.since) >= Self::PERIOD {
            self.flush();
            self.since = began;
        }
    }

    fn flush(&mut self) {
        self.shared.fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
    }
}

/// The new revision from a create, update or delete answer.
fn written(answer: &Exchange) -> Result<crate::driver::Rev, Failure> {
    if !matches!(answer.status, 200..=202) {
        return Err(Failure::Status(answer.status));
    }
    responses::written_rev(&answer.body).ok_or(Failure::BadAnswer)
}
