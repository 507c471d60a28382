//! The writes waiting to be seen on the feeds, and the feeds' sightings waiting for
//! their writes.
//!
//! A write enters when its answer arrives (the writer's hook) and leaves once every
//! consumer has seen it. The table is bounded: a write that finds it full is not
//! tracked, and is counted as such (so the latencies are those of every write while
//! the consumers keep up, and of the first ones to come in when they fall far behind).
//!
//! A consumer can see a change before its write's answer arrives: the sighting waits
//! (bounded too) for the answer, which then counts it as seen at once: a latency of 0,
//! counted as early. A feed names only a document's latest revision, so a write the
//! consumer never saw because a later one of the same document came first counts as
//! superseded, not as missing.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::workload::Rev;

const SHARDS: usize = 32;

/// Writes waiting to be seen, at most.
pub const PENDING_LIMIT: usize = 131_072;

/// Sightings waiting for their write's answer, at most.
pub const EARLY_LIMIT: usize = 16_384;

struct Pending {
    rev: Rev,
    acknowledged: Instant,
    /// One bit per consumer that has seen it.
    seen: u64,
}

struct Early {
    rev: Rev,
    seen: u64,
}

#[derive(Default)]
struct Shard {
    pending: HashMap<Box<str>, Vec<Pending>>,
    pending_count: usize,
    early: HashMap<Box<str>, Vec<Early>>,
    early_count: usize,
}

/// What a consumer's sighting of one revision meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sighting {
    /// From the write's answer to the sighting, when it matched a tracked write.
    pub latency: Option<Duration>,
    /// Older writes of the document this consumer had not seen, now seen through this one.
    pub superseded: u64,
}

/// Counts kept beside the pending writes.
#[derive(Debug, Default)]
struct Counts {
    tracked: AtomicU64,
    untracked: AtomicU64,
    /// Sightings that came before their write's answer (each a latency of 0).
    early: AtomicU64,
    /// Sightings that matched no write and could not wait (the early table was full).
    unmatched: AtomicU64,
}

/// What the table holds at the end of a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leftover {
    pub tracked: u64,
    pub untracked: u64,
    pub early: u64,
    /// Writes some consumer never saw.
    pub missing_writes: u64,
    /// (write, consumer) pairs never seen.
    pub missing_sightings: u64,
    /// Changes seen that matched no write the run made while tracking.
    pub unmatched: u64,
}

impl Leftover {
    /// Adds another table's leftovers (another database's feed).
    pub fn add(&mut self, other: Leftover) {
        self.tracked += other.tracked;
        self.untracked += other.untracked;
        self.early += other.early;
        self.missing_writes += other.missing_writes;
        self.missing_sightings += other.missing_sightings;
        self.unmatched += other.unmatched;
    }
}

pub struct Table {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    /// The bits of every consumer.
    everyone: u64,
    counts: Counts,
    /// Writes waiting per shard, at most.
    pending_most: usize,
    /// Sightings waiting per shard, at most.
    early_most: usize,
}

impl Table {
    /// A table for `consumers` (1 to 64) consumers.
    pub fn new(consumers: u64) -> Table {
        Table::sharing(consumers, 1)
    }

    /// A table for `consumers` consumers, one of `tables` tables of a phase that share
    /// the limits (one per database followed), so that memory stays bounded however
    /// many databases the feeds follow.
    pub fn sharing(consumers: u64, tables: usize) -> Table {
        let consumers = consumers.clamp(1, 64);
        let per_shard = |limit: usize| (limit / SHARDS / tables.max(1)).max(1);
        Table {
            pending_most: per_shard(PENDING_LIMIT),
            early_most: per_shard(EARLY_LIMIT),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            everyone: if consumers == 64 {
                u64::MAX
            } else {
                (1 << consumers) - 1
            },
            counts: Counts::default(),
        }
    }

