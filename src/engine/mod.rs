//! Runs the phases of a benchmark: one tokio task per connection, all started together,
//! a phase's wall-clock time taken from the first start to the last finish.
//!
//! Between phases the engine keeps the connections and the documents each one knows. A
//! phase with another number of connections gets the documents dealt out anew, so every
//! document still has exactly one owner and no two connections ever race for it.

mod actions;
mod alarm;
mod backoff;
mod bulk_answer;
mod busy_poll;
pub mod changes;
mod deal;
mod devices;
pub mod kept;
mod machine;
pub mod monitor;
pub mod observer;
pub mod rate_limit;
mod reconnect;
mod replication;
mod row_check;
pub mod server_watch;
pub mod stop;
mod timer;
mod transport;
mod worker;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::disk::{DiskSampler, Looker, PhaseDisk};
use crate::driver::auth::{self, Auth};
use crate::driver::{Client, Endpoint};
use crate::metrics::{NodeLatencies, PhaseTally, Recorder};
use crate::seed;
use crate::target::Target;
use crate::template::DocumentWriter;
use crate::workload::nodes;
use crate::workload::{
    AttachmentSizes, DocumentIds, Existing, HotDocuments, OperationOrder, Phase, Rate, Schedule,
    Targets,
};

pub use crate::metrics::PhaseOutcome;
pub use actions::{ActionReport, ActionSettings, ReplicationAddress};
use busy_poll::BusyPoll;
use monitor::{Aim, Monitor};
use observer::{Observer, PhaseStart};
pub use rate_limit::Retry429;
pub use stop::Stop;
use worker::{Numbering, Pacing, PhaseWork, Shared, Worker};

/// Everything the engine needs for a run.
#[derive(Clone)]
pub struct RunSettings {
    pub target: Target,
    /// How requests authenticate (`--auth`), with its secrets.
    pub auth: Auth,
    pub writer: Arc<DocumentWriter>,
    pub seed: u64,
    pub ids: DocumentIds,
    pub timeout: Option<Duration>,
    /// The largest response body read (`--max-response-size`), for every request.
    pub max_response_size: u64,
    /// The longest value kept from an answer per document (`--max-kept-value`).
    pub most_kept: kept::MostKept,
    pub late_threshold: Duration,
    /// How often an interval row is taken.
    pub interval: Duration,
    /// `--max-intervals`: the most intervals a phase keeps for the result; past it,
    /// they are merged pairwise into intervals twice as long.
    pub max_intervals: usize,
    /// How long a connection that lost its server keeps trying to reconnect.
    pub reconnect_for: Duration,
    /// With several nodes, move a connection that cannot reach its node to the next one.
    pub failover: bool,
    /// `--retry-429`: whether, and how often, an operation turned away with a 429 is sent
    /// again.
    pub retry_429: Option<Retry429>,
    /// Where replications point the server, and how long actions are waited for.
    pub actions: ActionSettings,
    /// `--busy-poll`: the client's threads poll for answers instead of sleeping while
    /// the phase's operations run.
    pub busy_poll: bool,
    /// `--attachment-size`: the sizes `attachment_write` draws from.
    pub attachment_sizes: AttachmentSizes,
    /// `--bulk-attachment-size`: the sizes of bulk documents' inline attachments.
    pub bulk_attachment_sizes: Option<AttachmentSizes>,
    /// Whether each node's own statistics are looked at every interval.
    pub server_stats: bool,
    /// How many client machines run the workload together (`--node-count`), and
    /// whether this one follows the phases' feeds: only the first starts the `_changes`
    /// consumers and the replications, and tracks its own writes on them (the others'
    /// show as changes matching no tracked write).
    pub client_nodes: u64,
    pub feeds_here: bool,
    /// This client machine's place among them (`--node-index`): a fleet's devices are
    /// split over the machines, their names carrying it.
    pub node_index: u64,
    /// `--hot-docs`: how many documents every connection's updates share.
    pub hot_docs: Option<u64>,
    /// `--key-range` or `--key-sample`, and `--existing-writes`: the documents already in
    /// the database that reads, updates and deletes target.
    pub existing: Option<(
        crate::workload::ExistingSource,
        crate::workload::ExistingWrites,
    )>,
    /// Whether the database held no documents when the run began, so the documents the
    /// connections know are all there are (what checking a query's rows needs).
    pub started_empty: bool,
    /// `--device-users`: the user each own database's devices log in as (set by the
    /// runner once the databases are ready).
    pub device_logins: Option<Arc<crate::driver::auth::DeviceLogins>>,
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

/// This node's part of one phase: which connections it drives, and its share of the rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseShare {
    /// The global index of this node's first connection.
    pub first: u64,
    /// Connections this node drives.
    pub connections: u64,
    /// This node's part of the phase's operations per second (open model).
    pub rate: Option<Rate>,
}

