//! What a phase's fleet of devices measured: each figure an HdrHistogram, the counts
//! beside them, the figures per interval, and whether every device converged with the
//! server. A tally adds another (`add`), so machines' tallies merge exactly.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::recorder::new_histogram;

/// The most examples kept of one kind (cycles over budget, sync failures, devices that
/// did not converge), each bounded in length where it is made.
pub const MOST_SAMPLES: usize = 10;

/// The figures kept as histograms.
#[derive(Clone, Debug)]
pub struct DeviceFigures {
    /// Time to visible between this machine's devices, microseconds.
    pub visible: Histogram<u64>,
    /// Each push that sent something, and each pull, from its start to its end,
    /// microseconds (a live pull from its feed's answer, not the wait before it).
    pub push: Histogram<u64>,
    pub pull: Histogram<u64>,
    /// A cold device's initial sync, from its joining to holding its whole scope,
    /// microseconds, and its documents per second.
    pub initial_sync: Histogram<u64>,
    pub initial_docs_per_second: Histogram<u64>,
    /// From a device coming back online to its backlog pushed and its scope pulled,
    /// microseconds.
    pub catch_up: Histogram<u64>,
    /// Requests and bytes (sent and received) of each cycle that sent any request.
    pub requests: Histogram<u64>,
    pub bytes: Histogram<u64>,
}

impl Default for DeviceFigures {
    fn default() -> DeviceFigures {
        DeviceFigures {
            visible: new_histogram(),
            push: new_histogram(),
            pull: new_histogram(),
            initial_sync: new_histogram(),
            initial_docs_per_second: new_histogram(),
            catch_up: new_histogram(),
            requests: new_histogram(),
            bytes: new_histogram(),
        }
    }
}

impl DeviceFigures {
    pub fn add(&mut self, other: &DeviceFigures) {
        let pairs = [
            (&mut self.visible, &other.visible),
            (&mut self.push, &other.push),
            (&mut self.pull, &other.pull),
            (&mut self.initial_sync, &other.initial_sync),
            (
                &mut self.initial_docs_per_second,
                &other.initial_docs_per_second,
            ),
            (&mut self.catch_up, &other.catch_up),
            (&mut self.requests, &other.requests),
            (&mut self.bytes, &other.bytes),
        ];
        for (mine, theirs) in pairs {
            // Auto-resizing histograms of the same precision always add.
            let _ = mine.add(theirs);
        }
    }
}

/// What the devices counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceCounts {
    /// Local writes (creates and edits), and those of them that were shared edits.
    pub writes: u64,
    pub shared_edits: u64,
    /// Local writes the device refused (a bound of its replica, or a shared document it
    /// did not hold yet): not made, not counted in `writes`.
    pub writes_refused: u64,
    /// Push cycles that sent something, pushes with nothing to send (no request), and
    /// pull cycles; failed ones of each.
    pub pushes: u64,
    pub empty_pushes: u64,
    pub pulls: u64,
    pub failed_pushes: u64,
    pub failed_pulls: u64,
    /// Revisions the server refused in pushes that went through (the error rows of
    /// `_bulk_docs`, e.g. a `validate_doc_update` that forbids them): they stay unpushed
    /// and are offered, and counted, again at each push. And what pulls could not use:
    /// revisions asked for and not given, unusable feed rows, revisions refused.
    pub push_refused: u64,
    pub pull_failures: u64,
    /// Held feed reads a live device gave up: when it went offline or the writes
    /// stopped (each a request).
    pub feeds_given_up: u64,
    pub requests: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Replication logs written on the server (`_local/<id>`).
    pub checkpoint_writes: u64,
    /// Changes read from feeds, revisions stored by pulls, revisions the server took
    /// from pushes.
    pub changes_read: u64,
    pub pulled: u64,
    pub pushed: u64,
    /// Shared edits whose push made a branch on the server (seen on this machine), and
    /// documents that held conflicts after a pull stored them.
    pub conflicts_created: u64,
    pub conflicts_seen: u64,
    /// Cycles that sent more requests than the budget.
    pub over_budget: u64,
    /// Devices that had synced before and then started again from sequence 0: their
    /// checkpoint was gone, or it shared no session with theirs.
    pub resynced_no_log: u64,
    pub resynced_no_common_session: u64,
}

