//! Runs the phases of a benchmark: one tokio task per connection, all started together,
//! a phase's wall-clock time taken from the first start to the last finish.
//!
//! Between phases the engine keeps the connections and the documents each one knows. A
//! phase with another number of connections gets the documents dealt out anew, so every
//! document still has exactly one owner and no two connections ever race for it.

mod actions;
mod alarm;
mod bulk_answer;
mod deal;
mod machine;
pub mod monitor;
mod progress;
mod reconnect;
pub mod stop;
mod timer;
mod transport;
mod worker;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::driver::{Client, Endpoint};
use crate::metrics::{ConnectionMetrics, IntervalRow, NodeLatencies, Recorder, StepLatencies};
use crate::seed;
use crate::target::Target;
use crate::template::DocumentWriter;
use crate::workload::{DocumentIds, Operation, OperationOrder, Phase};

pub use actions::{ActionReport, ActionSettings, ReplicationAddress};
use monitor::{LiveOutput, Monitor};
use progress::Progress;
pub use stop::Stop;
use worker::{Numbering, Pacing, PhaseWork, Shared, Worker};

/// What one phase measured.
#[derive(Debug)]
pub struct PhaseOutcome {
    pub name: String,
    /// The operations the phase's mix includes.
    pub operations: Vec<Operation>,
    /// Wall-clock time of the phase's start.
    pub started_at: SystemTime,
    /// From the phase's start to its slowest connection's finish (Iron Cushion's `timeTaken`).
    pub wall: Duration,
    /// One entry per connection.
    pub connections: Vec<ConnectionMetrics>,
    /// Latencies of all connections, per operation kind.
    pub latencies: StepLatencies,
    /// Scheduled to actual starts of operations whose connection was free at their slot
    /// (open model), microseconds.
    pub send_lag: hdrhistogram::Histogram<u64>,
    /// Why connections stopped early, if any did.
    pub aborted: Vec<String>,
    /// The phase's intervals, as the live lines showed them.
    pub intervals: Vec<IntervalRow>,
    /// The operations per second the phase aimed at (open model).
    pub target_rate: Option<f64>,
    /// True when the run was stopped (Ctrl-C) during this phase.
    pub interrupted: bool,
    /// What the phase's background action did, if it had one.
    pub action: Option<ActionReport>,
    /// Per node of the target, in `--database_address` order, when it has several.
    pub nodes: Vec<(String, NodeLatencies)>,
}

/// Everything the engine needs for a run.
pub struct RunSettings {
    pub target: Target,
    pub writer: Arc<DocumentWriter>,
    pub seed: u64,
    pub ids: DocumentIds,
    pub timeout: Option<Duration>,
    pub late_threshold: Duration,
    /// How often a live line is printed.
    pub interval: Duration,
    pub show_progress: bool,
    pub live: LiveOutput,
    pub stop: Stop,
    /// This node's slice when several machines share the run: the phases count all
    /// nodes' connections, and this node drives its `index`-th share of them.
    pub node: NodeSlice,
    /// How long a connection that lost its server keeps trying to reconnect.
    pub reconnect_for: Duration,
    /// With several nodes, move a connection that cannot reach its node to the next one.
    pub failover: bool,
    /// Where replications point the server, and how long actions are waited for.
    pub actions: ActionSettings,
}

/// Which share of every phase's connections this node drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSlice {
    pub index: u64,
    pub count: u64,
}

impl Default for NodeSlice {
    fn default() -> NodeSlice {
        NodeSlice { index: 0, count: 1 }
    }
}

/// Opens `client`'s connection, or with `--failover` (`fallbacks` holds every node) the
/// first other node's that answers, so one node down at the start does not stop the run.
async fn open_somewhere(client: &mut Client, fallbacks: &[Arc<Endpoint>]) -> Result<(), String> {
    let first = client
        .open()
        .await
        .map_err(|e| format!("{}: {e}", client.endpoint().node));
    if first.is_ok() {
        return first;
    }
    for endpoint in fallbacks {
        if Arc::ptr_eq(endpoint, client.endpoint_arc()) {
            continue;
        }
        client.move_to(endpoint.clone());
        if client.open().await.is_ok() {
            return Ok(());
        }
    }
    first
}

