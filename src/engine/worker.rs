//! One connection's share of each step: the bulk inserts, then the CRUD operations.
//!
//! A worker owns its connection, its documents and its buffers, and counts into its own
//! metrics. Only latencies go to the shared recorder, into its running thread's shard.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::bulk_answer::{self, DocumentOutcome};
use super::kept::MostKept;
use super::rate_limit::Retry429;
use super::reconnect::{Next, Reconnect};
use super::stop::Stop;
use super::transport::{Clock, SystemClock, Transport};
use crate::driver::auth::AllSecrets;
use crate::driver::responses;
use crate::driver::{
    Call, Client, Endpoint, Exchange, Method, Streaming, TransportError, Unanswered,
};
use crate::metrics::{
    ConnectionMetrics, Failure, FailureCounts, FailureSamples, OperationCounts, Recorder,
};
use crate::seed::Rng;
use crate::template::DocumentWriter;
use crate::text::Quoted;
use crate::workload::{
    AttachmentSizes, DocSize, DocumentIds, DocumentPool, IdScheme, KeyChoice, Operation,
    OperationOrder, Schedule, Shape, ids,
};

/// Why a worker stopped before finishing its share.
pub type Abort = String;

/// What every worker shares, read-only.
pub struct Shared {
    pub writer: Arc<DocumentWriter>,
    pub ids: DocumentIds,
    /// The databases' paths below a node's base path, e.g. `/mydb`: the run's database
    /// alone, or the `--databases` its documents spread over.
    pub database_paths: Vec<String>,
    /// How new documents pick their database among `database_paths`.
    pub databases: crate::workload::Databases,
    /// Operations finished by all workers in the current step, for the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Stop,
    /// Starting later than the schedule by more than this makes an operation late.
    pub late_threshold: Duration,
    /// Latencies and the live interval of the current phase.
    pub recorder: Arc<Recorder>,
    /// How long a connection that lost its server keeps trying to reconnect.
    pub reconnect_for: Duration,
    /// With several nodes: a connection that cannot reach its node moves on to the next.
    pub failover: bool,
    /// Every node's endpoint, in `--database_address` order, for failing over; their
    /// credentials know the secrets to hide from the answers kept as examples.
    pub endpoints: Vec<Arc<Endpoint>>,
    /// Whether, and how often, an operation turned away with a 429 is sent again.
    pub retry_429: Option<Retry429>,
    /// The sizes of the attachments `attachment_write` sends.
    pub attachment_sizes: AttachmentSizes,
    /// The sizes of the inline attachments bulk documents carry, if they carry any.
    pub bulk_attachment_sizes: Option<AttachmentSizes>,
    /// The run's seed, from which attachments' bytes derive.
    pub seed: u64,
    /// The longest revision or id kept from an answer (`--max-kept-value`).
    pub most_kept: super::kept::MostKept,
}

impl Shared {
    /// The run's database, for what only a run over one database does (queries, hot
    /// documents, existing data: refused with `--databases` above 1).
    pub fn database_path(&self) -> &str {
        &self.database_paths[0]
    }

    /// The path of database `database` (of `--databases`).
    fn path_of(&self, database: u32) -> &str {
        &self.database_paths[database as usize]
    }
    /// Keeps `said` (a server's bytes) as an example of `failure`, quoted: every secret
    /// hidden, control characters escaped.
    fn note(&self, samples: &mut FailureSamples, failure: &Failure, said: &[u8]) {
        if samples.wants(failure) {
            let secrets = AllSecrets::of(self.endpoints.iter().map(|e| &e.credential));
            samples.add(
                failure,
                Quoted::new(said, &secrets, FailureSamples::LENGTH).as_str(),
            );
        }
    }

    /// Keeps an answer as an example of the failure it meant: a 429 with the
    /// `Retry-After` it carried.
    fn note_answer(&self, samples: &mut FailureSamples, failure: &Failure, answer: &Exchange) {
        match failure {
            Failure::RateLimited => self.note_429(samples, answer, None),
            _ => self.note(samples, failure, &answer.body),
        }
    }
}

/// When a connection sends its operations.
#[derive(Clone, Copy, Debug)]
pub enum Pacing {
    /// The next operation as soon as the previous one finished.
    Closed,
    /// The connection's operation `k` is the phase's operation `k * stride + offset`,
    /// meant to start when `schedule` (from `start`) says; latency counts from then.
    Open {
        start: Instant,
        schedule: Schedule,
        stride: u64,
        offset: u64,
    },
}

impl Pacing {
    /// When the connection's operation `k` is meant to start (open model only). Checked:
    /// no rate or count can make the schedule overflow the clock.
    fn intended(&self, k: u64) -> Option<Instant> {
        match *self {
            Pacing::Closed => None,
            Pacing::Open {
                start,
                schedule,
                stride,
                offset,
            } => {
                let n = k.checked_mul(stride).and_then(|n| n.checked_add(offset));
                Some(schedule.at(start, n))
            }
        }
    }
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
    /// The size and id scheme of the documents the phase stores.
    pub shape: Shape,
    pub deadline: Option<Instant>,
    pub pacing: Pacing,
    /// The declared query each query operation runs.
    pub queries: crate::query::PhaseQueries,
}

