//! What one phase's charts draw: per operation over the phase's time, and its latency
//! by percentile.

use serde::Serialize;

use super::beside::{Beside, beside};
use super::measures::{Failures, bulk_documents, rate};
use super::steps::Steps;
use crate::export::phase_operations;
use crate::results::{IntervalOperation, IntervalResult, Latency, PhaseResult, histogram};

/// Points of the percentile spectrum per decade of 1/(1-percentile).
const SPECTRUM_STEPS_PER_DECADE: u32 = 20;
/// The spectrum's end: 99.9999 %, when a million values support it.
const SPECTRUM_MOST: f64 = 1e6;

#[derive(Serialize)]
pub struct PhaseCharts {
    pub name: String,
    pub time: TimeSeries,
    pub spectrum: Spectrum,
}

/// Over the phase's time (seconds since it started), as steps (see `steps`).
#[derive(Serialize)]
pub struct TimeSeries {
    pub x: Vec<f64>,
    pub operations: Vec<OperationSeries>,
    /// Per operation and kind, only those that happened.
    pub failures: Vec<FailureSeries>,
    /// The rate aimed at, under `--rate`.
    pub target: Option<Vec<Option<f64>>>,
    /// Late starts per second, under `--rate`.
    pub late: Option<Vec<Option<f64>>>,
    /// Documents per second of the bulk inserts, in a phase that has them.
    pub documents: Option<Vec<Option<f64>>>,
    /// The server's, the feed's and the disk's figures on the same x.
    #[serde(flatten)]
    pub beside: Beside,
}

#[derive(Serialize)]
pub struct OperationSeries {
    pub name: String,
    /// Successful operations per second.
    pub throughput: Vec<Option<f64>>,
    /// `None` where no operation of the kind succeeded in the interval.
    pub p50: Vec<Option<f64>>,
    pub p99: Vec<Option<f64>>,
}

#[derive(Serialize)]
pub struct FailureSeries {
    pub operation: String,
    pub kind: &'static str,
    /// Per second.
    pub values: Vec<Option<f64>>,
}

/// x = 1/(1-q) for the quantiles q, and per line the latency at each, in milliseconds.
#[derive(Serialize)]
pub struct Spectrum {
    pub x: Vec<f64>,
    pub series: Vec<SpectrumLine>,
}

#[derive(Serialize)]
pub struct SpectrumLine {
    pub operation: String,
    pub label: String,
    /// True for response time (from the scheduled start), false for service time.
    pub response: bool,
    /// `None` beyond what the line's own count of values supports.
    pub values: Vec<Option<f64>>,
}

impl PhaseCharts {
    pub fn of(phase: &PhaseResult) -> PhaseCharts {
        PhaseCharts {
            name: phase.name.clone(),
            time: time_series(phase),
            spectrum: spectrum(phase),
        }
    }
}

/// Whether any interval of the phase saw a failure or a 429 sent again: only then is
/// there a chart of them.
pub fn had_failures(phase: &PhaseResult) -> bool {
    phase
        .intervals
        .iter()
        .flat_map(|i| &i.operations)
        .any(|o| o.failed + o.retried_429 > 0)
}

/// Columns per operation: throughput, p50, p99, then its four failure kinds.
const PER_OPERATION: usize = 7;

fn operation_values(op: Option<&IntervalOperation>, interval: &IntervalResult) -> Vec<Option<f64>> {
    let ok = op.filter(|o| o.succeeded > 0);
    let mut values = vec![
        rate(op.map_or(0, |o| o.succeeded), interval),
        ok.map(|o| o.p50_ms),
        ok.map(|o| o.p99_ms),
    ];
    let failures = op.map(Failures::of).unwrap_or_default();
    values.extend(failures.kinds().map(|(_, n)| rate(n, interval)));
    values
}

