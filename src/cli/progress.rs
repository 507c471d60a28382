//! The progress bar on standard error while a phase runs (only on a terminal).

use std::sync::atomic::Ordering;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::task::JoinHandle;

use crate::engine::observer::PhaseStart;

/// Shows a step's progress until dropped.
pub struct Progress {
    bar: ProgressBar,
    ticker: JoinHandle<()>,
}

impl Progress {
    /// Starts showing the phase's finished operations: of its total with an ETA when it
    /// is counted, the elapsed part of its duration when only time bounds it. Draws
    /// nothing when standard error is not a terminal.
    pub fn start(phase: &PhaseStart) -> Progress {
        let (total, duration, done) = (phase.total, phase.duration, phase.done.clone());
        let target = ProgressDrawTarget::stderr_with_hz(10);
        let by_time = total.is_none() && duration.is_some();
        let length = if by_time {
            duration.map(|d| d.as_millis() as u64)
        } else {
            total
        };
        let bar = ProgressBar::with_draw_target(length, target);
        let template = if by_time {
            "{prefix:>11} [{elapsed_precise}] {wide_bar} {msg}"
        } else {
            "{prefix:>11} [{elapsed_precise}] {wide_bar} {pos}/{len} ops  {per_sec}  eta {eta}"
        };
        bar.set_style(
            ProgressStyle::with_template(template).expect("the progress template is valid"),
        );
        bar.set_prefix(phase.name.clone());
        let ticking = bar.clone();
        let started = std::time::Instant::now();
        let ticker = tokio::spawn(async move {
            loop {
                let ops = done.load(Ordering::Relaxed);
                if by_time {
                    ticking.set_position(started.elapsed().as_millis() as u64);
                    ticking.set_message(format!("{ops} ops"));
                } else {
                    ticking.set_position(ops);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Progress { bar, ticker }
    }

    /// Prints `line` above the bar, or as a plain line on standard error when the bar is
    /// not drawn (not a terminal).
    pub fn println(&self, line: String) {
        if self.bar.is_hidden() {
            crate::text::sink::err(&line);
        } else {
            self.bar.println(crate::text::printable(&line));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.ticker.abort();
        self.bar.finish_and_clear();
    }
}
