//! Looks at the database's sizes once per interval while a phase runs, in a task of its
//! own: the monitor takes the latest look when it closes an interval and never waits for
//! one, so a slow or failing `GET /db` leaves that interval's sizes unknown and nothing
//! else late.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::{DiskSizes, Looker};
use crate::engine::stop::Signal;

/// The look answered since the monitor last took one, if any.
pub type DiskSlot = Arc<Mutex<Option<DiskSizes>>>;

/// The looking task of one phase; stopped when dropped.
pub struct DiskSampler {
    slot: DiskSlot,
    task: JoinHandle<()>,
}

impl DiskSampler {
    /// Looks every `interval` from now (the first look at once) with `looker`, timing
    /// the looks from `phase_start`, until `stop` (Ctrl-C: nothing more is sent).
    pub fn start(
        mut looker: Looker,
        phase_start: Instant,
        interval: Duration,
        stop: Signal,
    ) -> DiskSampler {
        let slot = DiskSlot::default();
        let filled = slot.clone();
        let task = tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            // A look that took longer than an interval moves the next one later rather
            // than sending two at once.
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                if stop.is_raised() {
                    return;
                }
                if let Some(sizes) = looker.look(phase_start).await {
                    *filled.lock().unwrap_or_else(|p| p.into_inner()) = Some(sizes);
                }
            }
        });
        DiskSampler { slot, task }
    }

    /// Where the looks land, for the monitor to take them from.
    pub fn slot(&self) -> DiskSlot {
        self.slot.clone()
    }
}

impl Drop for DiskSampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The look that landed since the last call; `None` when none did (it failed, timed out
/// or is still on its way).
pub fn take(slot: &DiskSlot) -> Option<DiskSizes> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}