/// A connection's worker; a run's talks to a server through a [`Client`] on the system's
/// clock, a test's to a scripted server on a virtual one.
pub struct Worker<T = Client, C = SystemClock> {
    pub index: u64,
    pub client: T,
    clock: C,
    pub pool: DocumentPool,
    shared: Arc<Shared>,
    /// Chooses which live document a read, update or delete touches.
    pick_rng: Rng,
    /// How the current phase chooses documents.
    keys: KeyChoice,
    /// The size the current phase pads the documents it writes to.
    doc_size: Option<DocSize>,
    /// Resolves when requests in flight are to be given up; kept across requests, since
    /// subscribing to the signal for every request cost more than the rest of the wait.
    abandoned: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Whether the server is reachable, and when to try again if not.
    reconnect: Reconnect,
    /// True once the connection gave up reconnecting: a later phase tries once more, and
    /// gives up at once if that fails.
    gave_up: bool,
    /// Whether the current phase runs under a rate (operations fail on schedule while the
    /// server is away) or closed (operations wait for it).
    open_model: bool,
    /// The current phase's end, if time bounds it: a wait to send again stops there.
    deadline: Option<Instant>,
    body: Vec<u8>,
    /// A body made as it is sent, or an answer counted, for the request being prepared.
    streaming: Streaming,
    path: String,
    id: String,
    rev: String,
    /// Which of the run's databases `path` points into.
    database: u32,
    /// The phase's `_changes` consumers' tables (its own feed's, its replicas'), told of
    /// every write the server answered.
    changes: Vec<Vec<Arc<super::changes::Table>>>,
    queries: query::QueryState,
    /// With `--hot-docs`: the shared documents updates go to, and their revisions as
    /// this connection last knew them.
    hot: Option<hot::HotState>,
    /// With `--key-range` or `--key-sample`: the documents already in the database that
    /// reads, updates and deletes target.
    existing: Option<Arc<crate::workload::Existing>>,
    /// The inline attachments' lengths of the bulk insert in flight, in request order.
    inline_lengths: Vec<u64>,
    /// Raw attachment bytes on their way into base64.
    scratch: Vec<u8>,
}

/// When an operation began (its local processing starts) and when the schedule meant it
/// to start (open model only).
#[derive(Clone, Copy)]
struct Start {
    begin: Instant,
    intended: Option<Instant>,
}

/// The request an operation sends, prepared in `self.path` (and `self.body`).
#[derive(Clone, Copy)]
struct Request {
    operation: Operation,
    method: Method,
    with_body: bool,
    /// Documents a write carries, for counting unknown outcomes.
    documents: u64,
    /// When the operation's first attempt went out, once a 429 made it go out again: its
    /// time counts from then.
    first_sent: Option<Instant>,
}

impl Request {
    fn new(operation: Operation, method: Method, with_body: bool, documents: u64) -> Request {
        Request {
            operation,
            method,
            with_body,
            documents,
            first_sent: None,
        }
    }
}

/// How an operation ended, for what the connection knows of its document afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Settled {
    Done,
    Failed,
    /// A write whose answer was lost: it may or may not have been applied.
    Unknown,
}

/// Whether the server can be reached before an operation.
enum Reachable {
    Up,
    /// Not yet (open model): the operation due now fails as unreachable.
    Down,
    /// The connection tried for as long as allowed; why, for the report.
    GaveUp(Abort),
    /// The run was stopped while waiting.
    Stopped,
}

/// How an exchange ended, for the operation's bookkeeping.
enum Answer {
    Received(Exchange),
    /// Counted as failed already; the worker goes on. `unknown` when it was a write that
    /// may have been applied.
    Lost {
        unknown: bool,
    },
}

impl Answer {
    /// When the request went out and when its answer was in, for an operation that began
    /// at `begin` (and whose first attempt went out at `first_sent`, when a 429 made it
    /// go out again). A lost exchange's time is not local processing: it spans it all, up
    /// to now on `clock` (an answer's own times spare the clock a read).
    fn span(
        &self,
        begin: Instant,
        first_sent: Option<Instant>,
        clock: &impl Clock,
    ) -> (Instant, Instant) {
        let (sent, answered) = match self {
            Answer::Received(exchange) => (exchange.started, exchange.finished),
            Answer::Lost { .. } => (begin, clock.now()),
        };
        (first_sent.unwrap_or(sent).max(begin), answered)
    }
}

/// An operation's service time: its exchange's, or from its first attempt to its answer
/// when a 429 made it go out again (the waits the server asked for are part of it).
fn service_ns(answer: &Exchange, first_sent: Option<Instant>) -> u64 {
    match first_sent {
        Some(first) => answer.finished.saturating_duration_since(first).as_nanos() as u64,
        None => answer.timing.service_time(),
    }
}