fn time_series(phase: &PhaseResult) -> TimeSeries {
    let names = phase_operations(phase);
    let bulk = names.contains(&"bulk_insert");
    let mut steps = Steps::new(names.len() * PER_OPERATION + 3);
    steps.phase(0.0, phase, |interval| {
        let mut values = Vec::new();
        for name in &names {
            let op = interval.operations.iter().find(|o| o.operation == *name);
            values.extend(operation_values(op, interval));
        }
        // The interval's own target follows a ramp; files written before it have the
        // phase's constant rate only.
        values.push(interval.target_rate.or(phase.target_rate));
        values.push(rate(interval.late, interval));
        values.push(bulk_documents(interval).and_then(|n| rate(n, interval)));
        values
    });
    let mut columns = steps.columns.into_iter();
    let mut operations = Vec::new();
    let mut failures = Vec::new();
    for name in &names {
        let mut next = || columns.next().unwrap_or_default();
        operations.push(OperationSeries {
            name: name.to_string(),
            throughput: next(),
            p50: next(),
            p99: next(),
        });
        for (kind, _) in Failures::default().kinds() {
            let values = next();
            if values.iter().any(|v| v.is_some_and(|v| v > 0.0)) {
                failures.push(FailureSeries {
                    operation: name.to_string(),
                    kind,
                    values,
                });
            }
        }
    }
    let rated = phase.target_rate.is_some();
    let (target, late, documents) = (columns.next(), columns.next(), columns.next());
    TimeSeries {
        x: steps.x,
        operations,
        failures,
        target: target.filter(|_| rated),
        late: late.filter(|_| rated),
        documents: documents.filter(|values| bulk && values.iter().any(Option::is_some)),
        beside: beside(phase),
    }
}

/// The quantiles of the spectrum as x = 1/(1-q), from 1 (0 %) up to `most`: twenty
/// points a decade, and `most` itself.
fn spectrum_x(most: f64) -> Vec<f64> {
    let most = most.clamp(1.0, SPECTRUM_MOST);
    let mut x: Vec<f64> = (0..)
        .map(|k| 10f64.powf(f64::from(k) / f64::from(SPECTRUM_STEPS_PER_DECADE)))
        .take_while(|&x| x < most * (1.0 - 1e-9))
        .collect();
    x.push(most);
    x
}

/// Latency in milliseconds at each x of the spectrum that the histogram's count
/// supports (the largest x is its count: with 8 values, 87.5 %); `None` for an empty or
/// unreadable histogram.
fn spectrum_values(latency: &Latency, x: &[f64]) -> Option<Vec<Option<f64>>> {
    let h = histogram::decode(&latency.histogram).ok()?;
    if h.is_empty() {
        return None;
    }
    let count = h.len() as f64;
    Some(
        x.iter()
            .map(|&x| {
                (x <= count * (1.0 + 1e-9))
                    .then(|| h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1_000.0)
            })
            .collect(),
    )
}

fn spectrum(phase: &PhaseResult) -> Spectrum {
    let rated = phase.target_rate.is_some();
    let mut lines: Vec<(&str, &Latency, bool)> = Vec::new();
    for op in &phase.operations {
        lines.push((&op.operation, &op.latency, false));
        if rated {
            lines.push((&op.operation, &op.response, true));
        }
    }
    let most = lines.iter().map(|l| l.1.count).max().unwrap_or(0) as f64;
    let x = spectrum_x(most);
    let series = lines
        .into_iter()
        .filter_map(|(operation, latency, response)| {
            let values = spectrum_values(latency, &x)?;
            let kind = if response { "response" } else { "service" };
            Some(SpectrumLine {
                operation: operation.to_string(),
                label: if rated {
                    format!("{operation} ({kind})")
                } else {
                    operation.to_string()
                },
                response,
                values,
            })
        })
        .collect();
    Spectrum { x, series }
}

/// The percentile at x = 1/(1-q) as the chart's axis writes it, with as many decimals
/// as its nines need: 8 → `87.5 %`, 24 → `95.83 %`, 10^6 → `99.9999 %`.
pub fn percentile_words(x: f64) -> String {
    let decimals = x.log10().ceil().clamp(0.0, 6.0) as usize;
    let text = format!("{:.*}", decimals, 100.0 - 100.0 / x.max(1.0));
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text} %")
}