/// Document numbers of phase `p` start at `p * PHASE_NUMBER_SPAN`: every node knows where
/// each phase's numbers start without talking to the others.
const PHASE_NUMBER_SPAN: u64 = 1_000_000_000_000;

/// The engine: workers with open connections, ready for the phases.
pub struct Engine {
    settings: RunSettings,
    endpoints: Vec<Arc<Endpoint>>,
    shared: Arc<Shared>,
    workers: Vec<Worker>,
    progress: Arc<AtomicU64>,
    /// Connections of the previous phase (whose documents are where they belong).
    active: usize,
    phases_run: u64,
}

impl Engine {
    pub fn new(settings: RunSettings) -> Engine {
        let endpoints = Endpoint::all(&settings.target);
        let progress = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Shared {
            writer: settings.writer.clone(),
            ids: settings.ids.clone(),
            database_path: settings.target.database_path(),
            progress: progress.clone(),
            stop: settings.stop.clone(),
            late_threshold: settings.late_threshold,
            // One shard per runtime thread, and one for the thread that drives the run.
            recorder: Arc::new(Recorder::new(monitor::cores() as usize + 1)),
            reconnect_for: settings.reconnect_for,
            failover: settings.failover,
            endpoints: endpoints.clone(),
            credentials: settings.target.credentials.clone(),
        });
        Engine {
            settings,
            endpoints,
            shared,
            workers: Vec::new(),
            progress,
            active: 0,
            phases_run: 0,
        }
    }

    /// Opens connections (spread evenly over the nodes) until there are `count`, before
    /// any phase needs them, so that no phase pays for connecting.
    pub async fn connect(&mut self, count: u64) -> Result<(), String> {
        let pick_streams = seed::derive(self.settings.seed, seed::label::CONNECTION);
        let mut opening = Vec::new();
        for index in self.workers.len() as u64..count {
            let endpoint = self.endpoints[index as usize % self.endpoints.len()].clone();
            let mut client = Client::new(endpoint, self.settings.timeout);
            // Document picks use a stream apart from the operation orders'.
            let pick_rng = seed::rng(seed::derive(seed::derive(pick_streams, index), 1));
            let shared = self.shared.clone();
            let fallbacks = if self.settings.failover {
                self.endpoints.clone()
            } else {
                Vec::new()
            };
            opening.push(tokio::spawn(async move {
                open_somewhere(&mut client, &fallbacks).await?;
                let clock = transport::SystemClock::default();
                Ok::<Worker, String>(Worker::new(index, client, clock, shared, pick_rng))
            }));
        }
        for task in opening {
            match task.await {
                Ok(Ok(worker)) => self.workers.push(worker),
                Ok(Err(message)) => {
                    return Err(format!(
                        "cannot open connection {}: {message}; check --database_address, or lower --num_connections if the server limits connections",
                        self.workers.len()
                    ));
                }
                Err(join) => return Err(format!("a connection task failed: {join}")),
            }
        }
        Ok(())
    }

    /// Deals every known document out to the first `count` connections, round robin.
    fn deal_documents(&mut self, count: usize) {
        let pools = self
            .workers
            .iter_mut()
            .map(|w| std::mem::take(&mut w.pool))
            .collect();
        for (worker, pool) in self.workers.iter_mut().zip(deal::deal(pools, count)) {
            worker.pool = pool;
        }
    }

    /// The work of connection `index` in `phase`.
    fn work(&self, phase: &Phase, index: u64, known: u64, started: Instant) -> PhaseWork {
        let order_streams = seed::derive(self.settings.seed, seed::label::CONNECTION);
        let stream = seed::derive(
            seed::derive(order_streams, index),
            2 * (self.phases_run + 1),
        );
        let rng = seed::rng(stream);
        let order = match phase.counts_of(index) {
            Some(counts) => OperationOrder::new(counts, known, rng),
            None => OperationOrder::by_weights(phase.mix, known, rng),
        }
        .with_batch(phase.batch_size);
        // Under a rate, each connection sends at rate / connections, the connections
        // staggered evenly within one period so the requests come evenly spaced.
        let pacing = match phase.rate {
            None => Pacing::Closed,
            Some(rate) => {
                let every = Duration::from_secs_f64(phase.connections as f64 / rate);
                let offset = every.mul_f64(index as f64 / phase.connections as f64);
                Pacing::Open {
                    first: started + offset,
                    every,
                }
            }
        };
        PhaseWork {
            order,
            numbering: Numbering {
                base: self.phases_run * PHASE_NUMBER_SPAN,
                stride: phase.connections,
            },
            batch_size: phase.batch_size,
            keys: phase.keys,
            deadline: phase.bound.duration.map(|d| started + d),
            pacing,
        }
    }

    /// Each node's figures of the phase, when the target has several (a node nobody
    /// reached shows with zeros).
    fn node_figures(&self) -> Vec<(String, NodeLatencies)> {
        if self.endpoints.len() < 2 {
            return Vec::new();
        }
        let mut figures = self.shared.recorder.nodes().into_iter();
        self.endpoints
            .iter()
            .map(|e| (e.node.to_string(), figures.next().unwrap_or_default()))
            .collect()
    }

    /// Runs one phase on its connections at once.
    pub async fn run(&mut self, phase: &Phase) -> Result<PhaseOutcome, String> {
        let node = self.settings.node;
        let local = (phase.connections / node.count).max(1);
        let first = node.index * local;
        self.connect(local).await?;
        let count = local as usize;
        // This node's share of the phase's rate.
        let rate_share = phase
            .rate
            .map(|r| r * local as f64 / phase.connections.max(1) as f64);
        if count != self.active {
            self.deal_documents(count);
            self.active = count;
        }
        self.progress.store(0, std::sync::atomic::Ordering::Relaxed);
        let progress = Progress::start(
            &phase.name,
            phase.total_operations(),
            phase.bound.duration,
            self.progress.clone(),
            self.settings.show_progress,
        );
        self.shared.recorder.clear();
        let monitor = Arc::new(Mutex::new(Monitor::new(
            self.shared.recorder.clone(),
            self.settings.live,
            progress.bar(),
            rate_share,
        )));
        let sampler = monitor::spawn(monitor.clone(), self.settings.interval);
        let started = Instant::now();
        let started_at = SystemTime::now();
        let action = phase.action.clone().map(|a| {
            actions::spawn(
                a,
                &self.settings.target,
                self.endpoints[0].clone(),
                &self.settings.actions,
                self.settings.stop.clone(),
                started,
            )
        });
        let mut tasks = Vec::with_capacity(count);
        let mut idle = self.workers.split_off(count);
        for (i, mut worker) in std::mem::take(&mut self.workers).into_iter().enumerate() {
            // The connection's place among all nodes' connections.
            worker.index = first + i as u64;
            let work = self.work(phase, worker.index, worker.pool.len() as u64, started);
            tasks.push(tokio::spawn(async move {
                let (metrics, abort) = worker.run(work).await;
                (worker, metrics, abort)
            }));
        }
        let mut connections = Vec::with_capacity(count);
        let mut aborted = Vec::new();
        for task in tasks {
            let (worker, metrics, abort) = task.await.expect("connection tasks do not panic");
            self.workers.push(worker);
            connections.push(metrics);
            aborted.extend(abort);
        }
        self.workers.append(&mut idle);
        let wall = started.elapsed();
        self.phases_run += 1;
        sampler.abort();
        drop(progress);
        let intervals = {
            let mut monitor = monitor.lock().unwrap_or_else(|p| p.into_inner());
            monitor.sample();
            std::mem::take(&mut monitor.rows)
        };
        let action = match action {
            Some(task) => Some(
                task.await
                    .unwrap_or_else(|e| ActionReport::failed(format!("{e}"))),
            ),
            None => None,
        };
        Ok(PhaseOutcome {
            name: phase.name.clone(),
            operations: phase.operations(),
            started_at,
            wall,
            connections,
            latencies: self.shared.recorder.step(),
            nodes: self.node_figures(),
            send_lag: self.shared.recorder.send_lag(),
            aborted,
            intervals,
            target_rate: rate_share,
            interrupted: self.settings.stop.stop.is_raised(),
            action,
        })
    }
}
