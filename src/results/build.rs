//! Turning what the engine measured into a [`PhaseResult`].

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use super::{
    IntervalOperation, IntervalResult, IronCushion, Latency, OperationResult, PhaseResult, Spread,
    histogram, per_second,
};
use crate::engine::PhaseOutcome;
use crate::metrics::{ConnectionMetrics, IntervalRow, OperationLatencies, OperationMetrics};
use crate::workload::Operation;

const NANOS_PER_SEC: f64 = 1e9;

pub fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

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

/// Documents per second of parallel time: documents of the whole phase divided by the
/// mean per-connection time (the arithmetic behind Iron Cushion's figures); 0 when
/// nothing was done.
fn rate(documents: u64, mean_seconds: f64) -> f64 {
    if documents == 0 || mean_seconds <= 0.0 {
        0.0
    } else {
        documents as f64 / mean_seconds
    }
}

/// Iron Cushion's name for the remote processing time of an operation.
pub fn remote_field(operation: Operation) -> &'static str {
    match operation {
        Operation::BulkInsert => "remoteProcessing",
        Operation::Create => "remoteCreateProcessing",
        Operation::Read => "remoteReadProcessing",
        Operation::Update => "remoteUpdateProcessing",
        Operation::Delete => "remoteDeleteProcessing",
    }
}

fn iron_cushion(outcome: &PhaseOutcome, attempted: &[Operation]) -> IronCushion {
    let c = &outcome.connections;
    let mut remote_processing = BTreeMap::new();
    let mut rates = BTreeMap::new();
    for &op in attempted {
        remote_processing.insert(
            remote_field(op).to_string(),
            spread_of(c, |m| m.of(op).remote_ns),
        );
        let documents: u64 = c.iter().map(|m| m.of(op).documents).sum();
        rates.insert(
            format!("{}Rate", remote_field(op)),
            rate(documents, mean_seconds(c, |m| m.of(op).remote_ns)),
        );
    }
    if attempted.contains(&Operation::BulkInsert) {
        let documents: u64 = c
            .iter()
            .map(|m| m.of(Operation::BulkInsert).documents)
            .sum();
        let local = mean_seconds(c, |m| m.send_ns + m.remote_ns() + m.receive_ns);
        rates.insert("localInsertRate".to_string(), rate(documents, local));
    }
    IronCushion {
        time_taken: outcome.wall.as_secs_f64(),
        total_json_bytes_sent: c.iter().map(|m| m.json_sent).sum(),
        total_json_bytes_received: c.iter().map(|m| m.json_received).sum(),
        local_processing: spread_of(c, |m| m.local_ns),
        send_data: spread_of(c, |m| m.send_ns),
        remote_processing,
        receive_data: spread_of(c, |m| m.receive_ns),
        rates,
    }
}

fn ms(microseconds: f64) -> f64 {
    microseconds / 1_000.0
}

pub fn latency(h: &Histogram<u64>) -> Latency {
    let at = |q: f64| {
        if h.is_empty() {
            0.0
        } else {
            ms(h.value_at_quantile(q) as f64)
        }
    };
    Latency {
        count: h.len(),
        mean_ms: if h.is_empty() { 0.0 } else { ms(h.mean()) },
        p50_ms: at(0.5),
        p90_ms: at(0.9),
        p99_ms: at(0.99),
        p999_ms: at(0.999),
        max_ms: if h.is_empty() {
            0.0
        } else {
            ms(h.max() as f64)
        },
        histogram: histogram::encode(h),
    }
}

fn operation(
    op: Operation,
    m: &OperationMetrics,
    latencies: &OperationLatencies,
    wall_seconds: f64,
) -> OperationResult {
    let failed = m.failures.of_operations();
    OperationResult {
        operation: op.name().to_string(),
        succeeded: m.succeeded,
        failed,
        documents: m.documents,
        // Other operations touch one document each.
        documents_failed: match op {
            Operation::BulkInsert => m.documents_failed,
            _ => failed,
        },
        throughput: per_second(m.succeeded, wall_seconds),
        documents_per_sec: per_second(m.documents, wall_seconds),
        failures: m
            .failures
            .sorted()
            .into_iter()
            .map(|(f, n)| (f.to_string(), n))
            .collect(),
        failure_samples: m
            .samples
            .sorted()
            .into_iter()
            .map(|(f, texts)| (f.to_string(), texts))
            .collect(),
        statuses: m
            .statuses
            .sorted()
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect(),
        latency: latency(&latencies.latency),
        response: latency(&latencies.response),
        failed_latency: (!latencies.failed.is_empty()).then(|| latency(&latencies.failed)),
        resends: m.resends,
        unknown_outcomes: m.unknown,
        not_run: m.not_run,
    }
}

