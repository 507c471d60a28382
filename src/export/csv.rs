//! The per-interval series as CSV: one row per interval and operation kind of its phase,
//! with a header row. An operation with nothing in an interval gets a row of zeros, so
//! every phase forms a regular grid; latency cells are empty when no operation
//! succeeded. docs/RESULTS.md lists the columns.

use std::io::{self, Write};

use super::phase_operations;
use crate::results::{IntervalOperation, IntervalResult, PhaseResult, RunResult};

/// The columns, in order; later ones are added at the end, so that readers by position
/// keep working.
pub const COLUMNS: [&str; 31] = [
    "phase",
    "end_ms",
    "elapsed_seconds",
    "operation",
    "succeeded",
    "failed",
    "timeouts",
    "throughput",
    "p50_ms",
    "p99_ms",
    "cpu",
    "late",
    "rate_limited",
    "retried_429",
    "server_requests",
    "server_request_p99_ms",
    "server_memory_bytes",
    "server_run_queue",
    "server_tasks",
    "changes_per_second",
    "changes_lag_seconds",
    "changes_open_feeds",
    "disk_file_bytes",
    "disk_active_bytes",
    "disk_external_bytes",
    "disk_doc_count",
    "bytes_sent",
    "bytes_received",
    "replication_docs_per_second",
    "replication_lag_seconds",
    "replication_jobs_docs_written",
];

/// A cell of text (a phase's or an operation's name) as spreadsheets show it without
/// running it: one that starts with `=`, `+`, `-`, `@`, a tab or a carriage return would
/// be taken for a formula (`=HYPERLINK(...)`), so it gets a leading `'`, the common
/// convention (OWASP's "CSV injection"), which spreadsheets show as text. Numbers never
/// pass through here, so a negative number stays a number. Control characters (in a name
/// of a result file edited by hand) are shown as escapes, as everywhere text is written.
fn text(cell: &str) -> String {
    let shown = crate::text::visible(cell);
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{shown}")
    } else {
        shown.into_owned()
    }
}

/// A size the server gave, or an empty cell when it did not (never 0).
fn known(value: Option<u64>) -> String {
    value.map_or(String::new(), |v| v.to_string())
}

fn decimal(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        String::new()
    }
}

/// The servers' figures of an interval, all nodes together: requests counted and memory
/// added up, the highest request-time p99 and run queue, background tasks added up. A
/// cell is empty when no node told it.
fn server_cells(interval: &IntervalResult) -> [String; 5] {
    let nodes = &interval.server;
    let sum = |figure: &dyn Fn(&crate::server_stats::ServerInterval) -> Option<u64>| {
        let known: Vec<u64> = nodes.iter().filter_map(|n| figure(&n.figures)).collect();
        if known.is_empty() {
            String::new()
        } else {
            known
                .iter()
                .fold(0u64, |a, b| a.saturating_add(*b))
                .to_string()
        }
    };
    let p99 = nodes
        .iter()
        .filter_map(|n| n.figures.request_time_ms.map(|t| t.p99))
        .reduce(f64::max)
        .map_or(String::new(), |ms| decimal(ms, 3));
    let run_queue = nodes
        .iter()
        .filter_map(|n| n.figures.run_queue)
        .max()
        .map_or(String::new(), |n| n.to_string());
    [
        sum(&|f| {
            f.counts
                .get("requests")
                .copied()
                .or((!f.counts.is_empty()).then_some(0))
        }),
        p99,
        sum(&|f| f.memory_bytes),
        run_queue,
        sum(&|f| f.tasks.as_ref().map(|t| t.values().sum())),
    ]
}

/// The phase's consumers' figures taken at the interval's end (their sampler ticks with
/// the interval's), or empty cells when the phase has no consumers.
fn changes_cells(phase: &PhaseResult, interval: &IntervalResult) -> [String; 3] {
    let beside = phase
        .changes
        .as_ref()
        .and_then(|c| c.beside(interval.elapsed_seconds, interval.length_seconds));
    match beside {
        Some(c) => [
            decimal(c.changes_per_second, 3),
            decimal(c.lag_seconds, 3),
            c.open_feeds.to_string(),
        ],
        _ => Default::default(),
    }
}

