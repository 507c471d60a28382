//! Where this machine's devices put what they measured: the phase's figures and the
//! current interval's, behind one lock taken once per sync cycle (never per request),
//! and the devices online and feeds open as counters the sampler reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::metrics::coarse::Series;
use crate::metrics::devices::{DeviceCounts, DeviceFigures, DevicesInterval, keep_sample};
use crate::metrics::recorder::record_micros;

use super::budget::{CycleShape, Direction, budget};
use super::visible::VisibleTable;

/// What one cycle did, as the fleet records it.
#[derive(Clone, Copy, Debug)]
pub struct CycleFigures {
    pub direction: Direction,
    pub requests: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub checkpoint_writes: u64,
    pub shape: CycleShape,
    pub conflicts_seen: u64,
    /// Revisions the cycle could not write: refused by the server (push), or not
    /// usable (pull).
    pub failures: u64,
    /// The cycle's time: from its start (a live pull's: its feed's answer) to its end.
    pub time: Duration,
}

#[derive(Default)]
struct Sums {
    figures: DeviceFigures,
    counts: DeviceCounts,
    over_budget: Vec<String>,
    failures: Vec<String>,
}

struct Now {
    counts: DeviceCounts,
    push: hdrhistogram::Histogram<u64>,
    pull: hdrhistogram::Histogram<u64>,
}

impl Default for Now {
    fn default() -> Now {
        let fresh = DevicesInterval::empty(0.0, 0.0);
        Now {
            counts: DeviceCounts::default(),
            push: fresh.push,
            pull: fresh.pull,
        }
    }
}

