//! The command line's observer of a run: a progress bar while a phase runs (only on a
//! terminal) with the latest live line redrawn above it, a live line per interval when
//! standard error is not a terminal, or nothing under `--quiet`.

use std::sync::Mutex;
use std::time::Duration;

use super::progress::Progress;
use crate::engine::observer::{Observer, PhaseStart};
use crate::metrics::IntervalRow;
use crate::report::live;

/// Intervals shorter than this (the stub a phase's end leaves) are kept but not shown.
const SHORTEST_SHOWN: f64 = 0.05;

/// Draws the progress bar and the live lines on standard error.
pub struct Terminal {
    progress: Mutex<Option<Progress>>,
    /// `--interval`, seconds: a shorter interval is given as counts, not rates.
    interval: f64,
}

impl Terminal {
    pub fn new(interval: Duration) -> Terminal {
        Terminal {
            progress: Mutex::new(None),
            interval: interval.as_secs_f64(),
        }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Option<Progress>> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Observer for Terminal {
    fn phase_started(&self, phase: &PhaseStart) {
        *self.progress() = Some(Progress::start(phase));
    }

    fn interval(&self, row: &IntervalRow, target_rate: Option<f64>) {
        if row.length <= SHORTEST_SHOWN {
            return;
        }
        let partial = live::is_partial(row.length, self.interval);
        let line = live::line(row, target_rate, partial);
        match &*self.progress() {
            Some(progress) => progress.live(line),
            None => crate::text::sink::err(&line),
        }
    }

    fn phase_ended(&self) {
        // Dropping the bar clears it.
        self.progress().take();
    }
}
