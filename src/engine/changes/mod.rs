//! A phase's `_changes` consumers: started before its operations, from the database's
//! sequence at that moment; fed each write the connections make; stopped once every
//! write has been seen or the grace after the operations has passed.

mod consumer;
pub mod parse;
mod table;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

pub use table::Table;

use crate::driver::{Call, Client, Endpoint, Method};
use crate::metrics::changes::{ChangesInterval, ChangesReport, Troubles};
use crate::metrics::coarse::Series;
use crate::metrics::recorder::new_histogram;
use crate::workload::changes::ChangesFeed;
use consumer::{Consumer, ConsumerTally, Feed, Live};
use parse::Seq;

use super::stop::Signal;

/// How long the phase waits for its consumers' first answers before its operations start.
const READY_WAIT: Duration = Duration::from_secs(5);

/// How often the end of a phase looks whether every write has been seen.
const SETTLED_LOOK: Duration = Duration::from_millis(20);

/// A phase's running consumers, over one database or spread over several.
pub struct Watch {
    settings: ChangesFeed,
    /// One feed per database followed: the run's first databases, as many as there are
    /// consumers at most.
    feeds: Vec<Arc<Feed>>,
    /// How many databases the run has.
    databases: usize,
    live: Arc<Live>,
    stop: Signal,
    consumers: Vec<JoinHandle<ConsumerTally>>,
    sampler: Option<JoinHandle<()>>,
    intervals: Arc<Mutex<Series<ChangesInterval>>>,
}

/// The largest `GET /db` answer taken where the consumers start: CouchDB's is under
/// 1 KiB, and up to 64 databases are asked at once.
const DATABASE_INFO_LIMIT: u64 = 1024 * 1024;

/// The database's sequence now, where the consumers start: `GET /db`'s `update_seq`.
async fn current_seq(endpoint: Arc<Endpoint>, database_path: String) -> Result<Seq, String> {
    let endpoint = endpoint.limited_to(DATABASE_INFO_LIMIT);
    let mut client = Client::new(endpoint, Some(Duration::from_secs(30)));
    let call = Call {
        method: Method::Get,
        path: &database_path,
        body: None,
    };
    let answer = client.send(&call).await.map_err(|e| {
        format!(
            "cannot ask GET {database_path} where its changes feed stands (waited at most 30 s): {}",
            e.error
        )
    })?;
    if answer.status != 200 {
        return Err(format!(
            "GET {database_path} answered {} where the changes consumers start; check the database and the credentials",
            answer.status
        ));
    }
    let info: serde_json::Value = serde_json::from_slice(&answer.body)
        .map_err(|_| format!("GET {database_path} did not answer JSON"))?;
    match info.get("update_seq") {
        Some(serde_json::Value::Number(n)) => Ok(Seq(n.to_string())),
        Some(serde_json::Value::String(s)) => Ok(Seq(s.clone())),
        _ => Err(format!(
            "GET {database_path} has no update_seq for the changes consumers to start from"
        )),
    }
}

/// Where each database's feed stands now, asked of all at once: a server that does not
/// answer costs one timeout, not one per database.
async fn current_seqs(
    endpoint: &Arc<Endpoint>,
    database_paths: &[String],
) -> Result<Vec<Seq>, String> {
    let asking: Vec<_> = database_paths
        .iter()
        .map(|path| tokio::spawn(current_seq(endpoint.clone(), path.clone())))
        .collect();
    let mut seqs = Vec::with_capacity(asking.len());
    for task in asking {
        let seq = task
            .await
            .map_err(|e| format!("asking where a changes feed stands failed: {e}"))??;
        seqs.push(seq);
    }
    Ok(seqs)
}

/// Why a selector cannot be used on PouchDB Server.
const POUCHDB_SELECTOR: &str = "PouchDB Server does not filter changes feeds by selector (it takes filter=_selector for a design document's name, and version 4.2.0 stops with an uncaught error when asked): leave out the selector there; CouchDB 2 and later filter by selector";

/// Whether the node's welcome (`GET /`) is PouchDB Server's.
async fn is_pouchdb_server(client: &mut Client) -> bool {
    let call = Call {
        method: Method::Get,
        path: "/",
        body: None,
    };
    let Ok(answer) = client.send(&call).await else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&answer.body)
        .is_ok_and(|welcome| welcome.get("express-pouchdb").is_some())
}

