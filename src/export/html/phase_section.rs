//! A phase's section: what it was, its tables, and its charts over time and by
//! percentile.

use std::fmt::Write as _;

use super::beside::Beside;
use super::markup::{ChartOf, chart, chart_on, escape};
use super::phase_charts::{self, PhaseCharts};
use super::scale;
use super::tables;
use crate::report::numbers::{grouped, grouped_decimal};
use crate::results::PhaseResult;

fn phase_title(phase: &PhaseResult) -> String {
    match phase.name.as_str() {
        "bulk_insert" => "Bulk insert".to_string(),
        "crud" => "CRUD".to_string(),
        name => format!("Phase {name}"),
    }
}

/// The line under a phase's title: its connections, time, rate, and what cut it short.
fn phase_facts(out: &mut String, phase: &PhaseResult, interrupted: bool) {
    let mut facts = vec![
        format!("{} connections", grouped(phase.connections)),
        format!("{:.3} s", phase.wall_seconds),
    ];
    if let Some(rate) = phase.target_rate {
        facts.push(format!(
            "target rate {} operations/s, {} started late",
            grouped_decimal(rate, 1),
            grouped(phase.late)
        ));
    }
    let _ = writeln!(out, "<p class=\"muted\">{}</p>", escape(&facts.join(" · ")));
    if interrupted {
        out.push_str(
            "<p class=\"warn\">INTERRUPTED: the figures cover what was done before the stop.</p>\n",
        );
    }
    let mut reasons = phase.aborted.clone();
    reasons.sort();
    reasons.dedup();
    for reason in &reasons {
        let _ = writeln!(
            out,
            "<p class=\"warn\">stopped early: {}</p>",
            escape(reason)
        );
    }
}

pub fn phase_section(
    out: &mut String,
    index: usize,
    (phase, charts): (&PhaseResult, &PhaseCharts),
    interrupted: bool,
    open: bool,
) {
    let _ = writeln!(
        out,
        "<section id=\"phase-{index}\" class=\"phase\">\n<details{}>\n<summary><h2>{}</h2></summary>",
        if open { " open" } else { "" },
        escape(&phase_title(phase))
    );
    phase_facts(out, phase, interrupted);
    tables::iron_cushion_tables(out, phase);
    tables::latency_table(out, phase, false);
    if phase.target_rate.is_some() {
        tables::latency_table(out, phase, true);
    }
    tables::answers_table(out, phase);
    tables::rate_limit_table(out, phase);
    tables::hot_table(out, phase);
    tables::existing_table(out, phase);
    tables::index_builds_table(out, phase);
    tables::replication_jobs_table(out, phase);
    super::devices::devices_section(out, phase);
    super::disk::disk_table(out, phase);
    if phase.intervals.is_empty() {
        out.push_str("<p class=\"muted\">No intervals were recorded: no charts over time.</p>\n");
    } else {
        phase_time_charts(out, index, phase, charts);
    }
    if phase_charts::has_spectrum(phase) {
        spectrum_chart(out, index, phase, charts);
    }
    out.push_str("</details>\n</section>\n");
}

/// The operations a phase's lines are drawn for: `create, read and update`.
fn operation_names(charts: &PhaseCharts) -> String {
    let names: Vec<&str> = charts
        .time
        .operations
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    match names.as_slice() {
        [] => "operations".to_string(),
        [one] => escape(one),
        [rest @ .., last] => format!("{} and {}", escape(&rest.join(", ")), escape(last)),
    }
}

/// The largest value of some columns: `140.3`.
fn highest<'a>(columns: impl IntoIterator<Item = &'a Vec<Option<f64>>>) -> String {
    let most = columns
        .into_iter()
        .flatten()
        .flatten()
        .fold(0.0, |m: f64, &v| m.max(v));
    grouped_decimal(most, 1)
}

