//! What a phase's `_changes` consumers measured: change latency, what was seen and
//! what was not, the feeds' troubles, and their figures per interval.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Why consumers reconnected, each counted: every reconnect has one cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Troubles {
    pub reconnects: u64,
    /// The connection or its TLS handshake failed.
    pub connect_failures: u64,
    /// The server answered the feed request with another status than 200.
    pub error_statuses: u64,
    /// No byte (not even a heartbeat) within twice the heartbeat and a second.
    pub stalls: u64,
    /// The connection broke mid-answer.
    pub resets: u64,
    /// A line or answer that is not a change feed's.
    pub bad_answers: u64,
    /// A line (or a longpoll/normal answer) over the bound.
    pub too_long: u64,
    /// The server ended a continuous feed.
    pub ended: u64,
}

impl Troubles {
    pub fn add(&mut self, other: &Troubles) {
        self.reconnects += other.reconnects;
        self.connect_failures += other.connect_failures;
        self.error_statuses += other.error_statuses;
        self.stalls += other.stalls;
        self.resets += other.resets;
        self.bad_answers += other.bad_answers;
        self.too_long += other.too_long;
        self.ended += other.ended;
    }
}

/// The consumers' figures over one interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangesInterval {
    /// Seconds from the phase's start to the interval's end.
    pub elapsed_seconds: f64,
    /// Changes received per second, by all consumers together.
    pub changes_per_second: f64,
    /// How long ago the oldest write some consumer has not seen yet was answered; 0
    /// when every consumer has seen every tracked write.
    pub lag_seconds: f64,
    /// Feed connections open at the interval's end.
    pub open_feeds: u64,
    /// The interval's length; 0 in results written before sofabench kept it.
    #[serde(default)]
    pub length_seconds: f64,
}

impl super::coarse::Coarsen for ChangesInterval {
    /// Changes per second over the merged length; the largest lag either interval saw
    /// (a lag that grew and shrank within stays visible); feeds open at the later end.
    fn absorb(&mut self, later: ChangesInterval) {
        let length = self.length_seconds + later.length_seconds;
        if length > 0.0 {
            self.changes_per_second = (self.changes_per_second * self.length_seconds
                + later.changes_per_second * later.length_seconds)
                / length;
        }
        self.lag_seconds = self.lag_seconds.max(later.lag_seconds);
        self.open_feeds = later.open_feeds;
        self.elapsed_seconds = later.elapsed_seconds;
        self.length_seconds = length;
    }
}

/// Everything a phase's consumers measured.
#[derive(Clone, Debug)]
pub struct ChangesReport {
    pub feed: String,
    pub consumers: u64,
    /// The databases the consumers followed: 1, or with `--databases` as many as there
    /// were consumers, at most.
    pub databases: u64,
    /// The run's databases no consumer followed (more databases than consumers): their
    /// writes are not tracked.
    pub databases_unfollowed: u64,
    /// The client machines writing (`--node-count`); the consumers ran on the first and
    /// tracked its writes only.
    pub client_nodes: u64,
    pub include_docs: bool,
    pub selector: Option<String>,
    pub heartbeat_ms: u64,
    pub grace_seconds: f64,
    /// From each tracked write's answer to its sighting, per consumer, microseconds;
    /// sightings before the answer count as 0.
    pub latency: Histogram<u64>,
    /// Writes the table tracked, and those it had no room for.
    pub writes_tracked: u64,
    pub writes_untracked: u64,
    /// Sightings that came before their write's answer (in `latency` as 0).
    pub early: u64,
    /// (write, consumer) pairs seen only through a later revision of the document.
    pub superseded: u64,
    /// Writes some consumer had not seen when the grace ended, and the pairs missing.
    pub missing_writes: u64,
    pub missing_sightings: u64,
    /// Changes that matched no tracked write.
    pub unmatched: u64,
    /// Changes received by all consumers.
    pub changes: u64,
    /// Seconds waited after the operations for the last writes to show.
    pub waited_seconds: f64,
    pub troubles: Troubles,
    pub intervals: Vec<ChangesInterval>,
}