impl DeviceCounts {
    pub fn add(&mut self, o: &DeviceCounts) {
        let pairs = [
            (&mut self.writes, o.writes),
            (&mut self.shared_edits, o.shared_edits),
            (&mut self.writes_refused, o.writes_refused),
            (&mut self.pushes, o.pushes),
            (&mut self.empty_pushes, o.empty_pushes),
            (&mut self.pulls, o.pulls),
            (&mut self.failed_pushes, o.failed_pushes),
            (&mut self.failed_pulls, o.failed_pulls),
            (&mut self.push_refused, o.push_refused),
            (&mut self.pull_failures, o.pull_failures),
            (&mut self.feeds_given_up, o.feeds_given_up),
            (&mut self.requests, o.requests),
            (&mut self.bytes_sent, o.bytes_sent),
            (&mut self.bytes_received, o.bytes_received),
            (&mut self.checkpoint_writes, o.checkpoint_writes),
            (&mut self.changes_read, o.changes_read),
            (&mut self.pulled, o.pulled),
            (&mut self.pushed, o.pushed),
            (&mut self.conflicts_created, o.conflicts_created),
            (&mut self.conflicts_seen, o.conflicts_seen),
            (&mut self.over_budget, o.over_budget),
            (&mut self.resynced_no_log, o.resynced_no_log),
            (
                &mut self.resynced_no_common_session,
                o.resynced_no_common_session,
            ),
        ];
        for (mine, theirs) in pairs {
            *mine = mine.saturating_add(theirs);
        }
    }
}

/// What the time-to-visible table (`crate::fleet::visible`) counted, besides the times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VisibleCounts {
    /// Writes tracked (with at least one other device of this machine to see them).
    pub tracked: u64,
    /// Writes the full table had no room for.
    pub untracked: u64,
    /// Sightings that came before their push's answer (in the times as 0).
    pub early: u64,
    /// (write, device) pairs never stored because a later write of the document
    /// replaced the write first.
    pub superseded: u64,
    /// (write, device) pairs still waiting when the table was closed.
    pub missing: u64,
}

impl VisibleCounts {
    pub fn add(&mut self, o: &VisibleCounts) {
        self.tracked = self.tracked.saturating_add(o.tracked);
        self.untracked = self.untracked.saturating_add(o.untracked);
        self.early = self.early.saturating_add(o.early);
        self.superseded = self.superseded.saturating_add(o.superseded);
        self.missing = self.missing.saturating_add(o.missing);
    }
}

/// The devices' figures over one interval.
#[derive(Clone, Debug)]
pub struct DevicesInterval {
    /// Seconds from the phase's start to the interval's end, and its length.
    pub elapsed_seconds: f64,
    pub length_seconds: f64,
    /// Devices online (joined, not offline) and live feeds held open at its end.
    pub online: u64,
    pub feeds_open: u64,
    pub counts: DeviceCounts,
    /// Time to visible, push and pull cycles within the interval, microseconds.
    pub visible: Histogram<u64>,
    pub push: Histogram<u64>,
    pub pull: Histogram<u64>,
}

impl DevicesInterval {
    /// An interval ending `elapsed_seconds` into the phase, with nothing in it.
    pub fn empty(elapsed_seconds: f64, length_seconds: f64) -> DevicesInterval {
        DevicesInterval {
            elapsed_seconds,
            length_seconds,
            online: 0,
            feeds_open: 0,
            counts: DeviceCounts::default(),
            visible: new_histogram(),
            push: new_histogram(),
            pull: new_histogram(),
        }
    }

    /// Another machine's interval of the same phase: counts and times add, devices at
    /// the end add up.
    pub fn add(&mut self, o: &DevicesInterval) {
        self.online = self.online.saturating_add(o.online);
        self.feeds_open = self.feeds_open.saturating_add(o.feeds_open);
        self.counts.add(&o.counts);
        let _ = self.visible.add(&o.visible);
        let _ = self.push.add(&o.push);
        let _ = self.pull.add(&o.pull);
    }
}

impl super::coarse::Coarsen for DevicesInterval {
    /// Counts and times add; the devices online and feeds open are the later end's.
    fn absorb(&mut self, later: DevicesInterval) {
        self.counts.add(&later.counts);
        let _ = self.visible.add(&later.visible);
        let _ = self.push.add(&later.push);
        let _ = self.pull.add(&later.pull);
        self.online = later.online;
        self.feeds_open = later.feeds_open;
        self.elapsed_seconds = later.elapsed_seconds;
        self.length_seconds += later.length_seconds;
    }
}

/// How every device's replica compared with the server after the last sync.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Convergence {
    /// Devices checked, and those whose replica agreed with the server for its scope.
    pub checked: u64,
    pub converged: u64,
    /// Devices that did not, by name, each with its first difference (bounded).
    pub diverged: Vec<(String, String)>,
    /// Documents the server held in the devices' scopes, and conflicting revisions
    /// (`_conflicts`, deleted leaves excluded) among them.
    pub server_documents: u64,
    pub server_conflicts: u64,
    /// Why the server's side could not be read, if it could not: then no device counts
    /// as converged.
    pub error: Option<String>,
}