/// The chart by percentile, captioned with where its lines end: a line ends at the
/// percentile its own count of operations reaches, so that is computed per phase.
fn spectrum_chart(out: &mut String, index: usize, phase: &PhaseResult, charts: &PhaseCharts) {
    let spectrum = &charts.spectrum;
    let most = spectrum.x.last().copied().unwrap_or(1.0);
    let range = scale::range(spectrum.series.iter().map(|l| &l.values[..]));
    let drawn = if phase.target_rate.is_some() {
        "Service time (solid) and response time from the scheduled start (dashed)"
    } else {
        "Service time"
    };
    let ends: Vec<String> = phase_charts::spectrum_ends(phase)
        .into_iter()
        .map(|(name, count, end)| format!("{} {} operations, {end}", escape(name), grouped(count)))
        .collect();
    chart_on(
        out,
        ChartOf::Phase(index),
        "spectrum",
        &format!(
            "Latency by percentile, to {}",
            phase_charts::percentile_words(most)
        ),
        &format!(
            "{drawn} of the phase's successful operations: {}. Each line ends where its count reaches: {}.",
            scale::latency_range(range),
            ends.join("; ")
        ),
        scale::is_log(range),
    );
}

fn phase_time_charts(out: &mut String, index: usize, phase: &PhaseResult, charts: &PhaseCharts) {
    let time = &charts.time;
    let names = operation_names(charts);
    let target = if time.target.is_some() {
        "; dashed grey: the target rate"
    } else {
        ""
    };
    let of = ChartOf::Phase;
    chart(
        out,
        of(index),
        "throughput",
        "Throughput over time",
        &format!(
            "Successful {names} operations per second, a line each: highest {}/s{target}.",
            highest(time.operations.iter().map(|o| &o.throughput))
        ),
    );
    if let Some(documents) = &time.documents {
        chart(
            out,
            of(index),
            "documents",
            "Documents stored per second",
            &format!(
                "Documents the successful bulk inserts stored per second: highest {}/s.",
                highest([documents])
            ),
        );
    }
    let range = scale::range(
        time.operations
            .iter()
            .flat_map(|o| [&o.p50[..], &o.p99[..]]),
    );
    chart_on(
        out,
        of(index),
        "latency",
        "Latency over time",
        &format!(
            "p50 and p99 of each interval's successful {names} operations: {}.",
            scale::latency_range(range)
        ),
        scale::is_log(range),
    );
    if phase_charts::had_failures(phase) {
        let kinds: Vec<String> = time
            .failures
            .iter()
            .map(|f| format!("{} {}", escape(&f.operation), f.kind))
            .collect();
        chart(
            out,
            of(index),
            "failures",
            "Failures over time",
            &format!(
                "Per second, a line for each that happened: {}.",
                kinds.join("; ")
            ),
        );
    }
    beside_charts(out, index, &time.beside);
    if phase.target_rate.is_some() {
        chart(
            out,
            of(index),
            "late",
            "Late starts",
            &format!(
                "Operations per second that started late: {} in the phase.",
                grouped(phase.late)
            ),
        );
    }
}

/// The charts of what went on beside the operations, those the phase has figures for;
/// what each draws is in the page's note (`reading::BESIDE`).
fn beside_charts(out: &mut String, index: usize, beside: &Beside) {
    let nodes = if beside.server.len() > 1 {
        " A line per node."
    } else {
        ""
    };
    let charts = [
        (
            "server-requests",
            "The server: requests and its own request time",
            format!("Solid, left axis: requests per second; dashed, right axis: its own p99 in milliseconds.{nodes}"),
        ),
        ("server-memory", "The server: memory", format!("MiB.{nodes}")),
        (
            "server-work",
            "The server: background tasks and run queue",
            format!("Solid: background tasks; dashed: run queue.{nodes}"),
        ),
        (
            "changes",
            "The _changes consumers",
            "Solid, left axis: changes per second; dashed, right axis: lag in seconds.".to_string(),
        ),
        (
            "replication",
            "Continuous replication",
            "Solid, left axis: documents per second per replica; dashed, right axis: lag in seconds.".to_string(),
        ),
        (
            "disk",
            "The database on disk",
            "Solid: file size; dashed: active size, in MiB.".to_string(),
        ),
    ];
    for (kind, title, caption) in charts {
        if beside.has(kind) {
            chart(out, ChartOf::Phase(index), kind, title, &caption);
        }
    }
}