    fn shard(&self, id: &str) -> std::sync::MutexGuard<'_, Shard> {
        let at = self.hasher.hash_one(id) as usize % SHARDS;
        self.shards[at].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server acknowledged writing `rev` of document `id` at `at`.
    pub fn acknowledged(&self, id: &str, rev: Rev, at: Instant) {
        let mut shard = self.shard(id);
        let seen = take_early(&mut shard, id, &rev);
        self.counts
            .early
            .fetch_add(u64::from(seen.count_ones()), Ordering::Relaxed);
        self.counts.tracked.fetch_add(1, Ordering::Relaxed);
        if seen == self.everyone {
            return;
        }
        if shard.pending_count >= self.pending_most {
            self.counts.tracked.fetch_sub(1, Ordering::Relaxed);
            self.counts.untracked.fetch_add(1, Ordering::Relaxed);
            return;
        }
        shard.pending_count += 1;
        let entry = Pending {
            rev,
            acknowledged: at,
            seen,
        };
        shard.pending.entry(id.into()).or_default().push(entry);
    }

    /// Consumer `consumer` (from 0) saw revision `rev` of document `id` at `at`.
    pub fn sighted(&self, consumer: u64, id: &str, rev: &Rev, at: Instant) -> Sighting {
        let bit = 1u64 << consumer.min(63);
        let mut shard = self.shard(id);
        let mut sighting = Sighting {
            latency: None,
            superseded: 0,
        };
        let mut done = 0;
        if let Some(writes) = shard.pending.get_mut(id) {
            for write in writes.iter_mut().filter(|w| w.seen & bit == 0) {
                if write.rev == *rev {
                    sighting.latency = Some(at.saturating_duration_since(write.acknowledged));
                } else if write.rev.generation() < rev.generation() {
                    sighting.superseded += 1;
                } else {
                    continue;
                }
                write.seen |= bit;
            }
            let before = writes.len();
            writes.retain(|w| w.seen != self.everyone);
            done = before - writes.len();
            if writes.is_empty() {
                shard.pending.remove(id);
            }
        }
        shard.pending_count -= done;
        if sighting.latency.is_none() {
            self.wait_for_write(&mut shard, bit, id, rev);
        }
        sighting
    }

    /// A sighting with no write (yet): kept for the write's answer, if there is room.
    fn wait_for_write(&self, shard: &mut Shard, bit: u64, id: &str, rev: &Rev) {
        if let Some(early) = shard
            .early
            .get_mut(id)
            .and_then(|e| e.iter_mut().find(|e| e.rev == *rev))
        {
            early.seen |= bit;
            return;
        }
        if shard.early_count >= self.early_most {
            self.counts.unmatched.fetch_add(1, Ordering::Relaxed);
            return;
        }
        shard.early_count += 1;
        let early = Early {
            rev: rev.clone(),
            seen: bit,
        };
        shard.early.entry(id.into()).or_default().push(early);
    }

    /// Writes not yet seen by every consumer.
    pub fn pending(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).pending_count as u64)
            .sum()
    }

    /// The answer time of the oldest write some consumer has not seen yet.
    pub fn oldest_pending(&self) -> Option<Instant> {
        self.shards
            .iter()
            .filter_map(|s| {
                let shard = s.lock().unwrap_or_else(|p| p.into_inner());
                let writes = shard.pending.values().flatten();
                writes.map(|w| w.acknowledged).min()
            })
            .min()
    }

    /// What is left once the consumers have stopped.
    pub fn leftover(&self) -> Leftover {
        let mut left = Leftover {
            tracked: self.counts.tracked.load(Ordering::Relaxed),
            untracked: self.counts.untracked.load(Ordering::Relaxed),
            early: self.counts.early.load(Ordering::Relaxed),
            unmatched: self.counts.unmatched.load(Ordering::Relaxed),
            ..Leftover::default()
        };
        for shard in self.shards.iter() {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for write in shard.pending.values().flatten() {
                left.missing_writes += 1;
                left.missing_sightings += u64::from((self.everyone & !write.seen).count_ones());
            }
            left.unmatched += shard.early_count as u64;
        }
        left
    }
}

