//! The result of a run as a file: a versioned JSON document that every report format,
//! `compare`, `merge` and the thresholds read. `docs/RESULTS.md` documents the schema.
//!
//! Latency histograms are kept in HdrHistogram's compressed form (see [`histogram`]),
//! so results of many nodes merge exactly; the percentiles beside them are for readers.

pub mod build;
pub mod changes;
mod checked;
pub mod devices;
mod disk;
pub mod environment;
mod hot;
pub mod replication;
mod search;
pub mod tally;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::disk::DiskSizes;
pub use crate::metrics::Spread;
/// Histograms are kept in results in the encoding the tallies use.
pub use crate::metrics::histogram;
pub use crate::workload::{SweepPoint, SweptSetting};
pub use changes::ChangesResult;
pub use devices::DevicesResult;
pub use disk::{DiskResult, disk_result};
pub use environment::{ClientEnvironment, ServerEnvironment};
pub use hot::{HotResult, hot_counts, hot_result};
pub use replication::ReplicationResult;
pub use search::{SearchResult, SearchStep};

/// The schema's name and version. A reader takes this version and the one before it
/// (see [`upgrade`]), and refuses others.
pub const SCHEMA: &str = "sofabench-result/2";

/// Version 1 lacked [`PhaseResult::connection_times`]; everything else reads unchanged.
const SCHEMA_1: &str = "sofabench-result/1";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    pub tool: Tool,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub ended_at: String,
    /// True when the run was stopped (Ctrl-C) before it finished.
    pub interrupted: bool,
    /// The run's settings, by flag name, without any password; at most
    /// [`checked::MOST_CONFIG`] bytes of text when read.
    #[serde(deserialize_with = "checked::config")]
    pub config: BTreeMap<String, serde_json::Value>,
    /// The nodes (machines) whose measurements this result holds: one entry for a plain
    /// run, several after `merge`.
    pub nodes: Vec<NodeInfo>,
    /// The phases; with repetitions (`run --runs N`), each phase of all repetitions
    /// merged: their operations together, as if one phase had done them all.
    pub phases: Vec<PhaseResult>,
    /// A rate search (`--search-rate`): its steps (phases of `phases`) and its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchResult>,
    /// With `run --runs N`: each repetition of the run, with its own phases, in the order
    /// they ran; absent for a plain run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<RepetitionResult>,
}

/// One repetition of a run (`run --runs N`): the whole scenario again, on a database of
/// its own, with document ids of its own, from the same seed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RepetitionResult {
    /// 1 for the first repetition.
    pub index: u64,
    /// The database it ran on (`<database_name>-run<index>`).
    pub database_name: String,
    /// The prefix of its document ids.
    pub id_prefix: String,
    /// RFC 3339, UTC, as the run's own.
    pub started_at: String,
    pub ended_at: String,
    /// True when the run was stopped (Ctrl-C) during this repetition: its last phase
    /// covers what was done before the stop.
    pub interrupted: bool,
    /// True when `--cleanup` deleted its database afterwards; false when it was left on
    /// the server.
    pub database_deleted: bool,
    pub phases: Vec<PhaseResult>,
}