/// The phase's continuous replications at the interval's end: documents the replicas
/// received per second (all together), the largest lag, and the documents the jobs had
/// written by then by their own count (`_scheduler/jobs`, all together); empty cells for
/// a phase without replication or a figure no look gave.
fn replication_cells(phase: &PhaseResult, interval: &IntervalResult) -> [String; 3] {
    let Some(replication) = &phase.replication else {
        return Default::default();
    };
    let (at, length) = (interval.elapsed_seconds, interval.length_seconds);
    let looks: Vec<_> = replication
        .replicas
        .iter()
        .filter_map(|r| r.lag.beside(at, length))
        .collect();
    let written: Vec<u64> = replication
        .jobs
        .iter()
        .filter(|j| (j.elapsed_seconds - at).abs() < length / 2.0)
        .filter_map(|j| j.docs_written)
        .collect();
    // Empty cells where no look gave the figure.
    let looked = |text: String| {
        if looks.is_empty() {
            String::new()
        } else {
            text
        }
    };
    let docs: f64 = looks.iter().map(|c| c.changes_per_second).sum();
    let lag = looks.iter().map(|c| c.lag_seconds).fold(0.0, f64::max);
    let written =
        (!written.is_empty()).then(|| written.iter().fold(0u64, |a, b| a.saturating_add(*b)));
    [
        looked(decimal(docs, 3)),
        looked(decimal(lag, 3)),
        known(written),
    ]
}