/// The consumers that saw `rev` of `id` before its answer came, taken out of waiting.
fn take_early(shard: &mut Shard, id: &str, rev: &Rev) -> u64 {
    let Some(waiting) = shard.early.get_mut(id) else {
        return 0;
    };
    let Some(at) = waiting.iter().position(|e| e.rev == *rev) else {
        return 0;
    };
    let seen = waiting.swap_remove(at).seen;
    if waiting.is_empty() {
        shard.early.remove(id);
    }
    shard.early_count -= 1;
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(generation: u32) -> Rev {
        Rev::parse(&format!("{generation}-0123456789abcdef0123456789abcdef")).unwrap()
    }

    #[test]
    fn a_write_leaves_once_every_consumer_saw_it() {
        let table = Table::new(2);
        let t0 = Instant::now();
        table.acknowledged("a", rev(1), t0);
        let later = t0 + Duration::from_millis(7);
        let first = table.sighted(0, "a", &rev(1), later);
        assert_eq!(first.latency, Some(Duration::from_millis(7)));
        assert_eq!(table.pending(), 1);
        // Seen twice by the same consumer (a reconnect going back): no second latency.
        assert_eq!(table.sighted(0, "a", &rev(1), later).latency, None);
        assert!(table.sighted(1, "a", &rev(1), later).latency.is_some());
        assert_eq!(table.pending(), 0);
        let left = table.leftover();
        assert_eq!((left.tracked, left.missing_writes, left.early), (1, 0, 0));
        // The repeat waited for a write that never came: unmatched, not lost.
        assert_eq!(left.unmatched, 1);
    }

    #[test]
    fn a_sighting_before_the_answer_counts_early() {
        let table = Table::new(1);
        let t0 = Instant::now();
        assert_eq!(table.sighted(0, "a", &rev(1), t0).latency, None);
        table.acknowledged("a", rev(1), t0 + Duration::from_millis(3));
        let left = table.leftover();
        assert_eq!((left.tracked, left.early, left.unmatched), (1, 1, 0));
        assert_eq!(table.pending(), 0);
    }

    #[test]
    fn a_later_revision_supersedes_the_unseen_ones() {
        let table = Table::new(1);
        let t0 = Instant::now();
        table.acknowledged("a", rev(1), t0);
        table.acknowledged("a", rev(2), t0);
        let seen = table.sighted(0, "a", &rev(2), t0);
        assert_eq!(seen.superseded, 1);
        assert!(seen.latency.is_some());
        assert_eq!(table.pending(), 0);
    }

    #[test]
    fn unseen_writes_are_counted_per_consumer() {
        let table = Table::new(3);
        let t0 = Instant::now();
        table.acknowledged("a", rev(1), t0);
        table.acknowledged("b", rev(1), t0 + Duration::from_secs(1));
        table.sighted(2, "a", &rev(1), t0);
        assert_eq!(table.oldest_pending(), Some(t0));
        let left = table.leftover();
        assert_eq!((left.missing_writes, left.missing_sightings), (2, 5));
    }

    #[test]
    fn a_full_table_counts_what_it_cannot_track() {
        let table = Table::new(1);
        let t0 = Instant::now();
        let writes = PENDING_LIMIT as u64 + 500;
        for i in 0..writes {
            table.acknowledged(&format!("d{i}"), rev(1), t0);
        }
        let left = table.leftover();
        assert_eq!(left.tracked + left.untracked, writes);
        assert!(left.untracked >= 500);
        assert_eq!(table.pending(), left.tracked);
    }

    #[test]
    fn tables_of_many_databases_share_one_bound() {
        // Four databases' tables hold no more together than one table alone.
        let tables: Vec<Table> = (0..4).map(|_| Table::sharing(2, 4)).collect();
        let t0 = Instant::now();
        for i in 0..PENDING_LIMIT as u64 {
            tables[i as usize % 4].acknowledged(&format!("d{i}"), rev(1), t0);
        }
        let pending: u64 = tables.iter().map(Table::pending).sum();
        assert!(pending <= PENDING_LIMIT as u64, "{pending}");
        assert!(pending > PENDING_LIMIT as u64 / 2, "{pending}");
        let mut left = Leftover::default();
        tables.iter().for_each(|t| left.add(t.leftover()));
        assert_eq!(left.tracked + left.untracked, PENDING_LIMIT as u64);
        assert_eq!(left.missing_writes, pending);
        assert_eq!(left.missing_sightings, 2 * pending);
    }
}
