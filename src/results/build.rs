//! Turning a phase's tally into a [`PhaseResult`]: for a run, and for `merge`.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use super::{
    ActionResult, ConnectionTimesResult, IntervalOperation, IntervalResult, IronCushion, Latency,
    LoginsResult, OperationResult, PhaseResult, Spread, SweepPoint, histogram, per_second,
};
use crate::metrics::setup::SetupTally;
use crate::metrics::{
    ActionReport, ConnectionTimes, IntervalRow, LoginTally, OperationTally, PhaseOutcome,
    PhaseTally,
};
use crate::workload::Operation;

const NANOS_PER_SEC: f64 = 1e9;

pub fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn seconds(nanoseconds: u64) -> f64 {
    nanoseconds as f64 / NANOS_PER_SEC
}

/// Seconds per connection of one of its times.
fn column(times: &[ConnectionTimes], field: impl Fn(&ConnectionTimes) -> u64) -> Vec<f64> {
    times.iter().map(|t| seconds(field(t))).collect()
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
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
        Operation::Find => "remoteFindProcessing",
        Operation::View => "remoteViewProcessing",
        Operation::AllDocs => "remoteAllDocsProcessing",
        Operation::ChangesRead => "remoteChangesReadProcessing",
        Operation::AttachmentWrite => "remoteAttachmentWriteProcessing",
        Operation::AttachmentRead => "remoteAttachmentReadProcessing",
    }
}

/// Iron Cushion's figures of a phase whose mix holds `mix`: spreads over the
/// connections' times, and rates of documents over their mean times.
fn iron_cushion(tally: &PhaseTally, mix: &[Operation], wall_seconds: f64) -> IronCushion {
    let times = &tally.connections;
    let documents = |op: Operation| tally.operations[op].counts.documents;
    let mut remote_processing = BTreeMap::new();
    let mut rates = BTreeMap::new();
    for &op in mix {
        let remote = column(times, |t| t.remote_ns[op]);
        remote_processing.insert(remote_field(op).to_string(), Spread::of(&remote));
        rates.insert(
            format!("{}Rate", remote_field(op)),
            rate(documents(op), mean(&remote)),
        );
    }
    if mix.contains(&Operation::BulkInsert) {
        let local = column(times, |t| {
            t.send_ns
                .saturating_add(t.remote_ns.total())
                .saturating_add(t.receive_ns)
        });
        rates.insert(
            "localInsertRate".to_string(),
            rate(documents(Operation::BulkInsert), mean(&local)),
        );
    }
    IronCushion {
        time_taken: wall_seconds,
        total_json_bytes_sent: tally.json_sent,
        total_json_bytes_received: tally.json_received,
        local_processing: Spread::of(&column(times, |t| t.local_ns)),
        send_data: Spread::of(&column(times, |t| t.send_ns)),
        remote_processing,
        receive_data: Spread::of(&column(times, |t| t.receive_ns)),
        rates,
    }
}

