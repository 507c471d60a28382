//! One self-contained HTML page of a result: the summary tables (Iron Cushion's fields,
//! latency percentiles, failures), the configuration, and per phase three charts drawn by
//! uPlot (vendored in `assets/uplot/`, MIT): throughput over time per operation, p50/p99
//! response time over time, and the latency distribution as a percentile spectrum on a
//! log axis (x = 1/(1-percentile), as HdrHistogram and wrk2 plot it).
//!
//! The page needs no network: uPlot, its style sheet, the page's own script and the data
//! (a JSON blob in `<script type="application/json">`) are all inside it.

use std::fmt::Write as _;

use serde::Serialize;

use super::phase_operations;
use crate::metrics::errors::label;
use crate::report::numbers::{grouped, grouped_decimal};
use crate::results::build::remote_field;
use crate::results::{
    IntervalOperation, Latency, PhaseResult, RunResult, Spread, histogram, per_second,
};
use crate::workload::Operation;

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("../../assets/report/report.js");
const PAGE_CSS: &str = include_str!("../../assets/report/report.css");

/// Points of the percentile spectrum per decade of 1/(1-percentile).
const SPECTRUM_STEPS_PER_DECADE: u32 = 20;
/// Decades shown: up to 99.9999%.
const SPECTRUM_DECADES: u32 = 6;

/// What the page's script draws, per phase.
#[derive(Serialize)]
struct ChartData {
    phases: Vec<PhaseCharts>,
}

#[derive(Serialize)]
struct PhaseCharts {
    name: String,
    time: TimeSeries,
    spectrum: Spectrum,
}

/// Whether any interval of the phase saw a failure or a 429 sent again: only then is there
/// a chart of them.
fn had_failures(phase: &PhaseResult) -> bool {
    phase
        .intervals
        .iter()
        .flat_map(|i| &i.operations)
        .any(|o| o.failed + o.retried_429 > 0)
}

/// Per interval: its end in seconds since the phase started, and per operation.
#[derive(Serialize)]
struct TimeSeries {
    x: Vec<f64>,
    operations: Vec<OperationSeries>,
}

#[derive(Serialize)]
struct OperationSeries {
    name: String,
    /// Per second; `None` for a partial interval (see [`is_partial`]).
    throughput: Vec<Option<f64>>,
    /// `None` where no operation of the kind succeeded in the interval.
    p50: Vec<Option<f64>>,
    p99: Vec<Option<f64>>,
    /// Per second: failures other than 429s, failures that were 429s, and 429s after
    /// which the operation was sent again; `None` for a partial interval.
    failed: Vec<Option<f64>>,
    rate_limited: Vec<Option<f64>>,
    retried_429: Vec<Option<f64>>,
}

/// Whether an interval is too short to draw as a rate: shorter than half the phase's
/// longest (the last one, cut by the phase's end). Five operations in 0.1 s drawn as 50/s
/// made every throughput chart end in a spike.
fn is_partial(length_seconds: f64, longest: f64) -> bool {
    length_seconds < longest / 2.0
}

/// x = 1/(1-q) for the quantiles q, and per line the latency at each, in milliseconds.
#[derive(Serialize)]
struct Spectrum {
    x: Vec<f64>,
    series: Vec<SpectrumLine>,
}

#[derive(Serialize)]
struct SpectrumLine {
    operation: String,
    label: String,
    /// True for response time (from the scheduled start), false for service time.
    response: bool,
    values: Vec<f64>,
}

