//! How to read the page's charts, said once for the page: what a line over time is, which
//! latency is drawn, the rule for short intervals, the kinds of failure, the percentile
//! axis and the server's figures. Each chart's own caption then says only what is
//! particular to it. Only what the page draws is explained.

use std::fmt::Write as _;

use super::interval_latency;
use super::phase_charts::PhaseCharts;
use super::steps::SHORT_INTERVAL_RULE;
use crate::results::RunResult;

/// The charts of what went on beside the operations, and what each draws.
pub const BESIDE: [(&str, &str); 6] = [
    (
        "server-requests",
        "<em>The server's requests</em>: requests it counted per second (every client's, not only sofabench's), and the p99 of its own request time (<code>_node/_local/_stats</code>), which CouchDB computes over its own stats interval (10 s by default), not over the chart's interval.",
    ),
    (
        "server-memory",
        "<em>The server's memory</em>: what its Erlang VM held at each interval's end, in MiB (<code>_node/_local/_system</code>).",
    ),
    (
        "server-work",
        "<em>Background tasks and run queue</em>: the tasks running at each interval's end, of every kind (<code>_active_tasks</code>: compaction, indexing, replication), and the Erlang VM's run queue.",
    ),
    (
        "changes",
        "<em>The _changes consumers</em>: changes received per second, all consumers together, and their lag: how long ago the oldest write some consumer has not seen yet was answered.",
    ),
    (
        "replication",
        "<em>Continuous replication</em>: documents each replica's <code>_changes</code> feed showed per second, and its lag: how long ago the oldest write not yet on it was answered on the source.",
    ),
    (
        "disk",
        "<em>The database on disk</em>: its file size and active size at each interval's end, in MiB (<code>GET /db</code>'s <code>sizes</code>); a gap is an interval whose look did not answer.",
    ),
];

/// What the page draws, as far as the note needs to know.
pub struct Drawn<'a> {
    pub result: &'a RunResult,
    pub phases: &'a [PhaseCharts],
    pub sweeps: bool,
    /// Whether some phase has a chart by percentile.
    pub spectrum: bool,
}

fn latency_item(result: &RunResult, spectrum: bool) -> String {
    let rated = result.phases.iter().filter(|p| p.target_rate.is_some());
    let measured = match rated.count() {
        0 => interval_latency(false).to_string(),
        n if n == result.phases.len() => interval_latency(true).to_string(),
        _ => format!(
            "{} in phases with a target rate (<code>--rate</code>), {} in the others",
            interval_latency(true),
            interval_latency(false)
        ),
    };
    let mut item = format!(
        "<em>Latency</em>, in milliseconds, of successful operations only: the {measured}. Over time, p50 is solid and p99 dashed. A latency chart whose values span more than tenfold is drawn on a log scale, and its caption says so."
    );
    if spectrum {
        item.push_str(" <em>By percentile</em>, the x axis is a log scale of 1 / (1 − percentile): each step to the right is one more nine; each line ends at the percentile its own count of operations reaches, and its caption says where.");
    }
    item
}

fn items(drawn: &Drawn) -> Vec<String> {
    let result = drawn.result;
    let rated = result.phases.iter().any(|p| p.target_rate.is_some());
    let mut items = vec![
        format!(
            "<em>Over time</em>, each interval's value is drawn as a level held from the interval's start to its end; on the run's charts the phases are the shaded bands, named above the lines where there is room. Hover a chart for the interval, its phase and its values. {SHORT_INTERVAL_RULE}"
        ),
        format!(
            "<em>Throughput</em> counts successful operations per second of each interval, a bulk insert once (the documents it stored have a chart of their own).{}",
            if rated {
                " The dashed grey line is the target rate (<code>--rate</code>)."
            } else {
                ""
            }
        ),
        latency_item(result, drawn.spectrum),
        "<em>Failures</em>, per second by kind: timeouts, failures that were 429 Too Many Requests, every other failure (error statuses, broken connections, bad answers, no document left to work on), and 429s after which the operation was sent again with <code>--retry-429</code> (not failures). A phase draws only the kinds that happened.".to_string(),
        "<em>CPU</em>: sofabench's own, as a share of the cores it may use (near 100 % the client itself may be the limit), and the whole machine's where it was measured (dashed).".to_string(),
    ];
    if rated {
        items.push("<em>Late starts</em>: operations per second that started later than scheduled under <code>--rate</code>; their latency counts from the scheduled start.".to_string());
    }
    if drawn.sweeps {
        items.push("<em>A sweep</em> draws a point per phase against the swept setting; a percentile only for a phase with enough operations to tell it from the maximum: 100 for p99, 1,000 for p99.9.".to_string());
    }
    for (kind, text) in BESIDE {
        if drawn.phases.iter().any(|p| p.time.beside.has(kind)) {
            items.push(text.to_string());
        }
    }
    items
}

/// The page's one note on reading its charts.
pub fn reading_note(out: &mut String, drawn: &Drawn) {
    out.push_str(
        "<section id=\"reading\" class=\"legend-note\">\n<h3>Reading the charts</h3>\n<ul>\n",
    );
    for item in items(drawn) {
        let _ = writeln!(out, "<li>{item}</li>");
    }
    out.push_str("</ul>\n</section>\n");
}
