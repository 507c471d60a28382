//! The page's first sections: the run as a whole on one time axis with its table of
//! phases, and a sweep's charts against the swept setting with the reference table.

use std::fmt::Write as _;

use super::interval_latency;
use super::markup::{ChartOf, chart, escape};
use super::overview::RunCharts;
use super::steps::SHORT_INTERVAL_RULE;
use super::sweep::SweepChart;
use super::tables;
use crate::report::numbers::grouped;
use crate::results::RunResult;

/// The run's charts, on one time axis.
pub fn overview_section(out: &mut String, result: &RunResult, run: &RunCharts) {
    out.push_str("<section id=\"overview\">\n<h2>Run overview</h2>\n");
    let seconds = run.phases.last().map_or(0.0, |p| p.end);
    let ops = result.phases.iter().flat_map(|p| &p.operations);
    let succeeded: u64 = ops.clone().map(|o| o.succeeded).sum();
    let failed: u64 = ops.map(|o| o.failed).sum();
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} over {:.1} s: {} operations succeeded, {} failed. The phases are the shaded bands, named above the lines where there is room; hover a chart for its phase and values.</p>",
        crate::words::counted(result.phases.len() as u64, "phase"),
        seconds,
        grouped(succeeded),
        grouped(failed)
    );
    run_chart_boxes(out, result, run);
    out.push_str("<h3>Phases</h3>\n");
    tables::phases_table(out, result);
    out.push_str("</section>\n");
}

/// The run's charts, each with a caption that says what it draws.
fn run_chart_boxes(out: &mut String, result: &RunResult, run: &RunCharts) {
    let rule = SHORT_INTERVAL_RULE;
    let rated = result.phases.iter().any(|p| p.target_rate.is_some());
    let target = if run.has("target") {
        " The dashed line is the target rate (<code>--rate</code>) of the phases that had one."
    } else {
        ""
    };
    chart(
        out,
        ChartOf::Run,
        "run-throughput",
        "Throughput, all operations",
        &format!(
            "Successful operations of every kind per second (a bulk insert counts once), each interval's value held over the interval.{target} {rule}"
        ),
    );
    if run.has("documents") {
        chart(
            out,
            ChartOf::Run,
            "run-documents",
            "Documents stored per second by bulk inserts",
            &format!(
                "Documents the successful bulk inserts stored, per second of each interval. {rule}"
            ),
        );
    }
    let measured = if rated && result.phases.iter().all(|p| p.target_rate.is_some()) {
        interval_latency(true).to_string()
    } else if rated {
        format!(
            "{} in phases with a target rate, {} in the others",
            interval_latency(true),
            interval_latency(false)
        )
    } else {
        interval_latency(false).to_string()
    };
    chart(
        out,
        ChartOf::Run,
        "run-latency",
        "Latency, all operations",
        &format!(
            "p50 (solid) and p99 (dashed) of each interval's successful operations of every kind, in milliseconds: {measured}. {rule}"
        ),
    );
    let none = if run.had_failures() {
        ""
    } else {
        " Nothing failed in this run."
    };
    chart(
        out,
        ChartOf::Run,
        "run-failures",
        "Failures and timeouts by kind",
        &format!(
            "Per second of each interval, all operations together: timeouts, failures that were 429 Too Many Requests, every other failure (error statuses, broken connections, bad answers, no document left to work on), and 429s after which the operation was sent again (<code>--retry-429</code>; not failures).{none} {rule}"
        ),
    );
    if rated {
        chart(
            out,
            ChartOf::Run,
            "run-late",
            "Late starts",
            &format!(
                "Operations per second that started later than scheduled under <code>--rate</code> (their latency counts from the scheduled start). {rule}"
            ),
        );
    }
    let machine = if run.has("machine_cpu") {
        " and the whole machine's (every process, dashed), as a share of all its cores"
    } else {
        ""
    };
    chart(
        out,
        ChartOf::Run,
        "run-cpu",
        "CPU",
        &format!(
            "sofabench's own CPU use in each interval as a share of the cores it may use, in percent{machine}; near 100 % the client itself may be the limit. {rule}"
        ),
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
        chart(
            out,
            ChartOf::Sweep(index),
            "sweep-latency",
            &format!("Latency percentiles against {axis}"),
            &format!(
                "p50 (solid), p99 (dashed) and p99.9 (dotted) {} of each phase's successful operations of every kind, in milliseconds. A percentile is drawn only for a phase with enough operations to tell it from the maximum: 100 for p99, 1,000 for p99.9.",
                sweep.latency
            ),
        );
    }
    out.push_str(&reference);
    out.push_str("</section>\n");
}
