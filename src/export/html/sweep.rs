//! Sweeps: phases that differ in one setting (a scenario file's `sweep`, the built-in
//! `read-ratio-sweep`, `scaling` and `couchdb-report`), drawn against that setting: one
//! chart of throughput and one of latency percentiles per swept setting, a line per
//! series of phases.

use std::collections::BTreeSet;

use serde::Serialize;

use super::measures::{latency_histogram, supported_ms};
use crate::results::{PhaseResult, SweptSetting, per_second};

/// The swept setting's phases, drawn together.
#[derive(Debug, Serialize)]
pub struct SweepChart {
    pub setting: SweptSetting,
    /// What the x axis holds, with its unit.
    pub axis: &'static str,
    /// A log x axis, for values over two decades or more (10 … 100,000 operations).
    pub log: bool,
    /// "service time", or "response time" when every phase ran at a target rate.
    pub latency: &'static str,
    /// The setting's values, rising; each series has a value (or `None`) at each.
    pub x: Vec<f64>,
    pub series: Vec<SweepSeries>,
}

#[derive(Debug, Serialize)]
pub struct SweepSeries {
    pub name: String,
    /// "documents" for a series of bulk inserts alone (the CouchDB report's unit),
    /// "operations" otherwise.
    pub unit: &'static str,
    /// The phase at each x.
    pub phases: Vec<Option<String>>,
    /// Successful operations (or documents) per second of the phase's wall-clock time.
    pub throughput: Vec<Option<f64>>,
    /// In milliseconds, of every operation of the phase together; `None` where the
    /// phase has too few values for the percentile (see `measures::supported_ms`).
    pub p50: Vec<Option<f64>>,
    pub p99: Vec<Option<f64>>,
    pub p999: Vec<Option<f64>>,
}

/// The x axis' label for a setting.
fn axis(setting: SweptSetting) -> &'static str {
    match setting {
        SweptSetting::ReadRatio => "reads in the mix, % (the rest are creates)",
        SweptSetting::Connections => "connections",
        SweptSetting::BatchSize => "documents per bulk insert",
        SweptSetting::Total => "operations in the phase",
        SweptSetting::DocSize => "document size, bytes",
        SweptSetting::IdScheme => "id scheme (0 sequential, 1 uuid)",
    }
}

/// A series' phases are all bulk inserts and nothing else.
fn only_bulk(phases: &[&PhaseResult]) -> bool {
    phases.iter().all(|p| {
        !p.operations.is_empty() && p.operations.iter().all(|o| o.operation == "bulk_insert")
    })
}

/// The charts of every swept setting with at least two values, in the order the run
/// first met them.
pub fn charts(phases: &[PhaseResult]) -> Vec<SweepChart> {
    let mut settings: Vec<SweptSetting> = Vec::new();
    for point in phases.iter().filter_map(|p| p.sweep.as_ref()) {
        if !settings.contains(&point.setting) {
            settings.push(point.setting);
        }
    }
    settings
        .into_iter()
        .filter_map(|setting| {
            let swept: Vec<&PhaseResult> = phases
                .iter()
                .filter(|p| p.sweep.as_ref().is_some_and(|s| s.setting == setting))
                .collect();
            chart(setting, &swept)
        })
        .collect()
}

fn chart(setting: SweptSetting, phases: &[&PhaseResult]) -> Option<SweepChart> {
    let values: BTreeSet<u64> = phases
        .iter()
        .filter_map(|p| p.sweep.as_ref().map(|s| s.value))
        .collect();
    if values.len() < 2 {
        return None;
    }
    let x: Vec<u64> = values.into_iter().collect();
    let (low, high) = (x[0] as f64, x[x.len() - 1] as f64);
    let rated = phases.iter().all(|p| p.target_rate.is_some());
    let mut names: Vec<&str> = Vec::new();
    for point in phases.iter().filter_map(|p| p.sweep.as_ref()) {
        if !names.contains(&point.series.as_str()) {
            names.push(&point.series);
        }
    }
    let series = names
        .into_iter()
        .map(|name| {
            let members: Vec<&PhaseResult> = phases
                .iter()
                .copied()
                .filter(|p| p.sweep.as_ref().is_some_and(|s| s.series == name))
                .collect();
            series(name, &members, &x, rated)
        })
        .collect();
    Some(SweepChart {
        setting,
        axis: axis(setting),
        log: low > 0.0 && high / low >= 100.0,
        latency: if rated {
            "response time"
        } else {
            "service time"
        },
        x: x.iter().map(|&v| v as f64).collect(),
        series,
    })
}

