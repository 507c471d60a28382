//! One `_changes` consumer: it follows the feed from where the phase began, tells the
//! table what it saw, and reconnects from its last sequence when the server stalls,
//! resets, or sends what a feed cannot be. Every reconnect is counted with its cause.
//!
//! The feed is read with hyper's client over the driver's streams (TCP or TLS): hyper
//! decodes the chunked answer a chunk at a time, so nothing is buffered but the line
//! being read (continuous) or one bounded answer (longpoll, normal).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::task::JoinHandle;

use super::lines::{Lines, TooLong};
use super::parse::{self, Change, Line, Seq};
use super::table::Table;
use crate::driver::Endpoint;
use crate::driver::connection::open_stream;
use crate::engine::backoff;
use crate::engine::stop::Signal;
use crate::metrics::changes::Troubles;
use crate::metrics::recorder::new_histogram;
use crate::workload::changes::{ChangesFeed, FeedKind, NORMAL_PAUSE};

/// The longest line of a continuous feed taken: a change with its document (CouchDB
/// refuses documents over 8 MB by default) and room to spare.
pub const LINE_LIMIT: usize = 16 * 1024 * 1024;

/// The largest longpoll or normal answer taken (at most [`BATCH`] changes).
pub const ANSWER_LIMIT: usize = 64 * 1024 * 1024;

/// Changes asked for per longpoll or normal request.
pub const BATCH: u64 = 1000;

/// The first pause before reconnecting; it doubles up to [`PAUSE_MOST`] while the feed
/// keeps failing, and starts again after an answer that began well.
const PAUSE_FIRST: Duration = Duration::from_millis(50);
const PAUSE_MOST: Duration = Duration::from_secs(1);

/// Figures every consumer of a phase adds to, read once per interval.
#[derive(Debug, Default)]
pub struct Live {
    /// Changes received (every one, matched or not).
    pub changes: AtomicU64,
    /// Feed connections open now.
    pub open: AtomicU64,
    /// Consumers whose feed has answered once.
    pub ready: AtomicU64,
}

/// What every consumer of a phase shares.
pub struct Feed {
    pub settings: ChangesFeed,
    /// `_changes` below the node's base path, e.g. `/db/_changes`.
    pub path: String,
    pub table: Arc<Table>,
    pub live: Arc<Live>,
}

/// What one consumer counted.
#[derive(Debug)]
pub struct ConsumerTally {
    /// From each write's answer to this consumer's sighting, microseconds.
    pub latency: Histogram<u64>,
    pub changes: u64,
    pub superseded: u64,
    pub troubles: Troubles,
}

/// Why a feed's connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trouble {
    Connect,
    Status(u16),
    Stall,
    Reset,
    BadAnswer,
    TooLong,
    Ended,
}

fn count(troubles: &mut Troubles, trouble: Trouble) {
    let counter = match trouble {
        Trouble::Connect => &mut troubles.connect_failures,
        Trouble::Status(_) => &mut troubles.error_statuses,
        Trouble::Stall => &mut troubles.stalls,
        Trouble::Reset => &mut troubles.resets,
        Trouble::BadAnswer => &mut troubles.bad_answers,
        Trouble::TooLong => &mut troubles.too_long,
        Trouble::Ended => &mut troubles.ended,
    };
    *counter += 1;
    troubles.reconnects += 1;
}

/// What a consumer does with what it reads.
struct Sink {
    index: u64,
    feed: Arc<Feed>,
    since: Seq,
    tally: ConsumerTally,
}

