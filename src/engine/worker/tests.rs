//! A worker driven by a scripted server on a virtual clock: its bookkeeping, its pacing,
//! its reconnection and its answer to 429s, checked without a server and without waiting.

mod bookkeeping;
mod existing;
mod hot;
mod pacing;
mod rate_limited;
mod reconnection;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use super::{Abort, Numbering, Pacing, PhaseWork, Shared, Worker};
use crate::driver::Rev;
use crate::engine::rate_limit::Retry429;
use crate::engine::stop::Stop;
use crate::engine::transport::scripted::{ScriptedServer, VirtualClock};
use crate::metrics::{ConnectionMetrics, Failure, Recorder};
use crate::seed;
use crate::template::{DocumentWriter, Template};
use crate::workload::{Counts, DocumentIds, KeyChoice, Operation, OperationOrder, Rate, Schedule};

type TestWorker = Worker<ScriptedServer, VirtualClock>;

/// The run-wide settings a test varies.
struct Settings {
    late_threshold: Duration,
    reconnect_for: Duration,
    stop: Stop,
    retry_429: Option<Retry429>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            late_threshold: Duration::from_millis(5),
            reconnect_for: Duration::from_secs(60),
            stop: Stop::default(),
            retry_429: None,
        }
    }
}

fn shared(settings: Settings) -> Arc<Shared> {
    let template = Template::from_json_str(r#"{"name":"x","count":1}"#, "t.json").unwrap();
    Arc::new(Shared {
        writer: Arc::new(DocumentWriter::new(template, 1)),
        ids: DocumentIds::new("p"),
        database_paths: vec!["/db".to_string()],
        databases: crate::workload::Databases::default(),
        progress: Arc::new(AtomicU64::new(0)),
        stop: settings.stop,
        late_threshold: settings.late_threshold,
        recorder: Arc::new(Recorder::new(1)),
        reconnect_for: settings.reconnect_for,
        failover: false,
        endpoints: Vec::new(),
        retry_429: settings.retry_429,
        attachment_sizes: crate::workload::AttachmentSizes::default(),
        bulk_attachment_sizes: None,
        seed: 1,
        most_kept: crate::engine::kept::MostKept::DEFAULT,
    })
}

/// Connection 0, talking to `server` on `clock`.
fn worker(server: ScriptedServer, clock: &VirtualClock, settings: Settings) -> TestWorker {
    Worker::new(0, server, clock.clone(), shared(settings), seed::rng(7))
}

/// A worker that knows documents 0..`documents`, each at revision 1.
fn worker_knowing(documents: u64, server: ScriptedServer, clock: &VirtualClock) -> TestWorker {
    let mut worker = worker(server, clock, Settings::default());
    for number in 0..documents {
        worker.pool.add(number, rev(1));
    }
    worker
}

/// A revision of the scripted server's form.
fn rev(generation: u32) -> Rev {
    Rev::parse(&format!("{generation}-0123456789abcdef0123456789abcdef")).unwrap()
}

/// `n` operations of one kind, for a connection that knows `known` documents.
fn only(operation: Operation, n: u64, known: u64) -> OperationOrder {
    OperationOrder::new(Counts::only(operation, n), known, seed::rng(3))
}

/// A closed-model share of `order` without a deadline.
fn work(order: OperationOrder) -> PhaseWork {
    PhaseWork {
        order,
        numbering: Numbering { base: 0, stride: 1 },
        batch_size: 1,
        keys: KeyChoice::Uniform,
        shape: Default::default(),
        deadline: None,
        pacing: Pacing::Closed,
        queries: Default::default(),
    }
}

/// Under a rate: operation `k` meant to start at `first + k * every`.
fn open(first: Instant, every_ms: u64) -> Pacing {
    let rate = Rate::constant(1_000.0 / every_ms as f64);
    Pacing::Open {
        start: first,
        schedule: Schedule::new(rate, None),
        stride: 1,
        offset: 0,
    }
}

/// Runs `work` to its end; only the virtual clock moves.
fn run(worker: &mut TestWorker, work: PhaseWork) -> (ConnectionMetrics, Option<Abort>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(worker.run(work))
}

/// The failures of `operation`, by kind.
fn failures(metrics: &ConnectionMetrics, operation: Operation) -> Vec<(Failure, u64)> {
    metrics.of(operation).failures.sorted()
}
