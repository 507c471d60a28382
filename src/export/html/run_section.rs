//! The run as a whole on one time axis, and a sweep's charts against the swept setting
//! with the reference table; each chart's caption computed from what it draws.

use super::markup::{ChartOf, chart, chart_on, escape};
use super::overview::RunCharts;
use super::scale;
use super::sweep::SweepChart;
use super::tables;
use crate::report::numbers::grouped_decimal;
use crate::results::RunResult;
use crate::words::counted;

/// The run's charts, on one time axis.
pub fn overview_section(out: &mut String, result: &RunResult, run: &RunCharts) {
    out.push_str("<section id=\"overview\">\n<h2>The run over time</h2>\n");
    run_chart_boxes(out, result, run);
    out.push_str("</section>\n");
}

/// The largest value of a run's series, as words: `highest 140.3/s`.
fn highest(run: &RunCharts, name: &str, unit: &str) -> String {
    let most = run.series[name]
        .iter()
        .flatten()
        .fold(0.0, |m: f64, &v| m.max(v));
    format!("highest {}{unit}", grouped_decimal(most, 1))
}

/// What failed in the whole run, by kind, as words: `3 timeouts, 1 other failure`.
fn failed_kinds(result: &RunResult) -> String {
    let mut kinds = [0u64; 4];
    for op in result.phases.iter().flat_map(|p| &p.operations) {
        let of = |kind: &str| op.failures.get(kind).copied().unwrap_or(0);
        let (timeouts, limited) = (of("timeout"), of("rate_limited"));
        kinds[0] += timeouts;
        kinds[1] += limited;
        kinds[2] += op.failed.saturating_sub(timeouts).saturating_sub(limited);
        kinds[3] += op.retried_429;
    }
    let names = [
        "timeout",
        "429 that failed",
        "other failure",
        "429 sent again",
    ];
    let said: Vec<String> = kinds
        .iter()
        .zip(names)
        .filter(|(n, _)| **n > 0)
        .map(|(n, name)| crate::words::counted(*n, name))
        .collect();
    if said.is_empty() {
        "Nothing failed in this run.".to_string()
    } else {
        format!("In all: {}.", said.join(", "))
    }
}

/// The run's charts, each with a caption computed from what it draws.
fn run_chart_boxes(out: &mut String, result: &RunResult, run: &RunCharts) {
    let target = if run.has("target") {
        "; dashed: the target rate"
    } else {
        ""
    };
    chart(
        out,
        ChartOf::Run,
        "run-throughput",
        "Throughput, all operations",
        &format!(
            "Successful operations of every kind per second: {}{target}.",
            highest(run, "throughput", "/s")
        ),
    );
    if run.has("documents") {
        chart(
            out,
            ChartOf::Run,
            "run-documents",
            "Documents stored per second by bulk inserts",
            &format!(
                "Documents the successful bulk inserts stored per second: {}.",
                highest(run, "documents", "/s")
            ),
        );
    }
    let range = scale::range([&run.series["p50"][..], &run.series["p99"][..]]);
    chart_on(
        out,
        ChartOf::Run,
        "run-latency",
        "Latency, all operations",
        &format!(
            "p50 and p99 of each interval's successful operations of every kind: {}.",
            scale::latency_range(range)
        ),
        scale::is_log(range),
    );
    chart(
        out,
        ChartOf::Run,
        "run-failures",
        "Failures and timeouts by kind",
        &failed_kinds(result),
    );
    if result.phases.iter().any(|p| p.target_rate.is_some()) {
        let late: u64 = result.phases.iter().map(|p| p.late).sum();
        chart(
            out,
            ChartOf::Run,
            "run-late",
            "Late starts",
            &format!("{} started late in all.", counted(late, "operation")),
        );
    }
    let machine = if run.has("machine_cpu") {
        "; dashed: the whole machine"
    } else {
        ""
    };
    chart(
        out,
        ChartOf::Run,
        "run-cpu",
        "CPU",
        &format!("sofabench's own: {}{machine}.", highest(run, "cpu", " %")),
    );
}

/// The swept settings' charts and the reference benchmark's table, when there are any.
pub fn sweep_section(out: &mut String, result: &RunResult, sweeps: &[SweepChart]) {
    let mut reference = String::new();
    tables::reference_table(&mut reference, result);
    if sweeps.is_empty() && reference.is_empty() {
        return;
    }
    out.push_str("<section id=\"sweep\">\n<h2>Sweep</h2>\n");
    for (index, sweep) in sweeps.iter().enumerate() {
        let axis = escape(sweep.axis);
        chart(
            out,
            ChartOf::Sweep(index),
            "sweep-throughput",
            &format!("Throughput against {axis}"),
            "Successful operations per second of each phase's wall-clock time (a series of bulk inserts alone: documents stored per second), a point per phase.",
        );
        let columns = sweep
            .series
            .iter()
            .flat_map(|s| [&s.p50[..], &s.p99[..], &s.p999[..]]);
        let range = scale::range(columns);
        chart_on(
            out,
            ChartOf::Sweep(index),
            "sweep-latency",
            &format!("Latency percentiles against {axis}"),
            &format!(
                "p50 (solid), p99 (dashed) and p99.9 (dotted) {} of each phase's successful operations of every kind: {}.",
                sweep.latency,
                scale::latency_range(range)
            ),
            scale::is_log(range),
        );
    }
    out.push_str(&reference);
    out.push_str("</section>\n");
}
