//! One `_changes` consumer: it follows the feed from where the phase began, tells the
//! table what it saw, and reconnects from its last sequence when the server stalls,
//! resets, or sends what a feed cannot be. Every reconnect is counted with its cause.
//!
//! The feed is read with the driver's own client ([`Client::open_feed`]), as every other
//! request is: the same credential and its renewal after a 401, the same TLS and connect
//! timeout. The answer is taken as it comes, so nothing is held but the line being read
//! (continuous) or one bounded answer (longpoll, normal).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::parse::{self, Change, Line, Seq};
use super::table::Table;
use crate::driver::{
    Call, Client, Endpoint, Feed as Answer, FeedError, FeedLimits, Method, TransportError,
};
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
    client: Client,
    sink: Sink,
    said_ready: bool,
    /// Longpoll answers in a row that came back empty long before their timeout.
    hasty: u32,
}

impl Consumer {
    /// Consumer `index` (from 0) of `feed`, reading from `endpoint` from `since`.
    pub fn new(index: u64, feed: Arc<Feed>, endpoint: Arc<Endpoint>, since: Seq) -> Consumer {
        Consumer {
            // No deadline per request: a feed's answer is bounded per read instead.
            client: Client::new(endpoint, None),
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

    /// The bounds of one answer of the consumer's feed.
    fn limits(&self) -> FeedLimits {
        let total = match self.sink.feed.settings.feed {
            FeedKind::Continuous => None,
            FeedKind::Longpoll | FeedKind::Normal => Some(ANSWER_LIMIT as u64),
        };
        FeedLimits {
            stall: self.stall_limit(),
            line: LINE_LIMIT,
            total,
        }
    }

    /// One connection, with as many requests as it lasts for; returns why it ended.
    async fn connection(&mut self, pause: &mut Duration) -> Trouble {
        // A connection that met a trouble is not used again.
        self.client.disconnect();
        let limits = self.limits();
        let kind = self.sink.feed.settings.feed;
        let Consumer {
            client,
            sink,
            said_ready,
            hasty,
        } = self;
        // A connection held open for the feed, whichever kind, once it has answered.
        let mut open = None;
        loop {
            let (path, body) = sink.request();
            let call = Call {
                method: if body.is_some() {
                    Method::Post
                } else {
                    Method::Get
                },
                path: &path,
                body: body.as_deref().map(str::as_bytes),
            };
            let asked = Instant::now();
            let mut answer = match client.open_feed(&call, limits).await {
                Ok(answer) => answer,
                Err(unanswered) => return unanswered_trouble(&unanswered.error),
            };
            open.get_or_insert_with(|| OpenFeed::count(&sink.feed.live));
            if answer.status() != 200 {
                return Trouble::Status(answer.status());
            }
            *pause = PAUSE_FIRST;
            if !*said_ready {
                *said_ready = true;
                sink.feed.live.ready.fetch_add(1, Ordering::Relaxed);
            }
            let empty = match kind {
                FeedKind::Continuous => return sink.read_lines(&mut answer).await,
                FeedKind::Longpoll | FeedKind::Normal => {
                    match sink.read_answer(&mut answer).await {
                        Ok(empty) => empty,
                        Err(trouble) => return trouble,
                    }
                }
            };
            let pause = quiet_pause(&sink.feed.settings, empty, asked.elapsed(), hasty);
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
    }
}

impl Sink {
    /// The feed's request from where the consumer stands: the path with its query, and
    /// the body of a selector's POST.
    fn request(&self) -> (String, Option<String>) {
        let settings = &self.feed.settings;
        let path = format!("{}?{}", self.feed.path, query(settings, &self.since));
        let body = (settings.selector.as_ref()).map(|s| format!("{{\"selector\":{s}}}"));
        (path, body)
    }

    /// Reads a continuous feed's lines until it ends or fails.
    async fn read_lines(&mut self, answer: &mut Answer<'_>) -> Trouble {
        loop {
            match answer.next_line().await {
                Ok(Some(line)) => {
                    if let Err(trouble) = self.line(line, Instant::now()) {
                        return trouble;
                    }
                }
                Ok(None) => return Trouble::Ended,
                Err(error) => return feed_trouble(&error),
            }
        }
    }

    /// Reads one longpoll or normal answer whole (bounded) and takes its changes; true
    /// when it had none.
    async fn read_answer(&mut self, answer: &mut Answer<'_>) -> Result<bool, Trouble> {
        let body = answer.read_to_end(ANSWER_LIMIT).await;
        let body = body.map_err(|error| feed_trouble(&error))?;
        let at = Instant::now();
        let (changes, last) = parse::answer(&body).map_err(|_| Trouble::BadAnswer)?;
        let empty = changes.is_empty();
        for change in changes {
            self.change(change, at);
        }
        if let Some(last) = last {
            self.since = last;
        }
        Ok(empty)
    }
}

/// Why a feed request got no answer, as a trouble.
fn unanswered_trouble(error: &TransportError) -> Trouble {
    match error {
        error if error.is_unreachable() => Trouble::Connect,
        TransportError::Timeout => Trouble::Stall,
        TransportError::TooLarge(..) => Trouble::TooLong,
        TransportError::Broken(e) if e.kind() == io::ErrorKind::InvalidData => Trouble::BadAnswer,
        _ => Trouble::Reset,
    }
}

/// Why an answer could not be read on, as a trouble.
fn feed_trouble(error: &FeedError) -> Trouble {
    match error {
        FeedError::Stall => Trouble::Stall,
        FeedError::Reset(_) => Trouble::Reset,
        FeedError::Bad(_) => Trouble::BadAnswer,
        FeedError::TooLong => Trouble::TooLong,
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
