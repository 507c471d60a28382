//! Runs the steps of a benchmark: one tokio task per connection, all started together,
//! the step's wall-clock time taken from the first start to the last finish.

pub mod monitor;
mod progress;
pub mod stop;
mod worker;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::driver::{Client, Endpoint};
use crate::metrics::{ConnectionMetrics, IntervalRow};
use crate::seed;
use crate::target::Target;
use crate::template::DocumentWriter;
use crate::workload::{DocumentIds, Operation, OperationOrder, Plan};

use monitor::{LiveOutput, Monitor};
use progress::Progress;
pub use stop::Stop;
use worker::{CrudWork, Pacing, Shared, Worker};

/// The two steps of Iron Cushion's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    BulkInsert,
    Crud,
}

impl Step {
    pub fn label(self) -> &'static str {
        match self {
            Step::BulkInsert => "bulk insert",
            Step::Crud => "crud",
        }
    }

    /// The step's name as a phase in results.
    pub fn phase_name(self) -> &'static str {
        match self {
            Step::BulkInsert => "bulk_insert",
            Step::Crud => "crud",
        }
    }
}

/// What one step measured.
#[derive(Debug)]
pub struct StepOutcome {
    pub step: Step,
    /// The operations the step's mix includes.
    pub operations: Vec<Operation>,
    /// Wall-clock time of the step's start.
    pub started_at: std::time::SystemTime,
    /// From the step's start to its slowest connection's finish (Iron Cushion's `timeTaken`).
    pub wall: Duration,
    /// One entry per connection.
    pub connections: Vec<ConnectionMetrics>,
    /// Why connections stopped early, if any did.
    pub aborted: Vec<String>,
    /// The step's intervals, as the live lines showed them.
    pub intervals: Vec<IntervalRow>,
    /// The operations per second the step aimed at (open model).
    pub target_rate: Option<f64>,
    /// True when the run was stopped (Ctrl-C) during this step.
    pub interrupted: bool,
}

/// Everything the engine needs for a run.
pub struct RunSettings {
    pub target: Target,
    pub plan: Plan,
    pub writer: Arc<DocumentWriter>,
    pub seed: u64,
    pub ids: DocumentIds,
    pub timeout: Option<Duration>,
    /// Operations per second for the CRUD step, all connections together (open model).
    pub rate: Option<f64>,
    pub late_threshold: Duration,
    /// How often a live line is printed.
    pub interval: Duration,
    pub show_progress: bool,
    pub live: LiveOutput,
    pub stop: Stop,
}

/// The engine: workers with open connections, ready for the steps.
pub struct Engine {
    settings: RunSettings,
    workers: Vec<Worker>,
    progress: Arc<AtomicU64>,
    plan: Arc<Plan>,
}

