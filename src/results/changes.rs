//! A phase's `_changes` consumers as the result file keeps them.

use serde::{Deserialize, Serialize};

use super::Latency;
use super::build::latency;
use crate::metrics::changes::{ChangesInterval, ChangesReport, Troubles};

/// What the phase's consumers saw (absent for a phase without consumers).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChangesResult {
    /// `continuous`, `longpoll` or `normal`.
    pub feed: String,
    pub consumers: u64,
    /// The databases the consumers followed (consumer `i` follows database `i mod N` of
    /// the run's `--databases`); 1 for a run over one database.
    #[serde(default = "one")]
    pub databases: u64,
    /// The run's databases no consumer followed (more `--databases` than consumers):
    /// their writes are neither tracked nor counted as untracked.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub databases_unfollowed: u64,
    /// With several client machines (`--node-count`): how many wrote. The consumers ran
    /// on the first and tracked its writes only, a sample of the load; the others'
    /// writes are among `unmatched`. Absent for one machine.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub client_nodes: u64,
    pub include_docs: bool,
    /// The Mango selector the feed was filtered with (`filter=_selector`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    pub heartbeat_ms: u64,
    pub grace_seconds: f64,
    /// From a write's answer to its sighting on a consumer's feed, one value per
    /// (write, consumer); sightings before the answer count as 0.
    pub latency: Latency,
    /// Writes tracked, and those the bounded table had no room for (not in `latency`).
    pub writes_tracked: u64,
    pub writes_untracked: u64,
    /// Sightings before their write's answer (in `latency` as 0).
    pub early: u64,
    /// (write, consumer) pairs seen only through a later revision of the document.
    pub superseded: u64,
    /// Writes some consumer had not seen when the grace ended, and the pairs missing.
    pub missing_writes: u64,
    pub missing_sightings: u64,
    /// Changes that matched no tracked write (other writers, untracked writes, a change
    /// seen again after a reconnect).
    pub unmatched: u64,
    /// Changes received by all consumers together.
    pub changes: u64,
    /// Seconds waited after the operations for the last writes to show.
    pub waited_seconds: f64,
    pub troubles: Troubles,
    pub intervals: Vec<ChangesInterval>,
}

impl ChangesResult {
    /// The consumers' figures taken at the end of the phase's interval that ended
    /// `elapsed_seconds` after the phase started and lasted `length_seconds` (their sampler
    /// ticks with the intervals): the nearest within half the interval, if any.
    pub fn beside(&self, elapsed_seconds: f64, length_seconds: f64) -> Option<&ChangesInterval> {
        let off = |i: &ChangesInterval| (i.elapsed_seconds - elapsed_seconds).abs();
        self.intervals
            .iter()
            .min_by(|a, b| off(a).total_cmp(&off(b)))
            .filter(|i| off(i) < length_seconds / 2.0)
    }
}

/// What a result file written before a count was kept says: one.
pub(super) fn one() -> u64 {
    1
}

pub(super) fn is_one(n: &u64) -> bool {
    *n == 1
}

pub fn changes(report: &ChangesReport) -> ChangesResult {
    ChangesResult {
        feed: report.feed.clone(),
        consumers: report.consumers,
        databases: report.databases,
        databases_unfollowed: report.databases_unfollowed,
        client_nodes: report.client_nodes,
        include_docs: report.include_docs,
        selector: report.selector.clone(),
        heartbeat_ms: report.heartbeat_ms,
        grace_seconds: report.grace_seconds,
        latency: latency(&report.latency),
        writes_tracked: report.writes_tracked,
        writes_untracked: report.writes_untracked,
        early: report.early,
        superseded: report.superseded,
        missing_writes: report.missing_writes,
        missing_sightings: report.missing_sightings,
        unmatched: report.unmatched,
        changes: report.changes,
        waited_seconds: report.waited_seconds,
        troubles: report.troubles,
        intervals: report.intervals.clone(),
    }
}

/// What consumers saw, for tests: nothing but figures at `intervals`.
#[cfg(test)]
pub fn with_intervals(intervals: Vec<ChangesInterval>) -> ChangesResult {
    let report = crate::metrics::changes::ChangesReport {
        feed: "continuous".to_string(),
        consumers: 2,
        databases: 1,
        databases_unfollowed: 0,
        client_nodes: 1,
        include_docs: false,
        selector: None,
        heartbeat_ms: 1000,
        grace_seconds: 5.0,
        latency: crate::metrics::recorder::new_histogram(),
        writes_tracked: 0,
        writes_untracked: 0,
        early: 0,
        superseded: 0,
        missing_writes: 0,
        missing_sightings: 0,
        unmatched: 0,
        changes: 0,
        waited_seconds: 0.0,
        troubles: Default::default(),
        intervals,
    };
    changes(&report)
}
