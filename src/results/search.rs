//! A rate search as the result file keeps it: what was searched, each step, and the
//! answer. Every step is also a phase of the result (`phases`), with all its figures.

use serde::{Deserialize, Serialize};

/// `--search-rate`: the highest rate at which the searched phase met every threshold.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SearchResult {
    /// The scenario's phase that was searched; its steps are the phases
    /// `<phase>@<rate>` of the result (`crud@250`, `crud@1410`, …).
    pub phase: String,
    /// The range searched, operations per second.
    pub low: f64,
    pub high: f64,
    /// Each step's duration, seconds.
    pub step_seconds: f64,
    /// The most steps allowed (`--search-steps`).
    pub most_steps: u32,
    /// The search ends when the highest rate that met and the lowest that failed are
    /// this close, as a fraction (`--search-precision`; 0.05 is 5%).
    pub precision: f64,
    /// The thresholds every step was held to, as given.
    pub thresholds: Vec<String>,
    /// The steps in the order they ran.
    pub steps: Vec<SearchStep>,
    /// The highest rate that met, operations per second; `None` when none did.
    pub answer: Option<f64>,
    /// The lowest rate that failed, when one did.
    pub lowest_failed: Option<f64>,
    /// Why the search ended: `converged`, `most_steps`, `top_met`, `bottom_failed` or
    /// `interrupted`.
    pub ending: String,
}

/// One step: the searched phase run at one rate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SearchStep {
    /// The step's phase in the result's `phases`.
    pub phase: String,
    /// The rate tried, operations per second.
    pub rate: f64,
    /// Successful operations per second of the step's wall-clock time.
    pub achieved: f64,
    /// The 99th percentile of every operation's response time (from its scheduled
    /// start), milliseconds; `None` when nothing succeeded.
    pub p99_ms: Option<f64>,
    /// Operations that started late.
    pub late: u64,
    /// Failed operations (a bulk insert's failed documents), writes whose outcome is
    /// unknown, and operations not run.
    pub failed: u64,
    /// Whether the step met: it achieved its rate and every threshold held (and nothing
    /// failed, unless a threshold on errors says how many may).
    pub meets: bool,
    /// Why it did not meet, one reason each; empty when it met.
    pub reasons: Vec<String>,
    /// Stopped by Ctrl-C before its end: neither met nor failed, and left out of the
    /// answer; absent when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}
