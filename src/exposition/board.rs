//! The observer that keeps the endpoint's figures: the monitor tells it of every closed
//! interval, it adds the interval up and publishes a copy. A scrape takes the latest
//! copy and renders it on the endpoint's own thread, so scrapers never touch the
//! recorders, the monitor's lock or the runtime that measures.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use super::figures::Figures;
use crate::engine::observer::{Observer, PhaseStart};
use crate::metrics::{IntervalMetrics, IntervalRow};

/// Adds up what the monitor reports, and publishes it.
pub struct Board {
    /// Only the monitor's task and the run's end change these.
    figures: Mutex<Figures>,
    published: watch::Sender<Arc<Figures>>,
}

impl Board {
    pub fn new() -> Board {
        Board {
            figures: Mutex::new(Figures::default()),
            published: watch::Sender::new(Arc::new(Figures::default())),
        }
    }

    /// Where the latest figures are read from.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Figures>> {
        self.published.subscribe()
    }

    /// The run's phases are over: what was published last is final. Whether any phase
    /// began.
    pub fn finish(&self) -> bool {
        let mut figures = self.figures();
        figures.finished = true;
        self.publish(&figures);
        figures.phase.is_some()
    }

    fn figures(&self) -> MutexGuard<'_, Figures> {
        self.figures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy for the scrapers: a few kilobytes, once per interval.
    fn publish(&self, figures: &Figures) {
        self.published.send_replace(Arc::new(figures.clone()));
    }
}

impl Observer for Board {
    fn phase_started(&self, phase: &PhaseStart) {
        let mut figures = self.figures();
        figures.start_phase(&phase.name);
        self.publish(&figures);
    }

    fn interval_closed(
        &self,
        metrics: &IntervalMetrics,
        row: &IntervalRow,
        target_rate: Option<f64>,
    ) {
        let mut figures = self.figures();
        figures.add_interval(metrics, row, target_rate);
        self.publish(&figures);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Operation;

    #[test]
    fn every_interval_and_phase_is_published_and_the_end_marked() {
        let board = Board::new();
        let latest = board.subscribe();
        board.phase_started(&PhaseStart {
            name: "crud".to_string(),
            total: None,
            duration: None,
            done: Default::default(),
        });
        assert_eq!(latest.borrow().phase.as_ref().unwrap().name, "crud");
        let mut metrics = IntervalMetrics::default();
        metrics.succeeded(Operation::Create, 1_000_000);
        let row = metrics.row(1.0, 1.0, 0.0);
        board.interval_closed(&metrics, &row, None);
        board.interval_closed(&metrics, &row, None);
        assert_eq!(latest.borrow().operations[Operation::Create].succeeded, 2);
        assert!(!latest.borrow().finished);
        assert!(board.finish(), "a phase began");
        assert!(latest.borrow().finished);
        assert!(!Board::new().finish(), "no phase began");
    }
}
