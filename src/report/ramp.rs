//! A ramping phase's course: the rate aimed at and the rate achieved, stretch by stretch,
//! so a reader sees where the database stopped keeping up.
//!
//! ```text
//!   ramp, stretch by stretch (target: the schedule's mean over the stretch):
//!     seconds         target/s   achieved/s    late   p99(ms)
//!     0.0-2.0            120.0        119.5       0      2.41
//!     2.0-4.0            160.0        159.0       3     11.80
//! ```

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::numbers::{grouped, grouped_decimal};
use crate::analysis::{add_encoded, empty_histogram};
use crate::results::{IntervalResult, PhaseResult};

/// At most this many rows: a long phase's intervals are taken together, a row per
/// stretch of neighbouring intervals.
const MOST_ROWS: usize = 12;

/// One row: intervals taken together.
#[derive(Debug, PartialEq)]
pub struct Stretch {
    pub from_seconds: f64,
    pub to_seconds: f64,
    /// The operations per second aimed at over the stretch.
    pub target: f64,
    /// Successful operations per second.
    pub achieved: f64,
    pub late: u64,
    /// Response time of the stretch's successful operations; `None` when there were none.
    pub p99_ms: Option<f64>,
}

/// The phase's intervals in at most [`MOST_ROWS`] stretches of equally many intervals
/// (the last may hold fewer). Intervals without a target (written before sofabench kept
/// one) leave the phase without stretches.
pub fn stretches(phase: &PhaseResult) -> Vec<Stretch> {
    let intervals = &phase.intervals;
    if intervals.is_empty() || intervals.iter().any(|i| i.target_rate.is_none()) {
        return Vec::new();
    }
    let per_row = intervals.len().div_ceil(MOST_ROWS);
    intervals.chunks(per_row).map(stretch).collect()
}

fn stretch(intervals: &[IntervalResult]) -> Stretch {
    let length: f64 = intervals.iter().map(|i| i.length_seconds).sum();
    let per_second = |value: f64| if length > 0.0 { value / length } else { 0.0 };
    let aimed: f64 = intervals
        .iter()
        .map(|i| i.target_rate.unwrap_or(0.0) * i.length_seconds)
        .sum();
    let succeeded: u64 = intervals
        .iter()
        .flat_map(|i| &i.operations)
        .map(|op| op.succeeded)
        .sum();
    let mut responses: Histogram<u64> = empty_histogram();
    for op in intervals.iter().flat_map(|i| &i.operations) {
        // An interval histogram that does not decode leaves its stretch's p99 out
        // rather than showing a wrong one.
        if !op.histogram.is_empty() && add_encoded(&mut responses, &op.histogram).is_err() {
            responses.reset();
            break;
        }
    }
    let last = intervals.last().map_or(0.0, |i| i.elapsed_seconds);
    Stretch {
        from_seconds: (last - length).max(0.0),
        to_seconds: last,
        target: per_second(aimed),
        achieved: per_second(succeeded as f64),
        late: intervals.iter().map(|i| i.late).sum(),
        p99_ms: (!responses.is_empty()).then(|| responses.value_at_quantile(0.99) as f64 / 1_000.0),
    }
}

/// The table of a ramping phase's stretches; nothing for other phases.
pub fn lines(phase: &PhaseResult, out: &mut String) {
    if phase.ramp.is_none() {
        return;
    }
    let rows = stretches(phase);
    if rows.is_empty() {
        return;
    }
    out.push_str("  ramp, stretch by stretch (target: the schedule's mean over the stretch):\n");
    let _ = writeln!(
        out,
        "    {:<13} {:>10} {:>12} {:>7} {:>9}",
        "seconds", "target/s", "achieved/s", "late", "p99(ms)"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "    {:<13} {:>10} {:>12} {:>7} {:>9}",
            format!("{:.1}-{:.1}", row.from_seconds, row.to_seconds),
            grouped_decimal(row.target, 1),
            grouped_decimal(row.achieved, 1),
            grouped(row.late),
            row.p99_ms.map_or("-".to_string(), |ms| format!("{ms:.2}")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{IntervalOperation, RampResult, histogram};

    fn interval(elapsed: f64, target: f64, succeeded: u64, late: u64) -> IntervalResult {
        let mut h = empty_histogram();
        for v in 1..=succeeded {
            h.record(v * 100).unwrap();
        }
        IntervalResult {
            late_causes: None,
            stalled_seconds: None,
            end_ms: 0,
            elapsed_seconds: elapsed,
            length_seconds: 1.0,
            cpu: 0.1,
            late,
            operations: vec![IntervalOperation {
                operation: "read".to_string(),
                succeeded,
                failed: 0,
                timeouts: 0,
                rate_limited: 0,
                retried_429: 0,
                documents: None,
                bytes_sent: None,
                bytes_received: None,
                throughput: succeeded as f64,
                p50_ms: 0.0,
                p99_ms: 0.0,
                histogram: histogram::encode(&h),
            }],
            machine_cpu: None,
            in_flight: 0,
            waiting_after_429: 0,
            polling: false,
            target_rate: Some(target),
            disk: None,
            server: Vec::new(),
        }
    }

    fn ramp_phase(intervals: Vec<IntervalResult>) -> PhaseResult {
        let mut phase = PhaseResult::of_operations("up", intervals.len() as f64, Vec::new());
        phase.target_rate = Some(20.0);
        phase.ramp = Some(RampResult {
            from: 10.0,
            to: 30.0,
        });
        phase.intervals = intervals;
        phase
    }

    #[test]
    fn short_phases_show_every_interval_and_long_ones_stretches() {
        let short = ramp_phase(vec![interval(1.0, 10.0, 10, 0), interval(2.0, 12.0, 11, 2)]);
        let rows = stretches(&short);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].from_seconds, 1.0);
        assert_eq!(
            (rows[1].target, rows[1].achieved, rows[1].late),
            (12.0, 11.0, 2)
        );
        // Values 100 … 1,100 µs: the 99th percentile is the largest.
        assert!(
            (rows[1].p99_ms.unwrap() - 1.1).abs() < 0.01,
            "{:?}",
            rows[1]
        );
        let long: Vec<IntervalResult> = (1..=30)
            .map(|s| interval(s as f64, s as f64, s, 0))
            .collect();
        let rows = stretches(&ramp_phase(long));
        assert_eq!(rows.len(), 10, "30 intervals in stretches of 3");
        assert_eq!((rows[0].from_seconds, rows[0].to_seconds), (0.0, 3.0));
        assert_eq!((rows[0].target, rows[0].achieved), (2.0, 2.0));
        let mut text = String::new();
        lines(&ramp_phase(vec![interval(1.0, 1234.5, 3, 1)]), &mut text);
        assert!(text.contains("target/s   achieved/s"), "{text}");
        assert!(
            text.contains("\n    0.0-1.0          1,234.5          3.0       1      0.30\n"),
            "{text}"
        );
    }

    #[test]
    fn constant_rates_and_old_results_have_no_ramp_table() {
        let mut constant = ramp_phase(vec![interval(1.0, 10.0, 10, 0)]);
        constant.ramp = None;
        let mut text = String::new();
        lines(&constant, &mut text);
        assert!(text.is_empty());
        let mut old = ramp_phase(vec![interval(1.0, 10.0, 10, 0)]);
        old.intervals[0].target_rate = None;
        lines(&old, &mut text);
        assert!(text.is_empty());
    }
}