/// Asks once for the feed filtered by `selector`, so that a server that cannot filter
/// by selector stops the run with its answer, rather than leaving the consumers
/// reconnecting all phase long. PouchDB Server is not asked: the question crashes it.
async fn check_selector(
    endpoint: Arc<Endpoint>,
    database_path: &str,
    selector: &str,
) -> Result<(), String> {
    let mut client = Client::new(endpoint, Some(Duration::from_secs(30)));
    if is_pouchdb_server(&mut client).await {
        return Err(POUCHDB_SELECTOR.to_string());
    }
    let path = format!("{database_path}/_changes?filter=_selector&limit=0");
    let body = format!("{{\"selector\":{selector}}}");
    let call = Call {
        method: Method::Post,
        path: &path,
        body: Some(body.as_bytes()),
    };
    let answer = client.send(&call).await.map_err(|e| {
        format!(
            "cannot ask for the changes feed with a selector: {}",
            e.error
        )
    })?;
    if answer.status == 200 {
        return Ok(());
    }
    let said = crate::text::Quoted::new(&answer.body, &client.endpoint().credential, 200);
    Err(format!(
        "the server refused the changes feed's selector (filter=_selector): {} {}; CouchDB 2 and later filter feeds by selector, PouchDB Server does not: leave out the selector there",
        answer.status, said
    ))
}

impl Watch {
    /// Starts `settings.consumers` consumers over `endpoints` (in turn), consumer `i`
    /// following database `i mod N` of `database_paths` from its current sequence, and
    /// waits (a while) for each one's first answer so that the phase's writes do not wait
    /// for connections.
    pub async fn start(
        settings: &ChangesFeed,
        endpoints: &[Arc<Endpoint>],
        database_paths: &[String],
    ) -> Result<Watch, String> {
        let databases = database_paths.len().max(1) as u64;
        let followed_count = settings.consumers.min(databases) as usize;
        let followed_paths = &database_paths[..followed_count];
        // Whether the server filters by selector does not depend on the database.
        if let Some(selector) = &settings.selector {
            check_selector(endpoints[0].clone(), &followed_paths[0], selector).await?;
        }
        let starts = current_seqs(&endpoints[0], followed_paths).await?;
        let live = Arc::new(Live::default());
        let mut feeds = Vec::with_capacity(followed_count);
        for (d, database_path) in followed_paths.iter().enumerate() {
            // Consumers d, d + N, d + 2N, … follow database d.
            let consumers = (settings.consumers - d as u64).div_ceil(databases);
            feeds.push(Arc::new(Feed {
                settings: settings.clone(),
                path: format!("{database_path}/_changes"),
                table: Arc::new(Table::sharing(consumers, followed_count)),
                live: live.clone(),
            }));
        }
        let stop = Signal::default();
        let consumers = (0..settings.consumers)
            .map(|i| {
                let d = (i % databases) as usize;
                let endpoint = endpoints[i as usize % endpoints.len()].clone();
                let consumer =
                    Consumer::new(i / databases, feeds[d].clone(), endpoint, starts[d].clone());
                tokio::spawn(consumer.run(stop.clone()))
            })
            .collect();
        let waited = Instant::now();
        while live.ready.load(Ordering::Relaxed) < settings.consumers
            && waited.elapsed() < READY_WAIT
        {
            tokio::time::sleep(SETTLED_LOOK).await;
        }
        Ok(Watch {
            settings: settings.clone(),
            feeds,
            databases: database_paths.len(),
            live,
            stop,
            consumers,
            sampler: None,
            intervals: Arc::new(Mutex::new(Series::default())),
        })
    }

    /// Takes the consumers' figures every `interval` from the phase's start, keeping at
    /// most `bound` intervals (merged as they fill).
    pub fn sample_from(&mut self, phase_start: Instant, interval: Duration, bound: usize) {
        self.intervals = Arc::new(Mutex::new(Series::new(bound)));
        let task = sample(
            (self.live.clone(), self.tables()),
            self.intervals.clone(),
            (phase_start, interval),
        );
        self.sampler = Some(tokio::spawn(task));
    }