fn series(name: &str, phases: &[&PhaseResult], x: &[u64], rated: bool) -> SweepSeries {
    let documents = only_bulk(phases);
    let mut series = SweepSeries {
        name: name.to_string(),
        unit: if documents { "documents" } else { "operations" },
        phases: Vec::new(),
        throughput: Vec::new(),
        p50: Vec::new(),
        p99: Vec::new(),
        p999: Vec::new(),
    };
    for value in x {
        // A value swept twice (a hand-made file) shows its first phase.
        let phase = phases
            .iter()
            .find(|p| p.sweep.as_ref().is_some_and(|s| s.value == *value));
        series.phases.push(phase.map(|p| p.name.clone()));
        series.throughput.push(phase.map(|p| {
            let ops = p.operations.iter();
            let count: u64 = if documents {
                ops.map(|o| o.documents).sum()
            } else {
                ops.map(|o| o.succeeded).sum()
            };
            per_second(count, p.wall_seconds)
        }));
        let h = phase.map(|p| {
            latency_histogram(
                p.operations
                    .iter()
                    .map(|o| if rated { &o.response } else { &o.latency }),
            )
        });
        let at = |q: f64| h.as_ref().and_then(|h| supported_ms(h, q));
        series.p50.push(at(0.5));
        series.p99.push(at(0.99));
        series.p999.push(at(0.999));
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::SweepPoint;

    fn swept(name: &str, series: &str, setting: SweptSetting, value: u64) -> PhaseResult {
        let mut phase = crate::export::sample::result().phases[0].clone();
        phase.name = name.to_string();
        phase.sweep = Some(SweepPoint {
            series: series.to_string(),
            setting,
            value,
        });
        phase
    }

    #[test]
    fn a_swept_setting_is_one_chart_with_a_line_per_series() {
        let phases = vec![
            swept("write_10", "write", SweptSetting::Total, 10),
            swept("read_10", "read", SweptSetting::Total, 10),
            swept("write_1000", "write", SweptSetting::Total, 1_000),
            PhaseResult::of_operations("alone", 1.0, Vec::new()),
            swept("bulk_50", "bulk", SweptSetting::BatchSize, 50),
        ];
        let charts = charts(&phases);
        // A batch size of one value is no sweep.
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.x, [10.0, 1_000.0]);
        assert!(chart.log, "two decades");
        assert_eq!(chart.latency, "service time");
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["write", "read"]);
        let read = &chart.series[1];
        assert_eq!(read.phases, [Some("read_10".to_string()), None]);
        // The sample's phase: 3 creates and 6 reads in 2 s.
        assert_eq!(read.throughput, [Some(4.5), None]);
        assert_eq!(read.unit, "operations");
        // 9 values: a median, no p99.
        assert!(read.p50[0].is_some());
        assert_eq!((read.p99[0], read.p999[0]), (None, None));
    }

    #[test]
    fn read_ratios_draw_on_a_linear_axis() {
        let phases: Vec<PhaseResult> = [0, 50, 95]
            .into_iter()
            .map(|r| swept(&format!("RR_{r:02}"), "RR", SweptSetting::ReadRatio, r))
            .collect();
        let chart = &charts(&phases)[0];
        assert!(!chart.log);
        assert_eq!(chart.x, [0.0, 50.0, 95.0]);
        assert!(chart.axis.contains('%'));
    }
}
