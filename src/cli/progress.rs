//! The progress bar on standard error while a phase runs (only on a terminal), with the
//! latest live line redrawn in place above it: what stays on the screen after a run is
//! its report, not a line per interval. Not on a terminal, each live line is printed.

use std::sync::atomic::Ordering;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
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
        // The live line above the bar, cut to the terminal's width so that it stays one
        // line and is redrawn in place.
        let template = if by_time {
            "{wide_msg}\n{prefix:>11} [{elapsed_precise}] {wide_bar} {ops} ops"
        } else {
            "{wide_msg}\n{prefix:>11} [{elapsed_precise}] {wide_bar} {pos}/{len} ops  {per_sec}  eta {eta}"
        };
        let counted = done.clone();
        let style = ProgressStyle::with_template(template)
            .expect("the progress template is valid")
            .with_key(
                "ops",
                move |_: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = write!(out, "{}", counted.load(Ordering::Relaxed));
                },
            );
        bar.set_style(style);
        bar.set_prefix(phase.name.clone());
        let ticking = bar.clone();
        let started = std::time::Instant::now();
        let ticker = tokio::spawn(async move {
            loop {
                let ops = done.load(Ordering::Relaxed);
                if by_time {
                    ticking.set_position(started.elapsed().as_millis() as u64);
                } else {
                    ticking.set_position(ops);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Progress { bar, ticker }
    }

    /// Shows a live line: redrawn in place above the bar on a terminal, where it replaces
    /// the one before; else printed as a line of its own on standard error.
    pub fn live(&self, line: String) {
        if self.bar.is_hidden() {
            crate::text::sink::err(&line);
        } else {
            self.bar
                .set_message(crate::text::printable(line.trim_start()).into_owned());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.ticker.abort();
        self.bar.finish_and_clear();
    }
}
