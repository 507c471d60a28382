//! What the engine tells whoever watches a run, as oha's workers send their results to a
//! monitor: the engine reports, the observer decides what to show. The command line's
//! observer draws a progress bar and live lines; tests keep the rows; `--quiet` drops all.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::metrics::{IntervalMetrics, IntervalRow};

/// A phase as it starts, for a progress display.
#[derive(Clone, Debug)]
pub struct PhaseStart {
    pub name: String,
    /// Operations of all connections, when counted.
    pub total: Option<u64>,
    /// The phase's time bound, if it has one.
    pub duration: Option<Duration>,
    /// Operations finished so far, counted by the connections as they go.
    pub done: Arc<AtomicU64>,
}

/// Receives a run's progress and its interval rows; called from the engine's tasks, so
/// it must not block for long.
pub trait Observer: Send + Sync {
    /// A phase begins.
    fn phase_started(&self, _phase: &PhaseStart) {}
    /// An interval closed; `target_rate` is this node's operations per second under an
    /// open model. The row is kept for the result whatever the observer does with it.
    fn interval(&self, _row: &IntervalRow, _target_rate: Option<f64>) {}
    /// An interval closed, with everything recorded in it (`metrics`: its whole
    /// histograms and failures by kind, which the row sums up): what the monitor tells
    /// observers. Observers that need only the row leave this to call [`Observer::interval`].
    fn interval_closed(
        &self,
        _metrics: &IntervalMetrics,
        row: &IntervalRow,
        target_rate: Option<f64>,
    ) {
        self.interval(row, target_rate);
    }
    /// The phase ended (its last interval was reported).
    fn phase_ended(&self) {}
}

/// Shows nothing (`--quiet`, and tests).
pub struct Silent;

impl Observer for Silent {}

/// Several observers, told the same things in turn (the terminal and the live metrics
/// endpoint).
pub struct Observers(pub Vec<Arc<dyn Observer>>);

impl Observer for Observers {
    fn phase_started(&self, phase: &PhaseStart) {
        self.0.iter().for_each(|o| o.phase_started(phase));
    }

    fn interval(&self, row: &IntervalRow, target_rate: Option<f64>) {
        self.0.iter().for_each(|o| o.interval(row, target_rate));
    }

    fn interval_closed(
        &self,
        metrics: &IntervalMetrics,
        row: &IntervalRow,
        target_rate: Option<f64>,
    ) {
        for observer in &self.0 {
            observer.interval_closed(metrics, row, target_rate);
        }
    }

    fn phase_ended(&self) {
        self.0.iter().for_each(|o| o.phase_ended());
    }
}