/// An answered operation's times, nanoseconds.
#[derive(Clone, Copy)]
struct OperationTimes {
    service: u64,
    response: u64,
}

impl<T: Transport, C: Clock> Worker<T, C> {
    pub fn new(index: u64, client: T, clock: C, shared: Arc<Shared>, pick_rng: Rng) -> Self {
        let abandoned = Box::pin(shared.stop.abandon.raised());
        Worker {
            clock,
            abandoned,
            reconnect: Reconnect::new(shared.reconnect_for),
            gave_up: false,
            open_model: false,
            deadline: None,
            index,
            client,
            pool: DocumentPool::default(),
            shared,
            pick_rng,
            keys: KeyChoice::Uniform,
            doc_size: None,
            body: Vec::new(),
            streaming: Streaming::NONE,
            path: String::new(),
            id: String::new(),
            rev: String::new(),
            database: 0,
            changes: Vec::new(),
            queries: query::QueryState::default(),
            hot: None,
            existing: None,
            inline_lengths: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Sends `request` once, records its timings and bytes, and counts transport
    /// failures. Returns `Err` when the run was interrupted with the request in flight.
    async fn exchange(
        &mut self,
        metrics: &mut ConnectionMetrics,
        request: Request,
    ) -> Result<Answer, Abort> {
        let Request {
            operation,
            method,
            with_body,
            documents,
            first_sent,
        } = request;
        let generated = self.streaming.body.map_or(0, |body| body.length);
        let sent = generated + if with_body { self.body.len() as u64 } else { 0 };
        let result = loop {
            let result = self.send_once(metrics, request).await?;
            if self.shared.endpoints.len() > 1 {
                self.note_node(&result);
            }
            match &result {
                // Never sent: in the closed model the operation waits for the server.
                Err(lost)
                    if !self.open_model && lost.is_unreachable() && !lost.may_have_reached =>
                {
                    self.reconnect.failed(self.clock.now(), rand::random());
                    match self.come_back().await {
                        Reachable::Up => continue,
                        Reachable::GaveUp(reason) => {
                            self.gave_up = true;
                            metrics.operation(operation).not_run += 1;
                            return Err(reason);
                        }
                        Reachable::Down | Reachable::Stopped => {
                            return Err(format!(
                                "connection {} stopped while waiting to reconnect",
                                self.index
                            ));
                        }
                    }
                }
                _ => break result,
            }
        };
        match result {
            Ok(answer) => {
                let op = metrics.operation(operation);
                op.resends += u64::from(answer.resent);
                op.bytes_sent += sent;
                op.bytes_received += answer.body_length;
                metrics.times.remote_ns[operation] += answer.timing.wait;
                metrics.times.send_ns += answer.timing.send;
                metrics.times.receive_ns += answer.timing.receive;
                metrics.json_sent += sent;
                metrics.json_received += answer.body_length;
                self.shared
                    .recorder
                    .transferred(operation, sent, answer.body_length);
                Ok(Answer::Received(answer))
            }
            Err(lost) => {
                let failure = if matches!(lost.error, TransportError::Timeout) {
                    Failure::Timeout
                } else if matches!(lost.error, TransportError::TooLarge(..)) {
                    Failure::TooLarge
                } else if lost.is_unreachable() {
                    Failure::Unreachable
                } else {
                    Failure::Transport
                };
                let op = metrics.operation(operation);
                self.shared
                    .note(&mut op.samples, &failure, lost.error.to_string().as_bytes());
                op.resends += u64::from(lost.resent);
                // A refusal whose answer was too long to read was still a refusal.
                let unknown =
                    lost.may_have_reached && method != Method::Get && !lost.error.refused();
                if unknown {
                    op.unknown += documents;
                }
                let took = self.nanos_since(first_sent.unwrap_or(lost.started));
                self.shared
                    .recorder
                    .failed(metrics, operation, failure, took);
                if lost.is_unreachable() {
                    self.reconnect.failed(self.clock.now(), rand::random());
                }
                Ok(Answer::Lost { unknown })
            }
        }
    }

    /// Sends the prepared request once; `Err` when the run was interrupted with it in
    /// flight (counted: its time, and a write's outcome as unknown).
    async fn send_once(
        &mut self,
        metrics: &mut ConnectionMetrics,
        request: Request,
    ) -> Result<Result<Exchange, Unanswered>, Abort> {
        let Request {
            operation,
            method,
            documents,
            ..
        } = request;
        let call = Call {
            method,
            path: &self.path,
            body: request.with_body.then_some(self.body.as_slice()),
        };
        let asked = self.clock.now();
        let sent_or_abandoned = tokio::select! {
            // Given up first: a server that always has another byte ready (endless
            // interim answers) keeps the exchange busy until the task's budget runs out,
            // and polled second the signal would wait for that budget's next turn.
            biased;
            () = self.abandoned.as_mut() => None,
            result = self.client.send(&call, self.streaming) => Some(result),
        };
        let recorder = &self.shared.recorder;
        self.client.take_openings(|opened| {
            recorder.opened(opened.connect_ns, opened.handshake_ns, opened.reconnect);
        });
        if let Some(result) = sent_or_abandoned {
            return Ok(result);
        }
        // A finished future must not be polled again; a new one resolves at once.
        self.abandoned = Box::pin(self.shared.stop.abandon.raised());
        // Given up, not vanished: its time counts, and a write may have been applied.
        if method != Method::Get {
            metrics.operation(operation).unknown += documents;
        }
        let took = self.nanos_since(request.first_sent.unwrap_or(asked));
        self.shared
            .recorder
            .failed(metrics, operation, Failure::Interrupted, took);
        Err(format!(
            "connection {} gave up a request in flight when interrupted",
            self.index
        ))
    }

    /// Nanoseconds from `at` to now.
    fn nanos_since(&self, at: Instant) -> u64 {
        self.clock.now().saturating_duration_since(at).as_nanos() as u64
    }

    /// The place in the target of the node this connection goes to.
    fn node(&self) -> Option<usize> {
        let endpoint = self.client.endpoint();
        self.shared
            .endpoints
            .iter()
            .position(|e| Arc::ptr_eq(e, endpoint))
    }

    /// Counts an exchange for the node it went to, when the target has several.
    fn note_node(&self, result: &Result<Exchange, Unanswered>) {
        let Some(node) = self.node() else {
            return;
        };
        match result {
            Ok(answer) => {
                let service = answer.timing.service_time();
                self.shared
                    .recorder
                    .at_node(node, Some(answer.status), service);
            }
            Err(_) => self.shared.recorder.at_node(node, None, 0),
        }
    }

    /// Before an operation: a connection that lost its server waits for it (closed
    /// model) or, under a rate, fails the operations that fall due meanwhile, trying again
    /// with a growing backoff until `--reconnect-for` has passed.
    async fn come_back(&mut self) -> Reachable {
        loop {
            match self.reconnect.next(self.clock.now()) {
                Next::GiveUp(tried) => {
                    return Reachable::GaveUp(format!(
                        "connection {} gave up reconnecting to {} after {:.1} s ({} tries; --reconnect-for allows {} s)",
                        self.index,
                        self.client.endpoint().node,
                        tried.as_secs_f64(),
                        self.reconnect.failed_tries + 1,
                        self.shared.reconnect_for.as_secs_f64()
                    ));
                }
                Next::WaitUntil(_) if self.open_model => return Reachable::Down,
                Next::WaitUntil(at) => {
                    tokio::select! {
                        () = self.clock.sleep_until(at) => {}
                        () = self.shared.stop.stop.raised() => return Reachable::Stopped,
                    }
                }
                Next::Try => {
                    let stop = self.shared.stop.stop.clone();
                    let reached = tokio::select! {
                        reached = self.try_nodes() => reached,
                        () = stop.raised() => return Reachable::Stopped,
                    };
                    if reached {
                        self.reconnect.reached();
                        return Reachable::Up;
                    }
                    self.reconnect.failed(self.clock.now(), rand::random());
                    if self.open_model {
                        return Reachable::Down;
                    }
                }
            }
        }
    }

    /// One try to connect: to this connection's node, or with `--failover` to each node
    /// in turn from it, staying on the first that answers.
    async fn try_nodes(&mut self) -> bool {
        let nodes = &self.shared.endpoints;
        let tries = if self.shared.failover { nodes.len() } else { 1 };
        for _ in 0..tries {
            if self.client.open().await.is_ok() {
                return true;
            }
            if let Some(at) = nodes
                .iter()
                .position(|e| Arc::ptr_eq(e, self.client.endpoint()))
                .filter(|_| tries > 1)
            {
                self.client.move_to(nodes[(at + 1) % nodes.len()].clone());
            }
        }
        false
    }

    /// Points the path at the database a new document numbered `number` goes to.
    fn set_new_database_path(&mut self, number: u64) {
        self.database = self.shared.databases.of_new(number);
        self.path.clear();
        self.path.push_str(self.shared.path_of(self.database));
    }

    /// Points the path at a new document's id, made from its number.
    fn set_new_document_path(&mut self, number: u64) {
        self.shared.ids.write(number, &mut self.id);
        self.set_new_database_path(number);
        self.path.push('/');
        self.path.push_str(&self.id);
    }

    /// Points the path at the live document in `slot`, by the id it was stored under.
    fn set_document_path(&mut self, slot: usize) {
        let document = self.pool.get(slot);
        server_ids::write_id(&self.shared.ids, document, &mut self.id);
        self.database = document.database;
        self.path.clear();
        self.path.push_str(self.shared.path_of(self.database));
        self.path.push('/');
        server_ids::push_encoded(&mut self.path, &self.id);
    }

    /// One bulk insert of the documents numbered `numbers`, counting the documents whose
    /// storing was not confirmed: users count a bulk load in documents, not requests.
    async fn bulk(
        &mut self,
        metrics: &mut ConnectionMetrics,
        numbers: Vec<u64>,
        start: Start,
    ) -> Result<(), Abort> {
        let sent = numbers.len() as u64;
        let before = metrics.of(Operation::BulkInsert);
        let (answered, stored, unknown) = (
            before.succeeded + before.failures.of_operations(),
            before.documents,
            before.unknown,
        );
        let result = self.send_bulk(metrics, numbers, start).await;
        let bulk = metrics.operation(Operation::BulkInsert);
        // A request that ended as a success or a counted failure accounts for each of its
        // documents: stored, failed, or unknown when its answer was lost. One given up
        // when interrupted accounts for none.
        if bulk.succeeded + bulk.failures.of_operations() > answered {
            let settled = (bulk.documents - stored) + (bulk.unknown - unknown);
            bulk.documents_failed += sent.saturating_sub(settled);
        }
        result
    }

    async fn send_bulk(
        &mut self,
        metrics: &mut ConnectionMetrics,
        numbers: Vec<u64>,
        start: Start,
    ) -> Result<(), Abort> {
        self.inline_lengths.clear();
        // A bulk insert goes to one database: its first document's.
        self.set_new_database_path(numbers.first().copied().unwrap_or(0));
        self.path.push_str("/_bulk_docs");
        self.body.clear();
        self.body.extend_from_slice(b"{\"docs\":[");
        for (i, &number) in numbers.iter().enumerate() {
            if i > 0 {
                self.body.push(b',');
            }
            // Without an `_id` the server gives one.
            let id = (ids::scheme_of(number) != IdScheme::Server).then(|| {
                self.shared.ids.write(number, &mut self.id);
                self.id.as_str()
            });
            let size = self.doc_size;
            self.shared
                .writer
                .write_sized(&mut self.body, number, 1, id, None, size);
            if let Some(sizes) = &self.shared.bulk_attachment_sizes {
                let length = sizes.draw(&mut self.pick_rng);
                let seed = self.shared.seed;
                inline_attachment::append(&mut self.body, &mut self.scratch, seed, number, length);
                self.inline_lengths.push(length);
            }
        }
        self.body.extend_from_slice(b"]}");
        let request = Request::new(
            Operation::BulkInsert,
            Method::Post,
            true,
            numbers.len() as u64,
        );
        let (answer, first_sent) = self.exchange_retrying(metrics, request).await?;
        let (ready, answered) = answer.span(start.begin, first_sent, &self.clock);
        if let Answer::Received(answer) = answer {
            let times = OperationTimes {
                service: service_ns(&answer, first_sent),
                response: answered
                    .duration_since(start.intended.unwrap_or(ready))
                    .as_nanos() as u64,
            };
            self.record_bulk_answer(metrics, &answer, &numbers, times);
        }
        metrics.times.local_ns +=
            (ready - start.begin).as_nanos() as u64 + self.nanos_since(answered);
        Ok(())
    }

    fn record_bulk_answer(
        &mut self,
        metrics: &mut ConnectionMetrics,
        answer: &Exchange,
        numbers: &[u64],
        times: OperationTimes,
    ) {
        metrics
            .operation(Operation::BulkInsert)
            .statuses
            .add(answer.status, 1);
        let rows = if (200..300).contains(&answer.status) {
            responses::bulk_rows(&answer.body)
                .ok_or(Failure::BadAnswer)
                .and_then(|rows| bulk_answer::within(rows, self.shared.most_kept))
        } else {
            Err(Failure::of_status(answer.status))
        };
        let rows = match rows {
            Ok(rows) => rows,
            Err(failure) => {
                let samples = &mut metrics.operation(Operation::BulkInsert).samples;
                self.shared.note_answer(samples, &failure, answer);
                self.shared
                    .recorder
                    .failed(metrics, Operation::BulkInsert, failure, times.service);
                return;
            }
        };
        let by_position = numbers
            .first()
            .is_some_and(|&n| ids::scheme_of(n) == IdScheme::Server);
        let paired = if by_position {
            bulk_answer::pair_by_position(rows, numbers.len())
        } else {
            Ok(bulk_answer::pair(rows, numbers, &self.shared.ids))
        };
        let paired = match paired {
            Ok(paired) => paired,
            Err(rows) => {
                self.unpaired_bulk_answer(metrics, answer, (rows, numbers.len()), times);
                return;
            }
        };
        let bulk = metrics.operation(Operation::BulkInsert);
        let unmatched = Failure::Document("bad_answer".to_string());
        // Counted here first; the refused ones then on the connection and for the live
        // figures, the stored ones with the request's success below.
        let mut stored = 0;
        let mut refused = FailureCounts::default();
        for (position, (&number, outcome)) in numbers.iter().zip(paired.documents).enumerate() {
            let failure = match outcome {
                DocumentOutcome::Stored(rev) => {
                    stored += 1;
                    let id = self.shared.ids.id(number);
                    self.bulk_written_for_feeds(&id, &rev);
                    self.pool.add_stored(number, rev, None, self.database);
                    self.note_inline_attachment(position);
                    continue;
                }
                DocumentOutcome::StoredAs(rev, id) => {
                    stored += 1;
                    self.bulk_written_for_feeds(&id, &rev);
                    self.pool.add_stored(number, rev, Some(id), self.database);
                    self.note_inline_attachment(position);
                    continue;
                }
                DocumentOutcome::Refused(word) => Failure::document(&word),
                DocumentOutcome::NoRow | DocumentOutcome::Repeated | DocumentOutcome::NoId(_) => {
                    if bulk.samples.wants(&unmatched) {
                        // A document without an id of its own is named by its place.
                        let document = if by_position {
                            format!("the request's document {}", position + 1)
                        } else {
                            format!("document {:?}", self.shared.ids.id(number))
                        };
                        let text = format!("{} for {document}", unmatched_row(&outcome));
                        bulk.samples.add(&unmatched, &text);
                    }
                    unmatched.clone()
                }
            };
            refused.add(failure, 1);
        }
        count_strangers(bulk, &mut refused, &paired.strangers, paired.stranger_count);
        bulk.failures.merge(&refused);
        self.shared
            .recorder
            .refused_documents(Operation::BulkInsert, &refused);
        // The request succeeded, with the documents it stored: counted in the phase and
        // in the interval (for documents/s over time) in one call.
        self.shared.recorder.succeeded(
            metrics,
            Operation::BulkInsert,
            stored,
            times.service,
            times.response,
        );
    }

    /// The document just added to the pool was the request's `position`-th: it holds
    /// the inline attachment it was sent with, if any.
    fn note_inline_attachment(&mut self, position: usize) {
        if let Some(&length) = self.inline_lengths.get(position) {
            let slot = self.pool.len() - 1;
            self.pool.set_attachment(slot, length);
        }
    }

    /// The connection's share of a phase: the operations `work.order` yields, until they
    /// run out, the deadline passes, or the run is stopped. Returns the metrics and why it
    /// stopped early, if it did.
    pub async fn run(&mut self, work: PhaseWork) -> (ConnectionMetrics, Option<Abort>) {
        let mut metrics = ConnectionMetrics::default();
        let started = self.clock.now();
        let mut created = 0;
        self.keys = work.keys;
        self.doc_size = work.shape.doc_size;
        self.queries.phase = work.queries;
        let (numbering, index) = (work.numbering, self.index);
        let scheme = work.shape.ids.unwrap_or_default();
        let number =
            move |j: u64| ids::tagged(numbering.base + j * numbering.stride + index, scheme);
        let mut abort = None;
        let mut cut_by_deadline = false;
        let stop = self.shared.stop.stop.clone();
        let mut progress = ProgressShare::new(self.shared.progress.clone(), started);
        self.open_model = matches!(work.pacing, Pacing::Open { .. });
        self.deadline = work.deadline;
        let mut source = work.order;
        let mut order = (&mut source).enumerate();
        if self.gave_up {
            if self.try_nodes().await {
                self.gave_up = false;
                self.reconnect.reached();
            } else {
                abort = Some(format!(
                    "connection {} still cannot reach {} (it gave up in an earlier phase)",
                    self.index,
                    self.client.endpoint().node
                ));
            }
        }
        while abort.is_none()
            && let Some((k, operation)) = order.next()
        {
            let intended = work.pacing.intended(k as u64);
            // One clock read serves the checks and the operation's start, unless it waits.
            let mut begin = self.clock.now();
            let not_before = intended.unwrap_or(begin);
            // Past the deadline nothing more is sent, not even operations that fell due
            // before it and are late (after a stall they would go on for long).
            // Under a rate the next slot may lie past the deadline before the clock does.
            cut_by_deadline = work.deadline.is_some_and(|d| not_before >= d || begin >= d);
            if stop.is_raised() || cut_by_deadline {
                break;
            }
            // Free at its slot: whatever lag follows is the client's own.
            let free_at_slot = intended.is_some_and(|at| at > begin);
            if let Some(at) = intended.filter(|&at| at > begin) {
                tokio::select! {
                    () = self.clock.sleep_until(at) => {}
                    () = stop.raised() => break,
                }
                begin = self.clock.now();
            }
            let lag = intended.map(|at| begin.saturating_duration_since(at));
            let late = lag.is_some_and(|lag| lag > self.shared.late_threshold);
            metrics.late += u64::from(late);
            self.shared
                .recorder
                .began(lag.filter(|_| free_at_slot), late);
            if self.reconnect.is_down() {
                match self.come_back().await {
                    Reachable::Up => {}
                    Reachable::Down => {
                        self.fail_unreachable(&mut metrics, operation, intended.unwrap_or(begin));
                        progress.done(begin);
                        self.shared.recorder.ended();
                        continue;
                    }
                    Reachable::GaveUp(reason) => {
                        self.shared.recorder.ended();
                        metrics.operation(operation).not_run += 1;
                        self.gave_up = true;
                        abort = Some(reason);
                        break;
                    }
                    Reachable::Stopped => {
                        self.shared.recorder.ended();
                        break;
                    }
                }
            }
            let start = Start { begin, intended };
            let outcome = match operation {
                Operation::Create => {
                    created += 1;
                    self.create(&mut metrics, number(created - 1), start).await
                }
                Operation::Read => self.read(&mut metrics, start).await,
                Operation::Update => self.update(&mut metrics, start).await,
                Operation::Delete => self.delete(&mut metrics, start).await,
                Operation::Find | Operation::View | Operation::AllDocs | Operation::ChangesRead => {
                    self.query(&mut metrics, operation, start).await
                }
                Operation::AttachmentWrite => self.attachment_write(&mut metrics, start).await,
                Operation::AttachmentRead => self.attachment_read(&mut metrics, start).await,
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
        // What a count-bounded share did not run is counted, never silently dropped: the
        // rest after a connection gave up, or operations that need a document when the
        // connection has none (its bulk inserts or creates failed). A stop by the user
        // (Ctrl-C, --duration) is the user's bound and is not counted.
        let cut_by_user = cut_by_deadline
            || stop.is_raised()
            || work.deadline.is_some_and(|d| self.clock.now() >= d);
        if let Some(left) = source.left().filter(|_| !cut_by_user) {
            for (operation, &n) in left.iter() {
                metrics.operation(operation).not_run += n;
            }
            if abort.is_none() && left.total() > 0 {
                abort = Some(format!(
                    "connection {} had no document left for {} planned operations (its bulk inserts or creates failed)",
                    self.index,
                    left.total()
                ));
            }
        }
        (metrics, abort)
    }

    /// An operation due while the server is unreachable (open model): it fails at once,
    /// as such, and the schedule goes on.
    fn fail_unreachable(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        due: Instant,
    ) {
        let waited = self.nanos_since(due);
        self.shared
            .recorder
            .failed(metrics, operation, Failure::Unreachable, waited);
        // Never sent, but meant for this connection's node: a dead node's table row
        // must show what its death cost.
        if self.shared.endpoints.len() > 1
            && let Some(node) = self.node()
        {
            self.shared.recorder.at_node(node, None, 0);
        }
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
        on_answer: impl FnOnce(&mut Self, &mut ConnectionMetrics, &Exchange) -> Result<(), Failure>,
    ) -> Result<Settled, Abort> {
        let request = Request::new(operation, method, with_body, 1);
        let (answer, first_sent) = self.exchange_retrying(metrics, request).await?;
        Ok(self.settle(metrics, (operation, start), answer, first_sent, on_answer))
    }

    /// Counts how an operation that began at `start` ended with `answer` (its first
    /// attempt sent at `first_sent` when it went out more than once): `on_answer` judges a
    /// received answer, the success or failure is recorded with its times.
    fn settle(
        &mut self,
        metrics: &mut ConnectionMetrics,
        (operation, start): (Operation, Start),
        answer: Answer,
        first_sent: Option<Instant>,
        on_answer: impl FnOnce(&mut Self, &mut ConnectionMetrics, &Exchange) -> Result<(), Failure>,
    ) -> Settled {
        let Start { begin, intended } = start;
        let (ready, answered) = answer.span(begin, first_sent, &self.clock);
        let settled = match answer {
            Answer::Received(answer) => {
                metrics.operation(operation).statuses.add(answer.status, 1);
                let service = service_ns(&answer, first_sent);
                match on_answer(self, metrics, &answer) {
                    Ok(()) => {
                        let response = answered
                            .duration_since(intended.unwrap_or(ready))
                            .as_nanos() as u64;
                        self.shared
                            .recorder
                            .succeeded(metrics, operation, 1, service, response);
                        Settled::Done
                    }
                    Err(failure) => {
                        let samples = &mut metrics.operation(operation).samples;
                        self.shared.note_answer(samples, &failure, &answer);
                        self.shared
                            .recorder
                            .failed(metrics, operation, failure, service);
                        Settled::Failed
                    }
                }
            }
            Answer::Lost { unknown: true } => Settled::Unknown,
            Answer::Lost { unknown: false } => Settled::Failed,
        };
        metrics.times.local_ns += (ready - begin).as_nanos() as u64 + self.nanos_since(answered);
        settled
    }

    async fn create(
        &mut self,
        metrics: &mut ConnectionMetrics,
        number: u64,
        start: Start,
    ) -> Result<(), Abort> {
        if ids::scheme_of(number) == IdScheme::Server {
            return self.create_by_post(metrics, number, start).await;
        }
        self.set_new_document_path(number);
        self.body.clear();
        let size = self.doc_size;
        self.shared
            .writer
            .write_sized(&mut self.body, number, 1, Some(&self.id), None, size);
        self.perform(
            metrics,
            Operation::Create,
            Method::Put,
            true,
            start,
            |w, _, answer| {
                let rev = written(answer, w.shared.most_kept)?;
                w.written_for_feeds(&rev);
                w.pool.add_stored(number, rev, None, w.database);
                Ok(())
            },
        )
        .await
        .map(|_| ())
    }

    /// Picks a live document and points the path at it; `None` (counted) when there is none.
    fn pick(&mut self, metrics: &mut ConnectionMetrics, operation: Operation) -> Option<usize> {
        let slot = self.pool.pick_by(&mut self.pick_rng, self.keys);
        match slot {
            Some(slot) => self.set_document_path(slot),
            // Failed at once, never sent: it counts, and takes no time.
            None => self
                .shared
                .recorder
                .failed(metrics, operation, Failure::NoDocument, 0),
        }
        slot
    }

    async fn read(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        if self.existing.is_some() {
            return self.existing_read(metrics, start).await;
        }
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
                    return Err(Failure::of_status(answer.status));
                }
                let rev = revision::current_rev(answer, w.shared.most_kept)?;
                w.pool.set_rev(slot, rev);
                Ok(())
            },
        )
        .await
        .map(|_| ())
    }

    async fn update(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        if self.hot.is_some() {
            return self.hot_update(metrics, start).await;
        }
        if self.existing.is_some() {
            return self.existing_write(metrics, Operation::Update, start).await;
        }
        let Some(slot) = self.pick(metrics, Operation::Update) else {
            return Ok(());
        };
        let document = self.pool.get(slot);
        let (number, version) = (document.number, document.rev.generation() + 1);
        self.rev.clear();
        document.rev.write_to(&mut self.rev);
        self.body.clear();
        self.shared.writer.write_sized(
            &mut self.body,
            number,
            version,
            Some(&self.id),
            Some(&self.rev),
            self.doc_size,
        );
        let settled = self
            .perform(
                metrics,
                Operation::Update,
                Method::Put,
                true,
                start,
                |w, _, answer| {
                    let rev = written(answer, w.shared.most_kept)?;
                    w.written_for_feeds(&rev);
                    w.pool.set_rev(slot, rev);
                    // A whole document without `_attachments` takes them away.
                    w.pool.set_attachment(slot, 0);
                    Ok(())
                },
            )
            .await?;
        self.set_aside_if_unknown(slot, settled);
        Ok(())
    }

    /// A document whose update or delete may or may not have been applied has a revision
    /// nobody knows: using it again would fail for the tool's sake, so the connection
    /// leaves it alone from now on.
    fn set_aside_if_unknown(&mut self, slot: usize, settled: Settled) {
        if settled == Settled::Unknown {
            self.pool.remove(slot);
        }
    }

    async fn delete(&mut self, metrics: &mut ConnectionMetrics, start: Start) -> Result<(), Abort> {
        if self.existing.is_some() {
            return self.existing_write(metrics, Operation::Delete, start).await;
        }
        let Some(slot) = self.pick(metrics, Operation::Delete) else {
            return Ok(());
        };
        self.path.push_str("?rev=");
        self.pool.get(slot).rev.write_to(&mut self.path);
        let settled = self
            .perform(
                metrics,
                Operation::Delete,
                Method::Delete,
                false,
                start,
                |w, _, answer| {
                    let rev = written(answer, w.shared.most_kept)?;
                    w.written_for_feeds(&rev);
                    w.pool.remove(slot);
                    Ok(())
                },
            )
            .await?;
        self.set_aside_if_unknown(slot, settled);
        Ok(())
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

    fn new(shared: Arc<AtomicU64>, now: Instant) -> ProgressShare {
        ProgressShare {
            shared,
            pending: 0,
            since: now,
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

/// Rows for documents the request did not hold: a failure of their own, counted among
/// the documents that failed, so that a run whose answers carry them cannot pass for a
/// clean one anywhere it is judged.
fn count_strangers(
    bulk: &mut OperationCounts,
    refused: &mut FailureCounts,
    strangers: &[String],
    count: u64,
) {
    refused.add(Failure::UnknownRow, count);
    bulk.documents_failed += count;
    for stranger in strangers {
        bulk.samples.add(
            &Failure::UnknownRow,
            &format!("a row for {stranger}, which the request did not hold"),
        );
    }
}

/// What a bulk answer's rows had for a document that no row paired with.
fn unmatched_row(outcome: &DocumentOutcome) -> String {
    match outcome {
        DocumentOutcome::NoRow => "no row".to_string(),
        DocumentOutcome::NoId(why) => format!("a row without a usable id ({why})"),
        _ => "more than one row".to_string(),
    }
}

/// The new revision from a create, update or delete answer, if it is no longer than
/// `most` allows.
fn written(answer: &Exchange, most: MostKept) -> Result<crate::driver::Rev, Failure> {
    if !matches!(answer.status, 200..=202) {
        return Err(Failure::of_status(answer.status));
    }
    most.rev(responses::written_rev(&answer.body).ok_or(Failure::BadAnswer)?)
}

mod attachment;
mod changes;
mod existing;
mod hot;
mod inline_attachment;
mod query;
mod retry_429;
mod revision;
mod server_ids;
#[cfg(test)]
mod tests;