/// The fleet's figures on this machine.
pub struct Figures {
    pub batch_size: u32,
    pub online: AtomicU64,
    pub feeds_open: Arc<AtomicU64>,
    pub visible: VisibleTable,
    sums: Mutex<Sums>,
    now: Mutex<Now>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Figures {
    pub fn new(batch_size: u32, visible: VisibleTable) -> Figures {
        Figures {
            batch_size,
            online: AtomicU64::new(0),
            feeds_open: Arc::new(AtomicU64::new(0)),
            visible,
            sums: Mutex::new(Sums::default()),
            now: Mutex::new(Now::default()),
        }
    }

    /// Adds to the counts of the phase and of the interval.
    pub fn count(&self, add: impl Fn(&mut DeviceCounts)) {
        add(&mut lock(&self.sums).counts);
        add(&mut lock(&self.now).counts);
    }

    /// A cycle of `device`, held against the budget.
    pub fn cycle(&self, device: &str, c: &CycleFigures) {
        let allowed = budget(c.direction, c.shape, self.batch_size);
        let over = c.requests > allowed;
        let add = |counts: &mut DeviceCounts| {
            match c.direction {
                Direction::Push if c.requests == 0 => counts.empty_pushes += 1,
                Direction::Push => {
                    counts.pushes += 1;
                    counts.pushed += c.shape.written;
                    counts.push_refused += c.failures;
                }
                Direction::Pull => {
                    counts.pulls += 1;
                    counts.changes_read += c.shape.changes_read;
                    counts.pulled += c.shape.written;
                    counts.conflicts_seen += c.conflicts_seen;
                    counts.pull_failures += c.failures;
                }
            }
            counts.requests += c.requests;
            counts.bytes_sent += c.bytes_sent;
            counts.bytes_received += c.bytes_received;
            counts.checkpoint_writes += c.checkpoint_writes;
            counts.over_budget += u64::from(over);
        };
        let nanos = c.time.as_nanos() as u64;
        {
            let mut sums = lock(&self.sums);
            add(&mut sums.counts);
            if c.requests > 0 {
                let _ = sums.figures.requests.record(c.requests);
                let _ = sums.figures.bytes.record(c.bytes_sent + c.bytes_received);
                match c.direction {
                    Direction::Push => record_micros(&mut sums.figures.push, nanos),
                    Direction::Pull => record_micros(&mut sums.figures.pull, nanos),
                }
            }
            if over {
                keep_sample(&mut sums.over_budget, || {
                    format!(
                        "{device} {}: {} requests, budget {allowed} ({} changes, {} lacking)",
                        c.direction.name(),
                        c.requests,
                        c.shape.changes_read,
                        c.shape.missing
                    )
                });
            }
        }
        let mut now = lock(&self.now);
        add(&mut now.counts);
        if c.requests > 0 {
            match c.direction {
                Direction::Push => record_micros(&mut now.push, nanos),
                Direction::Pull => record_micros(&mut now.pull, nanos),
            }
        }
    }

    /// A cycle of `device` that failed.
    pub fn failed(&self, device: &str, direction: Direction, why: &str) {
        self.count(|counts| match direction {
            Direction::Push => counts.failed_pushes += 1,
            Direction::Pull => counts.failed_pulls += 1,
        });
        keep_sample(&mut lock(&self.sums).failures, || {
            format!(
                "{device} {}: {}",
                direction.name(),
                crate::text::cut(why, 300)
            )
        });
    }

    /// A push of `device` that went through with `revisions` refused by the server,
    /// the first of them answered with `said` (already counted with its cycle).
    pub fn refused(&self, device: &str, revisions: u64, said: &str) {
        keep_sample(&mut lock(&self.sums).failures, || {
            format!(
                "{device} push: {revisions} revisions refused by the server: {}",
                crate::text::cut(said, 300)
            )
        });
    }

    /// A cold device's initial sync: `time` from joining, `documents` stored.
    pub fn initial_sync(&self, time: Duration, documents: u64) {
        let mut sums = lock(&self.sums);
        record_micros(&mut sums.figures.initial_sync, time.as_nanos() as u64);
        let seconds = time.as_secs_f64();
        if seconds > 0.0 {
            let _ = sums
                .figures
                .initial_docs_per_second
                .record((documents as f64 / seconds).round() as u64);
        }
    }

    /// A device's catch-up after being offline.
    pub fn caught_up(&self, time: Duration) {
        record_micros(
            &mut lock(&self.sums).figures.catch_up,
            time.as_nanos() as u64,
        );
    }

    /// The interval ending now, `started` being the phase's start and `length` its length.
    pub fn take_interval(&self, started: Instant, length: Duration) -> DevicesInterval {
        let taken = std::mem::take(&mut *lock(&self.now));
        let visible = self.visible.take_times();
        let _ = lock(&self.sums).figures.visible.add(&visible);
        DevicesInterval {
            elapsed_seconds: started.elapsed().as_secs_f64(),
            length_seconds: length.as_secs_f64(),
            online: self.online.load(Ordering::Relaxed),
            feeds_open: self.feeds_open.load(Ordering::Relaxed),
            counts: taken.counts,
            visible,
            push: taken.push,
            pull: taken.pull,
        }
    }

    /// The phase's figures, counts and samples (what the intervals have not taken of
    /// the time-to-visible table is added first).
    pub fn take_phase(&self) -> (DeviceFigures, DeviceCounts, Vec<String>, Vec<String>) {
        let visible = self.visible.take_times();
        let mut sums = lock(&self.sums);
        let _ = sums.figures.visible.add(&visible);
        let sums = std::mem::take(&mut *sums);
        (sums.figures, sums.counts, sums.over_budget, sums.failures)
    }
}

/// Takes the figures once per interval from the phase's start into `out`.
pub async fn sample(
    figures: Arc<Figures>,
    out: Arc<Mutex<Series<DevicesInterval>>>,
    (started, interval): (Instant, Duration),
) {
    let interval = interval.max(Duration::from_millis(1));
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::from_std(started) + interval, interval);
    let mut last = started;
    loop {
        ticks.tick().await;
        let now = Instant::now();
        let row = figures.take_interval(started, now.saturating_duration_since(last));
        lock(&out).push(row);
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pull(requests: u64, changes: u64, missing: u64) -> CycleFigures {
        CycleFigures {
            direction: Direction::Pull,
            requests,
            bytes_sent: 10,
            bytes_received: 100,
            checkpoint_writes: u64::from(changes > 0),
            shape: CycleShape {
                changes_read: changes,
                missing,
                written: missing,
                read_log: false,
                log_moved: changes > 0,
            },
            conflicts_seen: 0,
            failures: 0,
            time: Duration::from_millis(3),
        }
    }

    #[test]
    fn cycles_over_budget_are_counted_and_named() {
        let figures = Figures::new(100, VisibleTable::new(10));
        figures.cycle("n0-d1", &pull(1, 0, 0));
        figures.cycle("n0-d1", &pull(3, 1, 1));
        figures.cycle("n0-d2", &pull(5, 1, 1));
        let empty_push = CycleFigures {
            direction: Direction::Push,
            requests: 0,
            ..pull(0, 0, 0)
        };
        figures.cycle("n0-d2", &empty_push);
        let interval = figures.take_interval(Instant::now(), Duration::from_secs(1));
        assert_eq!(interval.counts.pulls, 3);
        assert_eq!(interval.counts.empty_pushes, 1);
        assert_eq!(interval.counts.over_budget, 1);
        assert_eq!(interval.pull.len(), 3);
        let (phase, counts, over, failures) = figures.take_phase();
        assert_eq!((counts.requests, counts.over_budget), (9, 1));
        // The empty push is no cycle of requests.
        assert_eq!(phase.requests.len(), 3);
        assert_eq!(
            over,
            ["n0-d2 pull: 5 requests, budget 3 (1 changes, 1 lacking)"]
        );
        assert!(failures.is_empty());
        // The interval was taken: the next one is empty.
        let next = figures.take_interval(Instant::now(), Duration::from_secs(1));
        assert_eq!(next.counts, DeviceCounts::default());
    }
}