fn time_series(phase: &PhaseResult) -> TimeSeries {
    let x = phase.intervals.iter().map(|i| i.elapsed_seconds).collect();
    let longest = phase
        .intervals
        .iter()
        .map(|i| i.length_seconds)
        .fold(0.0, f64::max);
    let operations = phase_operations(phase)
        .into_iter()
        .map(|name| {
            let mut series = OperationSeries {
                name: name.to_string(),
                throughput: Vec::new(),
                p50: Vec::new(),
                p99: Vec::new(),
                failed: Vec::new(),
                rate_limited: Vec::new(),
                retried_429: Vec::new(),
            };
            for interval in &phase.intervals {
                let op = interval.operations.iter().find(|o| o.operation == name);
                let ok = op.filter(|o| o.succeeded > 0);
                let whole = !is_partial(interval.length_seconds, longest);
                series
                    .throughput
                    .push(whole.then(|| op.map_or(0.0, |o| o.throughput)));
                series.p50.push(ok.map(|o| o.p50_ms));
                series.p99.push(ok.map(|o| o.p99_ms));
                let rate = |count: fn(&IntervalOperation) -> u64| {
                    whole.then(|| op.map_or(0.0, |o| per_second(count(o), interval.length_seconds)))
                };
                series
                    .failed
                    .push(rate(|o| o.failed.saturating_sub(o.rate_limited)));
                series.rate_limited.push(rate(|o| o.rate_limited));
                series.retried_429.push(rate(|o| o.retried_429));
            }
            series
        })
        .collect();
    TimeSeries { x, operations }
}

/// The quantiles of the spectrum as x = 1/(1-q): 1 (0%) to 10^6 (99.9999%).
fn spectrum_x() -> Vec<f64> {
    let steps = SPECTRUM_STEPS_PER_DECADE * SPECTRUM_DECADES;
    (0..=steps)
        .map(|k| 10f64.powf(f64::from(k) / f64::from(SPECTRUM_STEPS_PER_DECADE)))
        .collect()
}

/// Latency in milliseconds at each x of [`spectrum_x`]; `None` for an empty or unreadable
/// histogram.
fn spectrum_values(latency: &Latency, x: &[f64]) -> Option<Vec<f64>> {
    let h = histogram::decode(&latency.histogram).ok()?;
    if h.is_empty() {
        return None;
    }
    Some(
        x.iter()
            .map(|x| h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1_000.0)
            .collect(),
    )
}

fn spectrum(phase: &PhaseResult) -> Spectrum {
    let x = spectrum_x();
    let mut series = Vec::new();
    for op in &phase.operations {
        let mut add = |latency: &Latency, response: bool| {
            if let Some(values) = spectrum_values(latency, &x) {
                let kind = if response { "response" } else { "service" };
                series.push(SpectrumLine {
                    operation: op.operation.clone(),
                    label: if phase.target_rate.is_some() {
                        format!("{} ({kind})", op.operation)
                    } else {
                        op.operation.clone()
                    },
                    response,
                    values,
                });
            }
        };
        add(&op.latency, false);
        if phase.target_rate.is_some() {
            add(&op.response, true);
        }
    }
    Spectrum { x, series }
}

/// The JSON for a `<script>` element: `<` is written as `\u003c`, so no `</script>` (nor
/// `<!--`) inside a string can end the element early.
fn script_json(value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .expect("chart data serializes")
        .replace('<', "\\u003c")
}

/// Text for HTML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn phase_title(phase: &PhaseResult) -> String {
    match phase.name.as_str() {
        "bulk_insert" => "Bulk insert".to_string(),
        "crud" => "CRUD".to_string(),
        name => format!("Phase {name}"),
    }
}

fn seconds(value: f64) -> String {
    format!("{value:.6} s")
}

fn spread_row(out: &mut String, name: &str, s: &Spread) {
    let _ = writeln!(
        out,
        "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        escape(name),
        seconds(s.min),
        seconds(s.max),
        seconds(s.median),
        seconds(s.sd)
    );
}

