//! The page's tables of one phase: Iron Cushion's fields, latency percentiles, answers
//! and 429s; and of the run: a line per phase, and the reference benchmarks' own forms.

use std::fmt::Write as _;

use super::markup::{escape, seconds};
use super::measures::{latency_histogram, quantile_ms};
use crate::metrics::errors::label;
use crate::report::forms;
use crate::report::numbers::{grouped, grouped_decimal};
use crate::results::build::remote_field;
use crate::results::{PhaseResult, RunResult, Spread, per_second};
use crate::scenario::Form;
use crate::workload::Operation;

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
pub fn iron_cushion_tables(out: &mut String, phase: &PhaseResult) {
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

pub fn latency_table(out: &mut String, phase: &PhaseResult, response: bool) {
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

pub fn answers_table(out: &mut String, phase: &PhaseResult) {
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
pub fn rate_limit_table(out: &mut String, phase: &PhaseResult) {
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

/// Updates of hot documents (`--hot-docs`), where a 409 is expected: how many PUTs they
/// sent, how many met a 409, the revisions fetched after one, and the attempts each took.
pub fn hot_table(out: &mut String, phase: &PhaseResult) {
    let hot: Vec<_> = phase
        .operations
        .iter()
        .filter_map(|op| Some((op, op.hot.as_ref()?)))
        .collect();
    if hot.is_empty() {
        return;
    }
    out.push_str("<h3>Hot documents (a 409 fetches the current revision and sends again)</h3>\n<table>\n<tr><th>operation</th><th class=\"num\">PUTs</th><th class=\"num\">409 answers</th><th class=\"num\">409 rate</th><th class=\"num\">fetches</th><th>succeeded at attempt</th><th class=\"num\">gave up</th></tr>\n");
    for (op, hot) in hot {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1} %</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            escape(&op.operation),
            grouped(hot.attempts),
            grouped(hot.conflicts),
            hot.conflict_rate * 100.0,
            grouped(hot.fetches),
            escape(&hot.attempts_text()),
            grouped(hot.gave_up)
        );
    }
    out.push_str("</table>\n");
}

/// Operations on existing data (`--key-range`, `--key-sample`): what they found, what
/// was missing, and for writes the 409s and the revisions fetched first.
pub fn existing_table(out: &mut String, phase: &PhaseResult) {
    let rows: Vec<_> = phase
        .operations
        .iter()
        .filter_map(|op| Some((op, op.existing.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Existing data (a missing document or a 409 is counted, not a failure)</h3>\n<table>\n<tr><th>operation</th><th class=\"num\">found</th><th class=\"num\">missing (404)</th><th class=\"num\">conflicts (409)</th><th class=\"num\">revisions fetched first</th></tr>\n");
    for (op, existing) in rows {
        let found = existing.found(op.succeeded);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&op.operation),
            grouped(found),
            grouped(existing.misses),
            grouped(existing.conflicts),
            grouped(existing.fetches)
        );
    }
    out.push_str("</table>\n");
}

/// The indexes built around the phase, and whether its operations ran meanwhile.
pub fn index_builds_table(out: &mut String, phase: &PhaseResult) {
    if phase.index_builds.is_empty() {
        return;
    }
    out.push_str("<h3>Index builds (from the index's creation until a query waiting for it answered)</h3>\n<table>\n<tr><th>index</th><th>queries</th><th class=\"num\">seconds</th><th>when</th></tr>\n");
    for build in &phase.index_builds {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.3}</td><td>{}</td></tr>",
            escape(&build.index),
            escape(&build.queries.join(", ")),
            build.seconds,
            crate::report::indexes::when(build.when)
        );
    }
    out.push_str("</table>\n");
}

/// Each continuous replication job's state over the phase, where the server lists its
/// jobs (`_scheduler/jobs`).
pub fn replication_jobs_table(out: &mut String, phase: &PhaseResult) {
    let Some(replication) = &phase.replication else {
        return;
    };
    if replication.jobs.is_empty() {
        return;
    }
    out.push_str("<h3>Replication jobs (<code>_scheduler/jobs</code> at each interval's end)</h3>\n<table>\n<tr><th>replica</th><th>job (<code>_replicator</code> document)</th><th>state over time (seconds from the phase's start)</th><th class=\"num\">documents written</th><th class=\"num\">write failures</th></tr>\n");
    for replica in &replication.replicas {
        for document in &replica.documents {
            let looks: Vec<_> = replication
                .jobs
                .iter()
                .filter(|j| &j.document == document)
                .collect();
            let last = looks.last();
            let count = |n: Option<u64>| n.map_or("?".to_string(), grouped);
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(replica.shown()),
                escape(document),
                escape(&crate::report::replication::event_runs(&looks)),
                count(last.and_then(|l| l.docs_written)),
                count(last.and_then(|l| l.doc_write_failures)),
            );
        }
    }
    out.push_str("</table>\n");
}

