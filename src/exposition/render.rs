//! The metrics the endpoint exports, by name, with their help: what a dashboard queries.
//! Names follow Prometheus's conventions: the `sofabench_` prefix, base units (seconds),
//! `_total` on counters. Counters run from the start of the run over all its phases, so
//! they only grow; the phase running is a label of its own info metric.

use super::buckets::Buckets;
use super::figures::{Figures, OperationFigures};
use super::text::{Exposition, Family, Format, Kind, Value};
use crate::workload::Operation;

/// The run as a whole, fixed when it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLabels {
    pub version: &'static str,
    pub node_index: u64,
    pub node_count: u64,
}

/// What the process as a whole reads at the moment of the scrape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessFigures {
    pub cpu_seconds: f64,
    pub cores: f64,
    pub open_connections: u64,
    pub logins: u64,
    pub failed_logins: u64,
}

impl ProcessFigures {
    pub fn now() -> ProcessFigures {
        let (logins, failed_logins) = crate::metrics::process::logins();
        ProcessFigures {
            cpu_seconds: crate::cpu::process_cpu().as_secs_f64(),
            cores: crate::cpu::cores(),
            open_connections: crate::metrics::process::open_connections(),
            logins,
            failed_logins,
        }
    }
}

const fn family(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family {
        name,
        kind,
        help,
        unit: None,
    }
}

const fn in_seconds(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family {
        name,
        kind,
        help,
        unit: Some("seconds"),
    }
}

pub const RUN: Family = family(
    "sofabench_run",
    Kind::Info,
    "The run: the version of sofabench, and this node's place among the nodes that run it together.",
);
pub const PHASE: Family = family(
    "sofabench_phase",
    Kind::Info,
    "The phase running (or the last one, once the run is finished), numbered from 1.",
);
pub const FINISHED: Family = family(
    "sofabench_run_finished",
    Kind::Gauge,
    "1 once every phase has ended: the figures are the run's final ones.",
);
pub const OPERATIONS: Family = family(
    "sofabench_operations",
    Kind::Counter,
    "Operations that ended, by operation and outcome (succeeded, failed); a bulk insert request counts once.",
);
pub const FAILURES: Family = family(
    "sofabench_operation_failures",
    Kind::Counter,
    "Failed operations by kind: an HTTP status, rate_limited (429), timeout, transport, unreachable, too_large, bad_answer, no_document, interrupted.",
);
pub const DOCUMENTS: Family = family(
    "sofabench_documents",
    Kind::Counter,
    "Documents stored or operated on; a bulk insert counts the documents its answers confirmed.",
);
pub const DOCUMENT_FAILURES: Family = family(
    "sofabench_document_failures",
    Kind::Counter,
    "Documents of bulk inserts that their answer refused (the server's error word) or did not account for (bad_answer).",
);
pub const RETRIES_429: Family = family(
    "sofabench_rate_limit_retries",
    Kind::Counter,
    "429 answers after which the operation was sent again (--retry-429).",
);
pub const RESPONSE: Family = in_seconds(
    "sofabench_response_time_seconds",
    Kind::Histogram,
    "Response time of successful operations: from the scheduled start under --rate, from sending otherwise.",
);
pub const LAST_RESPONSE: Family = in_seconds(
    "sofabench_interval_response_time_seconds",
    Kind::Gauge,
    "The last interval's response time percentile (p50, p99) of successful operations, exact to 3 significant digits, as the live line shows it.",
);
pub const LATE: Family = family(
    "sofabench_late_starts",
    Kind::Counter,
    "Operations that started later than scheduled by more than --late-threshold (--rate).",
);
pub const TARGET_RATE: Family = family(
    "sofabench_target_rate_operations_per_second",
    Kind::Gauge,
    "The operations per second this node aims at (--rate); absent in the closed model.",
);
pub const IN_FLIGHT: Family = family(
    "sofabench_in_flight_operations",
    Kind::Gauge,
    "Operations sent and not yet ended, at the last interval's end.",
);
pub const WAITING_429: Family = family(
    "sofabench_waiting_after_429_operations",
    Kind::Gauge,
    "Operations waiting to be sent again after a 429, at the last interval's end.",
);
pub const STALLED: Family = family(
    "sofabench_stalled",
    Kind::Gauge,
    "1 when the server answered nothing in the last interval while operations were in flight.",
);
pub const OPEN_CONNECTIONS: Family = family(
    "sofabench_open_connections",
    Kind::Gauge,
    "Connections open to the database's nodes now.",
);
pub const OPENED: Family = family(
    "sofabench_connections_opened",
    Kind::Counter,
    "Connections opened by the measuring connections, first ones and reconnects.",
);
pub const RECONNECTS: Family = family(
    "sofabench_reconnects",
    Kind::Counter,
    "Connections opened by a connection that had one before (after a close, a failure, an idle retirement, or --disable-keepalive).",
);
pub const CONNECT: Family = in_seconds(
    "sofabench_connect_duration_seconds",
    Kind::Histogram,
    "From asking for a TCP connection to having it.",
);
pub const HANDSHAKE: Family = in_seconds(
    "sofabench_tls_handshake_duration_seconds",
    Kind::Histogram,
    "TLS handshakes after the connect, for https nodes.",
);
pub const LOGINS: Family = family(
    "sofabench_logins",
    Kind::Counter,
    "Logins (POST /_session, IAM token requests) tried, failed ones included (--auth cookie or iam).",
);
pub const FAILED_LOGINS: Family = family(
    "sofabench_login_failures",
    Kind::Counter,
    "Logins that got no session or token.",
);
pub const CPU: Family = in_seconds(
    "sofabench_client_cpu_seconds",
    Kind::Counter,
    "CPU time sofabench has used, user and system.",
);
pub const CORES: Family = family(
    "sofabench_client_cores",
    Kind::Gauge,
    "Cores sofabench may use: its CPU share is rate(sofabench_client_cpu_seconds_total) divided by this.",
);