impl NodeSlice {
    /// Turns a phase as one node runs it into the phase of all nodes together (N nodes
    /// run the workload one node would with N times the connections; a rate is the whole
    /// run's) and this node's share of it: the one place where the two are related.
    pub fn slice(&self, mut phase: Phase) -> (Phase, PhaseShare) {
        let per_node = phase.connections;
        let mine = nodes::node_slice(self.index, self.count, per_node);
        phase.connections = nodes::total_connections(self.count, per_node);
        let share = PhaseShare {
            first: mine.start,
            connections: per_node,
            rate: phase.rate.map(|r| r.share(self.count)),
        };
        (phase, share)
    }
}

/// What this node's share of `phase` aims at under a rate: the phase's schedule, scaled
/// to the share, ending with the phase's duration and the share's operations.
fn aim(phase: &Phase, share: &PhaseShare) -> Option<Aim> {
    let rate = share.rate?;
    let mine = share.first..share.first.saturating_add(share.connections);
    Some(Aim {
        schedule: Schedule::new(rate, phase.bound.duration),
        until: phase.bound.duration,
        operations: mine.map(|c| phase.operations_of(c)).sum(),
    })
}

/// The rate a phase aimed at as a whole: a constant one, or a ramp's mean over the
/// stretch it ran (the whole ramp, unless stopped early).
fn target_rate(aim: Option<Aim>, wall: Duration) -> Option<f64> {
    let aim = aim?;
    let rate = aim.schedule.rate();
    if !rate.is_ramp() {
        return Some(rate.to);
    }
    let ran = aim.until.map_or(wall, |until| wall.min(until));
    Some(aim.rate_between(0.0, ran.as_secs_f64()))
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
    /// Who is told of progress and interval rows.
    observer: Arc<dyn Observer>,
    stop: Stop,
    endpoints: Vec<Arc<Endpoint>>,
    shared: Arc<Shared>,
    workers: Vec<Worker>,
    progress: Arc<AtomicU64>,
    /// Connections of the previous phase (whose documents are where they belong).
    active: usize,
    phases_run: u64,
    /// The documents every connection's updates share (`--hot-docs`), once made.
    hot: Option<Arc<HotDocuments>>,
    /// The documents already in the database that reads, updates and deletes target
    /// (`--key-range`, `--key-sample`), once known.
    existing: Option<Arc<Existing>>,
}

impl Engine {
    /// An engine that sends to `endpoints` (one per node, with their credentials, shared
    /// with the setup so that a node logs in once), reports to `observer` and stops when
    /// `stop` is raised.
    pub fn new(
        settings: RunSettings,
        endpoints: Vec<Arc<Endpoint>>,
        observer: Arc<dyn Observer>,
        stop: Stop,
    ) -> Engine {
        let progress = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Shared {
            writer: settings.writer.clone(),
            ids: settings.ids.clone(),
            database_paths: settings.target.database_paths(),
            databases: settings.target.databases,
            progress: progress.clone(),
            stop: stop.clone(),
            late_threshold: settings.late_threshold,
            // One shard per runtime thread, and one for the thread that drives the run.
            recorder: Arc::new(Recorder::new(crate::cpu::cores() as usize + 1)),
            reconnect_for: settings.reconnect_for,
            failover: settings.failover,
            endpoints: endpoints.clone(),
            retry_429: settings.retry_429,
            attachment_sizes: settings.attachment_sizes.clone(),
            bulk_attachment_sizes: settings.bulk_attachment_sizes.clone(),
            seed: settings.seed,
            most_kept: settings.most_kept,
        });
        Engine {
            settings,
            observer,
            stop,
            endpoints,
            shared,
            workers: Vec::new(),
            progress,
            active: 0,
            phases_run: 0,
            hot: None,
            existing: None,
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
        .with_batch(phase.batch_size)
        .with_targets(self.targets());
        // Under a rate, the phase's operations are due one after the other on its
        // schedule, and the connections take them in turn: connection `index` of N sends
        // operations index, index + N, index + 2N, … (of all nodes' connections).
        let pacing = match phase.rate {
            None => Pacing::Closed,
            Some(rate) => Pacing::Open {
                start: started,
                schedule: Schedule::new(rate, phase.bound.duration),
                stride: phase.connections.max(1),
                offset: index,
            },
        };
        PhaseWork {
            order,
            numbering: Numbering {
                // New documents stay clear of the existing data's range.
                base: self.phases_run * PHASE_NUMBER_SPAN
                    + self.existing.as_ref().map_or(0, |e| e.numbers_from()),
                stride: phase.connections,
            },
            batch_size: phase.batch_size,
            keys: phase.keys,
            shape: phase.shape,
            // Checked: a phase's duration must not be able to make the clock overflow.
            deadline: phase
                .bound
                .duration
                .map(|d| crate::time::duration::after(started, d)),
            pacing,
            queries: phase.queries.clone(),
        }
    }