/// Iron Cushion's fields, with its names and in its order.
fn iron_cushion_tables(out: &mut String, phase: &PhaseResult) {
    let f = &phase.iron_cushion;
    out.push_str("<div class=\"tables\">\n<table>\n<tr><th>Iron Cushion field</th><th class=\"num\">value</th></tr>\n");
    let mut row = |name: &str, value: String| {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
            escape(name),
            escape(&value)
        );
    };
    row("timeTaken", format!("{:.6} secs", f.time_taken));
    row(
        "totalJsonBytesSent",
        format!("{} bytes", grouped(f.total_json_bytes_sent)),
    );
    row(
        "totalJsonBytesReceived",
        format!("{} bytes", grouped(f.total_json_bytes_received)),
    );
    let known: Vec<&str> = Operation::ALL.into_iter().map(remote_field).collect();
    let mut remote: Vec<&String> = f.remote_processing.keys().collect();
    remote.sort_by_key(|name| known.iter().position(|k| k == name).unwrap_or(usize::MAX));
    let mut rates: Vec<String> = remote.iter().map(|name| format!("{name}Rate")).collect();
    rates.insert(rates.len().min(1), "localInsertRate".to_string());
    for name in f.rates.keys() {
        if !rates.contains(name) {
            rates.push(name.clone());
        }
    }
    for name in &rates {
        if let Some(value) = f.rates.get(name) {
            row(name, format!("{} docs/sec", grouped_decimal(*value, 3)));
        }
    }
    out.push_str("</table>\n<table>\n<tr><th>time per connection</th><th class=\"num\">min</th><th class=\"num\">max</th><th class=\"num\">median</th><th class=\"num\">sd</th></tr>\n");
    spread_row(out, "localProcessing", &f.local_processing);
    spread_row(out, "sendData", &f.send_data);
    for name in remote {
        spread_row(out, name, &f.remote_processing[name]);
    }
    spread_row(out, "receiveData", &f.receive_data);
    out.push_str("</table>\n</div>\n");
}

fn latency_table(out: &mut String, phase: &PhaseResult, response: bool) {
    let title = if response {
        "Response time (ms), from each operation's scheduled start"
    } else {
        "Service time (ms), request's first byte out to answer's last byte in"
    };
    let _ = writeln!(out, "<h3>{title}</h3>");
    out.push_str("<table>\n<tr><th>operation</th><th class=\"num\">count</th><th class=\"num\">errors</th><th class=\"num\">throughput/s</th><th class=\"num\">mean</th><th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p99</th><th class=\"num\">p99.9</th><th class=\"num\">max</th></tr>\n");
    for op in &phase.operations {
        let l = if response { &op.response } else { &op.latency };
        let ms = |v: f64| {
            if l.count == 0 {
                "-".to_string()
            } else {
                format!("{v:.3}")
            }
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&op.operation),
            grouped(op.succeeded),
            grouped(op.failed),
            grouped_decimal(op.throughput, 1),
            ms(l.mean_ms),
            ms(l.p50_ms),
            ms(l.p90_ms),
            ms(l.p99_ms),
            ms(l.p999_ms),
            ms(l.max_ms)
        );
    }
    out.push_str("</table>\n");
}

/// `name ×count, …`, most frequent first, each name as `show` writes it.
fn counts(map: &std::collections::BTreeMap<String, u64>, show: fn(&str) -> String) -> String {
    if map.is_empty() {
        return "-".to_string();
    }
    let mut sorted: Vec<(&String, &u64)> = map.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted
        .iter()
        .map(|(name, n)| format!("{} ×{}", escape(&show(name)), grouped(**n)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn answers_table(out: &mut String, phase: &PhaseResult) {
    out.push_str("<h3>Answers</h3>\n<table>\n<tr><th>operation</th><th class=\"num\">documents</th><th class=\"num\">documents failed</th><th class=\"num\">documents/s</th><th>HTTP statuses</th><th>failures</th></tr>\n");
    for op in &phase.operations {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&op.operation),
            grouped(op.documents),
            grouped(op.documents_failed),
            grouped_decimal(per_second(op.documents, phase.wall_seconds), 1),
            counts(&op.statuses, str::to_string),
            counts(&op.failures, label)
        );
    }
    out.push_str("</table>\n");
}

/// What 429s did, per operation that met any: how many came, how many were sent again
/// and after how long, how many failed, and what the server said.
fn rate_limit_table(out: &mut String, phase: &PhaseResult) {
    let limited: Vec<_> = phase
        .operations
        .iter()
        .filter(|op| op.statuses.contains_key("429") || op.retried_429 > 0)
        .collect();
    if limited.is_empty() {
        return;
    }
    out.push_str("<h3>Rate limited (429 Too Many Requests)</h3>\n<table>\n<tr><th>operation</th><th class=\"num\">429 answers</th><th class=\"num\">sent again</th><th class=\"num\">waited</th><th class=\"num\">failed as rate_limited</th><th>what the server said</th></tr>\n");
    for op in limited {
        let example = op
            .failure_samples
            .get("rate_limited")
            .and_then(|texts| texts.first())
            .map_or("-", String::as_str);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"mono\">{}</td></tr>",
            escape(&op.operation),
            grouped(op.statuses.get("429").copied().unwrap_or(0)),
            grouped(op.retried_429),
            seconds(op.retry_429_wait_ns as f64 / 1e9),
            grouped(op.failures.get("rate_limited").copied().unwrap_or(0)),
            escape(example)
        );
    }
    out.push_str("</table>\n");
}

