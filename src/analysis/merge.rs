//! Merging the results of several nodes (machines that ran one workload together, see
//! [`super::nodes`]) into the result of the whole run.
//!
//! Each node's phase turns back into its tally (counts, histograms and every
//! connection's times; see [`crate::results::tally`]), the tallies are added, and the
//! merged phase is built from the sum exactly as a run builds its own. So every figure is
//! exact: counts, percentiles, throughputs (merged successes over the slowest node's
//! wall-clock time), and Iron Cushion's spreads and rates over all nodes' connections.
//! Results of schema 1 kept no connection times and are refused.
//!
//! - **Intervals** are aligned by wall clock: each node's interval rows are put in the
//!   bucket of their end time rounded to the interval length, and the rows of a bucket
//!   are summed (counts, operations in flight and histograms exactly; the CPU shares,
//!   the client's and the machine's, are the busiest node's).
//!   Nodes whose clocks disagree shift their rows accordingly.
//!
//! Results are refused when they cannot be one run: another schema, other phases, or
//! other settings. Settings may differ only in [`NODE_KEYS`] (the node's index, and the
//! seed and id prefix, which a run draws at random when not given); the merged result
//! keeps such a setting as one value when all nodes agree, and as the list of the nodes'
//! values otherwise.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::metrics::{IntervalMetrics, interval};
use crate::metrics::{LoginTally, PhaseTally};
use crate::results::build::{self, PhaseFacts};
use crate::results::{
    IndexBuildResult, IntervalResult, LoginsResult, OperationResult, PhaseResult, RampResult,
    RunResult, histogram, tally,
};
use crate::workload::Operation;

/// Settings that may differ between the nodes of one run.
pub const NODE_KEYS: [&str; 3] = ["node_index", "seed", "id_prefix"];

/// The merged result, and what the user should know about it.
#[derive(Debug)]
pub struct Merged {
    pub result: RunResult,
    pub notes: Vec<String>,
}

