//! One self-contained HTML page of a result. First the answer: the verdict and a table
//! with a line per phase; then one note on how to read the charts (said once, not per
//! chart); then the run as a whole: every phase on one time axis (total throughput,
//! latency, failures by kind, late starts, the client's CPU); then, for a sweep, its phases drawn against
//! the swept setting with the reference benchmark's own table; then each phase: its
//! tables (Iron Cushion's fields, latency percentiles, answers) and its charts over time
//! per operation and by percentile; last the environment (server and client machine) and
//! the configuration.
//!
//! Charts are drawn by uPlot (vendored in `assets/uplot/`, MIT) and the page's script
//! (`assets/report/`). The page needs no network: uPlot, the style sheets, the script and
//! the data (a JSON blob in `<script type="application/json">`) are all inside it.
//!
//! One file per concern: [`steps`] (series over time and the rule for short intervals),
//! [`measures`] (what is drawn of an interval or a phase), [`overview`], [`phase_charts`]
//! and [`sweep`] (the data of each kind of chart), [`summary`] (the verdict), [`reading`]
//! (the page's one note on its charts), [`run_section`] and [`phase_section`] (the
//! sections with their charts' captions, computed from what each draws), [`environment`]
//! (the server and the client machine), [`scale`] (linear or log), [`tables`],
//! [`markup`] (escaping and a chart's box), and this file, the page's frame.

mod beside;
mod devices;
mod disk;
mod environment;
mod markup;
mod measures;
mod overview;
mod phase_charts;
mod phase_section;
mod reading;
mod run_section;
mod scale;
mod steps;
mod summary;
mod sweep;
mod tables;

use std::fmt::Write as _;

use serde::Serialize;

use self::markup::{escape, script_json};
use self::overview::RunCharts;
use self::phase_charts::PhaseCharts;
use self::sweep::SweepChart;
use crate::results::RunResult;

const UPLOT_JS: &str = include_str!("../../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("../../../assets/report/report.js");
const PAGE_CSS: &str = include_str!("../../../assets/report/report.css");

/// With more phases than this, each phase's section starts folded: the overview and the
/// table of phases come first, and a phase's charts are drawn when it is opened.
const PHASES_SHOWN_OPEN: usize = 4;

/// What the page's script draws.
#[derive(Serialize)]
struct ChartData {
    run: RunCharts,
    sweeps: Vec<SweepChart>,
    phases: Vec<PhaseCharts>,
}

/// What the interval histograms hold, which every caption of latency over time says.
pub(crate) fn interval_latency(rated: bool) -> &'static str {
    if rated {
        "response time (from each operation's scheduled start)"
    } else {
        "latency from sending to the answer's last byte (service time, plus any reconnect, login or wait after a 429)"
    }
}

fn config_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// The most client machines the page's first line names; a merged result of more says
/// how many others there were.
const MOST_HOSTS_NAMED: usize = 8;

/// The client machines' host names for the page's first line, each bounded: a result
/// file may hold any number of machines with names of any length.
fn client_hosts(result: &RunResult) -> String {
    let mut named: Vec<String> = (result.nodes.iter())
        .take(MOST_HOSTS_NAMED)
        .map(|n| crate::results::environment::bounded(&n.host))
        .collect();
    let others = result.nodes.len().saturating_sub(MOST_HOSTS_NAMED);
    if others > 0 {
        named.push(format!("and {others} more"));
    }
    named.join(", ")
}

fn header(out: &mut String, result: &RunResult) {
    let target = result
        .config
        .get("database_name")
        .map(config_value)
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<title>sofabench result {} {}</title>",
        escape(&target),
        escape(&result.started_at)
    );
    let _ = writeln!(
        out,
        "<style>\n{UPLOT_CSS}\n</style>\n<style>\n{PAGE_CSS}</style>\n</head>\n<body>"
    );
    let _ = writeln!(out, "<h1>sofabench result</h1>");
    let hosts = client_hosts(result);
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} {} · started {} · ended {} · client {} · schema <code>{}</code></p>",
        escape(&result.tool.name),
        escape(&result.tool.version),
        escape(&result.started_at),
        escape(&result.ended_at),
        escape(&hosts),
        escape(&result.schema)
    );
    if let Some(address) = result.config.get("database_address") {
        let scenario = result
            .config
            .get("scenario")
            .map(|s| format!(" · scenario <code>{}</code>", escape(&config_value(s))))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>Database <code>{}</code> at <code>{}</code>{scenario}</p>",
            escape(&target),
            escape(&config_value(address))
        );
    }
}

fn configuration(out: &mut String, result: &RunResult) {
    out.push_str("<section id=\"configuration\">\n<h2>Configuration</h2>\n<table>\n<tr><th>setting</th><th>value</th></tr>\n");
    for (key, value) in &result.config {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"mono\">{}</td></tr>",
            escape(key),
            escape(&config_value(value))
        );
    }
    out.push_str("</table>\n</section>\n");
}

/// The page.
pub fn render(result: &RunResult) -> String {
    let data = ChartData {
        run: overview::run_charts(result),
        sweeps: sweep::charts(&result.phases),
        phases: result.phases.iter().map(PhaseCharts::of).collect(),
    };
    let mut out = String::with_capacity(UPLOT_JS.len() + 64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    header(&mut out, result);
    if result.phases.is_empty() {
        out.push_str("<p class=\"muted\">The result has no phases.</p>\n");
    } else {
        let seconds = data.run.phases.last().map_or(0.0, |p| p.end);
        summary::summary_section(&mut out, result, seconds);
        reading::reading_note(
            &mut out,
            &reading::Drawn {
                result,
                phases: &data.phases,
                sweeps: !data.sweeps.is_empty(),
                spectrum: result.phases.iter().any(phase_charts::has_spectrum),
            },
        );
        run_section::overview_section(&mut out, result, &data.run);
        run_section::sweep_section(&mut out, result, &data.sweeps);
    }
    let last = result.phases.len().saturating_sub(1);
    let open = result.phases.len() <= PHASES_SHOWN_OPEN;
    for (index, phase) in result.phases.iter().enumerate() {
        let interrupted = result.interrupted && index == last;
        let charts = (phase, &data.phases[index]);
        phase_section::phase_section(&mut out, index, charts, interrupted, open);
    }
    environment::environment_section(&mut out, result);
    configuration(&mut out, result);
    out.push_str("<footer>Written by sofabench from a result file (docs/RESULTS.md). Charts drawn with uPlot 1.6.32, © Leon Sorokin, MIT License.</footer>\n");
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"sofabench-data\">{}</script>",
        script_json(&data)
    );
    let _ = writeln!(
        out,
        "<script>\n{UPLOT_JS}\n</script>\n<script>\n{PAGE_JS}</script>\n</body>\n</html>"
    );
    out
}

#[cfg(test)]
mod tests;