fn chart(out: &mut String, index: usize, kind: &str, caption: &str, note: &str) {
    let _ = writeln!(
        out,
        "<figure class=\"chart-box\"><figcaption>{caption}</figcaption><div class=\"note\">{note}</div><div class=\"chart\" data-phase=\"{index}\" data-chart=\"{kind}\"></div></figure>"
    );
}

fn phase_section(out: &mut String, index: usize, phase: &PhaseResult, interrupted: bool) {
    let _ = writeln!(
        out,
        "<section id=\"phase-{}\">\n<h2>{}</h2>",
        escape(&phase.name),
        escape(&phase_title(phase))
    );
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
    iron_cushion_tables(out, phase);
    latency_table(out, phase, false);
    if phase.target_rate.is_some() {
        latency_table(out, phase, true);
    }
    answers_table(out, phase);
    rate_limit_table(out, phase);

    if phase.intervals.is_empty() {
        out.push_str("<p class=\"muted\">No intervals were recorded: no charts over time.</p>\n");
    } else {
        chart(
            out,
            index,
            "throughput",
            "Throughput over time",
            "Successful operations per second in each interval; an interval shorter than half the others (the last, cut by the phase's end) is left out rather than drawn as a rate.",
        );
        // The interval histograms hold response times: from the scheduled start under a
        // rate, from sending otherwise, which the caption must say.
        let measured = if phase.target_rate.is_some() {
            "response time (from each operation's scheduled start)"
        } else {
            "latency from sending to the answer's last byte (service time, plus any reconnect, login or wait after a 429)"
        };
        chart(
            out,
            index,
            "latency",
            "Latency over time",
            &format!(
                "p50 (solid) and p99 (dashed) {measured} of each interval's successful operations, in milliseconds."
            ),
        );
        if had_failures(phase) {
            chart(
                out,
                index,
                "failures",
                "Failures over time",
                "Per second in each interval: failed operations (solid), failures that were 429 Too Many Requests, rate_limited (dashed), and 429s after which the operation was sent again with --retry-429 (dotted).",
            );
        }
    }
    let measured = phase.operations.iter().any(|o| o.latency.count > 0);
    if measured {
        let note = if phase.target_rate.is_some() {
            "Latency at each percentile of the phase's successful operations: service time (solid), response time from the scheduled start (dashed). Log scale: each step to the right is one more nine."
        } else {
            "Service time at each percentile of the phase's successful operations. Log scale: each step to the right is one more nine."
        };
        chart(out, index, "spectrum", "Latency by percentile", note);
    }
    out.push_str("</section>\n");
}