/// Merges results, each with a name for messages (its file). One result merges into
/// itself.
pub fn merge(inputs: &[(String, RunResult)]) -> Result<Merged, String> {
    let Some((first_name, first)) = inputs.first() else {
        return Err("nothing to merge: give the result files of the nodes".to_string());
    };
    let mut notes = Vec::new();
    if let Some((name, result)) = inputs.iter().find(|(_, r)| !r.repetitions.is_empty()) {
        return Err(format!(
            "{name} holds {} (run --runs): merge adds the results of the nodes of one run, and a run with --runs has one node; compare such results with `sofabench compare`",
            crate::words::counted(result.repetitions.len() as u64, "repetition")
        ));
    }
    for (name, result) in &inputs[1..] {
        if result.schema != first.schema {
            return Err(format!(
                "{name} has schema {:?} but {first_name} has {:?}; merge results written by one sofabench version",
                result.schema, first.schema
            ));
        }
        check_config(first_name, first, name, result)?;
        let names = |r: &RunResult| {
            r.phases
                .iter()
                .map(|p| p.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if names(result) != names(first) {
            return Err(format!(
                "{name} has the phases [{}] but {first_name} has [{}]; merge only nodes that ran the same phases (a node that stopped early has fewer)",
                names(result),
                names(first)
            ));
        }
    }
    if inputs.len() > 1
        && let Some((name, _)) = inputs.iter().find(|(_, r)| r.search.is_some())
    {
        return Err(format!(
            "{name} holds a rate search (--search-rate), which one machine runs on its own: its steps depend on each other's answers, so searches of several nodes do not merge"
        ));
    }
    check_nodes(inputs, &mut notes)?;
    check_sums(inputs)?;
    for (name, result) in inputs {
        if result.interrupted {
            notes.push(format!(
                "{name} was interrupted: the merged result covers what it did"
            ));
        }
    }
    for (name, result) in inputs {
        if !result.has_connection_times() {
            return Err(format!(
                "{name} was written by an older sofabench (schema 1), which kept no connection times: Iron Cushion's spreads and rates cannot be merged exactly from it; run the nodes again with this version"
            ));
        }
    }

    let results: Vec<&RunResult> = inputs.iter().map(|(_, r)| r).collect();
    let mut phases = Vec::new();
    for index in 0..first.phases.len() {
        let parts: Vec<(&PhaseResult, &RunResult)> =
            results.iter().map(|r| (&r.phases[index], *r)).collect();
        let phase = merge_phase(&parts)?;
        if let Some(note) = apart(&parts, phase.wall_seconds) {
            notes.push(note);
        }
        phases.push(phase);
    }
    Ok(Merged {
        result: RunResult {
            schema: first.schema.clone(),
            tool: first.tool.clone(),
            started_at: results.iter().map(|r| &r.started_at).min().unwrap().clone(),
            ended_at: results.iter().map(|r| &r.ended_at).max().unwrap().clone(),
            interrupted: results.iter().any(|r| r.interrupted),
            config: merged_config(&results),
            nodes: results.iter().flat_map(|r| r.nodes.clone()).collect(),
            phases,
            repetitions: Vec::new(),
            search: first.search.clone(),
        },
        notes,
    })
}

/// A note when the nodes did not run a phase together: their starts lie further apart
/// than the phase lasted, so the merged throughput (all successes over the slowest node's
/// wall-clock time) is more than they achieved together.
fn apart(parts: &[(&PhaseResult, &RunResult)], wall_seconds: f64) -> Option<String> {
    let starts = parts.iter().map(|(p, _)| p.started_at_ms);
    let (first, last) = (starts.clone().min()?, starts.max()?);
    let spread = (last - first) as f64 / 1_000.0;
    (spread > wall_seconds).then(|| {
        format!(
            "the nodes started phase {} {spread:.1} s apart, longer than it lasted ({wall_seconds:.1} s): they did not run it together, so its merged throughputs overstate what they did together",
            parts[0].0.name
        )
    })
}

fn check_config(
    first_name: &str,
    first: &RunResult,
    name: &str,
    result: &RunResult,
) -> Result<(), String> {
    let keys: std::collections::BTreeSet<&String> =
        first.config.keys().chain(result.config.keys()).collect();
    for key in keys {
        if NODE_KEYS.contains(&key.as_str()) {
            continue;
        }
        let (a, b) = (first.config.get(key), result.config.get(key));
        if a != b {
            let show = |v: Option<&Value>| v.map_or("missing".to_string(), |v| v.to_string());
            return Err(format!(
                "{name} was run with other settings than {first_name}: {key} is {} there and {} in {first_name}; merge only the nodes of one run (they may differ only in {})",
                show(b),
                show(a),
                NODE_KEYS.join(", ")
            ));
        }
    }
    Ok(())
}

/// Refuses a node given twice; notes nodes of the run that are missing.
fn check_nodes(inputs: &[(String, RunResult)], notes: &mut Vec<String>) -> Result<(), String> {
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    let mut count = None;
    for (at, (name, result)) in inputs.iter().enumerate() {
        for node in &result.nodes {
            if node.index >= node.count {
                return Err(format!(
                    "{name} says it is node {} of {}: a node's index must be below the count (nodes are numbered 0 to count - 1); give results written by sofabench, unedited",
                    node.index, node.count
                ));
            }
            // The same node by its place and machine: its environment (the load average
            // at its start) says nothing of which node it was.
            let same = inputs[at + 1..].iter().find(|(_, other)| {
                other.started_at == result.started_at
                    && other.nodes.iter().any(|n| {
                        (n.index, n.count, &n.host) == (node.index, node.count, &node.host)
                    })
                    && other.config.get("id_prefix") == result.config.get("id_prefix")
            });
            if let Some((other_name, _)) = same {
                return Err(format!(
                    "{name} and {other_name} are the same node's result; give each node's result once"
                ));
            }
            if node.count > 1 {
                count = Some(node.count);
                if let Some(other) = seen.insert(node.index, name) {
                    return Err(format!(
                        "{other} and {name} are both node {} of {}; give each node's result once",
                        node.index, node.count
                    ));
                }
            }
        }
    }
    if let Some(count) = count {
        let missing: Vec<String> = (0..count)
            .filter(|i| !seen.contains_key(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "nodes {} of 0..{} are missing: the merged result covers {} of {count} nodes",
                missing.join(", "),
                count - 1,
                seen.len()
            ));
        }
    }
    Ok(())
}

/// Refuses counts that would overflow when the nodes' results are added. A tally
/// saturates as a last guard, but a merged figure that silently stopped growing would
/// be wrong, so the sum that does not fit is named instead.
fn check_sums(inputs: &[(String, RunResult)]) -> Result<(), String> {
    let mut sums: BTreeMap<(usize, String), u64> = BTreeMap::new();
    for (name, result) in inputs {
        for (index, phase) in result.phases.iter().enumerate() {
            let phase_counts = [
                ("late", phase.late),
                ("json bytes sent", phase.iron_cushion.total_json_bytes_sent),
                (
                    "json bytes received",
                    phase.iron_cushion.total_json_bytes_received,
                ),
            ];
            let operations = phase.operations.iter().flat_map(|op| {
                counts_of(op)
                    .into_iter()
                    .map(move |(what, n)| (format!("{} {what}", op.operation), n))
            });
            let all = phase_counts
                .into_iter()
                .map(|(what, n)| (what.to_string(), n))
                .chain(operations);
            for (what, n) in all {
                let sum = sums.entry((index, what.clone())).or_default();
                *sum = sum.checked_add(n).ok_or_else(|| {
                    format!(
                        "{name}: phase {}: {what}: {n} added to the other results' {sum} does not fit in 64 bits; these counts cannot be real, give results written by sofabench, unedited",
                        phase.name
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// The counts of an operation's result that merging adds.
fn counts_of(op: &OperationResult) -> Vec<(String, u64)> {
    let mut counts: Vec<(String, u64)> = [
        ("succeeded", op.succeeded),
        ("failed", op.failed),
        ("documents", op.documents),
        ("documents_failed", op.documents_failed),
        ("resends", op.resends),
        ("retried_429", op.retried_429),
        ("retry_429_wait_ns", op.retry_429_wait_ns),
        ("unknown_outcomes", op.unknown_outcomes),
        ("not_run", op.not_run),
    ]
    .into_iter()
    .map(|(what, n)| (what.to_string(), n))
    .collect();
    counts.extend(
        op.failures
            .iter()
            .map(|(k, n)| (format!("failures.{k}"), *n)),
    );
    counts.extend(
        op.statuses
            .iter()
            .map(|(k, n)| (format!("statuses.{k}"), *n)),
    );
    counts
}

fn merged_config(results: &[&RunResult]) -> BTreeMap<String, Value> {
    let mut config = results[0].config.clone();
    for key in NODE_KEYS {
        let values: Vec<Value> = results
            .iter()
            .map(|r| r.config.get(key).cloned().unwrap_or(Value::Null))
            .collect();
        if values.iter().any(|v| *v != values[0]) {
            config.insert(key.to_string(), Value::Array(values));
        }
    }
    config
}

/// One phase of all nodes: their tallies added, the result built from the sum as a run
/// builds its own; intervals aligned by wall clock.
fn merge_phase(parts: &[(&PhaseResult, &RunResult)]) -> Result<PhaseResult, String> {
    let phases: Vec<&PhaseResult> = parts.iter().map(|(p, _)| *p).collect();
    let mut tally = PhaseTally::default();
    for phase in &phases {
        tally.merge(&tally::of_phase(phase)?);
    }
    let started_at_ms = phases.iter().map(|p| p.started_at_ms).min().unwrap_or(0);
    let target_rates: Vec<f64> = phases.iter().filter_map(|p| p.target_rate).collect();
    let facts = PhaseFacts {
        name: phases[0].name.clone(),
        mix: mix(&phases),
        started_at_ms,
        wall_seconds: phases.iter().map(|p| p.wall_seconds).fold(0.0, f64::max),
        target_rate: (!target_rates.is_empty()).then(|| target_rates.iter().sum()),
        ramp: merge_ramps(&phases),
        intervals: merge_intervals(parts, started_at_ms)?,
        interval_width: phases.iter().map(|p| p.interval_width).max().unwrap_or(1),
        aborted: aborted(parts),
        // Every node starts the phase's action; the first node's report stands for it.
        action: phases.iter().find_map(|p| p.action.clone()),
        logins: merge_logins(&phases)?,
        // Every node ran the same scenario: the first node's place in a sweep is all's.
        sweep: phases[0].sweep.clone(),
        disk: merge_disk(&phases),
        server_notes: phases
            .iter()
            .find_map(|p| (!p.server_notes.is_empty()).then(|| p.server_notes.clone()))
            .unwrap_or_default(),
    };
    let mut result = build::from_tally(facts, &tally);
    result.index_builds = merge_index_builds(&phases);
    // The first client machine alone follows the feeds (its writes as a sample).
    result.changes = phases.iter().find_map(|p| p.changes.clone());
    result.replication = phases.iter().find_map(|p| p.replication.clone());
    // Every machine ran its share of the devices: their figures add.
    result.devices =
        crate::results::devices::merge(phases.iter().filter_map(|p| p.devices.as_ref()))
            .map_err(|e| format!("phase {}: {e}", phases[0].name))?;
    Ok(result)
}

/// Every node made the same indexes around the phase and waited for them: an index's
/// build is the longest wait (with when it ended), in the order the first node listed
/// them.
fn merge_index_builds(phases: &[&PhaseResult]) -> Vec<IndexBuildResult> {
    let mut builds: Vec<IndexBuildResult> = Vec::new();
    for build in phases.iter().flat_map(|p| &p.index_builds) {
        match builds.iter_mut().find(|b| b.index == build.index) {
            Some(known) if known.seconds < build.seconds => *known = build.clone(),
            Some(_) => {}
            None => builds.push(build.clone()),
        }
    }
    builds
}

/// The nodes wrote into one database: its sizes before the phase are the look of the node
/// that started first, after it the look of the node that ended last.
fn merge_disk(phases: &[&PhaseResult]) -> Option<crate::disk::PhaseDisk> {
    let looked: Vec<(&PhaseResult, &crate::results::DiskResult)> = phases
        .iter()
        .filter_map(|p| Some((*p, p.disk.as_ref()?)))
        .collect();
    let first = looked.iter().min_by_key(|(p, _)| p.started_at_ms)?;
    let end_ms = |p: &PhaseResult| p.started_at_ms as f64 + p.wall_seconds * 1_000.0;
    let last = looked
        .iter()
        .max_by(|(a, _), (b, _)| end_ms(a).total_cmp(&end_ms(b)))?;
    Some(crate::disk::PhaseDisk {
        start: first.1.start.clone(),
        end: last.1.end.clone(),
    })
}

/// The whole run's ramp: each node ramps its share, so the ends add up.
fn merge_ramps(phases: &[&PhaseResult]) -> Option<RampResult> {
    phases
        .iter()
        .filter_map(|p| p.ramp)
        .reduce(|a, b| RampResult {
            from: a.from + b.from,
            to: a.to + b.to,
        })
}

/// Every node's logins of the phase, added up; `None` when none logged in.
fn merge_logins(phases: &[&PhaseResult]) -> Result<Option<LoginsResult>, String> {
    let mut total = LoginTally::default();
    for logins in phases.iter().filter_map(|p| p.logins.as_ref()) {
        total.merge(&tally::of_logins(logins)?);
    }
    Ok((!total.is_empty()).then(|| build::logins(&total)))
}

/// The operations of the phase's mix, as the nodes' connection times name them.
pub(super) fn mix(phases: &[&PhaseResult]) -> Vec<Operation> {
    Operation::ALL
        .into_iter()
        .filter(|op| {
            phases.iter().any(|p| {
                p.connection_times
                    .as_ref()
                    .is_some_and(|t| t.remote_ns.contains_key(op.name()))
            })
        })
        .collect()
}

/// Why connections stopped early, each reason with the node it came from.
fn aborted(parts: &[(&PhaseResult, &RunResult)]) -> Vec<String> {
    let mut aborted = Vec::new();
    for (phase, result) in parts {
        for reason in &phase.aborted {
            aborted.push(match result.nodes.as_slice() {
                [node] if node.count > 1 || parts.len() > 1 => {
                    format!("node {} ({}): {reason}", node.index, node.host)
                }
                _ => reason.clone(),
            });
        }
    }
    aborted
}

/// The interval length of a node's phase in milliseconds, as its rows kept it: the
/// mean over all rows but the last (often cut short by the phase's end), from their ends.
/// Not `--interval` × `interval_width`: a tick that fires late pushes the next ones
/// later, so rows run a little longer than asked, and a grid of the asked length drifts
/// off the rows; nor the most common length, which jitters by a millisecond or two.
fn interval_ms(phase: &PhaseResult) -> u64 {
    let rows = &phase.intervals;
    let full = match rows.len() {
        0 => return 1_000,
        1 => (rows[0].length_seconds * 1_000.0).round() as u64,
        n => rows[n - 2].end_ms.saturating_sub(phase.started_at_ms) / (n as u64 - 1),
    };
    full.max(1)
}

/// What one node's rows in a bucket add up to: one row's worth of the node.
#[derive(Clone, Copy, Default)]
struct NodeShare {
    /// At the end of the node's last row in the bucket.
    in_flight: u64,
    waiting_after_429: u64,
}

/// The nodes' interval rows that end in one stretch of time, added up: one row of each
/// node, or several consecutive ones of a node whose intervals were merged less far.
#[derive(Default)]
struct Bucket {
    /// Per node (its place among the merged files).
    shares: BTreeMap<usize, NodeShare>,
    cpu: f64,
    machine_cpu: Option<f64>,
    polling: bool,
    /// Each node's share of the rate aimed at, added up (length-weighted per node).
    target_rate: Option<f64>,
    metrics: IntervalMetrics,
    late_causes: crate::metrics::late::LateCauses,
    /// A row with late starts came without their causes (a result written before
    /// sofabench kept them): the merged row leaves them out, to be read from its figures.
    causes_unknown: bool,
    /// The longest any node stalled in the stretch.
    stalled_seconds: Option<f64>,
    /// The latest end of a row in the stretch (Unix ms).
    last_end_ms: u64,
    /// A node's bulk inserts came without their documents (a result written before
    /// sofabench kept them): the sum would say too few, so the merged row says none.
    documents_unknown: bool,
    /// A node's row came without its bytes (a result written before sofabench kept
    /// them): the merged row says none rather than too few.
    bytes_unknown: bool,
    /// The database's sizes: every node looked at the same database, the first node's
    /// look that answered stands for all.
    disk: Option<crate::disk::DiskSizes>,
    /// The servers' figures: only the first client machine asks for them.
    server: Vec<crate::server_stats::NodeInterval>,
}

impl Bucket {
    fn add(&mut self, node: usize, row: &IntervalResult) -> Result<(), String> {
        self.last_end_ms = self.last_end_ms.max(row.end_ms);
        let share = self.shares.entry(node).or_default();
        share.in_flight = row.in_flight;
        share.waiting_after_429 = row.waiting_after_429;
        self.cpu = self.cpu.max(row.cpu);
        // Nodes on different machines: the busiest machine, as with the client's CPU.
        self.machine_cpu = match (self.machine_cpu, row.machine_cpu) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        // The busiest node's CPU is kept: if any node polled, it may be that one's.
        self.polling |= row.polling;
        self.add_target(row);
        self.metrics.late += row.late;
        match row.late_causes {
            Some(causes) => self.late_causes.add(&causes),
            None => self.causes_unknown |= row.late > 0,
        }
        self.stalled_seconds = match (self.stalled_seconds, row.stalled_seconds) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if self.disk.is_none() {
            self.disk.clone_from(&row.disk);
        }
        if self.server.is_empty() {
            self.server.clone_from(&row.server);
        }
        for op in &row.operations {
            self.add_operation(op)?;
        }
        Ok(())
    }

    /// The rate aimed at: the nodes' shares add up; a node's consecutive rows in the
    /// stretch count by their lengths (the row's length is known once all are in, so
    /// operations aimed at are summed here and divided in `result`).
    fn add_target(&mut self, row: &IntervalResult) {
        if let Some(rate) = row.target_rate {
            *self.target_rate.get_or_insert(0.0) += rate * row.length_seconds;
        }
    }

    fn add_operation(&mut self, op: &crate::results::IntervalOperation) -> Result<(), String> {
        let operation = Operation::named(&op.operation)
            .ok_or_else(|| format!("unknown operation {:?}", op.operation))?;
        self.bytes_unknown |= op.bytes_sent.is_none() || op.bytes_received.is_none();
        let documents = match (operation, op.documents) {
            (_, Some(documents)) => documents,
            (Operation::BulkInsert, None) => {
                self.documents_unknown = true;
                0
            }
            (_, None) => op.succeeded,
        };
        self.metrics.operations[operation].merge(&interval::IntervalOperation {
            succeeded: op.succeeded,
            failed: op.failed,
            timeouts: op.timeouts,
            rate_limited: op.rate_limited,
            retried_429: op.retried_429,
            documents,
            bytes_sent: op.bytes_sent.unwrap_or(0),
            bytes_received: op.bytes_received.unwrap_or(0),
            response: histogram::decode(&op.histogram)?,
            ..interval::IntervalOperation::default()
        });
        Ok(())
    }

    /// The bucket as an interval of `length` seconds ending at `end_ms`, `elapsed` after
    /// the phase's start.
    fn result(&self, end_ms: u64, elapsed: f64, length: f64) -> IntervalResult {
        let mut row = self.metrics.row(elapsed, length, self.cpu);
        row.server.clone_from(&self.server);
        row.machine_cpu = self.machine_cpu;
        row.in_flight = self.shares.values().map(|s| s.in_flight).sum();
        row.waiting_after_429 = self.shares.values().map(|s| s.waiting_after_429).sum();
        row.polling = self.polling;
        row.target_rate = self
            .target_rate
            .map(|aimed| if length > 0.0 { aimed / length } else { 0.0 });
        row.disk.clone_from(&self.disk);
        row.late_causes = self.late_causes;
        row.stalled_seconds = self.stalled_seconds.unwrap_or(0.0);
        let mut result = build::interval_ending(&row, end_ms);
        if self.causes_unknown {
            result.late_causes = None;
        }
        for op in &mut result.operations {
            if self.documents_unknown {
                op.documents = None;
            }
            if self.bytes_unknown {
                (op.bytes_sent, op.bytes_received) = (None, None);
            }
        }
        result
    }
}

/// The nodes' rows, put together by the stretch of time they end in. Nodes whose
/// intervals were merged differently (one reached `--max-intervals` and another not)
/// are aligned on the coarsest: each stretch is as long as the widest node's intervals,
/// and a finer node's rows fall into the stretch their middle lies in.
fn merge_intervals(
    parts: &[(&PhaseResult, &RunResult)],
    started_at_ms: u64,
) -> Result<Vec<IntervalResult>, String> {
    let lengths: Vec<u64> = parts.iter().map(|(phase, _)| interval_ms(phase)).collect();
    let length = lengths.iter().copied().max().unwrap_or(1_000);
    // The rows of each stretch are gathered first and added up one stretch at a time: a
    // bucket holds its operations' histograms decoded, which a file can make hundreds of
    // KiB each from a hundred bytes of text, so all buckets at once could take many
    // times the files.
    let mut stretches: BTreeMap<u64, Vec<(usize, &str, &IntervalResult)>> = BTreeMap::new();
    for (node, (phase, _)) in parts.iter().enumerate() {
        for row in &phase.intervals {
            // A row belongs to the stretch its middle lies in: its end may be a tick late
            // or early, and a short last row ends just past a stretch it is not part of.
            let half = (row.length_seconds.max(0.0) * 500.0) as u64;
            let middle = row
                .end_ms
                .saturating_sub(started_at_ms)
                .saturating_sub(half);
            stretches
                .entry(middle / length + 1)
                .or_default()
                .push((node, &phase.name, row));
        }
    }
    // Each stretch runs from the one before's end to its rows' latest end, so that the
    // stretches tile the phase (nodes' rows seldom end together) and the last ends with
    // the phase, not a whole stretch later.
    let mut before = started_at_ms;
    stretches
        .into_iter()
        .map(|(key, rows)| {
            let mut bucket = Bucket::default();
            for (node, phase, row) in rows {
                bucket
                    .add(node, row)
                    .map_err(|e| format!("an interval of phase {phase}: {e}"))?;
            }
            let end_ms = bucket
                .last_end_ms
                .max(started_at_ms + (key - 1) * length)
                .max(before);
            let length = end_ms.saturating_sub(before) as f64 / 1_000.0;
            before = end_ms;
            let elapsed = end_ms.saturating_sub(started_at_ms) as f64 / 1_000.0;
            Ok(bucket.result(end_ms, elapsed, length))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde_json::json;

    use super::super::{add_encoded, empty_histogram};
    use super::*;
    use crate::metrics::{
        ConnectionMetrics, IntervalMetrics, IntervalRow, PhaseOutcome, StepLatencies,
    };
    use crate::results::build::latency;
    use crate::results::{NodeInfo, build};

    /// Connection `c` of a test run: `3 + c` reads with latencies `(c+1) × k` ms, creates
    /// of `c × 7 + k` µs, one failed read (404) on odd connections, and times that grow
    /// with `c`. Its latencies go to `latencies`.
    fn connection(c: u64, latencies: &mut StepLatencies) -> ConnectionMetrics {
        let mut m = ConnectionMetrics::default();
        let read = &mut m.operations[Operation::Read];
        for k in 1..=3 + c {
            read.succeeded += 1;
            read.documents += 1;
            latencies[Operation::Read].record((c + 1) * k * 1_000_000, (c + 1) * k * 1_100_000);
            read.statuses.add(200, 1);
            m.times.remote_ns[Operation::Read] += (c + 1) * k * 900_000;
        }
        if c % 2 == 1 {
            read.fail(crate::metrics::errors::Failure::Status(404));
            read.statuses.add(404, 1);
        } else {
            // Two 429s sent again, then one that failed.
            read.fail(crate::metrics::errors::Failure::RateLimited);
            read.statuses.add(429, 3);
            read.retried_429 = 2;
            read.retry_429_wait_ns = 1_000_000_000 + c;
        }
        let create = &mut m.operations[Operation::Create];
        for k in 0..5 {
            create.succeeded += 1;
            create.documents += 1;
            let create_latencies = &mut latencies[Operation::Create];
            crate::metrics::recorder::record_micros(
                &mut create_latencies.latency,
                (c * 7 + k) * 1_000 + 1_000,
            );
            create.statuses.add(201, 1);
            m.times.remote_ns[Operation::Create] += 1_000_000 * (c + 1);
        }
        // Bulk inserts of 10 documents: `c + 1` answered, `c % 3` documents refused, and
        // on even connections one more request that failed as a whole.
        let bulk = m.operation(Operation::BulkInsert);
        bulk.succeeded = c + 1;
        bulk.statuses.add(201, c + 1);
        bulk.documents = 10 * (c + 1) - c % 3;
        bulk.documents_failed = c % 3;
        bulk.failures.add(
            crate::metrics::errors::Failure::Document("conflict".into()),
            c % 3,
        );
        if c.is_multiple_of(2) {
            bulk.fail(crate::metrics::errors::Failure::Status(500));
            bulk.statuses.add(500, 1);
            bulk.documents_failed += 10;
        }
        m.times.local_ns = 1_000_000 * (c + 2);
        m.times.send_ns = 500_000 * (c * c + 1);
        m.times.receive_ns = 300_000 * (c + 3);
        m.json_sent = 1_000 + c;
        m.json_received = 2_000 + c;
        m
    }

    fn interval(end: f64, connections: &[u64]) -> IntervalRow {
        let mut metrics = IntervalMetrics::default();
        for &c in connections {
            metrics.succeeded(Operation::Read, (c + 1) * 1_000_000);
            let failure = if c % 2 == 0 {
                crate::metrics::errors::Failure::Timeout
            } else {
                crate::metrics::errors::Failure::RateLimited
            };
            metrics.failed(Operation::Create, &failure);
            metrics.retried_429(Operation::Read);
        }
        metrics.row(end, 1.0, 0.1 * connections.len() as f64)
    }

    /// One login per connection (as if each had a node of its own), connection `c`'s
    /// taking 10 + c ms; connection 0's failed.
    fn logins(connections: &[u64]) -> LoginTally {
        let mut tally = LoginTally::default();
        for &c in connections {
            tally.record(Duration::from_millis(10 + c), c != 0);
        }
        tally
    }

    /// The result one node reports when it runs the connections `connections`.
    fn node_result(connections: &[u64], node: NodeInfo, seed: u64) -> RunResult {
        let mut latencies = StepLatencies::default();
        let outcome = PhaseOutcome {
            interval_width: 1,
            name: "crud".to_string(),
            operations: Operation::CRUD.to_vec(),
            started_at: UNIX_EPOCH + Duration::from_secs(1_000),
            wall: Duration::from_secs(4),
            tally: PhaseTally::of_connections(
                connections
                    .iter()
                    .map(|c| connection(*c, &mut latencies))
                    .collect(),
                latencies,
                crate::metrics::recorder::new_histogram(),
                Vec::new(),
            ),
            aborted: Vec::new(),
            intervals: vec![interval(1.0, connections), interval(2.0, connections)],
            target_rate: None,
            rate: None,
            interrupted: false,
            action: None,
            changes: None,
            replication: None,
            devices: None,
            logins: logins(connections),
            disk: crate::disk::PhaseDisk::default(),
            server_notes: Vec::new(),
        };
        let mut config = BTreeMap::new();
        config.insert("num_connections".to_string(), json!(connections.len()));
        config.insert("seed".to_string(), json!(seed));
        config.insert("node_index".to_string(), json!(node.index));
        config.insert("node_count".to_string(), json!(node.count));
        build::run(
            config,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 + node.index),
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_010 - node.index),
            false,
            node,
            vec![build::phase(&outcome, None)],
        )
    }

    /// The histograms in one encoding: the same histogram can be encoded with other
    /// bucket ranges, so results compare by what the histograms hold.
    fn canonical(encoded: &str) -> String {
        let mut h = empty_histogram();
        add_encoded(&mut h, encoded).unwrap();
        crate::results::histogram::encode(&h)
    }

    fn normalized(result: &RunResult) -> RunResult {
        let mut r = result.clone();
        for phase in &mut r.phases {
            for op in &mut phase.operations {
                op.latency.histogram = canonical(&op.latency.histogram);
                op.response.histogram = canonical(&op.response.histogram);
            }
            if let Some(logins) = &mut phase.logins {
                logins.latency.histogram = canonical(&logins.latency.histogram);
            }
            for row in &mut phase.intervals {
                for op in &mut row.operations {
                    op.histogram = canonical(&op.histogram);
                }
            }
        }
        r
    }

    fn node(index: u64, count: u64) -> NodeInfo {
        NodeInfo {
            index,
            count,
            host: format!("host-{index}"),
            client: None,
            server: None,
        }
    }

    fn named(results: Vec<RunResult>) -> Vec<(String, RunResult)> {
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("node{i}.json"), r))
            .collect()
    }

    #[test]
    fn two_nodes_merge_into_what_one_node_with_all_connections_reports() {
        let one = node_result(&[0, 1, 2, 3], node(0, 1), 1);
        let merged = merge(&named(vec![
            node_result(&[0, 1], node(0, 2), 1),
            node_result(&[2, 3], node(1, 2), 1),
        ]))
        .unwrap();
        let (merged_result, one) = (normalized(&merged.result), normalized(&one));
        assert!(
            merged.notes.iter().all(|n| !n.contains("missing")),
            "{:?}",
            merged.notes
        );
        let (m, o) = (&merged_result.phases[0], &one.phases[0]);
        // Counts, histograms, percentiles and throughputs are those of the union.
        assert_eq!(m.operations, o.operations);
        // Bulk inserts: requests and documents each summed, rates from the sums.
        let bulk = &m.operations[0];
        assert_eq!(bulk.operation, "bulk_insert");
        assert_eq!((bulk.succeeded, bulk.failed), (10, 2));
        assert_eq!((bulk.documents, bulk.documents_failed), (97, 3 + 20));
        assert_eq!(bulk.failures["doc:conflict"], 3);
        assert_eq!(bulk.documents_per_sec, 97.0 / 4.0);
        assert_eq!(bulk.throughput, 10.0 / 4.0);
        // 429s: their own kind, their retries and waits summed.
        let read = &m.operations[2];
        assert_eq!(read.failures["rate_limited"], 2);
        assert_eq!(read.statuses["429"], 6);
        assert_eq!(read.retried_429, 4);
        assert_eq!(read.retry_429_wait_ns, 2_000_000_002);
        assert_eq!(m.connections, 4);
        assert_eq!(m.wall_seconds, o.wall_seconds);
        // Iron Cushion's spreads and rates come from all connections' times: exact.
        assert_eq!(m.iron_cushion, o.iron_cushion);
        assert_eq!(m.connection_times, o.connection_times);
        // Logins add up, their times too.
        let (ml, ol) = (m.logins.as_ref().unwrap(), o.logins.as_ref().unwrap());
        assert_eq!((ml.count, ml.failed), (4, 1));
        assert_eq!((ml.count, ml.failed), (ol.count, ol.failed));
        assert_eq!(ml.latency, ol.latency);
        // Intervals at the same wall-clock times add up.
        assert_eq!(m.intervals.len(), 2);
        for (mi, oi) in m.intervals.iter().zip(&o.intervals) {
            assert_eq!(mi.end_ms, oi.end_ms);
            assert_eq!(mi.operations, oi.operations);
            assert_eq!(mi.elapsed_seconds, oi.elapsed_seconds);
        }
        let first = &m.intervals[0].operations;
        let of = |name: &str| first.iter().find(|o| o.operation == name).unwrap();
        assert_eq!((of("create").rate_limited, of("create").timeouts), (2, 2));
        assert_eq!(of("read").retried_429, 4);
        let r = &merged_result;
        assert_eq!(r.nodes, vec![node(0, 2), node(1, 2)]);
        assert_eq!(r.config["node_index"], json!([0, 1]));
        assert_eq!(r.config["seed"], json!(1));
        assert_eq!(
            (r.started_at.as_str(), r.ended_at.as_str()),
            (one.started_at.as_str(), "1970-01-01T00:16:50Z")
        );
    }

    #[test]
    fn an_index_build_is_the_longest_wait_of_the_nodes() {
        let build = |index: &str, seconds: f64| IndexBuildResult {
            index: index.to_string(),
            queries: vec!["q".to_string()],
            seconds,
            when: crate::results::BuiltWhen::BeforePhase,
        };
        let mut first = node_result(&[0, 1], node(0, 2), 1);
        first.phases[0].index_builds = vec![build("_design/a", 2.0), build("_index b", 0.5)];
        let mut second = node_result(&[2, 3], node(1, 2), 1);
        second.phases[0].index_builds = vec![build("_index b", 1.5), build("_design/a", 0.1)];
        let merged = merge(&named(vec![first, second])).unwrap();
        assert_eq!(
            merged.result.phases[0].index_builds,
            [build("_design/a", 2.0), build("_index b", 1.5)]
        );
    }

    #[test]
    fn a_result_of_repetitions_is_not_a_node_to_merge() {
        let mut repeated = node_result(&[0], node(0, 1), 1);
        repeated.repetitions = vec![crate::results::RepetitionResult {
            index: 1,
            database_name: "db-run1".to_string(),
            id_prefix: "p-r1".to_string(),
            started_at: String::new(),
            ended_at: String::new(),
            interrupted: false,
            database_deleted: false,
            phases: repeated.phases.clone(),
        }];
        let err = merge(&named(vec![node_result(&[1], node(0, 1), 1), repeated])).unwrap_err();
        assert!(
            err.contains("holds 1 repetition (run --runs)") && err.contains("sofabench compare"),
            "{err}"
        );
    }

    #[test]
    fn percentiles_are_those_of_the_union_of_known_histograms() {
        let mut a = node_result(&[0], node(0, 2), 1);
        let mut b = node_result(&[1], node(1, 2), 1);
        let mut union = empty_histogram();
        let (mut ha, mut hb) = (empty_histogram(), empty_histogram());
        for v in 1..=900u64 {
            ha.record(v * 10).unwrap();
            union.record(v * 10).unwrap();
        }
        for v in 1..=100u64 {
            hb.record(v * 5_000).unwrap();
            union.record(v * 5_000).unwrap();
        }
        a.phases[0].operations[2].latency = latency(&ha);
        b.phases[0].operations[2].latency = latency(&hb);
        let merged = merge(&named(vec![a, b])).unwrap().result;
        let read = &merged.phases[0].operations[2];
        assert_eq!(read.operation, "read");
        let mut expected = latency(&union);
        expected.histogram = canonical(&expected.histogram);
        let mut got = read.latency.clone();
        got.histogram = canonical(&got.histogram);
        assert_eq!(got, expected);
        assert_eq!(read.latency.count, 1_000);
        assert!(
            read.latency.p90_ms < 10.0 && read.latency.p99_ms > 400.0,
            "{:?}",
            read.latency
        );
    }

    #[test]
    fn send_lags_and_machine_figures_merge_exactly() {
        let mut a = node_result(&[0], node(0, 2), 1);
        let mut b = node_result(&[1], node(1, 2), 1);
        let (mut ha, mut hb, mut union) = (empty_histogram(), empty_histogram(), empty_histogram());
        for v in 1..=90u64 {
            ha.record(v).unwrap();
            union.record(v).unwrap();
        }
        for v in [2_000u64, 3_000] {
            hb.record(v).unwrap();
            union.record(v).unwrap();
        }
        // Send lags are measured under a rate only.
        for (phase, lag) in [(&mut a.phases[0], &ha), (&mut b.phases[0], &hb)] {
            phase.target_rate = Some(100.0);
            phase.send_lag = Some(latency(lag));
        }
        a.phases[0].intervals[0].in_flight = 3;
        b.phases[0].intervals[0].in_flight = 4;
        a.phases[0].intervals[0].waiting_after_429 = 2;
        b.phases[0].intervals[0].waiting_after_429 = 5;
        a.phases[0].intervals[0].machine_cpu = Some(0.5);
        b.phases[0].intervals[0].machine_cpu = Some(0.75);
        let merged = merge(&named(vec![a.clone(), b])).unwrap().result;
        let lag = merged.phases[0].send_lag.clone().unwrap();
        assert_eq!((lag.count, lag.max_ms), (92, latency(&union).max_ms));
        assert_eq!(
            canonical(&lag.histogram),
            canonical(&latency(&union).histogram)
        );
        let row = &merged.phases[0].intervals[0];
        assert_eq!((row.in_flight, row.machine_cpu), (7, Some(0.75)));
        assert_eq!(row.waiting_after_429, 7);
        // A closed-model phase has no send lag, merged or not.
        a.phases[0].send_lag = None;
        a.phases[0].target_rate = None;
        let alone = merge(&named(vec![a])).unwrap().result;
        assert_eq!(alone.phases[0].send_lag, None);
    }

    #[test]
    fn bulk_documents_per_interval_and_the_sweep_point_carry_through() {
        let mut a = node_result(&[0, 1], node(0, 2), 1);
        let mut b = node_result(&[2, 3], node(1, 2), 1);
        let sweep = crate::results::SweepPoint {
            series: "crud".to_string(),
            setting: crate::results::SweptSetting::Connections,
            value: 4,
        };
        let mut h = crate::metrics::recorder::new_histogram();
        h.record(5_000).unwrap();
        for (result, documents) in [(&mut a, 250), (&mut b, 240)] {
            result.phases[0].sweep = Some(sweep.clone());
            result.phases[0].intervals[0]
                .operations
                .push(crate::results::IntervalOperation {
                    operation: "bulk_insert".to_string(),
                    succeeded: 1,
                    failed: 0,
                    timeouts: 0,
                    rate_limited: 0,
                    retried_429: 0,
                    documents: Some(documents),
                    bytes_sent: None,
                    bytes_received: None,
                    throughput: 1.0,
                    p50_ms: 5.0,
                    p99_ms: 5.0,
                    histogram: histogram::encode(&h),
                });
        }
        let documents = |r: &RunResult| {
            let row = &r.phases[0].intervals[0];
            let of = |name: &str| row.operations.iter().find(|o| o.operation == name);
            (
                of("bulk_insert").unwrap().documents,
                of("read").unwrap().documents,
            )
        };
        let merged = merge(&named(vec![a.clone(), b.clone()])).unwrap().result;
        assert_eq!(documents(&merged), (Some(490), None));
        assert_eq!(merged.phases[0].sweep, Some(sweep));
        // A node that did not keep its documents: the sum would be too small.
        b.phases[0].intervals[0]
            .operations
            .last_mut()
            .unwrap()
            .documents = None;
        let merged = merge(&named(vec![a, b])).unwrap().result;
        assert_eq!(documents(&merged), (None, None));
    }

    #[test]
    fn ramps_and_interval_targets_add_up_over_the_nodes() {
        let mut a = node_result(&[0], node(0, 2), 1);
        let mut b = node_result(&[1], node(1, 2), 1);
        for (phase, share) in [(&mut a.phases[0], 1.0), (&mut b.phases[0], 3.0)] {
            phase.target_rate = Some(20.0 * share);
            phase.ramp = Some(RampResult {
                from: 10.0 * share,
                to: 30.0 * share,
            });
            phase.intervals[0].target_rate = Some(15.0 * share);
            phase.intervals[1].target_rate = Some(25.0 * share);
        }
        let merged = merge(&named(vec![a, b])).unwrap().result;
        let phase = &merged.phases[0];
        assert_eq!(phase.target_rate, Some(80.0));
        assert_eq!(
            phase.ramp,
            Some(RampResult {
                from: 40.0,
                to: 120.0
            })
        );
        let targets: Vec<Option<f64>> = phase.intervals.iter().map(|i| i.target_rate).collect();
        assert_eq!(targets, [Some(60.0), Some(100.0)]);
    }

    /// A node whose phase kept `rows` (each `(ms from the phase's start to its end, its
    /// length in ms, its reads)`), its intervals merged to `width` of `--interval 1s`; its
    /// phase started `late_ms` after the other node's.
    fn node_with_rows(index: u64, width: u64, late_ms: u64, rows: &[(u64, u64, u64)]) -> RunResult {
        let mut result = node_result(&[index], node(index, 2), 1);
        result
            .config
            .insert("interval_seconds".to_string(), json!(1.0));
        let phase = &mut result.phases[0];
        phase.started_at_ms += late_ms;
        phase.interval_width = width;
        phase.intervals = rows
            .iter()
            .map(|&(end, length, reads)| {
                let mut metrics = IntervalMetrics::default();
                for k in 0..reads {
                    metrics.succeeded(Operation::Read, 1_000 + k);
                }
                let row = metrics.row(end as f64 / 1e3, length as f64 / 1e3, 0.1);
                build::interval_ending(&row, phase.started_at_ms + end)
            })
            .collect();
        result
    }

    fn reads(row: &IntervalResult) -> u64 {
        row.operations
            .iter()
            .filter(|o| o.operation == "read")
            .map(|o| o.succeeded)
            .sum()
    }

    #[test]
    fn nodes_merged_to_other_widths_align_on_the_coarser_by_time_from_the_start() {
        // Node A kept all nine 1 s intervals (its clock ticks a little late or early);
        // node B reached the bound, its intervals merged to 4 s (9 live intervals: two
        // of 4 s and the last of 1 s), and it started 300 ms after A.
        let a_rows: Vec<(u64, u64, u64)> = (1..=9)
            .map(|s| {
                let jitter = [0, 3, 0, 2, 1, 0, 4, 0, 1][s as usize - 1];
                (s * 1_000 + jitter, 1_000, s)
            })
            .collect();
        let a = node_with_rows(0, 1, 0, &a_rows);
        let b = node_with_rows(
            1,
            4,
            300,
            &[(4_002, 4_002, 100), (8_001, 3_999, 200), (9_000, 999, 7)],
        );
        let merged = merge(&named(vec![a.clone(), b.clone()])).unwrap().result;
        let phase = &merged.phases[0];
        assert_eq!(phase.interval_width, 4);
        let start = a.phases[0].started_at_ms;
        assert_eq!(phase.started_at_ms, start);
        // Three stretches of 4 s from the phase's start: A's rows 1-4, 5-8 and 9, each
        // with B's row that ends in it, each ending with its latest row (the last at
        // 9.3 s, not at 12 s).
        let got: Vec<(u64, u64)> = phase
            .intervals
            .iter()
            .map(|i| (i.end_ms - start, reads(i)))
            .collect();
        assert_eq!(
            got,
            [
                (4_302, (1 + 2 + 3 + 4) + 100),
                (8_301, (5 + 6 + 7 + 8) + 200),
                (9_300, 9 + 7)
            ]
        );
        let elapsed: Vec<f64> = phase.intervals.iter().map(|i| i.elapsed_seconds).collect();
        assert_eq!(elapsed, [4.302, 8.301, 9.3]);
        // Each row's rate is over its own length: from the stretch before's end to its.
        let first = &phase.intervals[0];
        assert_eq!(first.length_seconds, 4.302);
        let read = first
            .operations
            .iter()
            .find(|o| o.operation == "read")
            .unwrap();
        assert_eq!(read.throughput, 110.0 / 4.302);
        assert_eq!(phase.intervals[2].length_seconds, 0.999);
        // Nothing lost: the rows add up to both nodes' rows.
        let all: u64 = phase.intervals.iter().map(reads).sum();
        let each = |r: &RunResult| r.phases[0].intervals.iter().map(reads).sum::<u64>();
        assert_eq!(all, each(&a) + each(&b));
        // The other way round (the coarser node first) gives the same rows.
        let swapped = merge(&named(vec![b, a])).unwrap().result;
        let ends = |p: &PhaseResult| -> Vec<(u64, u64)> {
            p.intervals.iter().map(|i| (i.end_ms, reads(i))).collect()
        };
        assert_eq!(ends(&swapped.phases[0]), ends(phase));
    }

    #[test]
    fn a_thousand_stretches_stay_on_their_grid_with_measured_lengths_that_jitter() {
        // Node B's merged rows measure 2,001 ms or 1,999 ms (the most common, 2,001,
        // would drift a second off over a thousand rows); node A's 1 s rows tick on time.
        let a_rows: Vec<(u64, u64, u64)> = (1..=2_000).map(|s| (s * 1_000, 1_000, 1)).collect();
        let b_rows: Vec<(u64, u64, u64)> = (1..=1_000)
            .map(|k| {
                let end = k * 2_000 + if k % 3 == 0 { 1 } else { 0 };
                (end, if k % 3 == 0 { 2_001 } else { 1_999 }, 10)
            })
            .collect();
        let a = node_with_rows(0, 1, 0, &a_rows);
        let b = node_with_rows(1, 2, 0, &b_rows);
        let phase = merge(&named(vec![a, b])).unwrap().result.phases.remove(0);
        assert_eq!(phase.intervals.len(), 1_000);
        assert!(
            phase.intervals.iter().all(|i| reads(i) == 2 + 10),
            "{:?}",
            phase.intervals.iter().map(reads).collect::<Vec<_>>()
        );
    }

    #[test]
    fn each_nodes_client_machine_is_kept_and_a_node_given_twice_is_refused() {
        use crate::results::environment::{ClientEnvironment, facts};
        let machine = |cores, load| ClientEnvironment {
            sofabench: "0.1.0".to_string(),
            cores: Some(cores),
            load_average: Some(load),
            ..ClientEnvironment::default()
        };
        let with = |mut node: NodeInfo, client| {
            node.client = Some(client);
            node
        };
        let a = node_result(&[0, 1], with(node(0, 2), machine(2, 0.5)), 1);
        let b = node_result(&[2, 3], with(node(1, 2), machine(8, 1.25)), 1);
        let merged = merge(&named(vec![a, b])).unwrap().result;
        let clients: Vec<_> = merged.nodes.iter().map(|n| n.client.clone()).collect();
        assert_eq!(clients, [Some(machine(2, 0.5)), Some(machine(8, 1.25))]);
        let value = |name: &str| {
            let facts = facts(&merged);
            facts.into_iter().find(|f| f.name == name).unwrap().value
        };
        assert_eq!(value("client.cores"), "2 | 8");
        assert_eq!(value("client.load_average"), "0.50 | 1.25");
        assert_eq!(value("client.sofabench"), "0.1.0");
        assert_eq!(value("client.machines"), "2");
        // The same node's result, its environment edited, is still the same node (a
        // node of a run of one has no index to tell it by: it was merged twice before).
        let single = node_result(&[0, 1], with(node(0, 1), machine(2, 0.5)), 1);
        let mut edited = single.clone();
        edited.nodes[0].client = Some(machine(2, 3.0));
        let err = merge(&named(vec![single, edited])).unwrap_err();
        assert!(err.contains("same node's result"), "{err}");
    }

    #[test]
    fn one_result_merges_into_itself() {
        let one = node_result(&[0, 1, 2], node(0, 1), 1);
        let merged = merge(&named(vec![one.clone()])).unwrap();
        assert_eq!(normalized(&merged.result), normalized(&one));
        assert!(merged.notes.is_empty());
    }

    #[test]
    fn results_of_other_runs_are_refused() {
        let a = node_result(&[0, 1], node(0, 2), 1);
        let other_seed = node_result(&[2, 3], node(1, 2), 2);
        assert!(
            merge(&named(vec![a.clone(), other_seed])).is_ok(),
            "seeds may differ"
        );

        let more_connections = node_result(&[2, 3, 4], node(1, 2), 1);
        let err = merge(&named(vec![a.clone(), more_connections])).unwrap_err();
        assert!(
            err.contains("num_connections is 3 there and 2 in node0.json"),
            "{err}"
        );

        let mut schema = node_result(&[2, 3], node(1, 2), 1);
        schema.schema = "sofabench-result/3".into();
        assert!(
            merge(&named(vec![a.clone(), schema]))
                .unwrap_err()
                .contains("schema")
        );

        let mut phases = node_result(&[2, 3], node(1, 2), 1);
        phases.phases[0].name = "bulk_insert".into();
        let err = merge(&named(vec![a.clone(), phases])).unwrap_err();
        assert!(
            err.contains("[bulk_insert] but node0.json has [crud]"),
            "{err}"
        );

        let err = merge(&named(vec![a.clone(), a.clone()])).unwrap_err();
        assert!(err.contains("same node's result"), "{err}");
        let single = node_result(&[0], node(0, 1), 1);
        let err =
            merge(&[("x.json".into(), single.clone()), ("x.json".into(), single)]).unwrap_err();
        assert!(
            err.contains("x.json and x.json are the same node's result"),
            "{err}"
        );
        let mut again = node_result(&[2, 3], node(0, 2), 1);
        again.nodes[0].host = "elsewhere".into();
        let err = merge(&named(vec![a.clone(), again])).unwrap_err();
        assert!(err.contains("both node 0 of 2"), "{err}");

        let missing = merge(&named(vec![a])).unwrap();
        assert!(
            missing
                .notes
                .iter()
                .any(|n| n.contains("nodes 1 of 0..1 are missing")),
            "{:?}",
            missing.notes
        );
        assert!(merge(&[]).is_err());
    }

    #[test]
    fn nodes_that_did_not_run_together_are_noted() {
        let a = node_result(&[0, 1], node(0, 2), 1);
        let mut b = node_result(&[2, 3], node(1, 2), 1);
        assert!(
            !merge(&named(vec![a.clone(), b.clone()]))
                .unwrap()
                .notes
                .iter()
                .any(|n| n.contains("apart"))
        );
        b.phases[0].started_at_ms += 5_000;
        let notes = merge(&named(vec![a, b])).unwrap().notes;
        assert!(
            notes.iter().any(
                |n| n.contains("started phase crud 5.0 s apart, longer than it lasted (4.0 s)")
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn results_without_connection_times_are_refused() {
        let a = node_result(&[0, 1], node(0, 2), 1);
        let mut old = node_result(&[2, 3], node(1, 2), 1);
        old.phases[0].connection_times = None;
        let err = merge(&named(vec![a, old])).unwrap_err();
        assert!(
            err.contains("node1.json was written by an older sofabench (schema 1)"),
            "{err}"
        );
    }

    #[test]
    fn a_node_index_past_its_count_is_refused() {
        let a = node_result(&[0, 1], node(0, 2), 1);
        let b = node_result(&[2, 3], node(2, 2), 1);
        let err = merge(&named(vec![a, b])).unwrap_err();
        assert!(
            err.contains("node1.json says it is node 2 of 2") && err.contains("below the count"),
            "{err}"
        );
    }

    #[test]
    fn counts_that_would_overflow_are_refused_with_file_phase_and_operation() {
        let mut a = node_result(&[0, 1], node(0, 2), 1);
        let mut b = node_result(&[2, 3], node(1, 2), 1);
        a.phases[0].operations[2].succeeded = u64::MAX;
        b.phases[0].operations[2].succeeded = 1;
        let err = merge(&named(vec![a.clone(), b.clone()])).unwrap_err();
        assert!(
            err.contains("node1.json: phase crud: read succeeded") && err.contains("64 bits"),
            "{err}"
        );
        a.phases[0].operations[2].succeeded = 1;
        a.phases[0].late = u64::MAX;
        b.phases[0].late = 2;
        assert!(merge(&named(vec![a, b])).unwrap_err().contains("late"));
    }

    #[test]
    fn the_database_is_looked_at_before_the_first_node_and_after_the_last() {
        let sizes = |file| crate::disk::DiskSizes {
            file: Some(file),
            ..Default::default()
        };
        let looked = |started_at_ms, wall_seconds, start, end| {
            let mut phase = PhaseResult::of_operations("load", wall_seconds, Vec::new());
            phase.started_at_ms = started_at_ms;
            phase.disk = Some(crate::results::DiskResult {
                start: Some(sizes(start)),
                end: Some(sizes(end)),
                ..Default::default()
            });
            phase
        };
        let early_short = looked(1_000, 1.0, 100, 500);
        let late_long = looked(1_200, 5.0, 300, 9_000);
        let never = PhaseResult::of_operations("load", 9.0, Vec::new());
        let merged = merge_disk(&[&late_long, &never, &early_short]).unwrap();
        assert_eq!(
            (merged.start, merged.end),
            (Some(sizes(100)), Some(sizes(9_000)))
        );
        assert_eq!(merge_disk(&[&never]), None, "no node looked");
    }
}