/// Where each operation's line of the spectrum ends: its count of successful operations
/// and the percentile that count reaches (the axis ends at 99.9999 %).
pub fn spectrum_ends(phase: &PhaseResult) -> Vec<(&str, u64, String)> {
    phase
        .operations
        .iter()
        .filter(|o| o.latency.count > 0)
        .map(|o| {
            let count = o.latency.count;
            let x = (count as f64).min(SPECTRUM_MOST);
            (o.operation.as_str(), count, percentile_words(x))
        })
        .collect()
}

/// Whether the spectrum has more than its 0 % point to draw: two values or more.
pub fn has_spectrum(phase: &PhaseResult) -> bool {
    phase.operations.iter().any(|o| o.latency.count > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectrum_stops_where_the_values_stop_supporting_it() {
        let x = spectrum_x(8.0);
        assert_eq!(x[0], 1.0);
        // 10^(18/20) = 7.9 is the last grid point below 8.
        assert_eq!(x.len(), 20, "{x:?}");
        assert_eq!(x[19], 8.0);
        let full = spectrum_x(1e9);
        assert!((full[120] - 1e6).abs() < 1e-3);
        assert_eq!(full.len(), 121);

        let charts = PhaseCharts::of(&crate::export::sample::result().phases[0]);
        // 6 reads and 3 creates: the axis runs to 6 (83.3 %), creates stop at 3.
        let spectrum = &charts.spectrum;
        assert_eq!(*spectrum.x.last().unwrap(), 6.0);
        let creates = &spectrum.series[0];
        assert_eq!(creates.operation, "create");
        let last = creates.values.iter().rposition(Option::is_some).unwrap();
        assert!(spectrum.x[last] <= 3.0 && spectrum.x[last + 1] > 3.0);
        assert!(
            spectrum.series[1].values.last().unwrap().is_some(),
            "reads reach the end"
        );
    }

    #[test]
    fn a_percentile_is_written_with_the_decimals_its_nines_need() {
        let words: Vec<String> = [1.0, 2.0, 8.0, 10.0, 12.0, 24.0, 1e6]
            .into_iter()
            .map(percentile_words)
            .collect();
        assert_eq!(
            words,
            [
                "0 %",
                "50 %",
                "87.5 %",
                "90 %",
                "91.67 %",
                "95.83 %",
                "99.9999 %"
            ]
        );
        let result = crate::export::sample::result();
        let ends = spectrum_ends(&result.phases[0]);
        assert_eq!(
            ends,
            [
                ("create", 3, "66.7 %".to_string()),
                ("read", 6, "83.3 %".to_string())
            ]
        );
    }

    #[test]
    fn series_per_operation_with_failures_that_happened() {
        let charts = PhaseCharts::of(&crate::export::sample::result().phases[0]);
        let time = &charts.time;
        assert_eq!(time.x, [0.0, 1.0, 2.0]);
        let reads = &time.operations[1];
        assert_eq!(reads.throughput, [None, Some(4.0), Some(2.0)]);
        assert_eq!(reads.p50[1], Some(1.0));
        let creates = &time.operations[0];
        assert_eq!(creates.p50[1], None);
        // One read failed as a 429 in the second interval, three were sent again.
        let kinds: Vec<(&str, &str)> = time
            .failures
            .iter()
            .map(|f| (f.operation.as_str(), f.kind))
            .collect();
        assert_eq!(
            kinds,
            [("read", "429, failed"), ("read", "429, sent again")]
        );
        assert_eq!(time.failures[1].values[2], Some(3.0));
        assert!(time.target.is_none() && time.late.is_none() && time.documents.is_none());
    }

    #[test]
    fn a_short_last_interval_is_left_out() {
        let mut result = crate::export::sample::result();
        let phase = &mut result.phases[0];
        phase.intervals.last_mut().unwrap().length_seconds = 0.1;
        let time = time_series(phase);
        for op in &time.operations {
            assert_eq!(op.throughput.last(), Some(&None), "{}", op.name);
            assert!(op.throughput[1].is_some(), "{}", op.name);
        }
    }
}
