//! The progress bar on standard error while a step runs (only on a terminal).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::task::JoinHandle;

/// Shows a step's progress until dropped.
pub struct Progress {
    bar: ProgressBar,
    ticker: JoinHandle<()>,
}

impl Progress {
    /// Starts showing `done` out of `total` operations; draws nothing when `visible` is
    /// false or standard error is not a terminal.
    pub fn start(label: &str, total: u64, done: Arc<AtomicU64>, visible: bool) -> Progress {
        let target = if visible {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>11} [{elapsed_precise}] {wide_bar} {pos}/{len} ops  {per_sec}  eta {eta}",
            )
            .expect("the progress template is valid"),
        );
        bar.set_prefix(label.to_string());
        let ticking = bar.clone();
        let ticker = tokio::spawn(async move {
            loop {
                ticking.set_position(done.load(Ordering::Relaxed));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Progress { bar, ticker }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.ticker.abort();
        self.bar.finish_and_clear();
    }
}