impl RunResult {
    /// The repetitions that ran to their end, which alone say how the figures spread:
    /// an interrupted one holds a phase cut short.
    pub fn finished_repetitions(&self) -> impl Iterator<Item = &RepetitionResult> {
        self.repetitions.iter().filter(|r| !r.interrupted)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NodeInfo {
    pub index: u64,
    pub count: u64,
    pub host: String,
    /// This machine and the sofabench on it; absent in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientEnvironment>,
    /// The server as this machine found it at setup; absent in results written before it
    /// was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerEnvironment>,
}

/// One phase (Iron Cushion's steps are the phases `bulk_insert` and `crud`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PhaseResult {
    pub name: String,
    /// Unix time of the phase's start, milliseconds.
    pub started_at_ms: u64,
    /// Wall-clock time of the phase (Iron Cushion's `timeTaken`), seconds.
    pub wall_seconds: f64,
    pub connections: u64,
    /// Operations per second aimed at (open model), if any; under a ramp, the ramp's
    /// mean over the time the phase ran.
    pub target_rate: Option<f64>,
    /// The rate's ramp (open model): operations per second at the phase's start and at
    /// the end of its duration; absent for a constant rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<RampResult>,
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
    pub operations: Vec<OperationResult>,
    pub iron_cushion: IronCushion,
    /// One entry per live interval, or per `interval_width` of them once the phase
    /// reached `--max-intervals`.
    pub intervals: Vec<IntervalResult>,
    /// How many live intervals each of `intervals` covers (the last may cover fewer): a
    /// power of two, doubled each time the phase reached `--max-intervals`; absent when
    /// 1 (and in results written before intervals were merged).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub interval_width: u64,
    /// Why connections stopped early, if any did.
    pub aborted: Vec<String>,
    /// The phase's background action (compaction, replication), if it had one.
    #[serde(default)]
    pub action: Option<ActionResult>,
    /// From each operation's scheduled start to its actual start, for operations whose
    /// connection was free at that moment (open model only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag: Option<Latency>,
    /// Per node of the target (`--database_address` with several nodes), in its order;
    /// empty with one node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_nodes: Vec<TargetNodeResult>,
    /// Each connection's times (schema 2): what Iron Cushion's spreads and rates are
    /// computed from, kept so that merging nodes computes them again exactly. `None` in
    /// a result of schema 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_times: Option<ConnectionTimesResult>,
    /// The connections the phase opened and what opening them took; absent in results
    /// written before sofabench counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_setup: Option<ConnectionSetupResult>,
    /// Logins since the previous phase (the first phase: since the run started), with
    /// `--auth cookie` or `iam`; absent when there were none. Outside every operation's
    /// times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logins: Option<LoginsResult>,
    /// Where the phase sits in a sweep (a scenario file's `sweep`, or a built-in sweep);
    /// absent for a phase in none, and in results written before sofabench kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPoint>,
    /// The database's sizes before and after the phase, and bytes per document; absent
    /// in results written before sofabench looked (a look that failed leaves its sizes
    /// out, not the whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskResult>,
    /// The indexes and design documents the scenario's queries need, made before this
    /// phase (the first that runs queries), with how long each took to build; absent when
    /// none was made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index_builds: Vec<IndexBuildResult>,
    /// What could not be asked of the servers about themselves (PouchDB Server has no
    /// `_node/_local/_stats`: `…: GET /_node/_local/_stats gave 404`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_notes: Vec<String>,
    /// The wait before the phase for the server to settle (`fabric-bench`); absent for a
    /// phase that does not wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleResult>,
    /// What the phase's `_changes` consumers saw; absent for a phase without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangesResult>,
    /// What the phase's continuous replications measured; absent for a phase without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<ReplicationResult>,
    /// What the phase's fleet of devices measured, and whether every device converged
    /// with the server; absent for a phase without a fleet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<DevicesResult>,
}

/// How the wait before a phase for the server to settle ended: no compaction of the
/// database in `_active_tasks` and no internal replication backlog in
/// `_node/_local/_system`, where the server shows them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SettleResult {
    pub outcome: SettleOutcome,
    /// The time waited, looks included.
    pub seconds: f64,
    /// Looks at the server before it settled or the wait ended.
    pub looks: u64,
    /// The most compactions of the database (its shards, its views) seen at one look;
    /// absent when the server never showed its tasks (`shows_tasks` false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compactions: Option<u64>,
    /// The largest internal replication backlog seen (`internal_replication_jobs`);
    /// absent when the server never showed one (`shows_backlog` false): not seen is not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_backlog: Option<u64>,
    /// Whether the server showed its tasks (`_active_tasks`) and its internal
    /// replication backlog (`_node/_local/_system`): PouchDB Server shows the first only.
    pub shows_tasks: bool,
    pub shows_backlog: bool,
    /// Compactions of the database running when the phase ended: its figures include
    /// them (one look at the end; a compaction that started and ended within the phase
    /// is not seen).
    #[serde(default)]
    pub compactions_at_end: u64,
}

