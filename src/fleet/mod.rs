//! Many devices replicating with the database as part of a phase (see
//! `crate::workload::fleet` for the settings and `crate::device` for one device).
//!
//! The engine drives a phase's fleet as it drives its `_changes` consumers: [`Running::start`]
//! before the operations (the shared documents written, every warm device synced once),
//! [`Running::begin`] as they start (each device a task, sampled every interval),
//! [`Running::finish`] after them (the writes stop, every device syncs a last time, then
//! each replica is compared with the server).

pub mod budget;
pub mod check;
pub mod context;
pub mod converge;
pub mod device_run;
pub mod figures;
pub mod link;
mod outcome;
pub mod roster;
pub mod server_docs;
pub mod shared_docs;
pub mod visible;
pub mod writes;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::device::{Device, DeviceSpec, Profile, Scope};
use crate::driver::{Client, Endpoint};
use crate::engine::NodeSlice;
use crate::engine::stop::Signal;
use crate::metrics::coarse::Series;
use crate::metrics::devices::{DevicesInterval, DevicesReport};
use crate::workload::fleet::{Fleet, FleetScope, SyncEvery};

use context::Context;
use device_run::DeviceRun;
use figures::Figures;
use link::Link;
use roster::{DevicePlan, Roster};
use visible::VisibleTable;
use writes::Writes;

/// The most devices syncing at once before the phase and after it (each has its own
/// connections; this bounds the sockets opened at once, not the devices).
const SYNCING_AT_ONCE: usize = 256;

/// The timeout of a device's requests when the run sets none.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What a fleet needs from the run.
#[derive(Clone)]
pub struct FleetSettings {
    pub endpoints: Vec<Arc<Endpoint>>,
    /// The run's databases' paths below the node, in order.
    pub database_paths: Vec<String>,
    pub node: NodeSlice,
    /// The run's document id prefix: the devices' ids start with it.
    pub id_prefix: String,
    pub seed: u64,
    /// Each request's timeout (`--timeout`), if any.
    pub timeout: Option<Duration>,
    /// The phase's duration, if it has one (sizes the `_doc_ids` lists).
    pub duration: Option<Duration>,
    /// `--device-users`: the user each own database's devices log in as.
    pub logins: Option<Arc<crate::driver::auth::DeviceLogins>>,
}

/// A phase's fleet on this machine.
pub struct Running {
    ctx: Arc<Context>,
    settings: FleetSettings,
    waiting: Vec<DeviceRun>,
    tasks: Vec<JoinHandle<DeviceRun>>,
    sampler: Option<JoinHandle<()>>,
    intervals: Arc<Mutex<Series<DevicesInterval>>>,
    warm_up: WarmUp,
}

/// The sync of every warm device before the phase.
#[derive(Clone, Debug, Default)]
pub struct WarmUp {
    pub seconds: f64,
    /// Devices whose sync failed or had not ended within the fleet's `last_sync`: they
    /// start the phase behind.
    pub behind: u64,
    pub failures: Vec<String>,
}

impl Running {
    /// Writes the shared documents and syncs every warm device once.
    pub async fn start(fleet: &Fleet, settings: FleetSettings) -> Result<Running, String> {
        let databases = settings.database_paths.len();
        let node = (settings.node, settings.id_prefix.as_str(), databases);
        let roster = Roster::new(fleet, node, settings.duration, settings.seed);
        let profile = Profile::of(fleet.profile, fleet.feed);
        let figures = Figures::new(
            profile.batch_size,
            VisibleTable::new(visible::DEFAULT_ENTRIES),
        );
        let ctx = Arc::new(Context::new(
            fleet.clone(),
            Arc::new(figures),
            (&roster.devices, roster.shared.clone(), databases),
        ));
        seed_shared(&ctx, &settings, &roster).await?;
        let waiting = roster
            .devices
            .into_iter()
            .map(|plan| device_run(&ctx, &settings, plan, profile))
            .collect();
        let mut running = Running {
            ctx,
            settings,
            waiting,
            tasks: Vec::new(),
            sampler: None,
            intervals: Arc::new(Mutex::new(Series::default())),
            warm_up: WarmUp::default(),
        };
        running.warm_up().await;
        Ok(running)
    }

