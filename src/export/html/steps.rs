//! Series over time as the page draws them: each interval's value held over the whole
//! interval (a step from its start to its end), so a phase shorter than one interval is a
//! line as long as the phase rather than a dot; and the one rule for intervals too short
//! to draw.
//!
//! A point's value holds from the point before it to the point itself (the page's script
//! draws it so). A phase is its start, with no value, then each interval's end with the
//! interval's values; where a phase starts when the one before ended, the earlier end is
//! its start.

use serde::Serialize;

use crate::results::{IntervalResult, PhaseResult};

/// The rule, said in every caption of a chart over time.
pub const SHORT_INTERVAL_RULE: &str = "An interval shorter than half of its phase's longest (the last one, cut short by the phase's end) is left out rather than drawn as a rate or percentile of a fraction of a second.";

/// Whether an interval is too short to draw: shorter than half its phase's longest. A
/// phase's last interval ends with the phase; five operations in its 0.1 s drawn as 50/s
/// made every throughput chart end in a spike.
pub fn is_partial(length_seconds: f64, longest: f64) -> bool {
    length_seconds < longest / 2.0
}

/// The length of a phase's longest interval.
pub fn longest(phase: &PhaseResult) -> f64 {
    phase
        .intervals
        .iter()
        .map(|i| i.length_seconds)
        .fold(0.0, f64::max)
}

/// One chart's x (seconds) and its columns of values, one per series.
#[derive(Debug, Serialize)]
pub struct Steps {
    pub x: Vec<f64>,
    pub columns: Vec<Vec<Option<f64>>>,
}

impl Steps {
    pub fn new(series: usize) -> Steps {
        Steps {
            x: Vec::new(),
            columns: vec![Vec::new(); series],
        }
    }

    /// Adds a phase that started at `start` (seconds on the chart's axis). `values` gives
    /// an interval's values, one per series, or `None` for an interval too short to draw.
    pub fn phase(
        &mut self,
        start: f64,
        phase: &PhaseResult,
        values: impl Fn(&IntervalResult) -> Vec<Option<f64>>,
    ) {
        if phase.intervals.is_empty() {
            return;
        }
        let longest = longest(phase);
        let width = self.columns.len();
        let points = phase.intervals.iter().map(|interval| {
            let shown = if is_partial(interval.length_seconds, longest) {
                vec![None; width]
            } else {
                values(interval)
            };
            (start + interval.elapsed_seconds, shown)
        });
        if self.x.last().is_none_or(|&last| start > last) {
            self.point(start, vec![None; width]);
        }
        for (end, values) in points {
            self.point(end, values);
        }
    }

    /// A point, if it lies after the last one: uPlot needs x to rise. Only intervals of
    /// no length (which are too short to draw anyway) or a file's nonsense fail that.
    fn point(&mut self, x: f64, values: Vec<Option<f64>>) {
        if !x.is_finite() || self.x.last().is_some_and(|&last| x <= last) {
            return;
        }
        self.x.push(x);
        for (column, value) in self.columns.iter_mut().zip(values) {
            column.push(value.filter(|v| v.is_finite()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(lengths: &[f64]) -> PhaseResult {
        let mut phase = PhaseResult::of_operations("p", lengths.iter().sum(), Vec::new());
        let mut elapsed = 0.0;
        for &length in lengths {
            elapsed += length;
            phase.intervals.push(IntervalResult {
                late_causes: None,
                stalled_seconds: None,
                end_ms: 0,
                elapsed_seconds: elapsed,
                length_seconds: length,
                cpu: elapsed,
                late: 0,
                operations: Vec::new(),
                machine_cpu: None,
                in_flight: 0,
                waiting_after_429: 0,
                polling: false,
                target_rate: None,
                disk: None,
                server: Vec::new(),
            });
        }
        phase
    }

    fn cpu(interval: &IntervalResult) -> Vec<Option<f64>> {
        vec![Some(interval.cpu)]
    }

    #[test]
    fn each_interval_holds_its_value_from_the_point_before() {
        let mut steps = Steps::new(1);
        steps.phase(0.0, &phase(&[1.0, 1.0, 0.2]), cpu);
        // The next phase starts a second after the first ended: nothing in between.
        steps.phase(3.2, &phase(&[0.5]), cpu);
        assert_eq!(steps.x, [0.0, 1.0, 2.0, 2.2, 3.2, 3.7]);
        assert_eq!(
            steps.columns[0],
            [None, Some(1.0), Some(2.0), None, None, Some(0.5)]
        );
    }

    #[test]
    fn a_phase_that_starts_where_the_last_ended_joins_it() {
        let mut steps = Steps::new(1);
        steps.phase(0.0, &phase(&[1.0]), cpu);
        steps.phase(1.0, &phase(&[1.0]), cpu);
        steps.phase(5.0, &phase(&[]), cpu);
        assert_eq!(steps.x, [0.0, 1.0, 2.0]);
        assert_eq!(steps.columns[0], [None, Some(1.0), Some(1.0)]);
    }

    #[test]
    fn points_that_do_not_rise_are_left_out() {
        let mut steps = Steps::new(1);
        steps.phase(0.0, &phase(&[1.0, 0.0, 1.0]), cpu);
        assert_eq!(steps.x, [0.0, 1.0, 2.0]);
        steps.phase(f64::NAN, &phase(&[1.0]), cpu);
        assert_eq!(steps.x.len(), 3);
    }
}