/// How a wait for the server to settle ended.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SettleOutcome {
    /// Nothing was running.
    Settled,
    /// Still busy at the end of the longest wait; the phase ran anyway.
    TimedOut,
    /// The server shows neither (PouchDB Server has no `_active_tasks` compaction
    /// entries nor `_node/_local/_system`), or not to these credentials.
    NotVisible,
}

/// One index's build: from its creation until a query that waits for it answered.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IndexBuildResult {
    /// `_design/NAME` (views) or `_index NAME` (Mango).
    pub index: String,
    /// The declared queries that use it.
    pub queries: Vec<String>,
    pub seconds: f64,
    /// Whether the phase's operations ran while it was built.
    #[serde(default)]
    pub when: BuiltWhen,
}

/// When an index was built, relative to the phase it is reported with.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BuiltWhen {
    /// Before the phase's operations started: on an idle database.
    #[default]
    BeforePhase,
    /// While the phase's operations ran, and done before they ended.
    WhilePhaseRan,
    /// Started with the phase's operations, which ended before it was built.
    PhaseEndedFirst,
}

/// A rate that ramps linearly over a phase's duration, operations per second.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct RampResult {
    pub from: f64,
    pub to: f64,
}

/// Logins for session cookies or IAM tokens: how many, how many failed, and how long each
/// took. An operation that met a 401 and was sent again after a login counts the second
/// sending among its `resends`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LoginsResult {
    pub count: u64,
    pub failed: u64,
    /// Each login's time, failed ones included.
    pub latency: Latency,
}

/// Connections opened in a phase: how many, how many replaced a lost or retired one, and
/// the time of the TCP connect and (over TLS) the handshake.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ConnectionSetupResult {
    pub opened: u64,
    pub reconnects: u64,
    pub connect: Latency,
    /// Absent when no connection shook hands (plain http).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake: Option<Latency>,
}

/// Each connection's times in nanoseconds, a column per quantity and an entry per
/// connection (all columns in the same connection order).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ConnectionTimesResult {
    pub local_ns: Vec<u64>,
    pub send_ns: Vec<u64>,
    pub receive_ns: Vec<u64>,
    /// Per operation of the phase's mix, by name.
    pub remote_ns: BTreeMap<String, Vec<u64>>,
}

#[cfg(test)]
impl RunResult {
    /// A finished run of `phases` on one node, with no settings, for tests.
    pub fn of_phases(phases: Vec<PhaseResult>) -> RunResult {
        let node = NodeInfo {
            index: 0,
            count: 1,
            host: String::new(),
            client: None,
            server: None,
        };
        let epoch = std::time::UNIX_EPOCH;
        build::run(BTreeMap::new(), epoch, epoch, false, node, phases)
    }
}

#[cfg(test)]
impl OperationResult {
    /// An operation with nothing counted or measured, for tests to fill in the fields
    /// they are about (`..OperationResult::unmeasured()`).
    pub fn unmeasured() -> OperationResult {
        let nothing = build::latency(&crate::metrics::recorder::new_histogram());
        OperationResult {
            operation: String::new(),
            succeeded: 0,
            failed: 0,
            documents: 0,
            documents_failed: 0,
            throughput: 0.0,
            documents_per_sec: 0.0,
            failures: BTreeMap::new(),
            failure_samples: BTreeMap::new(),
            failed_latency: None,
            resends: 0,
            retried_429: 0,
            retry_429_wait_ns: 0,
            unknown_outcomes: 0,
            not_run: 0,
            bytes_sent: 0,
            bytes_received: 0,
            rows: None,
            rows_per_sec: None,
            hot: None,
            existing: None,
            row_check: None,
            statuses: BTreeMap::new(),
            latency: nothing.clone(),
            response: nothing,
        }
    }
}

