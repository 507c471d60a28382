//! Iron Cushion's result blocks, with its field names and meanings.
//!
//! Times are per connection, spread as `{min, max, median, sd}` over connections, printed
//! in seconds with microsecond resolution. A rate divides the documents of the whole step
//! by the *mean* per-connection time of the field, i.e. by the time the connections spent
//! in parallel; that is how Iron Cushion's own figures come out (its example: 2,000,000
//! documents, remoteProcessing median 203.8 s, rate 10,003 docs/sec).

use std::fmt::Write as _;

use super::numbers::{grouped, grouped_decimal};
use crate::engine::{Step, StepOutcome};
use crate::metrics::{ConnectionMetrics, Spread};
use crate::workload::Operation;

const NANOS_PER_SEC: f64 = 1e9;

fn seconds(nanoseconds: u64) -> f64 {
    nanoseconds as f64 / NANOS_PER_SEC
}

fn spread_of(
    connections: &[ConnectionMetrics],
    field: impl Fn(&ConnectionMetrics) -> u64,
) -> Spread {
    let values: Vec<f64> = connections.iter().map(|c| seconds(field(c))).collect();
    Spread::of(&values)
}

fn mean_seconds(
    connections: &[ConnectionMetrics],
    field: impl Fn(&ConnectionMetrics) -> u64,
) -> f64 {
    if connections.is_empty() {
        return 0.0;
    }
    connections.iter().map(|c| seconds(field(c))).sum::<f64>() / connections.len() as f64
}

/// Documents per second of parallel time; 0 when nothing was done.
fn rate(documents: u64, mean_seconds: f64) -> f64 {
    if documents == 0 || mean_seconds <= 0.0 {
        0.0
    } else {
        documents as f64 / mean_seconds
    }
}

fn write_spread(out: &mut String, name: &str, spread: Spread) {
    let _ = writeln!(
        out,
        "  {name}={{min={:.6} secs, max={:.6} secs, median={:.6} secs, sd={:.6} secs}}",
        spread.min, spread.max, spread.median, spread.sd
    );
}

fn remote_name(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "remoteCreateProcessing",
        Operation::Read => "remoteReadProcessing",
        Operation::Update => "remoteUpdateProcessing",
        Operation::Delete => "remoteDeleteProcessing",
        Operation::BulkInsert => "remoteProcessing",
    }
}

/// The block for one step, as Iron Cushion prints it.
pub fn block(outcome: &StepOutcome) -> String {
    let c = &outcome.connections;
    let mut out = String::new();
    let title = match outcome.step {
        Step::BulkInsert => "BULK INSERT BENCHMARK RESULTS:",
        Step::Crud => "CRUD BENCHMARK RESULTS:",
    };
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "  timeTaken={:.6} secs", outcome.wall.as_secs_f64());
    let sent: u64 = c.iter().map(|m| m.json_sent).sum();
    let received: u64 = c.iter().map(|m| m.json_received).sum();
    let _ = writeln!(out, "  totalJsonBytesSent={} bytes", grouped(sent));
    let _ = writeln!(out, "  totalJsonBytesReceived={} bytes", grouped(received));
    write_spread(&mut out, "localProcessing", spread_of(c, |m| m.local_ns));
    write_spread(&mut out, "sendData", spread_of(c, |m| m.send_ns));
    match outcome.step {
        Step::BulkInsert => {
            write_spread(
                &mut out,
                "remoteProcessing",
                spread_of(c, |m| m.remote_ns()),
            );
            write_spread(&mut out, "receiveData", spread_of(c, |m| m.receive_ns));
            let documents: u64 = c
                .iter()
                .map(|m| m.of(Operation::BulkInsert).documents)
                .sum();
            let remote = mean_seconds(c, |m| m.remote_ns());
            let local = mean_seconds(c, |m| m.send_ns + m.remote_ns() + m.receive_ns);
            let _ = writeln!(
                out,
                "  remoteProcessingRate={} docs/sec",
                grouped_decimal(rate(documents, remote), 3)
            );
            let _ = writeln!(
                out,
                "  localInsertRate={} docs/sec",
                grouped_decimal(rate(documents, local), 3)
            );
        }
        Step::Crud => {
            for op in Operation::CRUD {
                write_spread(
                    &mut out,
                    remote_name(op),
                    spread_of(c, |m| m.of(op).remote_ns),
                );
            }
            write_spread(&mut out, "receiveData", spread_of(c, |m| m.receive_ns));
            for op in Operation::CRUD {
                let documents: u64 = c.iter().map(|m| m.of(op).documents).sum();
                let remote = mean_seconds(c, |m| m.of(op).remote_ns);
                let _ = writeln!(
                    out,
                    "  {}Rate={} docs/sec",
                    remote_name(op),
                    grouped_decimal(rate(documents, remote), 3)
                );
            }
        }
    }
    out
}