/// The whole text of one scrape.
pub fn render(
    run: &RunLabels,
    figures: &Figures,
    process: &ProcessFigures,
    format: Format,
) -> String {
    let mut text = Exposition::new(format);
    describe_run(&mut text, run, figures);
    operations(&mut text, figures);
    latencies(&mut text, figures);
    pacing(&mut text, figures);
    connections(&mut text, figures, process);
    client(&mut text, process);
    text.finish()
}

fn flag(on: bool) -> Value {
    Value::Count(u64::from(on))
}

fn describe_run(text: &mut Exposition, run: &RunLabels, figures: &Figures) {
    text.family(&RUN);
    let (index, count) = (run.node_index.to_string(), run.node_count.to_string());
    let labels = [
        ("version", run.version),
        ("node_index", index.as_str()),
        ("node_count", count.as_str()),
    ];
    text.sample(&RUN, &labels, Value::Count(1));
    text.family(&PHASE);
    if let Some(phase) = &figures.phase {
        let number = phase.number.to_string();
        let labels = [("phase", phase.name.as_str()), ("number", number.as_str())];
        text.sample(&PHASE, &labels, Value::Count(1));
    }
    text.family(&FINISHED);
    text.sample(&FINISHED, &[], flag(figures.finished));
}

/// The figures of each operation kind, all five always: a counter that appears only once
/// it is above 0 loses its first increase to `rate()`.
fn per_operation(figures: &Figures) -> impl Iterator<Item = (&'static str, &OperationFigures)> {
    figures
        .operations
        .iter()
        .map(|(operation, f)| (Operation::name(operation), f))
}

fn operations(text: &mut Exposition, figures: &Figures) {
    text.family(&OPERATIONS);
    for (operation, f) in per_operation(figures) {
        for (outcome, n) in [("succeeded", f.succeeded), ("failed", f.failed)] {
            let labels = [("operation", operation), ("outcome", outcome)];
            text.sample(&OPERATIONS, &labels, Value::Count(n));
        }
    }
    text.family(&FAILURES);
    for (operation, f) in per_operation(figures) {
        for (kind, n) in f.failures.iter() {
            let labels = [("operation", operation), ("kind", kind)];
            text.sample(&FAILURES, &labels, Value::Count(n));
        }
    }
    text.family(&DOCUMENTS);
    for (operation, f) in per_operation(figures) {
        text.sample(
            &DOCUMENTS,
            &[("operation", operation)],
            Value::Count(f.documents),
        );
    }
    text.family(&DOCUMENT_FAILURES);
    for (operation, f) in per_operation(figures) {
        for (kind, n) in f.document_failures.iter() {
            let labels = [("operation", operation), ("kind", kind)];
            text.sample(&DOCUMENT_FAILURES, &labels, Value::Count(n));
        }
    }
    text.family(&RETRIES_429);
    for (operation, f) in per_operation(figures) {
        let labels = [("operation", operation)];
        text.sample(&RETRIES_429, &labels, Value::Count(f.retried_429));
    }
}

fn latencies(text: &mut Exposition, figures: &Figures) {
    text.family(&RESPONSE);
    for (operation, f) in per_operation(figures) {
        text.histogram(&RESPONSE, &[("operation", operation)], &f.response);
    }
    text.family(&LAST_RESPONSE);
    for (operation, f) in per_operation(figures) {
        let Some((p50, p99)) = f.last_percentiles else {
            continue;
        };
        for (percentile, micros) in [("50", p50), ("99", p99)] {
            let labels = [("operation", operation), ("percentile", percentile)];
            let seconds = Value::Float(micros as f64 / 1e6);
            text.sample(&LAST_RESPONSE, &labels, seconds);
        }
    }
}