impl Sink {
    fn change(&mut self, change: Change, at: Instant) {
        self.tally.changes += 1;
        self.feed.live.changes.fetch_add(1, Ordering::Relaxed);
        for rev in &change.revs {
            let seen = self.feed.table.sighted(self.index, &change.id, rev, at);
            if let Some(latency) = seen.latency {
                // An auto-resizing histogram takes any value; `saturating_record` would
                // clamp to its current top instead of growing.
                let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX / 4);
                let _ = self.tally.latency.record(micros);
            }
            self.tally.superseded += seen.superseded;
        }
        if let Some(seq) = change.seq {
            self.since = seq;
        }
    }

    /// One line of a continuous feed.
    fn line(&mut self, bytes: &[u8], at: Instant) -> Result<(), Trouble> {
        match parse::line(bytes) {
            Ok(Line::Heartbeat) => Ok(()),
            Ok(Line::Change(change)) => {
                self.change(change, at);
                Ok(())
            }
            Ok(Line::LastSeq(_)) => Err(Trouble::Ended),
            Err(_) => Err(Trouble::BadAnswer),
        }
    }
}

/// Ends hyper's connection task with the consumer's connection.
struct Driver(JoinHandle<()>);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Counts a feed connection among the open ones while it lives.
struct OpenFeed(Arc<Live>);

impl OpenFeed {
    fn count(live: &Arc<Live>) -> OpenFeed {
        live.open.fetch_add(1, Ordering::Relaxed);
        OpenFeed(live.clone())
    }
}

impl Drop for OpenFeed {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

pub struct Consumer {
    endpoint: Arc<Endpoint>,
    lines: Lines,
    sink: Sink,
    said_ready: bool,
    /// Longpoll answers in a row that came back empty long before their timeout.
    hasty: u32,
}

impl Consumer {
    /// Consumer `index` (from 0) of `feed`, reading from `endpoint` from `since`.
    pub fn new(index: u64, feed: Arc<Feed>, endpoint: Arc<Endpoint>, since: Seq) -> Consumer {
        Consumer {
            endpoint,
            lines: Lines::new(LINE_LIMIT),
            sink: Sink {
                index,
                feed,
                since,
                tally: ConsumerTally {
                    latency: new_histogram(),
                    changes: 0,
                    superseded: 0,
                    troubles: Troubles::default(),
                },
            },
            said_ready: false,
            hasty: 0,
        }
    }