/// A row per phase, each naming its section: what it did, how fast, how slow, what
/// failed. With fifty phases this is where a reader starts.
pub fn phases_table(out: &mut String, result: &RunResult) {
    let rated = result.phases.iter().any(|p| p.target_rate.is_some());
    let bulk = result
        .phases
        .iter()
        .flat_map(|p| &p.operations)
        .any(|o| o.operation == "bulk_insert");
    let mut note = "Operations: successful ones (a bulk insert counts once); per second of the phase's wall-clock time. p50 and p99: service time of the successful operations of every kind, in milliseconds.".to_string();
    if bulk {
        note.push_str(" Documents/s: documents the bulk inserts stored.");
    }
    if rated {
        note.push_str(" Under <code>--rate</code>: the target, the p99 response time (from each operation's scheduled start) and the operations that started late.");
    }
    let _ = writeln!(out, "<p class=\"note\">{note}</p>");
    out.push_str("<table class=\"phases\">\n<tr><th>phase</th><th class=\"num\">seconds</th><th class=\"num\">connections</th><th class=\"num\">operations</th><th class=\"num\">failed</th><th class=\"num\">operations/s</th>");
    if bulk {
        out.push_str("<th class=\"num\">documents/s</th>");
    }
    out.push_str("<th class=\"num\">p50 ms</th><th class=\"num\">p99 ms</th>");
    if rated {
        out.push_str("<th class=\"num\">target/s</th><th class=\"num\">p99 response ms</th><th class=\"num\">late</th>");
    }
    out.push_str("</tr>\n");
    for (index, phase) in result.phases.iter().enumerate() {
        phase_row(out, index, phase, bulk, rated);
    }
    out.push_str("</table>\n");
}

fn phase_row(out: &mut String, index: usize, phase: &PhaseResult, bulk: bool, rated: bool) {
    let ops = &phase.operations;
    let succeeded: u64 = ops.iter().map(|o| o.succeeded).sum();
    let failed: u64 = ops.iter().map(|o| o.failed).sum();
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let service = latency_histogram(ops.iter().map(|o| &o.latency));
    let cell = |text: String| format!("<td class=\"num\">{text}</td>");
    let mut cells = vec![
        format!(
            "<td><a href=\"#phase-{index}\">{}</a></td>",
            escape(&phase.name)
        ),
        cell(format!("{:.3}", phase.wall_seconds)),
        cell(grouped(phase.connections)),
        cell(grouped(succeeded)),
        cell(grouped(failed)),
        cell(grouped_decimal(
            per_second(succeeded, phase.wall_seconds),
            1,
        )),
    ];
    if bulk {
        let documents = ops
            .iter()
            .filter(|o| o.operation == "bulk_insert")
            .map(|o| o.documents)
            .reduce(u64::saturating_add);
        cells.push(cell(documents.map_or("-".to_string(), |n| {
            grouped_decimal(per_second(n, phase.wall_seconds), 1)
        })));
    }
    cells.push(cell(ms(quantile_ms(&service, 0.5))));
    cells.push(cell(ms(quantile_ms(&service, 0.99))));
    if rated {
        let response = latency_histogram(ops.iter().map(|o| &o.response));
        let target = phase
            .target_rate
            .map_or("-".to_string(), |r| grouped_decimal(r, 1));
        cells.push(cell(target));
        cells.push(cell(ms(phase
            .target_rate
            .and(quantile_ms(&response, 0.99)))));
        cells.push(cell(grouped(phase.late)));
    }
    let _ = writeln!(out, "<tr>{}</tr>", cells.concat());
}

/// The reference benchmark's own result form, for a run of the built-in scenario that
/// reproduces it, made by the code that prints it in the text report.
pub fn reference_table(out: &mut String, result: &RunResult) {
    let form = result
        .config
        .get("scenario")
        .and_then(|name| name.as_str())
        .and_then(crate::scenario::builtin)
        .map(|b| b.form());
    match form {
        Some(Form::Titan) => titan_table(out, &result.phases),
        Some(Form::Scaling) => {
            out.push_str("<h3>couchbase-tests' scaling table</h3>\n<p class=\"muted\">Per count: the phases' wall-clock times and successful operations per second; the weighted average is all operations over all time.</p>\n");
            let _ = writeln!(
                out,
                "<pre class=\"form\">{}</pre>",
                escape(&forms::scaling(&result.phases))
            );
        }
        Some(Form::Fabric) => {
            out.push_str("<h3>CouchDB fabric_bench's steps</h3>\n<p class=\"muted\">Per step: documents, reads or rows per second of the step's wall-clock time, as fabric_bench prints them (unrounded).</p>\n");
            let _ = writeln!(
                out,
                "<pre class=\"form\">{}</pre>",
                escape(&forms::fabric(&result.phases))
            );
        }
        Some(Form::Standard) | None => {}
    }
}

/// titan-loadtest's lines as a table; their plain tab-separated text, for pasting into a
/// spreadsheet, is in the text report.
fn titan_table(out: &mut String, phases: &[PhaseResult]) {
    out.push_str("<h3>titan-loadtest's result lines</h3>\n<table class=\"form\">\n<tr><th>phase</th><th class=\"num\">duration s</th><th class=\"num\">writes</th><th class=\"num\">write rate/s</th><th class=\"num\">reads</th><th class=\"num\">read rate/s</th><th class=\"num\">hits</th></tr>\n");
    for line in forms::titan(phases).lines() {
        let mut cells = line.split('\t');
        let name = cells.next().unwrap_or_default();
        let _ = write!(out, "<tr><td>{}</td>", escape(name));
        for cell in cells {
            let _ = write!(out, "<td class=\"num\">{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}