fn config_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// The page.
pub fn render(result: &RunResult) -> String {
    let data = ChartData {
        phases: result
            .phases
            .iter()
            .map(|phase| PhaseCharts {
                name: phase.name.clone(),
                time: time_series(phase),
                spectrum: spectrum(phase),
            })
            .collect(),
    };
    let mut out = String::with_capacity(UPLOT_JS.len() + 64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
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
    let hosts: Vec<&str> = result.nodes.iter().map(|n| n.host.as_str()).collect();
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} {} · started {} · ended {} · client {} · schema <code>{}</code></p>",
        escape(&result.tool.name),
        escape(&result.tool.version),
        escape(&result.started_at),
        escape(&result.ended_at),
        escape(&hosts.join(", ")),
        escape(&result.schema)
    );
    if let Some(address) = result.config.get("database_address") {
        let _ = writeln!(
            out,
            "<p>Database <code>{}</code> at <code>{}</code></p>",
            escape(&target),
            escape(&config_value(address))
        );
    }
    if result.interrupted {
        out.push_str("<p class=\"warn\">This run was interrupted: the figures cover what was done before the stop.</p>\n");
    }
    if result.phases.is_empty() {
        out.push_str("<p class=\"muted\">The result has no phases.</p>\n");
    }
    let last = result.phases.len().saturating_sub(1);
    for (index, phase) in result.phases.iter().enumerate() {
        phase_section(&mut out, index, phase, result.interrupted && index == last);
    }
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
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let page = render(&super::super::sample::result());
        assert!(!page.contains("http://") || !page.contains("src=\"http"));
        assert!(!page.contains("<script src") && !page.contains("<link"));
        // The template name holds `</script>`: it must appear escaped only.
        assert!(page.contains("&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;.json"));
        assert_eq!(
            page.matches("</script>").count(),
            3,
            "only the three elements end"
        );
        assert_eq!(page.matches("data-chart=").count(), 4);
        assert!(page.contains("data-chart=\"failures\""));
        // 429s are their own kind, with what was retried and what the server said.
        assert!(page.contains("rate_limited (429) ×1"), "{page}");
        assert!(page.contains("<h3>Rate limited (429 Too Many Requests)</h3>"));
        assert!(page.contains(
            "<tr><td>read</td><td class=\"num\">4</td><td class=\"num\">3</td><td class=\"num\">7.500000 s</td><td class=\"num\">1</td><td class=\"mono\">Retry-After: 5 · {&quot;error&quot;:&quot;too_many_requests&quot;}</td></tr>"
        ));
        assert!(page.contains("remoteReadProcessingRate"));
        let start = page.find("id=\"sofabench-data\">").unwrap() + 20;
        let end = start + page[start..].find("</script>").unwrap();
        let data: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
        let spectrum = &data["phases"][0]["spectrum"];
        assert_eq!(spectrum["x"].as_array().unwrap().len(), 121);
        assert_eq!(spectrum["x"][120].as_f64().unwrap().round(), 1e6);
        let read = &spectrum["series"][1];
        assert_eq!(read["operation"], "read");
        assert_eq!(read["values"][0].as_f64().unwrap(), 0.8);
        let reads = &data["phases"][0]["time"]["operations"][1];
        assert_eq!(reads["p50"][0].as_f64(), Some(1.0));
        let creates = &data["phases"][0]["time"]["operations"][0];
        assert!(creates["p50"][0].is_null());
        assert_eq!(reads["rate_limited"][1].as_f64(), Some(1.0));
        assert_eq!(reads["retried_429"][1].as_f64(), Some(3.0));
        assert_eq!(reads["failed"][1].as_f64(), Some(0.0));
    }

    #[test]
    fn a_short_last_interval_is_left_out_of_the_rates() {
        let mut result = super::super::sample::result();
        let phase = &mut result.phases[0];
        assert!(phase.intervals.len() >= 2, "the sample has intervals");
        for interval in &mut phase.intervals {
            interval.length_seconds = 1.0;
        }
        phase.intervals.last_mut().unwrap().length_seconds = 0.1;
        let series = time_series(phase);
        for op in &series.operations {
            let (last, rest) = op.throughput.split_last().unwrap();
            assert_eq!(*last, None, "{}", op.name);
            assert!(rest.iter().all(Option::is_some), "{}", op.name);
            assert_eq!(*op.failed.last().unwrap(), None);
        }
    }

    #[test]
    fn spectrum_runs_from_zero_to_six_nines() {
        let x = spectrum_x();
        assert_eq!(x[0], 1.0);
        assert!((x[20] - 10.0).abs() < 1e-9);
        assert!((1.0 - 1.0 / x.last().unwrap() - 0.999999).abs() < 1e-12);
    }
}