    /// Every warm device pulls its scope, a bounded number at once, within `last_sync`.
    async fn warm_up(&mut self) {
        let began = Instant::now();
        let runs = std::mem::take(&mut self.waiting);
        let deadline = tokio::time::Instant::now() + self.ctx.fleet.last_sync;
        let (runs, unfinished) = all_at_most(runs, &self.ctx, (Sync::WarmUp, deadline)).await;
        self.waiting = runs;
        let (_, counts, _, failures) = self.ctx.figures.take_phase();
        self.warm_up = WarmUp {
            seconds: began.elapsed().as_secs_f64(),
            behind: unfinished + counts.failed_pulls,
            failures,
        };
    }

    /// The phase starts: every device a task, its figures taken every `interval`
    /// (at most `bound` intervals kept).
    pub fn begin(&mut self, started: Instant, interval: Duration, bound: usize) {
        self.ctx.start(started);
        let warm = self.waiting.iter().filter(|r| !r.plan.is_cold()).count() as u64;
        self.ctx
            .figures
            .online
            .store(warm, std::sync::atomic::Ordering::Relaxed);
        for mut run in std::mem::take(&mut self.waiting) {
            let ctx = self.ctx.clone();
            self.tasks.push(tokio::spawn(async move {
                run.run(&ctx).await;
                run
            }));
        }
        self.intervals = Arc::new(Mutex::new(Series::new(bound)));
        let task = figures::sample(
            self.ctx.figures.clone(),
            self.intervals.clone(),
            (started, interval),
        );
        self.sampler = Some(tokio::spawn(task));
    }

    /// Raised when the phase's writes stop: the engine raises it as its operations end.
    pub fn ended(&self) -> Signal {
        self.ctx.ended.clone()
    }

    /// The writes stop; unless `interrupted` (Ctrl-C: nothing more is sent), every device
    /// syncs a last time within the fleet's `last_sync` and is compared with the server.
    pub async fn finish(mut self, interrupted: bool) -> DevicesReport {
        self.ctx.ended.raise();
        let mut runs = std::mem::take(&mut self.waiting);
        // A device ends with the cycle it is in; one whose server holds a request past
        // `--device-grace` is stopped there, and counted as not converged.
        let ending = tokio::time::Instant::now() + self.ctx.fleet.last_sync;
        let mut stuck = 0u64;
        for mut task in std::mem::take(&mut self.tasks) {
            match tokio::time::timeout_at(ending, &mut task).await {
                Ok(Ok(run)) => runs.push(run),
                // A device task does not panic; one that did is not converged either.
                Ok(Err(_)) => stuck += 1,
                Err(_) => {
                    task.abort();
                    stuck += 1;
                }
            }
        }
        if let Some(sampler) = self.sampler.take() {
            sampler.abort();
        }
        let last = self
            .ctx
            .figures
            .take_interval(self.ctx.started(), Duration::ZERO);
        let mut intervals =
            std::mem::take(&mut *self.intervals.lock().unwrap_or_else(|p| p.into_inner()));
        if last.counts != Default::default() {
            intervals.push(last);
        }
        let began = Instant::now();
        let mut report_unfinished = 0;
        let mut convergence = Default::default();
        if !interrupted {
            // Every push first, then every pull: a pull that went before another
            // device's last push would miss it.
            let deadline = tokio::time::Instant::now() + self.ctx.fleet.last_sync;
            let (pushed, unpushed) = all_at_most(runs, &self.ctx, (Sync::LastPush, deadline)).await;
            let (synced, unpulled) =
                all_at_most(pushed, &self.ctx, (Sync::LastPull, deadline)).await;
            let unfinished = unpushed.max(unpulled);
            runs = synced;
            report_unfinished = unfinished.saturating_add(stuck);
            convergence = self.converge(&runs).await;
        }
        stopped_in_a_cycle(&mut convergence, stuck);
        let last_sync_seconds = began.elapsed().as_secs_f64();
        outcome::build(
            &self,
            outcome::Ending {
                runs: &runs,
                intervals: intervals.into_parts().0,
                last_sync_seconds,
                last_sync_unfinished: report_unfinished,
                convergence,
            },
        )
    }