/// Writes the series of every phase.
pub fn write(result: &RunResult, out: &mut impl Write) -> io::Result<()> {
    let mut writer = ::csv::Writer::from_writer(out);
    writer.write_record(COLUMNS)?;
    for phase in &result.phases {
        let operations = phase_operations(phase);
        for interval in &phase.intervals {
            // The interval's own cells, the same on each of its rows.
            let disk = interval.disk.as_ref();
            let shared: Vec<String> = server_cells(interval)
                .into_iter()
                .chain(changes_cells(phase, interval))
                .chain([
                    known(disk.and_then(|d| d.file)),
                    known(disk.and_then(|d| d.active)),
                    known(disk.and_then(|d| d.external)),
                    known(disk.and_then(|d| d.doc_count)),
                ])
                .collect();
            let replicated = replication_cells(phase, interval);
            for &name in &operations {
                let found = interval.operations.iter().find(|o| o.operation == name);
                let none = IntervalOperation {
                    operation: name.to_string(),
                    succeeded: 0,
                    failed: 0,
                    timeouts: 0,
                    rate_limited: 0,
                    retried_429: 0,
                    documents: None,
                    bytes_sent: Some(0),
                    bytes_received: Some(0),
                    throughput: 0.0,
                    p50_ms: 0.0,
                    p99_ms: 0.0,
                    histogram: String::new(),
                };
                let op = found.unwrap_or(&none);
                let latency = |ms: f64| {
                    if op.succeeded == 0 {
                        String::new()
                    } else {
                        decimal(ms, 3)
                    }
                };
                let cells = [
                    text(&phase.name),
                    interval.end_ms.to_string(),
                    decimal(interval.elapsed_seconds, 3),
                    text(name),
                    op.succeeded.to_string(),
                    op.failed.to_string(),
                    op.timeouts.to_string(),
                    decimal(op.throughput, 3),
                    latency(op.p50_ms),
                    latency(op.p99_ms),
                    decimal(interval.cpu, 4),
                    interval.late.to_string(),
                    op.rate_limited.to_string(),
                    op.retried_429.to_string(),
                ];
                // Empty for a result written before sofabench kept them.
                let bytes = [known(op.bytes_sent), known(op.bytes_received)];
                writer
                    .write_record(cells.iter().chain(&shared).chain(&bytes).chain(&replicated))?;
            }
        }
    }
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::changes::ChangesInterval;

    #[test]
    fn one_row_per_interval_and_operation() {
        let mut out = Vec::new();
        write(&super::super::sample::result(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            &lines[1..],
            [
                "crud,1700000001000,1.000,create,0,0,0,0.000,,,0.2500,1,0,0,,,,,,,,,,,,,0,0,,,",
                "crud,1700000001000,1.000,read,4,0,0,4.000,1.000,25.007,0.2500,1,0,0,,,,,,,,,,,,,,,,,",
                "crud,1700000002000,2.000,create,3,0,0,3.000,3.001,4.001,0.2500,1,0,0,,,,,,,,,48000,,,3,,,,,",
                "crud,1700000002000,2.000,read,2,1,0,2.000,0.800,1.200,0.2500,1,1,3,,,,,,,,,48000,,,3,,,,,",
            ]
        );
    }

    #[test]
    fn text_that_a_spreadsheet_would_run_is_written_as_text() {
        for risky in ["=1+1", "+1", "-1", "@SUM(A1)"] {
            assert_eq!(text(risky), format!("'{risky}"));
        }
        assert_eq!(text("\tx"), "'\\tx");
        assert_eq!(text("\rx\u{1b}[2J"), "'\\rx\\x1b[2J");
        for plain in ["crud", "read", "a=b", "", "'quoted"] {
            assert_eq!(text(plain), plain);
        }
    }

    #[test]
    fn each_row_ends_with_its_operations_bytes() {
        let mut result = super::super::sample::result();
        for op in &mut result.phases[0].intervals[1].operations {
            op.bytes_sent = Some(1200);
            op.bytes_received = Some(34_567);
        }
        let mut out = Vec::new();
        write(&result, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(header[26..28], ["bytes_sent", "bytes_received"]);
        assert!(lines[2].ends_with(",,,,,"), "no bytes kept: {}", lines[2]);
        assert!(lines[3].ends_with(",3,1200,34567,,,"), "{}", lines[3]);
        assert!(lines[4].ends_with(",3,1200,34567,,,"), "{}", lines[4]);
    }

    #[test]
    fn the_servers_figures_add_up_over_nodes() {
        use crate::server_stats::{NodeInterval, ServerInterval, delta::RequestTimeFigures};
        let node = |requests: u64, p99: f64, run_queue: u64| NodeInterval {
            node: "http://a".to_string(),
            figures: ServerInterval {
                counts: [("requests".to_string(), requests)].into(),
                request_time_ms: Some(RequestTimeFigures {
                    p99,
                    ..RequestTimeFigures::default()
                }),
                memory_bytes: Some(1_000),
                run_queue: Some(run_queue),
                tasks: Some([("indexer".to_string(), 2)].into()),
                ..ServerInterval::default()
            },
        };
        let interval = IntervalResult {
            server: vec![node(10, 5.5, 3), node(20, 2.0, 1)],
            ..IntervalResult::default()
        };
        assert_eq!(server_cells(&interval), ["30", "5.500", "2000", "3", "4"]);
        assert_eq!(
            server_cells(&IntervalResult::default()),
            ["", "", "", "", ""]
        );
    }

    fn at(elapsed_seconds: f64, changes_per_second: f64, lag_seconds: f64) -> ChangesInterval {
        ChangesInterval {
            elapsed_seconds,
            changes_per_second,
            lag_seconds,
            open_feeds: 2,
            length_seconds: 1.0,
        }
    }

    #[test]
    fn consumers_figures_go_beside_the_interval_they_were_taken_at() {
        let mut result = super::super::sample::result();
        // Only the second interval has figures near its end.
        result.phases[0].changes = Some(crate::results::changes::with_intervals(vec![at(
            2.001, 120.5, 0.25,
        )]));
        let mut out = Vec::new();
        write(&result, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].ends_with(",0,0,,,,,,,,,,,,,0,0,,,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[3].ends_with(",1,0,0,,,,,,120.500,0.250,2,48000,,,3,,,,,"),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn replicas_add_up_their_documents_and_give_the_largest_lag() {
        use crate::metrics::replication::JobLook;
        use crate::results::replication::{ReplicaResult, ReplicationResult};
        let replica = |name: &str, interval: ChangesInterval| ReplicaResult {
            database: name.to_string(),
            url: None,
            documents: Vec::new(),
            created: true,
            lag: crate::results::changes::with_intervals(vec![interval]),
        };
        let job = |written: Option<u64>| JobLook {
            elapsed_seconds: 2.0,
            document: "d".to_string(),
            last_event: Some("started".to_string()),
            docs_written: written,
            changes_pending: None,
            doc_write_failures: None,
        };
        let mut result = super::super::sample::result();
        result.phases[0].replication = Some(ReplicationResult {
            two_way: false,
            replicas: vec![
                replica("a", at(2.0, 100.0, 0.5)),
                replica("b", at(1.999, 50.25, 1.25)),
            ],
            jobs: vec![job(Some(7)), job(None), job(Some(5))],
            notes: Vec::new(),
            client_nodes: 1,
        });
        let mut out = Vec::new();
        write(&result, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The first interval has no look near it; the second has both replicas' and the jobs'.
        assert!(lines[1].ends_with(",0,0,,,"), "{}", lines[1]);
        assert!(lines[3].ends_with(",150.250,1.250,12"), "{}", lines[3]);
        assert!(lines[4].ends_with(",150.250,1.250,12"), "{}", lines[4]);
    }
}