/// The connections' times as the result keeps them, a column per quantity.
fn connection_times(tally: &PhaseTally, mix: &[Operation]) -> ConnectionTimesResult {
    let times = &tally.connections;
    let column = |field: &dyn Fn(&ConnectionTimes) -> u64| times.iter().map(field).collect();
    ConnectionTimesResult {
        local_ns: column(&|t| t.local_ns),
        send_ns: column(&|t| t.send_ns),
        receive_ns: column(&|t| t.receive_ns),
        remote_ns: mix
            .iter()
            .map(|&op| (op.name().to_string(), column(&|t| t.remote_ns[op])))
            .collect(),
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

/// Logins as the result keeps them.
pub fn logins(tally: &LoginTally) -> LoginsResult {
    LoginsResult {
        count: tally.count,
        failed: tally.failed,
        latency: latency(&tally.times),
    }
}

fn operation(op: Operation, tally: &OperationTally, wall_seconds: f64) -> OperationResult {
    let (m, latencies) = (&tally.counts, &tally.latencies);
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
        retried_429: m.retried_429,
        retry_429_wait_ns: m.retry_429_wait_ns,
        unknown_outcomes: m.unknown,
        not_run: m.not_run,
        bytes_sent: m.bytes_sent,
        bytes_received: m.bytes_received,
        rows: op.is_query().then_some(m.rows),
        rows_per_sec: op.is_query().then(|| per_second(m.rows, wall_seconds)),
        hot: super::hot_result(&m.hot),
        existing: (!m.existing.is_empty()).then(|| m.existing.clone()),
        row_check: (m.rows_checked > 0).then_some(crate::results::RowCheck {
            answers: m.rows_checked,
            wrong: m.rows_wrong,
            expected_rows: m.rows_expected,
        }),
    }
}

fn interval(row: &IntervalRow, phase_start: SystemTime) -> IntervalResult {
    let end = phase_start + std::time::Duration::from_secs_f64(row.elapsed);
    interval_ending(row, unix_ms(end))
}

/// A finished interval as the result keeps it, ending at `end_ms` (Unix time).
pub fn interval_ending(row: &IntervalRow, end_ms: u64) -> IntervalResult {
    let operations = row
        .operations
        .iter()
        .filter(|(_, m)| m.saw_anything())
        .map(|(op, m)| IntervalOperation {
            operation: op.name().to_string(),
            succeeded: m.succeeded,
            failed: m.failed,
            timeouts: m.timeouts,
            rate_limited: m.rate_limited,
            retried_429: m.retried_429,
            documents: (op == Operation::BulkInsert).then_some(m.documents),
            bytes_sent: Some(m.bytes_sent),
            bytes_received: Some(m.bytes_received),
            throughput: if row.length > 0.0 {
                m.succeeded as f64 / row.length
            } else {
                0.0
            },
            p50_ms: ms(m.p50_us as f64),
            p99_ms: ms(m.p99_us as f64),
            histogram: m.histogram.clone(),
        })
        .collect();
    IntervalResult {
        end_ms,
        elapsed_seconds: row.elapsed,
        length_seconds: row.length,
        cpu: row.cpu,
        late: row.late,
        operations,
        machine_cpu: row.machine_cpu,
        in_flight: row.in_flight,
        waiting_after_429: row.waiting_after_429,
        polling: row.polling,
        target_rate: row.target_rate,
        disk: row.disk.clone(),
        server: row.server.clone(),
        late_causes: (row.late > 0).then_some(row.late_causes),
        stalled_seconds: Some(row.stalled_seconds).filter(|&s| s > 0.0),
    }
}

/// What a phase's result says besides its tally.
pub struct PhaseFacts {
    pub name: String,
    /// The operations of the phase's mix: Iron Cushion lists each, attempted or not.
    pub mix: Vec<Operation>,
    pub started_at_ms: u64,
    pub wall_seconds: f64,
    pub target_rate: Option<f64>,
    pub ramp: Option<super::RampResult>,
    pub intervals: Vec<IntervalResult>,
    /// How many live intervals each of `intervals` covers.
    pub interval_width: u64,
    pub aborted: Vec<String>,
    pub action: Option<ActionResult>,
    pub logins: Option<LoginsResult>,
    pub sweep: Option<SweepPoint>,
    /// The database's sizes around the phase; `None` for a phase that never looked.
    pub disk: Option<crate::disk::PhaseDisk>,
    pub server_notes: Vec<String>,
}

/// The result of one phase the engine ran, at `sweep`'s point of a sweep if it is one.
pub fn phase(outcome: &PhaseOutcome, sweep: Option<SweepPoint>) -> PhaseResult {
    let facts = PhaseFacts {
        name: outcome.name.clone(),
        mix: outcome.operations.clone(),
        started_at_ms: unix_ms(outcome.started_at),
        wall_seconds: outcome.wall.as_secs_f64(),
        target_rate: outcome.target_rate,
        ramp: outcome
            .rate
            .filter(|r| r.is_ramp())
            .map(|r| super::RampResult {
                from: r.from,
                to: r.to,
            }),
        intervals: outcome
            .intervals
            .iter()
            .map(|r| interval(r, outcome.started_at))
            .collect(),
        interval_width: outcome.interval_width,
        aborted: outcome.aborted.clone(),
        action: outcome.action.as_ref().map(action),
        logins: (!outcome.logins.is_empty()).then(|| logins(&outcome.logins)),
        sweep,
        disk: Some(outcome.disk.clone()),
        server_notes: outcome.server_notes.clone(),
    };
    let mut result = from_tally(facts, &outcome.tally);
    result.changes = outcome.changes.as_ref().map(super::changes::changes);
    result.replication = outcome
        .replication
        .as_ref()
        .map(super::replication::replication);
    result.devices = outcome.devices.as_ref().map(super::devices::devices);
    result
}

/// A phase's result from what it says besides its tally and its tally: the one way a
/// phase result is made, for a run and for `merge` alike.
pub fn from_tally(facts: PhaseFacts, tally: &PhaseTally) -> PhaseResult {
    let wall_seconds = facts.wall_seconds;
    let operations: Vec<_> = tally
        .tried()
        .map(|(op, t)| operation(op, t, wall_seconds))
        .collect();
    PhaseResult {
        iron_cushion: iron_cushion(tally, &facts.mix, wall_seconds),
        connection_times: Some(connection_times(tally, &facts.mix)),
        name: facts.name,
        started_at_ms: facts.started_at_ms,
        wall_seconds,
        connections: tally.connections.len() as u64,
        target_rate: facts.target_rate,
        ramp: facts.ramp,
        late: tally.late,
        disk: facts
            .disk
            .map(|disk| super::disk_result(&disk, &operations)),
        operations,
        intervals: facts.intervals,
        interval_width: facts.interval_width,
        aborted: facts.aborted,
        target_nodes: tally
            .nodes
            .iter()
            .map(|(address, node)| super::TargetNodeResult {
                address: address.clone(),
                answered: node.answered,
                failed: node.failed,
                latency: latency(&node.latency),
            })
            .collect(),
        action: facts.action,
        logins: facts.logins,
        sweep: facts.sweep,
        // Made by the runner, which sets them on the result of the phase they came before.
        index_builds: Vec::new(),
        settle: None,
        server_notes: facts.server_notes,
        send_lag: facts.target_rate.map(|_| latency(&tally.send_lag)),
        connection_setup: connection_setup(&tally.setup),
        // A phase's own consumers' figures; a merge of nodes has none (see `phase`).
        changes: None,
        replication: None,
        devices: None,
    }
}

/// The phase's connection openings, when it opened any.
fn connection_setup(setup: &SetupTally) -> Option<super::ConnectionSetupResult> {
    (setup.opened > 0).then(|| super::ConnectionSetupResult {
        opened: setup.opened,
        reconnects: setup.reconnects,
        connect: latency(&setup.connect),
        handshake: (!setup.handshake.is_empty()).then(|| latency(&setup.handshake)),
    })
}

fn action(a: &ActionReport) -> ActionResult {
    ActionResult {
        kind: a.kind.clone(),
        started_seconds: a.started,
        finished_seconds: a.finished,
        size_before: a.size_before,
        size_after: a.size_after,
        size_field: a.size_field.clone(),
        error: a.error.clone(),
        note: a.note.clone(),
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
        repetitions: Vec::new(),
        search: None,
    }
}