    async fn converge(&self, runs: &[DeviceRun]) -> crate::metrics::devices::Convergence {
        let shared: HashSet<&str> = self.ctx.shared.iter().map(String::as_str).collect();
        let rule = check::ScopeRule {
            scope: &self.ctx.fleet.scope,
            shared: &shared,
        };
        let machine_prefix = format!("{}n{}-d", self.settings.id_prefix, self.settings.node.index);
        check::check(
            &self.settings.endpoints[0],
            &self.settings.database_paths,
            runs,
            &rule,
            &machine_prefix,
        )
        .await
    }
}

/// Which sync every device makes at once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sync {
    /// Before the phase: warm devices pull their scope.
    WarmUp,
    /// After it: a push, then (once every device has pushed) a pull.
    LastPush,
    LastPull,
}

/// Runs `sync` on every device, [`SYNCING_AT_ONCE`] at a time, all by `deadline`: the
/// devices back, and how many had not finished.
async fn all_at_most(
    runs: Vec<DeviceRun>,
    ctx: &Arc<Context>,
    (sync, deadline): (Sync, tokio::time::Instant),
) -> (Vec<DeviceRun>, u64) {
    let at_once = Arc::new(Semaphore::new(SYNCING_AT_ONCE));
    let tasks: Vec<_> = runs
        .into_iter()
        .map(|mut run| {
            let (ctx, at_once) = (ctx.clone(), at_once.clone());
            tokio::spawn(async move {
                let work = async {
                    let _turn = at_once.acquire().await;
                    match sync {
                        Sync::WarmUp if run.plan.is_cold() => {}
                        Sync::WarmUp => run.warm_up(&ctx).await,
                        Sync::LastPush => {
                            let _ = run.last_push(&ctx).await;
                        }
                        Sync::LastPull => {
                            let _ = run.last_pull(&ctx).await;
                        }
                    }
                };
                let finished = tokio::time::timeout_at(deadline, work).await.is_ok();
                (run, finished)
            })
        })
        .collect();
    let mut back = Vec::with_capacity(tasks.len());
    let mut unfinished = 0;
    for task in tasks {
        if let Ok((run, finished)) = task.await {
            unfinished += u64::from(!finished);
            back.push(run);
        }
    }
    (back, unfinished)
}

/// Writes the shared documents into every database this machine's devices replicate,
/// and tells the context their first revisions.
async fn seed_shared(
    ctx: &Context,
    settings: &FleetSettings,
    roster: &Roster,
) -> Result<(), String> {
    if roster.shared.is_empty() {
        return Ok(());
    }
    let databases: std::collections::BTreeSet<usize> =
        roster.devices.iter().map(|d| d.database).collect();
    let timeout = settings.timeout.unwrap_or(REQUEST_TIMEOUT);
    for database in databases {
        let Some(path) = settings.database_paths.get(database) else {
            continue;
        };
        shared_docs::seed(&settings.endpoints[0], path, &roster.shared, timeout).await?;
        let first = roster
            .shared
            .iter()
            .map(|id| (Box::from(id.as_str()), shared_docs::first_rev(id)));
        ctx.seeded(database as u32, first);
    }
    Ok(())
}

/// What device `plan` replicates.
fn scope_of(fleet: &Fleet, plan: &DevicePlan, path: String, shared: &[String]) -> Scope {
    let own = || (0..plan.own_capacity.unwrap_or(0)).map(|k| plan.own_id(k));
    match fleet.scope {
        FleetScope::OwnDatabase => Scope::Database { path },
        FleetScope::DocIds => Scope::DocIds {
            path,
            ids: own().chain(shared.iter().cloned()).collect(),
        },
        FleetScope::Selector => {
            // Its own ids by range (no pattern to escape), the shared ones by name.
            let mut upper = plan.own_prefix.clone();
            upper.push(char::MAX);
            let selector = serde_json::json!({ "$or": [
                { "_id": { "$gte": plan.own_prefix, "$lt": upper } },
                { "_id": { "$in": shared } },
            ]});
            Scope::Selector {
                path,
                selector: Arc::new(selector),
            }
        }
    }
}

