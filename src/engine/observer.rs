//! What the engine tells whoever watches a run, as oha's workers send their results to a
//! monitor: the engine reports, the observer decides what to show. The command line's
//! observer draws a progress bar and live lines; tests keep the rows; `--quiet` drops all.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::metrics::IntervalRow;

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
    /// The phase ended (its last interval was reported).
    fn phase_ended(&self) {}
}

/// Shows nothing (`--quiet`, and tests).
pub struct Silent;

impl Observer for Silent {}