    /// Raised when the run is told to stop (Ctrl-C): a phase that fails then failed of it.
    pub fn stop_signal(&self) -> stop::Signal {
        self.stop.stop.clone()
    }

    /// From now on reads, updates and deletes target `existing` documents.
    pub fn target_existing(&mut self, existing: Existing) {
        self.existing = Some(Arc::new(existing));
    }

    /// Where the operations that work on a document find it.
    fn targets(&self) -> Targets {
        if self.existing.is_some() {
            Targets::Existing
        } else if self.hot.is_some() {
            Targets::SharedUpdates
        } else {
            Targets::Own
        }
    }

    /// From now on every connection's updates go to `documents` (`--hot-docs`).
    pub fn heat(&mut self, documents: HotDocuments) {
        self.hot = Some(Arc::new(documents));
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

    /// Runs this node's share of one phase (all nodes' connections in `phase`) on its
    /// connections at once.
    pub async fn run(&mut self, phase: &Phase, share: PhaseShare) -> Result<PhaseOutcome, String> {
        let first = share.first;
        self.connect(share.connections).await?;
        let count = share.connections as usize;
        if count != self.active {
            self.deal_documents(count);
            self.active = count;
        }
        let find_rows = self.expected_find_rows(phase, &share);
        // The consumers start from the database's sequence before the first write.
        let mut watch = match &phase.changes {
            Some(feed) if self.settings.feeds_here => {
                let start =
                    changes::Watch::start(feed, &self.endpoints, &self.shared.database_paths);
                // Asking where the feeds stand may wait up to 30 s; Ctrl-C ends that.
                tokio::select! {
                    watch = start => Some(watch?),
                    () = self.stop.stop.raised() => {
                        return Err("stopped while the changes consumers were starting, before the phase's first operation".to_string());
                    }
                }
            }
            _ => None,
        };
        let mut replication = match &phase.replication {
            Some(plan) if self.settings.feeds_here => Some(
                replication::Running::start(
                    plan,
                    &self.endpoints,
                    &self.settings.target,
                    &self.settings.actions,
                )
                .await?,
            ),
            _ => None,
        };
        let endpoints = (&self.endpoints[..], &self.shared.database_paths[..]);
        let mut fleet = devices::start(phase, &self.settings, endpoints, &self.stop).await?;
        let tables = self.feed_tables(watch.as_ref(), replication.as_ref());
        self.progress.store(0, Ordering::Relaxed);
        let mut looker = self.looker();
        let disk_start = looker.look(Instant::now()).await;
        let observer = self.observer.clone();
        observer.phase_started(&PhaseStart {
            name: phase.name.clone(),
            total: phase.total_operations(),
            duration: phase.bound.duration,
            done: self.progress.clone(),
        });
        self.shared.recorder.clear();
        let aim = aim(phase, &share);
        let started = Instant::now();
        let started_at = SystemTime::now();
        let disk_sampler = DiskSampler::start(
            looker,
            started,
            self.settings.interval,
            self.stop.stop.clone(),
        );
        let server_looks = self.settings.server_stats.then(|| {
            let (every, stop) = (self.settings.interval, &self.stop.stop);
            server_watch::spawn(&self.endpoints, every, started, stop)
        });
        let mut monitor = Monitor::new(
            self.shared.recorder.clone(),
            observer.clone(),
            aim,
            started,
            self.settings.busy_poll,
        )
        .with_disk(disk_sampler.slot())
        .bounded(self.settings.max_intervals);
        if let Some(looks) = &server_looks {
            monitor = monitor.with_server(looks.landed());
        }
        let monitor = Arc::new(Mutex::new(monitor));
        let sampler = monitor::spawn(monitor.clone(), self.settings.interval);
        if let Some(watch) = &mut watch {
            watch.sample_from(started, self.settings.interval, self.settings.max_intervals);
        }
        if let Some(replication) = &mut replication {
            replication.sample_from(started, self.settings.interval, self.settings.max_intervals);
        }
        if let Some(fleet) = &mut fleet {
            fleet.begin(started, self.settings.interval, self.settings.max_intervals);
        }
        // Raised when the phase's operations have ended, for an action still waiting.
        let operations_ended = stop::Signal::default();
        let action = phase.action.clone().map(|a| {
            actions::spawn(
                a,
                &self.settings.target,
                self.endpoints[0].clone(),
                &self.settings.actions,
                self.stop.clone(),
                (started, operations_ended.clone()),
            )
        });
        let poller = self.settings.busy_poll.then(BusyPoll::start);
        let mut tasks = Vec::with_capacity(count);
        let mut idle = self.workers.split_off(count);
        for (i, mut worker) in std::mem::take(&mut self.workers).into_iter().enumerate() {
            // The connection's place among all nodes' connections.
            worker.index = first + i as u64;
            worker.heat(self.hot.clone());
            worker.aim_at_existing(self.existing.clone());
            worker.follow_changes(tables.clone());
            let mut work = self.work(phase, worker.index, worker.pool.len() as u64, started);
            work.queries.find_rows = find_rows.clone();
            tasks.push(tokio::spawn(async move {
                let (metrics, abort) = worker.run(work).await;
                (worker, metrics, abort)
            }));
        }
        if fleet.is_some() && count == 0 {
            devices::devices_only(phase, &self.stop).await;
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
        drop(poller);
        operations_ended.raise();
        self.phases_run += 1;
        sampler.abort();
        let lock = || monitor.lock().unwrap_or_else(|p| p.into_inner());
        lock().sample();
        drop(disk_sampler);
        let watched = server_looks
            .map(server_watch::Watch::stop)
            .unwrap_or_default();
        let (intervals, interval_width) = lock().finish(watched.nodes);
        let server_notes = watched.notes;
        observer.phase_ended();
        // Interrupted: what was seen so far is what there is; no grace.
        let changes = match (watch, &phase.changes) {
            (Some(watch), Some(feed)) if !self.stop.stop.is_raised() => {
                Some(watch.finish(feed.grace).await)
            }
            (Some(watch), _) => Some(watch.finish(Duration::ZERO).await),
            (None, _) => None,
        }
        .map(|mut report| {
            report.client_nodes = self.settings.client_nodes;
            report
        });
        let replication = match replication {
            Some(running) => Some(running.finish(self.grace(phase)).await),
            None => None,
        }
        .map(|mut report| {
            report.client_nodes = self.settings.client_nodes;
            report
        });
        let devices = match fleet {
            Some(fleet) => Some(fleet.finish(self.stop.stop.is_raised()).await),
            None => None,
        };
        // After Ctrl-C nothing more is sent but --cleanup: the end's sizes are unknown.
        let end = if self.stop.stop.is_raised() {
            None
        } else {
            self.looker().look(started).await
        };
        let disk = PhaseDisk {
            start: disk_start,
            end,
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
            tally: PhaseTally {
                setup: self.shared.recorder.setup(),
                ..PhaseTally::of_connections(
                    connections,
                    self.shared.recorder.step(),
                    self.shared.recorder.send_lag(),
                    self.node_figures(),
                )
            },
            aborted,
            intervals,
            interval_width,
            target_rate: target_rate(aim, wall),
            rate: share.rate,
            interrupted: self.stop.stop.is_raised(),
            action,
            changes,
            replication,
            devices,
            // Since the last phase ended: the first phase's include the setup's.
            logins: auth::take_logins(self.endpoints.iter().map(|e| &e.credential)),
            disk,
            server_notes,
        })
    }

    /// For each of the run's databases, the tables its writes are told to: its
    /// consumers' and, for the run's one database, its replicas'. Empty when the phase
    /// follows no feed.
    fn feed_tables(
        &self,
        watch: Option<&changes::Watch>,
        replication: Option<&replication::Running>,
    ) -> Vec<Vec<Arc<changes::Table>>> {
        if watch.is_none() && replication.is_none() {
            return Vec::new();
        }
        let mut tables: Vec<Vec<_>> = (0..self.shared.database_paths.len())
            .map(|d| watch.and_then(|w| w.table_of(d)).into_iter().collect())
            .collect();
        // Replication needs one database (`--databases` above 1 refuses it).
        tables[0].extend(replication.iter().flat_map(|r| r.tables()));
        tables
    }

    /// How long the phase's replicas get to show its last writes: none once the run
    /// was stopped (what was seen so far is what there is).
    fn grace(&self, phase: &Phase) -> Duration {
        match &phase.replication {
            Some(plan) if !self.stop.stop.is_raised() => plan.grace,
            _ => Duration::ZERO,
        }
    }

    /// A looker at the databases' sizes on the first node, on a connection apart from
    /// the operations'.
    fn looker(&self) -> Looker {
        Looker::new(
            self.endpoints[0].clone(),
            self.shared.database_paths.clone(),
        )
    }
}