fn interval(row: &IntervalRow, phase_start: SystemTime) -> IntervalResult {
    let end = phase_start + std::time::Duration::from_secs_f64(row.elapsed);
    let operations = Operation::ALL
        .into_iter()
        .filter_map(|op| {
            let m = row.of(op);
            (m.succeeded + m.failed > 0).then(|| IntervalOperation {
                operation: op.name().to_string(),
                succeeded: m.succeeded,
                failed: m.failed,
                timeouts: m.timeouts,
                throughput: if row.length > 0.0 {
                    m.succeeded as f64 / row.length
                } else {
                    0.0
                },
                p50_ms: ms(m.p50_us as f64),
                p99_ms: ms(m.p99_us as f64),
                histogram: m.histogram.clone(),
            })
        })
        .collect();
    IntervalResult {
        end_ms: unix_ms(end),
        elapsed_seconds: row.elapsed,
        length_seconds: row.length,
        cpu: row.cpu,
        late: row.late,
        operations,
        machine_cpu: row.machine_cpu,
        in_flight: row.in_flight,
    }
}

/// The result of one phase.
pub fn phase(outcome: &PhaseOutcome) -> PhaseResult {
    let wall_seconds = outcome.wall.as_secs_f64();
    let mut merged: Vec<(Operation, OperationMetrics)> = Vec::new();
    for op in Operation::ALL {
        let mut total = OperationMetrics::default();
        for c in &outcome.connections {
            total.merge(c.of(op));
        }
        if total.succeeded + total.failures.total() + total.not_run > 0 {
            merged.push((op, total));
        }
    }
    // Iron Cushion lists every operation of the step's mix, attempted or not.
    let attempted = &outcome.operations;
    PhaseResult {
        name: outcome.name.clone(),
        started_at_ms: unix_ms(outcome.started_at),
        wall_seconds,
        connections: outcome.connections.len() as u64,
        target_rate: outcome.target_rate,
        late: outcome.connections.iter().map(|c| c.late).sum(),
        operations: merged
            .iter()
            .map(|(op, m)| operation(*op, m, &outcome.latencies[op.index()], wall_seconds))
            .collect(),
        iron_cushion: iron_cushion(outcome, attempted),
        intervals: outcome
            .intervals
            .iter()
            .map(|r| interval(r, outcome.started_at))
            .collect(),
        aborted: outcome.aborted.clone(),
        target_nodes: outcome
            .nodes
            .iter()
            .map(|(address, node)| super::TargetNodeResult {
                address: address.clone(),
                answered: node.answered,
                failed: node.failed,
                latency: latency(&node.latency),
            })
            .collect(),
        action: outcome.action.as_ref().map(|a| super::ActionResult {
            kind: a.kind.clone(),
            started_seconds: a.started,
            finished_seconds: a.finished,
            size_before: a.size_before,
            size_after: a.size_after,
            size_field: a.size_field.clone(),
            error: a.error.clone(),
            note: a.note.clone(),
        }),
        send_lag: outcome.target_rate.map(|_| latency(&outcome.send_lag)),
    }
}

/// A wall-clock time as RFC 3339, UTC, whole seconds.
pub fn rfc3339(time: SystemTime) -> String {
    crate::time::rfc3339::format((unix_ms(time) / 1_000) as i64)
}

/// The whole run's result.
pub fn run(
    config: BTreeMap<String, serde_json::Value>,
    started: SystemTime,
    ended: SystemTime,
    interrupted: bool,
    node: super::NodeInfo,
    phases: Vec<PhaseResult>,
) -> super::RunResult {
    super::RunResult {
        schema: super::SCHEMA.to_string(),
        tool: super::Tool {
            name: "sofabench".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        started_at: rfc3339(started),
        ended_at: rfc3339(ended),
        interrupted,
        config,
        nodes: vec![node],
        phases,
    }
}