/// The largest answer a device takes (a batch of 100 documents of 160 KB each): below
/// `--max-response-size`'s default, since thousands of devices may each be reading one
/// when a server sends endless bodies.
const DEVICE_ANSWER_MOST: u64 = 16 * 1024 * 1024;

/// One device, ready to run: its replica, its connections, its writes.
fn device_run(
    ctx: &Arc<Context>,
    settings: &FleetSettings,
    plan: DevicePlan,
    profile: Profile,
) -> DeviceRun {
    let fleet = &ctx.fleet;
    let path = settings
        .database_paths
        .get(plan.database)
        .cloned()
        .unwrap_or_default();
    let spec = DeviceSpec {
        name: plan.name.clone(),
        scope: scope_of(fleet, &plan, path, &ctx.shared),
        profile,
        doc_bytes: fleet.doc_bytes,
    };
    let endpoint = device_endpoint(settings, &plan);
    let endpoint = endpoint.limited_to(endpoint.max_response.min(DEVICE_ANSWER_MOST));
    let timeout = settings.timeout.unwrap_or(REQUEST_TIMEOUT);
    let link = |timeout| {
        let client = Client::new(endpoint.clone(), Some(timeout));
        Link::new(client, ctx.ended.clone(), ctx.figures.feeds_open.clone())
    };
    // A held feed read lasts the feed's timeout; its connection's timeout is longer.
    let feed = (fleet.sync == SyncEvery::Live).then(|| link(profile.feed_timeout + timeout));
    let writes = Writes::new(
        crate::seed::rng(crate::seed::derive(plan.seed, 1)),
        fleet.writes_per_second,
        fleet.mix,
        (plan.own_capacity, ctx.shared.len() as u64),
    );
    let device = Device::new(spec, plan.seed);
    DeviceRun::new(plan, device, (link(timeout), feed), writes)
}

/// The endpoint a device talks to: its database's user's with `--device-users`, else
/// the run's; nodes dealt out round robin.
fn device_endpoint(settings: &FleetSettings, plan: &DevicePlan) -> Arc<Endpoint> {
    let login = settings
        .logins
        .as_ref()
        .and_then(|logins| logins.each.get(plan.database))
        .filter(|login| !login.endpoints.is_empty());
    let endpoints = login.map_or(&settings.endpoints, |login| &login.endpoints);
    endpoints[plan.index as usize % endpoints.len()].clone()
}

/// Devices stopped in a cycle at the end count among those checked, as not converged:
/// what they hold was never compared with the server.
fn stopped_in_a_cycle(convergence: &mut crate::metrics::devices::Convergence, stuck: u64) {
    if stuck == 0 {
        return;
    }
    convergence.checked = convergence.checked.saturating_add(stuck);
    if convergence.diverged.len() < crate::metrics::devices::MOST_SAMPLES {
        convergence.diverged.push((
            format!("{stuck} devices"),
            "still in a cycle when --device-grace ended (the server held a request); stopped unchecked".to_string(),
        ));
    }
}

#[cfg(test)]
mod ending_tests {
    use super::*;

    #[test]
    fn devices_stopped_in_a_cycle_count_as_not_converged() {
        let mut convergence = crate::metrics::devices::Convergence {
            checked: 4,
            converged: 4,
            ..Default::default()
        };
        stopped_in_a_cycle(&mut convergence, 0);
        assert_eq!((convergence.checked, convergence.diverged.len()), (4, 0));
        stopped_in_a_cycle(&mut convergence, 2);
        assert_eq!((convergence.checked, convergence.converged), (6, 4));
        assert!(convergence.diverged[0].1.contains("--device-grace"));
    }
}