#[cfg(test)]
impl PhaseResult {
    /// A phase of `operations` over `wall_seconds` with nothing else measured, for tests.
    pub fn of_operations(
        name: &str,
        wall_seconds: f64,
        operations: Vec<OperationResult>,
    ) -> PhaseResult {
        PhaseResult {
            interval_width: 1,
            name: name.to_string(),
            started_at_ms: 0,
            wall_seconds,
            connections: 1,
            target_rate: None,
            ramp: None,
            late: 0,
            send_lag: None,
            operations,
            iron_cushion: IronCushion {
                time_taken: wall_seconds,
                total_json_bytes_sent: 0,
                total_json_bytes_received: 0,
                local_processing: Spread::default(),
                send_data: Spread::default(),
                remote_processing: BTreeMap::new(),
                receive_data: Spread::default(),
                rates: BTreeMap::new(),
            },
            intervals: Vec::new(),
            aborted: Vec::new(),
            action: None,
            target_nodes: Vec::new(),
            connection_times: None,
            connection_setup: None,
            logins: None,
            sweep: None,
            disk: None,
            index_builds: Vec::new(),
            settle: None,
            server_notes: Vec::new(),
            changes: None,
            replication: None,
            devices: None,
        }
    }
}

/// What one node of the target answered in a phase, over all operations.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TargetNodeResult {
    /// The node's address, without credentials.
    pub address: String,
    /// Requests it answered with a status below 400.
    pub answered: u64,
    /// Operations that failed there: error statuses, timeouts, broken or refused
    /// connections, and those meant for it that fell due while it could not be reached.
    pub failed: u64,
    /// Service time of the answered requests.
    pub latency: Latency,
}

/// A background action of a phase; times in seconds from the phase's start.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ActionResult {
    /// `compact`, `replicate` or `replicate (two-way)`.
    pub kind: String,
    pub started_seconds: Option<f64>,
    pub finished_seconds: Option<f64>,
    /// Database file size in bytes before and after, when the server reports it.
    pub size_before: Option<u64>,
    pub size_after: Option<u64>,
    /// `sizes.file` (CouchDB) or `disk_size` (PouchDB Server).
    pub size_field: Option<String>,
    pub error: Option<String>,
    /// How the end was known when it is not plain (PouchDB Server's answer; never seen
    /// running), or why it is unknown (still running when sofabench stopped waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Iron Cushion's fields of a phase, with its names; times in seconds, spreads over
/// connections.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IronCushion {
    pub time_taken: f64,
    pub total_json_bytes_sent: u64,
    pub total_json_bytes_received: u64,
    pub local_processing: Spread,
    pub send_data: Spread,
    /// `remoteProcessing` (bulk insert) or `remoteCreateProcessing` … by field name.
    pub remote_processing: BTreeMap<String, Spread>,
    pub receive_data: Spread,
    /// `remoteProcessingRate`, `localInsertRate`, `remoteCreateProcessingRate` … in docs/s.
    pub rates: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OperationResult {
    /// `bulk_insert`, `create`, `read`, `update` or `delete`.
    pub operation: String,
    /// Successful operations (a bulk insert request counts once).
    pub succeeded: u64,
    /// Failed operations (a bulk insert request counts once, and only when it failed as a
    /// whole: its refused documents are in `documents_failed`).
    pub failed: u64,
    /// Documents stored or operated on (a bulk insert counts its documents).
    pub documents: u64,
    /// Documents not confirmed stored or operated on: for a bulk insert, those its answers refused
    /// or did not account for (`doc:*` failures) and every document of a request that
    /// failed as a whole; for other operations, `failed`.
    #[serde(default)]
    pub documents_failed: u64,
    /// Successful operations per second of the phase's wall-clock time.
    pub throughput: f64,
    /// `documents` per second of the phase's wall-clock time: a bulk insert's documents/s.
    #[serde(default)]
    pub documents_per_sec: f64,
    /// Failures by kind: an HTTP status (`"404"`), `rate_limited` (429), `timeout`,
    /// `transport`, `bad_answer`, `no_document` count operations; `doc:<error>` (bulk
    /// insert) counts documents.
    pub failures: BTreeMap<String, u64>,
    /// A few examples of what the server said, per failure kind (answer bodies cut to
    /// 300 characters, or what broke); `rate_limited` keeps retried 429s' too, with the
    /// `Retry-After` they carried.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_samples: BTreeMap<String, Vec<String>>,
    /// Every answer's HTTP status, with counts.
    pub statuses: BTreeMap<String, u64>,
    /// Service time of successful operations.
    pub latency: Latency,
    /// Response time of successful operations (from the scheduled start under a rate).
    pub response: Latency,
    /// Time of failed operations, from the first attempt's start to the failure; absent
    /// when none failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_latency: Option<Latency>,
    /// Requests sent a second time: a GET whose first attempt met a closed connection
    /// before any byte of an answer. Writes are never resent.
    #[serde(default)]
    pub resends: u64,
    /// 429 answers after which the operation was sent again (`--retry-429`); absent when
    /// there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried_429: u64,
    /// Time spent waiting before sending operations again after a 429, nanoseconds;
    /// absent when there was none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_429_wait_ns: u64,
    /// Documents written by requests whose answer was lost after they went out (a
    /// timeout or a broken connection): they may or may not be in the database.
    #[serde(default)]
    pub unknown_outcomes: u64,
    /// Operations the phase planned that never started because their connection gave
    /// up reconnecting (`--reconnect-for`); never counts what `--duration` or Ctrl-C cut.
    #[serde(default)]
    pub not_run: u64,
    /// Bytes of the request bodies and answer bodies of the operations' answered
    /// exchanges (as `totalJsonBytesSent`/`Received` count them, per operation); 0 in
    /// results written before they were kept.
    #[serde(default)]
    pub bytes_sent: u64,
    #[serde(default)]
    pub bytes_received: u64,
    /// Queries only: rows (`rows` or `docs` elements) in the successful answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Queries only: `rows` per second of the phase's wall-clock time (what `fabric_bench`
    /// reports of its `_all_docs` and `_changes` reads); absent in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_sec: Option<f64>,
    /// Updates of hot documents only (`--hot-docs`): the 409s met, the revisions fetched
    /// and the attempts each update took; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot: Option<HotResult>,
    /// Reads, updates and deletes of existing data only (`--key-range`, `--key-sample`):
    /// targets missing, writes refused with 409, revisions fetched; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing: Option<crate::metrics::ExistingCounts>,
    /// Queries checked against the seed's documents (a phase that writes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_check: Option<RowCheck>,
}