impl Convergence {
    /// Another machine's check: its devices add; the server's counts are the larger
    /// (machines whose devices share databases read the same documents).
    pub fn add(&mut self, o: &Convergence) {
        self.checked = self.checked.saturating_add(o.checked);
        self.converged = self.converged.saturating_add(o.converged);
        for d in &o.diverged {
            if self.diverged.len() < MOST_SAMPLES {
                self.diverged.push(d.clone());
            }
        }
        self.server_documents = self.server_documents.max(o.server_documents);
        self.server_conflicts = self.server_conflicts.max(o.server_conflicts);
        if self.error.is_none() {
            self.error.clone_from(&o.error);
        }
    }
}

/// Everything a phase's fleet measured on one machine (or, merged, on several).
#[derive(Clone, Debug)]
pub struct DevicesReport {
    /// Devices of all machines, and those this report covers.
    pub devices: u64,
    pub devices_here: u64,
    pub cold_devices: u64,
    pub offline_devices: u64,
    pub client_nodes: u64,
    /// The settings as words: scope, profile, feed, sync.
    pub scope: String,
    pub profile: String,
    pub feed: String,
    /// `live` or the seconds between syncs.
    pub sync: String,
    pub figures: DeviceFigures,
    pub counts: DeviceCounts,
    pub visible: VisibleCounts,
    /// The most devices online at once, and live feeds open at once, at an interval's end.
    pub most_online: u64,
    pub most_feeds_open: u64,
    /// Examples of cycles over budget and of failed cycles (device, what, why).
    pub over_budget_samples: Vec<String>,
    pub failure_samples: Vec<String>,
    /// The sync of every warm device before the phase: how long it took, and devices
    /// that started the phase behind (their sync failed or had not ended in time).
    pub warm_up_seconds: f64,
    pub warm_up_behind: u64,
    /// The last sync after the writes stopped: how long it took, and devices that had not
    /// finished it when `last_sync` ran out.
    pub last_sync_seconds: f64,
    pub last_sync_unfinished: u64,
    pub convergence: Convergence,
    pub intervals: Vec<DevicesInterval>,
}

/// Adds `sample` to `samples` while there is room.
pub fn keep_sample(samples: &mut Vec<String>, sample: impl FnOnce() -> String) {
    if samples.len() < MOST_SAMPLES {
        samples.push(sample());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::coarse::Coarsen as _;

    #[test]
    fn counts_add_every_field() {
        let one = DeviceCounts {
            writes: 1,
            shared_edits: 1,
            writes_refused: 1,
            pushes: 1,
            empty_pushes: 1,
            pulls: 1,
            failed_pushes: 1,
            failed_pulls: 1,
            push_refused: 1,
            pull_failures: 1,
            feeds_given_up: 1,
            requests: 1,
            bytes_sent: 1,
            bytes_received: 1,
            checkpoint_writes: 1,
            changes_read: 1,
            pulled: 1,
            pushed: 1,
            conflicts_created: 1,
            conflicts_seen: 1,
            over_budget: 1,
            resynced_no_log: 1,
            resynced_no_common_session: 1,
        };
        let mut sum = one;
        sum.add(&one);
        // Every field doubled: a field left out of `add` would stay 1.
        let doubled = format!("{sum:?}");
        assert!(
            !doubled.contains(": 1,") && !doubled.contains(": 1 }"),
            "{doubled}"
        );
    }

    #[test]
    fn intervals_absorb_and_add() {
        let mut first = DevicesInterval::empty(1.0, 1.0);
        first.online = 5;
        first.counts.pulls = 2;
        let _ = first.pull.record(100);
        let mut second = DevicesInterval::empty(2.0, 1.0);
        second.online = 3;
        second.counts.pulls = 1;
        let _ = second.pull.record(300);
        let mut other = first.clone();
        other.add(&second);
        assert_eq!(
            (other.online, other.counts.pulls, other.pull.len()),
            (8, 3, 2)
        );
        first.absorb(second);
        assert_eq!(
            (first.online, first.counts.pulls, first.pull.len()),
            (3, 3, 2)
        );
        assert_eq!((first.elapsed_seconds, first.length_seconds), (2.0, 2.0));
    }

    #[test]
    fn convergence_adds_devices_and_keeps_samples_bounded() {
        let mut a = Convergence {
            checked: 4,
            converged: 3,
            diverged: vec![("n0-d1".into(), "x".into())],
            server_documents: 10,
            server_conflicts: 2,
            error: None,
        };
        let b = Convergence {
            checked: 20,
            converged: 8,
            diverged: (0..12).map(|i| (format!("n1-d{i}"), "y".into())).collect(),
            server_documents: 7,
            server_conflicts: 3,
            error: Some("down".into()),
        };
        a.add(&b);
        assert_eq!((a.checked, a.converged), (24, 11));
        assert_eq!(a.diverged.len(), MOST_SAMPLES);
        assert_eq!((a.server_documents, a.server_conflicts), (10, 3));
        assert_eq!(a.error.as_deref(), Some("down"));
    }
}