    /// Follows the feed until `stop` is raised.
    pub async fn run(mut self, stop: Signal) -> ConsumerTally {
        let mut stopped = Box::pin(stop.raised());
        let mut pause = PAUSE_FIRST;
        loop {
            let trouble = tokio::select! {
                biased;
                _ = &mut stopped => break,
                trouble = self.connection(&mut pause) => trouble,
            };
            count(&mut self.sink.tally.troubles, trouble);
            tokio::select! {
                biased;
                _ = &mut stopped => break,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(PAUSE_MOST);
        }
        self.sink.tally
    }

    /// No byte for this long means the server stalled: it sends a heartbeat (or, for
    /// longpoll, its empty answer) every `heartbeat`.
    fn stall_limit(&self) -> Duration {
        self.sink.feed.settings.heartbeat * 2 + Duration::from_secs(1)
    }

    /// One connection, with as many requests as it lasts for; returns why it ended.
    async fn connection(&mut self, pause: &mut Duration) -> Trouble {
        self.lines.clear();
        let Ok((stream, _)) = open_stream(&self.endpoint).await else {
            return Trouble::Connect;
        };
        let handshake = hyper::client::conn::http1::handshake(TokioIo::new(stream));
        let Ok((mut sender, connection)) = handshake.await else {
            return Trouble::Connect;
        };
        let _driver = Driver(tokio::spawn(async move {
            let _ = connection.await;
        }));
        let limit = self.stall_limit();
        // A connection held open for the feed, whichever kind.
        let _open = OpenFeed::count(&self.sink.feed.live);
        loop {
            let Some((request, generation)) = self.request() else {
                return Trouble::Connect;
            };
            let asked = Instant::now();
            let response = match tokio::time::timeout(limit, sender.send_request(request)).await {
                Err(_) => return Trouble::Stall,
                Ok(Err(_)) => return Trouble::Reset,
                Ok(Ok(response)) => response,
            };
            if response.status() == hyper::StatusCode::UNAUTHORIZED {
                // The session or token ran out (or the server ended it): log in again, as
                // the operations do, so the reconnect carries a credential that works.
                self.endpoint.renew_after_401(generation).await;
            }
            if response.status() != hyper::StatusCode::OK {
                return Trouble::Status(response.status().as_u16());
            }
            *pause = PAUSE_FIRST;
            self.say_ready();
            let body = response.into_body();
            let empty = match self.sink.feed.settings.feed {
                FeedKind::Continuous => return self.read_lines(body, limit).await,
                FeedKind::Longpoll | FeedKind::Normal => {
                    match self.read_answer(body, limit).await {
                        Ok(empty) => empty,
                        Err(trouble) => return trouble,
                    }
                }
            };
            let pause = quiet_pause(
                &self.sink.feed.settings,
                empty,
                asked.elapsed(),
                &mut self.hasty,
            );
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
    }

    fn say_ready(&mut self) {
        if !self.said_ready {
            self.said_ready = true;
            self.sink.feed.live.ready.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The feed's request from where the consumer stands, and the credential generation
    /// it carries; `None` if the node's header lines cannot be sent (they were checked
    /// when the run began).
    fn request(&self) -> Option<(hyper::Request<Full<Bytes>>, u64)> {
        let settings = &self.sink.feed.settings;
        let uri = format!(
            "{}{}?{}",
            self.endpoint.node.base_path,
            self.sink.feed.path,
            query(settings, &self.sink.since)
        );
        let (method, body) = match &settings.selector {
            Some(selector) => ("POST", format!("{{\"selector\":{selector}}}")),
            None => ("GET", String::new()),
        };
        let mut builder = hyper::Request::builder().method(method).uri(uri);
        let (lines, generation) = self.endpoint.current_headers();
        for line in lines.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            if let Some((name, value)) = line.trim_end_matches('\r').split_once(": ") {
                builder = builder.header(name, value);
            }
        }
        if settings.selector.is_some() {
            builder = builder.header("Content-Type", "application/json");
        }
        let request = builder.body(Full::new(Bytes::from(body))).ok()?;
        Some((request, generation))
    }

    /// Reads a continuous feed's lines until it ends or fails.
    async fn read_lines(&mut self, mut body: Incoming, limit: Duration) -> Trouble {
        loop {
            let data = match next_data(&mut body, limit).await {
                Ok(data) => data,
                Err(trouble) => return trouble,
            };
            let at = Instant::now();
            let Consumer { lines, sink, .. } = self;
            let mut trouble = None;
            let pushed = lines.push(&data, |line| {
                if trouble.is_none() {
                    trouble = sink.line(line, at).err();
                }
            });
            if let Err(TooLong) = pushed {
                return Trouble::TooLong;
            }
            if let Some(trouble) = trouble {
                return trouble;
            }
        }
    }

    /// Reads one longpoll or normal answer whole (bounded) and takes its changes; true
    /// when it had none.
    async fn read_answer(&mut self, mut body: Incoming, limit: Duration) -> Result<bool, Trouble> {
        let mut answer = Vec::new();
        loop {
            match next_data(&mut body, limit).await {
                Ok(data) if answer.len() + data.len() > ANSWER_LIMIT => {
                    return Err(Trouble::TooLong);
                }
                Ok(data) => answer.extend_from_slice(&data),
                Err(Trouble::Ended) => break,
                Err(trouble) => return Err(trouble),
            }
        }
        let at = Instant::now();
        let (changes, last) = parse::answer(&answer).map_err(|_| Trouble::BadAnswer)?;
        let empty = changes.is_empty();
        for change in changes {
            self.sink.change(change, at);
        }
        if let Some(last) = last {
            self.sink.since = last;
        }
        Ok(empty)
    }
}

/// How long to wait before asking again after an answer that took `took`, `empty` when it
/// had no change. A normal feed pauses after an empty answer; a longpoll answered empty
/// long before the timeout it asked for (a server that does not hold longpolls) backs
/// off, doubling from [`PAUSE_FIRST`] up to the heartbeat with every such answer in a row
/// (`hasty`), so that it cannot make the consumer ask without end.
fn quiet_pause(settings: &ChangesFeed, empty: bool, took: Duration, hasty: &mut u32) -> Duration {
    match settings.feed {
        FeedKind::Normal if empty => NORMAL_PAUSE,
        FeedKind::Longpoll if empty && took < settings.heartbeat / 2 => {
            let pause = backoff::doubled(PAUSE_FIRST, *hasty, settings.heartbeat);
            *hasty = hasty.saturating_add(1);
            backoff::jittered(pause, rand::random())
        }
        _ => {
            *hasty = 0;
            Duration::ZERO
        }
    }
}

/// The next bytes of an answer; `Ended` at its end.
async fn next_data(body: &mut Incoming, limit: Duration) -> Result<Bytes, Trouble> {
    loop {
        let frame = match tokio::time::timeout(limit, body.frame()).await {
            Err(_) => return Err(Trouble::Stall),
            Ok(None) => return Err(Trouble::Ended),
            Ok(Some(Err(_))) => return Err(Trouble::Reset),
            Ok(Some(Ok(frame))) => frame,
        };
        // Trailers carry no changes.
        if let Ok(data) = frame.into_data() {
            return Ok(data);
        }
    }
}

/// The query string of a feed request from `since`.
fn query(settings: &ChangesFeed, since: &Seq) -> String {
    let since: String = url::form_urlencoded::byte_serialize(since.0.as_bytes()).collect();
    let ms = settings.heartbeat.as_millis();
    let mut query = format!("feed={}&since={since}", settings.feed.name());
    match settings.feed {
        FeedKind::Continuous => query.push_str(&format!("&heartbeat={ms}")),
        // An empty answer after the heartbeat's time, rather than a heartbeat: a longpoll
        // answer is read whole, so its liveness is that it ends.
        FeedKind::Longpoll => query.push_str(&format!("&timeout={ms}&limit={BATCH}")),
        FeedKind::Normal => query.push_str(&format!("&limit={BATCH}")),
    }
    if settings.include_docs {
        query.push_str("&include_docs=true");
    }
    if settings.selector.is_some() {
        query.push_str("&filter=_selector");
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_longpoll_answered_empty_at_once_backs_off_up_to_the_heartbeat() {
        let mut feed = ChangesFeed::with_consumers(1);
        feed.feed = FeedKind::Longpoll;
        let mut hasty = 0;
        let at_once = Duration::from_millis(1);
        let pauses: Vec<Duration> = (0..8)
            .map(|_| quiet_pause(&feed, true, at_once, &mut hasty))
            .collect();
        // Equal jitter: each pause is at least half its backoff, which doubles.
        assert!(pauses[0] >= PAUSE_FIRST / 2, "{pauses:?}");
        assert!(pauses[4] >= PAUSE_FIRST * 8, "{pauses:?}");
        assert!(pauses.iter().all(|&p| p <= feed.heartbeat), "{pauses:?}");
        // A longpoll that waited, or brought changes, asks again at once.
        let waited = feed.heartbeat;
        assert_eq!(quiet_pause(&feed, true, waited, &mut hasty), Duration::ZERO);
        assert_eq!(hasty, 0);
        assert_eq!(
            quiet_pause(&feed, false, at_once, &mut hasty),
            Duration::ZERO
        );
        feed.feed = FeedKind::Normal;
        assert_eq!(quiet_pause(&feed, true, at_once, &mut hasty), NORMAL_PAUSE);
    }

    #[test]
    fn queries_ask_for_what_the_phase_says() {
        let mut feed = ChangesFeed::with_consumers(1);
        let since = Seq("12-g1AA/x=".to_string());
        assert_eq!(
            query(&feed, &since),
            "feed=continuous&since=12-g1AA%2Fx%3D&heartbeat=1000"
        );
        feed.feed = FeedKind::Longpoll;
        feed.include_docs = true;
        feed.selector = Some("{}".to_string());
        assert_eq!(
            query(&feed, &Seq("0".to_string())),
            "feed=longpoll&since=0&timeout=1000&limit=1000&include_docs=true&filter=_selector"
        );
    }
}