fn pacing(text: &mut Exposition, figures: &Figures) {
    text.family(&LATE);
    text.sample(&LATE, &[], Value::Count(figures.late));
    text.family(&TARGET_RATE);
    if let Some(rate) = figures.target_rate {
        text.sample(&TARGET_RATE, &[], Value::Float(rate));
    }
    text.family(&IN_FLIGHT);
    text.sample(&IN_FLIGHT, &[], Value::Count(figures.in_flight));
    text.family(&WAITING_429);
    text.sample(&WAITING_429, &[], Value::Count(figures.waiting_after_429));
    text.family(&STALLED);
    text.sample(&STALLED, &[], flag(figures.stalled));
}

fn connections(text: &mut Exposition, figures: &Figures, process: &ProcessFigures) {
    text.family(&OPEN_CONNECTIONS);
    text.sample(
        &OPEN_CONNECTIONS,
        &[],
        Value::Count(process.open_connections),
    );
    text.family(&OPENED);
    text.sample(&OPENED, &[], Value::Count(figures.opened));
    text.family(&RECONNECTS);
    text.sample(&RECONNECTS, &[], Value::Count(figures.reconnects));
    histogram(text, &CONNECT, &figures.connect);
    histogram(text, &HANDSHAKE, &figures.handshake);
    text.family(&LOGINS);
    text.sample(&LOGINS, &[], Value::Count(process.logins));
    text.family(&FAILED_LOGINS);
    text.sample(&FAILED_LOGINS, &[], Value::Count(process.failed_logins));
}

fn histogram(text: &mut Exposition, family: &Family, buckets: &Buckets) {
    text.family(family);
    text.histogram(family, &[], buckets);
}

fn client(text: &mut Exposition, process: &ProcessFigures) {
    text.family(&CPU);
    text.sample(&CPU, &[], Value::Float(process.cpu_seconds));
    text.family(&CORES);
    text.sample(&CORES, &[], Value::Float(process.cores));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{FailureCounts, IntervalMetrics};
    use crate::workload::Operation;

    fn figures() -> Figures {
        let mut interval = IntervalMetrics::default();
        interval.succeeded(Operation::Read, 3_000_000_000);
        let mut refused = FailureCounts::default();
        let word = crate::metrics::Failure::Document("a \"quoted\"\nword".to_string());
        refused.add(word, 2);
        interval.documents(Operation::BulkInsert, 8);
        interval.refused(Operation::BulkInsert, &refused);
        let mut figures = Figures::default();
        figures.start_phase("crud");
        figures.add_interval(&interval, &interval.row(1.0, 1.0, 0.0), None);
        figures
    }

    const RUN: RunLabels = RunLabels {
        version: "0.1.0",
        node_index: 1,
        node_count: 3,
    };

    const PROCESS: ProcessFigures = ProcessFigures {
        cpu_seconds: 1.5,
        cores: 2.0,
        open_connections: 4,
        logins: 0,
        failed_logins: 0,
    };

    #[test]
    fn every_operation_has_its_counters_and_histogram_from_the_start() {
        let text = render(&RUN, &Figures::default(), &PROCESS, Format::Prometheus);
        for operation in Operation::ALL {
            let name = operation.name();
            for line in [
                format!(
                    "sofabench_operations_total{{operation=\"{name}\",outcome=\"succeeded\"}} 0\n"
                ),
                format!("sofabench_documents_total{{operation=\"{name}\"}} 0\n"),
                format!(
                    "sofabench_response_time_seconds_bucket{{operation=\"{name}\",le=\"+Inf\"}} 0\n"
                ),
            ] {
                assert!(text.contains(&line), "{line} in\n{text}");
            }
        }
        assert!(!text.contains("sofabench_phase_info{"), "no phase yet");
        assert!(!text.contains("\nsofabench_target_rate_operations_per_second "));
    }

    #[test]
    fn figures_show_with_their_labels_quoted_in_both_formats() {
        for format in [Format::Prometheus, Format::OpenMetrics] {
            let text = render(&RUN, &figures(), &PROCESS, format);
            for line in [
                "sofabench_run_info{version=\"0.1.0\",node_index=\"1\",node_count=\"3\"} 1\n",
                "sofabench_phase_info{phase=\"crud\",number=\"1\"} 1\n",
                "sofabench_documents_total{operation=\"bulk_insert\"} 8\n",
                "sofabench_document_failures_total{operation=\"bulk_insert\",kind=\"a \\\"quoted\\\"\\nword\"} 2\n",
                "sofabench_response_time_seconds_bucket{operation=\"read\",le=\"2\"} 0\n",
                "sofabench_response_time_seconds_bucket{operation=\"read\",le=\"5\"} 1\n",
                // 3 s within the histogram's 3 significant digits: its middle for the sum,
                // its highest equivalent for a percentile, as HdrHistogram gives them.
                "sofabench_response_time_seconds_sum{operation=\"read\"} 2.999296\n",
                "sofabench_interval_response_time_seconds{operation=\"read\",percentile=\"99\"} 3.000319\n",
                "sofabench_open_connections 4\n",
                "sofabench_client_cpu_seconds_total 1.5\n",
            ] {
                assert!(text.contains(line), "{format:?}: {line} in\n{text}");
            }
        }
    }
}
