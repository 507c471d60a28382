//! The whole run on one time axis: every phase where it happened, with totals over all
//! operations, whatever the number of phases (a chart has a line per quantity, never
//! one per phase; the phases are bands behind the lines).

use std::collections::BTreeMap;

use serde::Serialize;

use super::measures::{self, bulk_documents, failures, interval_histogram, quantile_ms, rate};
use super::steps::Steps;
use crate::results::{IntervalResult, PhaseResult, RunResult};

/// The columns of the run's chart data, in the order [`values`] gives them.
const COLUMNS: [&str; 12] = [
    "throughput",
    "target",
    "documents",
    "p50",
    "p99",
    "timeout",
    "429, failed",
    "other failure",
    "429, sent again",
    "late",
    "cpu",
    "machine_cpu",
];

/// What the run's charts draw.
#[derive(Serialize)]
pub struct RunCharts {
    /// Seconds since the first phase started.
    pub x: Vec<f64>,
    /// By the names of [`COLUMNS`].
    pub series: BTreeMap<&'static str, Vec<Option<f64>>>,
    pub phases: Vec<PhaseSpan>,
}

/// Where a phase lies on the run's time axis.
#[derive(Serialize)]
pub struct PhaseSpan {
    pub name: String,
    pub start: f64,
    pub end: f64,
}

impl RunCharts {
    /// Whether a series has anything to draw (a rate, bulk inserts, the machine's CPU).
    pub fn has(&self, name: &str) -> bool {
        self.series
            .get(name)
            .is_some_and(|values| values.iter().any(Option::is_some))
    }
}

/// One interval's values, in the order of [`COLUMNS`].
fn values(phase: &PhaseResult, interval: &IntervalResult) -> Vec<Option<f64>> {
    let h = interval_histogram(interval);
    let failed = failures(interval);
    let bulk = phase
        .operations
        .iter()
        .any(|o| o.operation == "bulk_insert");
    let mut values = vec![
        rate(measures::succeeded(interval), interval),
        // The interval's own target follows a ramp (see phase_charts).
        interval.target_rate.or(phase.target_rate),
        if bulk {
            bulk_documents(interval).and_then(|n| rate(n, interval))
        } else {
            None
        },
        quantile_ms(&h, 0.5),
        quantile_ms(&h, 0.99),
    ];
    values.extend(failed.kinds().map(|(_, n)| rate(n, interval)));
    values.extend([
        phase
            .target_rate
            .and_then(|_| rate(interval.late, interval)),
        Some(interval.cpu * 100.0),
        interval.machine_cpu.map(|c| c * 100.0),
    ]);
    values
}

/// The run's charts: each phase placed at its start, seconds after the first phase's.
pub fn run_charts(result: &RunResult) -> RunCharts {
    let first = result
        .phases
        .iter()
        .map(|p| p.started_at_ms)
        .min()
        .unwrap_or(0);
    let mut steps = Steps::new(COLUMNS.len());
    let mut phases = Vec::new();
    for phase in &result.phases {
        let start = phase.started_at_ms.saturating_sub(first) as f64 / 1_000.0;
        steps.phase(start, phase, |interval| values(phase, interval));
        let last = phase.intervals.last().map_or(0.0, |i| i.elapsed_seconds);
        phases.push(PhaseSpan {
            name: phase.name.clone(),
            start,
            end: start + phase.wall_seconds.max(last),
        });
    }
    RunCharts {
        x: steps.x,
        series: COLUMNS.into_iter().zip(steps.columns).collect(),
        phases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_lie_on_one_axis_with_their_totals() {
        let mut result = crate::export::sample::result();
        let mut second = result.phases[0].clone();
        second.name = "again".to_string();
        second.started_at_ms += 10_000;
        second.target_rate = Some(50.0);
        // A ramp: the second interval's own target (its mean) is drawn, not the phase's.
        second.intervals[1].target_rate = Some(70.0);
        result.phases.push(second);
        let charts = run_charts(&result);
        let spans: Vec<(f64, f64)> = charts.phases.iter().map(|p| (p.start, p.end)).collect();
        assert_eq!(spans, [(0.0, 2.0), (10.0, 12.0)]);
        // Each phase: its start (with no value), then its two intervals' ends.
        assert_eq!(charts.x, [0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
        let throughput = &charts.series["throughput"];
        // The sample's first interval has 4 reads, its second 3 creates and 2 reads.
        assert_eq!(throughput[..4], [None, Some(4.0), Some(5.0), None]);
        assert_eq!(charts.series["target"][4], Some(50.0));
        assert_eq!(charts.series["target"][5], Some(70.0));
        assert_eq!(charts.series["target"][0], None);
        // Late starts are drawn under a rate only.
        assert_eq!(charts.series["late"][0], None);
        assert_eq!(charts.series["late"][5], Some(1.0));
        assert_eq!(charts.series["cpu"][1], Some(25.0));
        // p99 of all operations together: the first interval's 25 ms read (25.007: the
        // histogram's 3 significant digits).
        let p99 = charts.series["p99"][1].unwrap();
        assert!((p99 - 25.0).abs() < 0.01, "{p99}");
        assert_eq!(charts.series["429, failed"][2], Some(1.0));
        assert!(!charts.has("documents") && !charts.has("machine_cpu"));
        assert!(charts.has("target"));
    }
}