/// How the rows of a query's answers compared with the documents the seed gives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCheck {
    /// Answers checked.
    pub answers: u64,
    /// Answers that held another number of rows than expected.
    pub wrong: u64,
    /// Rows the checked answers should have held, in all.
    pub expected_rows: u64,
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `count` per second of `seconds` (a phase's wall-clock time); 0 when no time passed.
/// Every rate in a result is made this way from its counts, so merged results recompute
/// their rates from summed counts.
pub fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Percentiles in milliseconds, and the histogram (microseconds) they come from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// HdrHistogram V2 deflate, base64; values in microseconds.
    #[serde(deserialize_with = "checked::histogram")]
    pub histogram: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalResult {
    /// Unix time of the interval's end, milliseconds.
    pub end_ms: u64,
    /// Seconds from the phase's start to the interval's end.
    pub elapsed_seconds: f64,
    pub length_seconds: f64,
    /// The client's CPU use, as a share of its cores.
    pub cpu: f64,
    pub late: u64,
    pub operations: Vec<IntervalOperation>,
    /// The whole machine's CPU use (every process), as a share of all its cores; absent
    /// where the system does not tell (no `/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_cpu: Option<f64>,
    /// Operations sent and not yet answered at the interval's end.
    #[serde(default)]
    pub in_flight: u64,
    /// Operations waiting to be sent again after a 429 at the interval's end (not in
    /// `in_flight`); absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waiting_after_429: u64,
    /// The operations per second the schedule aimed at over the interval (open model;
    /// under a ramp, its mean over the interval); absent without a rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// True when the client's threads polled instead of sleeping (`--busy-poll`): `cpu`
    /// was full by design and says nothing of how loaded the client was; absent when not.
    #[serde(default, skip_serializing_if = "is_false")]
    pub polling: bool,
    /// The database's sizes as looked at during the interval; absent when no look
    /// answered in it (or in results written before sofabench looked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskSizes>,
    /// What each node said about itself as the interval ended: CouchDB's counters'
    /// growth over the interval, its request times over its own stats window, its VM's
    /// memory and queues, and its background tasks; absent when not asked or not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<crate::server_stats::NodeInterval>,
    /// The interval's late starts by cause, put down live interval by live interval, so
    /// that they stay exact in a merged interval; absent when none started late (and in
    /// results written before: then the causes are read from the interval's figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_causes: Option<crate::metrics::late::LateCauses>,
    /// Seconds of the interval the server stalled (operations in flight, none
    /// answered); absent when it did not (and in results written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_seconds: Option<f64>,
}

fn is_false(value: &bool) -> bool {
    !value
}

fn one() -> u64 {
    1
}

fn is_one(value: &u64) -> bool {
    *value == 1
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IntervalOperation {
    pub operation: String,
    pub succeeded: u64,
    pub failed: u64,
    pub timeouts: u64,
    /// Failures that were 429s (in `failed`); absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_limited: u64,
    /// 429 answers after which the operation was sent again; absent when there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried_429: u64,
    /// Documents the interval's successful bulk inserts stored; absent for other
    /// operations (one document each) and in results written before sofabench kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<u64>,
    /// Request and answer body bytes of the operations answered in the interval (the
    /// `bytes` table's figures, per interval); absent in results written before
    /// sofabench kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_received: Option<u64>,
    /// Successful operations per second in the interval.
    pub throughput: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Response times, HdrHistogram V2 deflate, base64, microseconds.
    #[serde(deserialize_with = "checked::histogram")]
    pub histogram: String,
}

impl RunResult {
    /// Reads a result file, checking its schema.
    pub fn read(path: &std::path::Path) -> Result<RunResult, String> {
        let text = crate::files::read_text(path, crate::files::Kind::Result)?;
        RunResult::parse(&text, &path.display().to_string())
    }

    /// A result from the text of a result file; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<RunResult, String> {
        checked::cost(text)
            .map_err(|e| format!("{file}: {e}; give a file written by --json or --out"))?;
        let result: RunResult = serde_json::from_str(text).map_err(|e| {
            format!(
                "{file}:{}:{}: not a sofabench result ({e}); give a file written by --json or --out",
                e.line(),
                e.column()
            )
        })?;
        upgrade(result).map_err(|e| format!("{file}: {e}"))
    }

    /// Whether every phase keeps its connections' times, which merging needs.
    pub fn has_connection_times(&self) -> bool {
        self.phases.iter().all(|p| p.connection_times.is_some())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialize")
    }
}

/// A result read from a file, in this version's schema: a result of schema 1 is one of
/// schema 2 without connection times, which only `merge` needs (and says so).
pub fn upgrade(mut result: RunResult) -> Result<RunResult, String> {
    match result.schema.as_str() {
        SCHEMA => Ok(result),
        SCHEMA_1 => {
            result.schema = SCHEMA.to_string();
            for phase in &mut result.phases {
                phase.connection_times = None;
            }
            Ok(result)
        }
        other => Err(format!(
            "schema {other:?} is neither {SCHEMA:?} nor {SCHEMA_1:?}; use the sofabench version that wrote it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(schema: &str) -> RunResult {
        let mut phase = PhaseResult::of_operations("crud", 1.0, Vec::new());
        phase.connection_times = Some(ConnectionTimesResult::default());
        RunResult {
            schema: schema.to_string(),
            tool: Tool {
                name: "sofabench".into(),
                version: "0".into(),
            },
            started_at: String::new(),
            ended_at: String::new(),
            interrupted: false,
            config: BTreeMap::new(),
            nodes: Vec::new(),
            phases: vec![phase],
            repetitions: Vec::new(),
            search: None,
        }
    }

    #[test]
    fn version_1_reads_as_version_2_without_connection_times() {
        let upgraded = upgrade(result("sofabench-result/1")).unwrap();
        assert_eq!(upgraded.schema, SCHEMA);
        assert!(!upgraded.has_connection_times());
        assert!(upgrade(result(SCHEMA)).unwrap().has_connection_times());
        let err = upgrade(result("sofabench-result/3")).unwrap_err();
        assert!(err.contains("\"sofabench-result/3\""), "{err}");
    }
}