impl Engine {
    /// Opens every connection (spread evenly over the nodes) before any step starts, so
    /// that no step pays for connecting.
    pub async fn connect(settings: RunSettings) -> Result<Engine, String> {
        let endpoints: Vec<Arc<Endpoint>> = settings
            .target
            .nodes
            .iter()
            .map(|node| {
                Arc::new(Endpoint::new(
                    node.clone(),
                    settings.target.credentials.as_ref(),
                ))
            })
            .collect();
        let progress = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Shared {
            writer: settings.writer.clone(),
            ids: settings.ids.clone(),
            database_path: settings.target.database_path(),
            progress: progress.clone(),
            stop: settings.stop.clone(),
            late_threshold: settings.late_threshold,
        });
        let pick_streams = seed::derive(settings.seed, seed::label::CONNECTION);
        let mut opening = Vec::new();
        for index in 0..settings.plan.connections {
            let endpoint = endpoints[index as usize % endpoints.len()].clone();
            let mut client = Client::new(endpoint, settings.timeout);
            // Document picks use a stream apart from the operation order's.
            let pick_rng = seed::rng(seed::derive(seed::derive(pick_streams, index), 1));
            let worker_shared = shared.clone();
            opening.push(tokio::spawn(async move {
                client
                    .open()
                    .await
                    .map_err(|e| format!("{}: {e}", client.endpoint().node))?;
                Ok::<Worker, String>(Worker::new(index, client, worker_shared, pick_rng))
            }));
        }
        let mut workers = Vec::with_capacity(opening.len());
        for task in opening {
            match task.await {
                Ok(Ok(worker)) => workers.push(worker),
                Ok(Err(message)) => {
                    return Err(format!(
                        "cannot open connection {}: {message}; check --database_address, or lower --num_connections if the server limits connections",
                        workers.len()
                    ));
                }
                Err(join) => return Err(format!("a connection task failed: {join}")),
            }
        }
        Ok(Engine {
            plan: Arc::new(settings.plan.clone()),
            settings,
            workers,
            progress,
        })
    }

    /// The CRUD work of connection `index`: its operation order, and when to send.
    fn crud_work(&self, index: u64, started: Instant) -> CrudWork {
        let plan = &self.plan;
        let order_streams = seed::derive(self.settings.seed, seed::label::CONNECTION);
        let rng = seed::rng(seed::derive(seed::derive(order_streams, index), 0));
        let known = plan.bulk_documents_per_connection();
        let order = match plan.crud_counts(index) {
            Some(counts) => OperationOrder::new(counts, known, rng),
            None => OperationOrder::by_weights(plan.weights, known, rng),
        };
        // Under a rate, each connection sends at rate / connections, the connections
        // staggered evenly within one period so the requests come evenly spaced.
        let pacing = match self.settings.rate {
            None => Pacing::Closed,
            Some(rate) => {
                let every = Duration::from_secs_f64(plan.connections as f64 / rate);
                let offset = every.mul_f64(index as f64 / plan.connections as f64);
                Pacing::Open {
                    first: started + offset,
                    every,
                }
            }
        };
        CrudWork {
            order,
            plan: plan.clone(),
            deadline: plan.crud.duration.map(|d| started + d),
            pacing,
        }
    }

    /// Runs one step on every connection at once.
    pub async fn run(&mut self, step: Step) -> StepOutcome {
        let plan = self.plan.clone();
        let total = match step {
            Step::BulkInsert => Some(plan.bulk_inserts_per_connection * plan.connections),
            Step::Crud => plan.total_crud_operations(),
        };
        let duration = match step {
            Step::BulkInsert => None,
            Step::Crud => plan.crud.duration,
        };
        let target_rate = match step {
            Step::BulkInsert => None,
            Step::Crud => self.settings.rate,
        };
        self.progress.store(0, std::sync::atomic::Ordering::Relaxed);
        let progress = Progress::start(
            step.label(),
            total,
            duration,
            self.progress.clone(),
            self.settings.show_progress,
        );
        let recorders = self.workers.iter().map(|w| w.interval.clone()).collect();
        for worker in &self.workers {
            *worker.interval.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
        }
        let monitor = Arc::new(Mutex::new(Monitor::new(
            recorders,
            self.settings.live,
            progress.bar(),
            target_rate,
        )));
        let sampler = monitor::spawn(monitor.clone(), self.settings.interval);
        let started = Instant::now();
        let started_at = std::time::SystemTime::now();
        let mut tasks = Vec::with_capacity(self.workers.len());
        for mut worker in std::mem::take(&mut self.workers) {
            let index = worker.index;
            let task = match step {
                Step::BulkInsert => {
                    let first = plan.first_bulk_number(index);
                    let (count, size) = (
                        plan.bulk_inserts_per_connection,
                        plan.documents_per_bulk_insert,
                    );
                    tokio::spawn(async move {
                        let (metrics, abort) = worker.bulk_insert(first, count, size).await;
                        (worker, metrics, abort)
                    })
                }
                Step::Crud => {
                    let work = self.crud_work(index, started);
                    tokio::spawn(async move {
                        let (metrics, abort) = worker.crud(work).await;
                        (worker, metrics, abort)
                    })
                }
            };
            tasks.push(task);
        }
        let mut connections = Vec::with_capacity(tasks.len());
        let mut aborted = Vec::new();
        for task in tasks {
            let (worker, metrics, abort) = task.await.expect("connection tasks do not panic");
            self.workers.push(worker);
            connections.push(metrics);
            aborted.extend(abort);
        }
        let wall = started.elapsed();
        sampler.abort();
        drop(progress);
        let intervals = {
            let mut monitor = monitor.lock().unwrap_or_else(|p| p.into_inner());
            monitor.sample();
            std::mem::take(&mut monitor.rows)
        };
        let operations = match step {
            Step::BulkInsert => vec![Operation::BulkInsert],
            Step::Crud => Operation::CRUD.to_vec(),
        };
        StepOutcome {
            step,
            operations,
            started_at,
            wall,
            connections,
            aborted,
            intervals,
            target_rate,
            interrupted: self.settings.stop.stop.is_raised(),
        }
    }

    /// Documents every connection still knows as live (for checks and reports).
    pub fn live_documents(&self) -> u64 {
        self.workers.iter().map(|w| w.pool.len() as u64).sum()
    }
}
