//! Time to visible between the devices of this machine: a write made on device A,
//! from its push being acknowledged to device B storing that revision.
//!
//! A bounded table keyed by (database, document): each entry the document's latest
//! local write on this machine, the moment its push was acknowledged (none yet while it
//! waits to be pushed) and how many other devices still have to store it. A later write
//! of the same document replaces the entry (the devices that had not stored the earlier
//! one are counted as superseded: they will see the later one). A device storing a
//! revision before its push's answer came back counts 0, as the changes consumers do.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use hdrhistogram::Histogram;

pub use crate::metrics::devices::VisibleCounts;
use crate::metrics::recorder::{new_histogram, record_micros};
use crate::workload::rev::Rev;

/// The most writes tracked at once by default: an entry takes about 100 bytes.
pub const DEFAULT_ENTRIES: usize = 100_000;

struct Entry {
    rev: Rev,
    acknowledged: Option<Instant>,
    /// Devices that have still to store it.
    waiting: u32,
}

struct Inner {
    entries: HashMap<(u32, Box<str>), Entry>,
    times: Histogram<u64>,
    counts: VisibleCounts,
}

/// The table, shared by the devices of this machine.
pub struct VisibleTable {
    most: usize,
    inner: Mutex<Inner>,
}

impl VisibleTable {
    pub fn new(most: usize) -> VisibleTable {
        VisibleTable {
            most,
            inner: Mutex::new(Inner {
                entries: HashMap::new(),
                times: new_histogram(),
                counts: VisibleCounts::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A local write of `id` in database `database` as `rev`, which `watchers` other
    /// devices of this machine follow; nothing is tracked when none does.
    pub fn written(&self, database: u32, id: &str, rev: Rev, watchers: u32) {
        if watchers == 0 {
            return;
        }
        let mut inner = self.lock();
        let key = (database, Box::<str>::from(id));
        let entry = Entry {
            rev,
            acknowledged: None,
            waiting: watchers,
        };
        if let Some(old) = inner.entries.get_mut(&key) {
            let superseded = u64::from(std::mem::replace(old, entry).waiting);
            inner.counts.superseded += superseded;
            inner.counts.tracked += 1;
        } else if inner.entries.len() < self.most {
            inner.entries.insert(key, entry);
            inner.counts.tracked += 1;
        } else {
            inner.counts.untracked += 1;
        }
    }

    /// The server acknowledged `rev` of `id` at `at` (a push's answer).
    pub fn acknowledged(&self, database: u32, id: &str, rev: &Rev, at: Instant) {
        let mut inner = self.lock();
        if let Some(entry) = inner.entries.get_mut(&(database, Box::<str>::from(id)))
            && entry.rev == *rev
            && entry.acknowledged.is_none()
        {
            entry.acknowledged = Some(at);
        }
    }

    /// Another device stored `rev` of `id` at `at` (what its pull landed). Revisions
    /// the table does not hold are not this machine's latest writes: nothing to time.
    pub fn stored(&self, database: u32, id: &str, rev: &Rev, at: Instant) {
        let mut inner = self.lock();
        let key = (database, Box::<str>::from(id));
        let Some(entry) = inner.entries.get_mut(&key) else {
            return;
        };
        if entry.rev != *rev {
            return;
        }
        let time = entry
            .acknowledged
            .map(|acked| at.saturating_duration_since(acked));
        entry.waiting = entry.waiting.saturating_sub(1);
        if entry.waiting == 0 {
            inner.entries.remove(&key);
        }
        match time {
            Some(time) => record_micros(&mut inner.times, time.as_nanos() as u64),
            None => {
                inner.counts.early += 1;
                let _ = inner.times.record(0);
            }
        }
    }

    /// The times recorded since the last take, and the histogram emptied.
    pub fn take_times(&self) -> Histogram<u64> {
        let mut inner = self.lock();
        let empty = Histogram::new_from(&inner.times);
        std::mem::replace(&mut inner.times, empty)
    }

    /// The oldest acknowledged write some device has still to store, if any.
    pub fn oldest_waiting(&self) -> Option<Instant> {
        self.lock()
            .entries
            .values()
            .filter_map(|e| e.acknowledged)
            .min()
    }

    /// The counts, with every pair still waiting counted missing; the table empties.
    pub fn close(&self) -> VisibleCounts {
        let mut inner = self.lock();
        let missing: u64 = inner.entries.values().map(|e| u64::from(e.waiting)).sum();
        inner.entries.clear();
        inner.counts.missing += missing;
        inner.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rev(text: &str) -> Rev {
        Rev::parse(text).unwrap()
    }

    #[test]
    fn a_write_is_timed_from_its_acknowledgement_to_each_sighting() {
        let table = VisibleTable::new(10);
        let t0 = Instant::now();
        table.written(0, "a", rev("1-a"), 2);
        table.acknowledged(0, "a", &rev("1-a"), t0);
        table.stored(0, "a", &rev("1-a"), t0 + Duration::from_millis(5));
        table.stored(0, "a", &rev("1-a"), t0 + Duration::from_millis(9));
        // Both devices saw it: the entry is gone, a third sighting counts nothing.
        table.stored(0, "a", &rev("1-a"), t0 + Duration::from_millis(20));
        let times = table.take_times();
        assert_eq!(times.len(), 2);
        // Three significant digits: 9 ms within 0.1 %.
        assert!((8_990..=9_010).contains(&times.max()), "{}", times.max());
        assert!(table.take_times().is_empty());
        let counts = table.close();
        assert_eq!(counts.tracked, 1);
        assert_eq!(counts.missing, 0);
    }

    #[test]
    fn other_databases_and_other_revisions_do_not_match() {
        let table = VisibleTable::new(10);
        let t0 = Instant::now();
        table.written(0, "a", rev("2-b"), 1);
        table.acknowledged(0, "a", &rev("2-b"), t0);
        table.stored(1, "a", &rev("2-b"), t0);
        table.stored(0, "a", &rev("1-a"), t0);
        assert!(table.take_times().is_empty());
        assert_eq!(table.close().missing, 1);
    }

    #[test]
    fn a_sighting_before_the_answer_counts_zero_and_early() {
        let table = VisibleTable::new(10);
        let t0 = Instant::now();
        table.written(3, "x", rev("1-x"), 1);
        table.stored(3, "x", &rev("1-x"), t0);
        // The answer after: nothing left to time.
        table.acknowledged(3, "x", &rev("1-x"), t0);
        let times = table.take_times();
        assert_eq!((times.len(), times.max()), (1, 0));
        assert_eq!(table.close().early, 1);
    }

    #[test]
    fn a_later_write_supersedes_and_the_table_is_bounded() {
        let table = VisibleTable::new(2);
        table.written(0, "a", rev("1-a"), 3);
        table.written(0, "a", rev("2-a"), 3);
        table.written(0, "b", rev("1-b"), 1);
        table.written(0, "c", rev("1-c"), 1);
        // No watcher: not tracked at all.
        table.written(0, "d", rev("1-d"), 0);
        let counts = table.close();
        assert_eq!(counts.superseded, 3);
        assert_eq!(counts.tracked, 3);
        assert_eq!(counts.untracked, 1);
        assert_eq!(counts.missing, 4);
    }

    #[test]
    fn the_oldest_waiting_write_is_the_earliest_acknowledged() {
        let table = VisibleTable::new(10);
        let t0 = Instant::now();
        assert_eq!(table.oldest_waiting(), None);
        table.written(0, "a", rev("1-a"), 1);
        assert_eq!(table.oldest_waiting(), None);
        table.acknowledged(0, "a", &rev("1-a"), t0 + Duration::from_secs(1));
        table.written(0, "b", rev("1-b"), 1);
        table.acknowledged(0, "b", &rev("1-b"), t0);
        assert_eq!(table.oldest_waiting(), Some(t0));
    }
}