    /// Where the phase's connections tell of their writes to database `d` (of the run's
    /// databases, in order): `None` for a database no consumer follows.
    pub fn table_of(&self, d: usize) -> Option<Arc<Table>> {
        self.feeds.get(d).map(|feed| feed.table.clone())
    }

    /// The table of the run's only (or first) database.
    pub fn table(&self) -> Arc<Table> {
        self.feeds[0].table.clone()
    }

    /// Every followed database's table.
    fn tables(&self) -> Vec<Arc<Table>> {
        self.feeds.iter().map(|f| f.table.clone()).collect()
    }

    /// Writes not yet seen by every consumer of their database.
    fn pending(&self) -> u64 {
        self.feeds.iter().map(|f| f.table.pending()).sum()
    }

    /// Waits until every write has been seen, or `grace` has passed, then stops the
    /// consumers and adds up what they measured.
    pub async fn finish(self, grace: Duration) -> ChangesReport {
        let began = Instant::now();
        while self.pending() > 0 && began.elapsed() < grace {
            tokio::time::sleep(SETTLED_LOOK).await;
        }
        let waited = began.elapsed();
        self.stop.raise();
        let mut latency = new_histogram();
        let (mut changes, mut superseded) = (0, 0);
        let mut troubles = Troubles::default();
        for task in self.consumers {
            // A consumer task ends only when stopped; a panic would be a bug, and its
            // figures are then missing from the sums (the troubles say nothing of it).
            if let Ok(tally) = task.await {
                let _ = latency.add(&tally.latency);
                changes += tally.changes;
                superseded += tally.superseded;
                troubles.add(&tally.troubles);
            }
        }
        if let Some(sampler) = self.sampler {
            sampler.abort();
        }
        let mut left = table::Leftover::default();
        for feed in &self.feeds {
            left.add(feed.table.leftover());
        }
        let _ = latency.record_n(0, left.early);
        let settings = &self.settings;
        let intervals =
            std::mem::take(&mut *self.intervals.lock().unwrap_or_else(|p| p.into_inner()))
                .into_parts()
                .0;
        ChangesReport {
            feed: settings.feed.name().to_string(),
            consumers: settings.consumers,
            databases: self.feeds.len() as u64,
            databases_unfollowed: self.databases.saturating_sub(self.feeds.len()) as u64,
            // The engine knows; one machine unless it says otherwise.
            client_nodes: 1,
            include_docs: settings.include_docs,
            selector: settings.selector.clone(),
            heartbeat_ms: settings.heartbeat.as_millis() as u64,
            grace_seconds: grace.as_secs_f64(),
            latency,
            writes_tracked: left.tracked,
            writes_untracked: left.untracked,
            early: left.early,
            superseded,
            missing_writes: left.missing_writes,
            missing_sightings: left.missing_sightings,
            unmatched: left.unmatched,
            changes,
            waited_seconds: waited.as_secs_f64(),
            troubles,
            intervals,
        }
    }
}

/// Takes the consumers' figures once per interval.
async fn sample(
    (live, tables): (Arc<Live>, Vec<Arc<Table>>),
    out: Arc<Mutex<Series<ChangesInterval>>>,
    (started, interval): (Instant, Duration),
) {
    let mut last = (started, live.changes.load(Ordering::Relaxed));
    let interval = interval.max(Duration::from_millis(1));
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::from_std(started) + interval, interval);
    loop {
        ticks.tick().await;
        let now = Instant::now();
        let changes = live.changes.load(Ordering::Relaxed);
        let length = now.saturating_duration_since(last.0).as_secs_f64();
        let row = ChangesInterval {
            elapsed_seconds: now.saturating_duration_since(started).as_secs_f64(),
            changes_per_second: if length > 0.0 {
                changes.saturating_sub(last.1) as f64 / length
            } else {
                0.0
            },
            lag_seconds: tables
                .iter()
                .filter_map(|t| t.oldest_pending())
                .min()
                .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64()),
            open_feeds: live.open.load(Ordering::Relaxed),
            length_seconds: length,
        };
        out.lock().unwrap_or_else(|p| p.into_inner()).push(row);
        last = (now, changes);
    }
}
