//! Runs the steps of a benchmark: one tokio task per connection, all started together,
//! the step's wall-clock time taken from the first start to the last finish.

mod progress;
mod worker;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use crate::driver::{Client, Endpoint};
use crate::metrics::ConnectionMetrics;
use crate::seed;
use crate::target::Target;
use crate::template::DocumentWriter;
use crate::workload::{DocumentIds, OperationOrder, Plan};

use progress::Progress;
use worker::{Shared, Worker};

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
}

/// What one step measured.
#[derive(Debug)]
pub struct StepOutcome {
    pub step: Step,
    /// From the step's start to its slowest connection's finish (Iron Cushion's `timeTaken`).
    pub wall: Duration,
    /// One entry per connection.
    pub connections: Vec<ConnectionMetrics>,
    /// Why connections stopped early, if any did.
    pub aborted: Vec<String>,
}

/// Everything the engine needs for a run.
pub struct RunSettings {
    pub target: Target,
    pub plan: Plan,
    pub writer: Arc<DocumentWriter>,
    pub seed: u64,
    pub ids: DocumentIds,
    pub timeout: Option<Duration>,
    pub show_progress: bool,
}

/// The engine: workers with open connections, ready for the steps.
pub struct Engine {
    settings: RunSettings,
    workers: Vec<Worker>,
    progress: Arc<AtomicU64>,
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
            settings,
            workers,
            progress,
        })
    }

    /// The operation order of connection `index` in the CRUD step.
    fn crud_order(&self, index: u64) -> OperationOrder {
        let plan = &self.settings.plan;
        let order_streams = seed::derive(self.settings.seed, seed::label::CONNECTION);
        let rng = seed::rng(seed::derive(seed::derive(order_streams, index), 0));
        OperationOrder::new(
            plan.crud_counts(),
            plan.bulk_documents_per_connection(),
            rng,
        )
    }

    /// Runs one step on every connection at once.
    pub async fn run(&mut self, step: Step) -> StepOutcome {
        let plan = self.settings.plan.clone();
        let per_connection = match step {
            Step::BulkInsert => plan.bulk_inserts_per_connection,
            Step::Crud => plan.crud_operations_per_connection,
        };
        self.progress.store(0, std::sync::atomic::Ordering::Relaxed);
        let _progress = Progress::start(
            step.label(),
            per_connection * plan.connections,
            self.progress.clone(),
            self.settings.show_progress,
        );
        let started = Instant::now();
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
                    let order = self.crud_order(index);
                    let first = plan.first_create_number(index);
                    tokio::spawn(async move {
                        let (metrics, abort) = worker.crud(order, first).await;
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
        StepOutcome {
            step,
            wall: started.elapsed(),
            connections,
            aborted,
        }
    }

    /// Documents every connection still knows as live (for checks and reports).
    pub fn live_documents(&self) -> u64 {
        self.workers.iter().map(|w| w.pool.len() as u64).sum()
    }
}
