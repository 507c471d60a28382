//! A phase's section: what it was, its tables, and its charts over time and by
//! percentile.

use std::fmt::Write as _;

use super::interval_latency;
use super::markup::{ChartOf, chart, escape};
use super::phase_charts;
use super::steps::SHORT_INTERVAL_RULE;
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
    phase: &PhaseResult,
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
    super::disk::disk_table(out, phase);
    if phase.intervals.is_empty() {
        out.push_str("<p class=\"muted\">No intervals were recorded: no charts over time.</p>\n");
    } else {
        phase_time_charts(out, index, phase);
    }
    if phase_charts::has_spectrum(phase) {
        let note = if phase.target_rate.is_some() {
            "Latency at each percentile of the phase's successful operations, in milliseconds: service time (solid), response time from the scheduled start (dashed). Log scale: each step to the right is one more nine. A line ends at the percentile its count of operations reaches (8 operations: 87.5 %)."
        } else {
            "Service time at each percentile of the phase's successful operations, in milliseconds. Log scale: each step to the right is one more nine. A line ends at the percentile its count of operations reaches (8 operations: 87.5 %)."
        };
        chart(
            out,
            ChartOf::Phase(index),
            "spectrum",
            "Latency by percentile",
            note,
        );
    }
    out.push_str("</details>\n</section>\n");
}

fn phase_time_charts(out: &mut String, index: usize, phase: &PhaseResult) {
    let rule = SHORT_INTERVAL_RULE;
    let rated = phase.target_rate.is_some();
    let target = if rated {
        " The dashed grey line is the target rate of all operations together."
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
            "Successful operations per second in each interval, per operation (a bulk insert counts once).{target} {rule}"
        ),
    );
    if phase
        .operations
        .iter()
        .any(|o| o.operation == "bulk_insert")
    {
        chart(
            out,
            of(index),
            "documents",
            "Documents stored per second",
            &format!(
                "Documents the successful bulk inserts stored, per second of each interval. {rule}"
            ),
        );
    }
    chart(
        out,
        of(index),
        "latency",
        "Latency over time",
        &format!(
            "p50 (solid) and p99 (dashed) {} of each interval's successful operations, in milliseconds. {rule}",
            interval_latency(rated)
        ),
    );
    if phase_charts::had_failures(phase) {
        chart(
            out,
            of(index),
            "failures",
            "Failures over time",
            &format!(
                "Per second in each interval, per operation and kind (only those that happened): timeouts, failures that were 429 Too Many Requests, every other failure (error statuses, broken connections, bad answers, no document left to work on), and 429s after which the operation was sent again with <code>--retry-429</code>. {rule}"
            ),
        );
    }
    beside_charts(out, index, phase);
    if rated {
        chart(
            out,
            of(index),
            "late",
            "Late starts",
            &format!(
                "Operations per second that started later than scheduled (their latency counts from the scheduled start). {rule}"
            ),
        );
    }
}

/// The charts of what went on beside the operations, those the phase has figures for.
fn beside_charts(out: &mut String, index: usize, phase: &PhaseResult) {
    let beside = super::beside::beside(phase);
    let nodes = if beside.server.len() > 1 {
        " One line per node."
    } else {
        ""
    };
    let charts = [
        (
            "server-requests",
            "The server: requests and its own request time",
            format!(
                "Requests the server counted per second of each interval (solid, left axis: every client's, not only sofabench's), and the p99 of its own request time in milliseconds (dashed, right axis) as <code>_node/_local/_stats</code> gives it: CouchDB computes that over its own stats interval (10 s by default), not over this interval.{nodes}"
            ),
        ),
        (
            "server-memory",
            "The server: memory",
            format!(
                "The memory the server's Erlang VM held at each interval's end, in MiB (<code>_node/_local/_system</code>).{nodes}"
            ),
        ),
        (
            "server-work",
            "The server: background tasks and run queue",
            format!(
                "Background tasks running at each interval's end, of every kind (<code>_active_tasks</code>: compaction, indexing, replication; solid), and the Erlang VM's run queue (dashed).{nodes}"
            ),
        ),
        (
            "changes",
            "The _changes consumers",
            "Changes the consumers received per second, all together (solid, left axis), and their lag in seconds (dashed, right axis): how long ago the oldest write some consumer has not seen yet was answered.".to_string(),
        ),
        (
            "replication",
            "Continuous replication",
            "Documents each replica received per second (solid, left axis: what its <code>_changes</code> feed showed), and its replication lag in seconds (dashed, right axis): how long ago the oldest write not yet on it was answered on the source.".to_string(),
        ),
        (
            "disk",
            "The database on disk",
            "The database's file size and active size at each interval's end, in MiB (<code>GET /db</code>'s <code>sizes</code>). A gap is an interval whose look did not answer.".to_string(),
        ),
    ];
    for (kind, title, caption) in charts {
        if beside.has(kind) {
            let caption = format!("{caption} {SHORT_INTERVAL_RULE}");
            chart(out, ChartOf::Phase(index), kind, title, &caption);
        }
    }
}
