//! Merging the results of several nodes (machines that ran one workload together, see
//! [`super::nodes`]) into the result of the whole run.
//!
//! What is exact and what is not:
//!
//! - **Exact**: every count (operations, documents, failures by kind, statuses, late
//!   operations, bytes), the latency and send-lag histograms (decoded, added, encoded again) and so
//!   every percentile, mean and max computed from them; the wall-clock time (the slowest
//!   node's) and the throughputs (merged successes / that time); Iron Cushion's rates
//!   (each node's mean per-connection time is recovered from its rate and document count,
//!   and weighted by its connections); the `min` and `max` of Iron Cushion's spreads.
//! - **Approximate**: the `median` and `sd` of Iron Cushion's spreads over connections.
//!   A result keeps only each node's `{min, max, median, sd}`, not every connection's
//!   time, so the merged median is the connection-weighted mean of the nodes' medians and
//!   the merged sd pools the nodes' sds around it (each node's median standing in for its
//!   mean). With nodes of equal connections and similar spreads this is close.
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

use hdrhistogram::Histogram;
use serde_json::Value;

use super::{add_encoded, empty_histogram};
use crate::metrics::FailureSamples;
use crate::results::build::{latency, remote_field};
use crate::results::{
    IntervalOperation, IntervalResult, IronCushion, Latency, OperationResult, PhaseResult,
    RunResult, Spread, TargetNodeResult, per_second,
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
    check_nodes(inputs, &mut notes)?;
    for (name, result) in inputs {
        if result.interrupted {
            notes.push(format!(
                "{name} was interrupted: the merged result covers what it did"
            ));
        }
    }
    if inputs.len() > 1 {
        notes.push(
            "the median and sd of Iron Cushion's spreads are estimated from the nodes' spreads; counts, latency percentiles, throughputs and rates are exact"
                .to_string(),
        );
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
            let same = inputs[at + 1..].iter().find(|(_, other)| {
                other.started_at == result.started_at
                    && other.nodes.iter().any(|n| n == node)
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

fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (key, n) in from {
        *into.entry(key.clone()).or_default() += n;
    }
}

fn merge_latency(parts: &[&Latency]) -> Result<Latency, String> {
    let mut histogram: Histogram<u64> = empty_histogram();
    for part in parts {
        add_encoded(&mut histogram, &part.histogram)?;
    }
    Ok(latency(&histogram))
}

/// Position of an operation in the usual order; other names go last.
fn order(name: &str) -> usize {
    Operation::ALL
        .iter()
        .position(|op| op.name() == name)
        .unwrap_or(Operation::ALL.len())
}

/// Adds `more` examples to `into`, keeping as few per failure kind as a run keeps.
fn add_samples(into: &mut BTreeMap<String, Vec<String>>, more: &BTreeMap<String, Vec<String>>) {
    for (failure, texts) in more {
        let kept = into.entry(failure.clone()).or_default();
        for text in texts {
            if kept.len() < FailureSamples::PER_KIND && !kept.contains(text) {
                kept.push(text.clone());
            }
        }
    }
}

fn merge_phase(parts: &[(&PhaseResult, &RunResult)]) -> Result<PhaseResult, String> {
    let phases: Vec<&PhaseResult> = parts.iter().map(|(p, _)| *p).collect();
    let wall_seconds = phases.iter().map(|p| p.wall_seconds).fold(0.0, f64::max);
    let mut names: Vec<&str> = Vec::new();
    for phase in &phases {
        for op in &phase.operations {
            if !names.contains(&op.operation.as_str()) {
                names.push(&op.operation);
            }
        }
    }
    names.sort_by_key(|name| order(name));
    let mut operations = Vec::new();
    for name in names {
        let ops: Vec<&OperationResult> = phases
            .iter()
            .flat_map(|p| p.operations.iter().filter(|o| o.operation == name))
            .collect();
        let succeeded = ops.iter().map(|o| o.succeeded).sum();
        let documents = ops.iter().map(|o| o.documents).sum();
        let mut failures = BTreeMap::new();
        let mut statuses = BTreeMap::new();
        let mut samples = BTreeMap::new();
        for op in &ops {
            add_counts(&mut failures, &op.failures);
            add_counts(&mut statuses, &op.statuses);
            add_samples(&mut samples, &op.failure_samples);
        }
        let phase_name = &phases[0].name;
        let context = |e: String| format!("phase {phase_name}, {name}: {e}");
        operations.push(OperationResult {
            operation: name.to_string(),
            succeeded,
            failed: ops.iter().map(|o| o.failed).sum(),
            documents,
            documents_failed: ops.iter().map(|o| o.documents_failed).sum(),
            throughput: per_second(succeeded, wall_seconds),
            documents_per_sec: per_second(documents, wall_seconds),
            failures,
            failure_samples: samples,
            statuses,
            latency: merge_latency(&ops.iter().map(|o| &o.latency).collect::<Vec<_>>())
                .map_err(context)?,
            response: merge_latency(&ops.iter().map(|o| &o.response).collect::<Vec<_>>())
                .map_err(context)?,
            failed_latency: {
                let failed: Vec<&Latency> = ops
                    .iter()
                    .filter_map(|o| o.failed_latency.as_ref())
                    .collect();
                if failed.is_empty() {
                    None
                } else {
                    Some(merge_latency(&failed).map_err(context)?)
                }
            },
            resends: ops.iter().map(|o| o.resends).sum(),
            unknown_outcomes: ops.iter().map(|o| o.unknown_outcomes).sum(),
            not_run: ops.iter().map(|o| o.not_run).sum(),
        });
    }
    let started_at_ms = phases.iter().map(|p| p.started_at_ms).min().unwrap_or(0);
    let target_rates: Vec<f64> = phases.iter().filter_map(|p| p.target_rate).collect();
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
    Ok(PhaseResult {
        name: phases[0].name.clone(),
        started_at_ms,
        wall_seconds,
        connections: phases.iter().map(|p| p.connections).sum(),
        target_rate: (!target_rates.is_empty()).then(|| target_rates.iter().sum()),
        late: phases.iter().map(|p| p.late).sum(),
        iron_cushion: merge_iron_cushion(&phases),
        intervals: merge_intervals(&phases, started_at_ms)?,
        operations,
        aborted,
        // Every node starts the phase's action; the first node's report stands for it.
        action: phases.iter().find_map(|p| p.action.clone()),
        send_lag: merge_send_lag(&phases)?,
        target_nodes: merge_target_nodes(&phases)
            .map_err(|e| format!("phase {}: {e}", phases[0].name))?,
    })
}

/// The target's nodes as every machine saw them, added up by address.
fn merge_target_nodes(phases: &[&PhaseResult]) -> Result<Vec<TargetNodeResult>, String> {
    let mut addresses: Vec<&str> = Vec::new();
    for node in phases.iter().flat_map(|p| &p.target_nodes) {
        if !addresses.contains(&node.address.as_str()) {
            addresses.push(&node.address);
        }
    }
    addresses
        .into_iter()
        .map(|address| {
            let parts: Vec<&TargetNodeResult> = phases
                .iter()
                .flat_map(|p| &p.target_nodes)
                .filter(|n| n.address == address)
                .collect();
            Ok(TargetNodeResult {
                address: address.to_string(),
                answered: parts.iter().map(|n| n.answered).sum(),
                failed: parts.iter().map(|n| n.failed).sum(),
                latency: merge_latency(&parts.iter().map(|n| &n.latency).collect::<Vec<_>>())?,
            })
        })
        .collect()
}

/// The nodes' send lags added up; none when no node ran the phase at a rate.
fn merge_send_lag(phases: &[&PhaseResult]) -> Result<Option<Latency>, String> {
    let parts: Vec<&Latency> = phases.iter().filter_map(|p| p.send_lag.as_ref()).collect();
    if parts.is_empty() {
        return Ok(None);
    }
    merge_latency(&parts)
        .map(Some)
        .map_err(|e| format!("phase {}, send lag: {e}", phases[0].name))
}

/// Iron Cushion's spreads over connections, from the nodes' spreads (`n` connections
/// each): min and max exact, median and sd estimated (see the module's documentation).
pub fn merge_spreads(parts: &[(Spread, u64)]) -> Spread {
    let parts: Vec<&(Spread, u64)> = parts.iter().filter(|(_, n)| *n > 0).collect();
    let total: u64 = parts.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return Spread::default();
    }
    let weight = |n: u64| n as f64 / total as f64;
    let median: f64 = parts.iter().map(|(s, n)| s.median * weight(*n)).sum();
    let variance: f64 = parts
        .iter()
        .map(|(s, n)| weight(*n) * (s.sd * s.sd + (s.median - median).powi(2)))
        .sum();
    Spread {
        min: parts
            .iter()
            .map(|(s, _)| s.min)
            .fold(f64::INFINITY, f64::min),
        max: parts
            .iter()
            .map(|(s, _)| s.max)
            .fold(f64::NEG_INFINITY, f64::max),
        median,
        sd: variance.sqrt(),
    }
}

/// The documents an Iron Cushion rate of a phase divides, and the field whose mean time
/// it divides them by.
fn rate_basis(rate: &str) -> Option<(Operation, Vec<&'static str>)> {
    if rate == "localInsertRate" {
        return Some((
            Operation::BulkInsert,
            vec!["sendData", "remoteProcessing", "receiveData"],
        ));
    }
    Operation::ALL
        .into_iter()
        .find(|op| rate == format!("{}Rate", remote_field(*op)))
        .map(|op| (op, vec![remote_field(op)]))
}

fn spread_named<'a>(f: &'a IronCushion, name: &str) -> Option<&'a Spread> {
    match name {
        "sendData" => Some(&f.send_data),
        "receiveData" => Some(&f.receive_data),
        "localProcessing" => Some(&f.local_processing),
        _ => f.remote_processing.get(name),
    }
}

/// A rate is documents / mean per-connection time; each node's mean time comes back
/// from its rate and documents (or, when it did no documents, from its medians), and
/// the merged mean weights them by connections.
fn merge_rate(phases: &[&PhaseResult], rate: &str) -> f64 {
    let Some((operation, fields)) = rate_basis(rate) else {
        // A rate this version does not know: the connection-weighted mean.
        let total: u64 = phases.iter().map(|p| p.connections).sum();
        return phases
            .iter()
            .map(|p| p.iron_cushion.rates.get(rate).copied().unwrap_or(0.0) * p.connections as f64)
            .sum::<f64>()
            / total.max(1) as f64;
    };
    let mut documents = 0;
    let mut time = 0.0;
    let mut connections = 0;
    for phase in phases {
        let docs: u64 = phase
            .operations
            .iter()
            .filter(|o| o.operation == operation.name())
            .map(|o| o.documents)
            .sum();
        let node_rate = phase.iron_cushion.rates.get(rate).copied().unwrap_or(0.0);
        let mean = if docs > 0 && node_rate > 0.0 {
            docs as f64 / node_rate
        } else {
            fields
                .iter()
                .filter_map(|f| spread_named(&phase.iron_cushion, f))
                .map(|s| s.median)
                .sum()
        };
        documents += docs;
        time += mean * phase.connections as f64;
        connections += phase.connections;
    }
    let mean = time / connections.max(1) as f64;
    if documents == 0 || mean <= 0.0 {
        0.0
    } else {
        documents as f64 / mean
    }
}

fn merge_iron_cushion(phases: &[&PhaseResult]) -> IronCushion {
    let spread = |get: &dyn Fn(&IronCushion) -> Option<Spread>| {
        let parts: Vec<(Spread, u64)> = phases
            .iter()
            .filter_map(|p| get(&p.iron_cushion).map(|s| (s, p.connections)))
            .collect();
        merge_spreads(&parts)
    };
    let mut remote_processing = BTreeMap::new();
    let mut rates = BTreeMap::new();
    for phase in phases {
        for key in phase.iron_cushion.remote_processing.keys() {
            remote_processing.entry(key.clone()).or_insert_with(|| {
                spread(&|f: &IronCushion| f.remote_processing.get(key).copied())
            });
        }
        for key in phase.iron_cushion.rates.keys() {
            rates
                .entry(key.clone())
                .or_insert_with(|| merge_rate(phases, key));
        }
    }
    IronCushion {
        time_taken: phases
            .iter()
            .map(|p| p.iron_cushion.time_taken)
            .fold(0.0, f64::max),
        total_json_bytes_sent: phases
            .iter()
            .map(|p| p.iron_cushion.total_json_bytes_sent)
            .sum(),
        total_json_bytes_received: phases
            .iter()
            .map(|p| p.iron_cushion.total_json_bytes_received)
            .sum(),
        local_processing: spread(&|f: &IronCushion| Some(f.local_processing)),
        send_data: spread(&|f: &IronCushion| Some(f.send_data)),
        remote_processing,
        receive_data: spread(&|f: &IronCushion| Some(f.receive_data)),
        rates,
    }
}

/// The interval length of a phase in milliseconds: the most common one (the last
/// interval of a node is often shorter).
fn interval_ms(phases: &[&PhaseResult]) -> u64 {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for phase in phases {
        for row in &phase.intervals {
            *counts
                .entry((row.length_seconds * 1_000.0).round() as u64)
                .or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(length, n)| (*n, *length))
        .map_or(1_000, |(length, _)| length)
        .max(1)
}

#[derive(Default)]
struct Bucket {
    length_seconds: f64,
    cpu: f64,
    late: u64,
    machine_cpu: Option<f64>,
    in_flight: u64,
    operations: Vec<(String, u64, u64, u64, Histogram<u64>)>,
}

fn merge_intervals(
    phases: &[&PhaseResult],
    started_at_ms: u64,
) -> Result<Vec<IntervalResult>, String> {
    let length = interval_ms(phases);
    let mut buckets: BTreeMap<u64, Bucket> = BTreeMap::new();
    for phase in phases {
        for row in &phase.intervals {
            let bucket = buckets
                .entry((row.end_ms + length / 2) / length)
                .or_default();
            bucket.length_seconds = bucket.length_seconds.max(row.length_seconds);
            bucket.cpu = bucket.cpu.max(row.cpu);
            bucket.late += row.late;
            // Nodes on different machines: the busiest machine, as with the client's CPU.
            bucket.machine_cpu = match (bucket.machine_cpu, row.machine_cpu) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            bucket.in_flight += row.in_flight;
            for op in &row.operations {
                let at = match bucket
                    .operations
                    .iter()
                    .position(|(name, ..)| *name == op.operation)
                {
                    Some(at) => at,
                    None => {
                        bucket
                            .operations
                            .push((op.operation.clone(), 0, 0, 0, empty_histogram()));
                        bucket.operations.len() - 1
                    }
                };
                let entry = &mut bucket.operations[at];
                entry.1 += op.succeeded;
                entry.2 += op.failed;
                entry.3 += op.timeouts;
                add_encoded(&mut entry.4, &op.histogram)
                    .map_err(|e| format!("an interval of phase {}: {e}", phase.name))?;
            }
        }
    }
    Ok(buckets
        .into_iter()
        .map(|(key, mut bucket)| {
            let end_ms = key * length;
            bucket.operations.sort_by_key(|(name, ..)| order(name));
            IntervalResult {
                end_ms,
                elapsed_seconds: end_ms.saturating_sub(started_at_ms) as f64 / 1_000.0,
                length_seconds: bucket.length_seconds,
                cpu: bucket.cpu,
                late: bucket.late,
                machine_cpu: bucket.machine_cpu,
                in_flight: bucket.in_flight,
                operations: bucket
                    .operations
                    .into_iter()
                    .map(|(operation, succeeded, failed, timeouts, h)| {
                        let figures = latency(&h);
                        IntervalOperation {
                            operation,
                            succeeded,
                            failed,
                            timeouts,
                            throughput: if bucket.length_seconds > 0.0 {
                                succeeded as f64 / bucket.length_seconds
                            } else {
                                0.0
                            },
                            p50_ms: figures.p50_ms,
                            p99_ms: figures.p99_ms,
                            histogram: figures.histogram,
                        }
                    })
                    .collect(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde_json::json;

    use super::*;
    use crate::engine::PhaseOutcome;
    use crate::metrics::{ConnectionMetrics, IntervalMetrics, IntervalRow, StepLatencies};
    use crate::results::{NodeInfo, build};

    /// Connection `c` of a test run: `3 + c` reads with latencies `(c+1) × k` ms, creates
    /// of `c × 7 + k` µs, one failed read (404) on odd connections, and times that grow
    /// with `c`. Its latencies go to `latencies`.
    fn connection(c: u64, latencies: &mut StepLatencies) -> ConnectionMetrics {
        let mut m = ConnectionMetrics::default();
        let read = m.operation(Operation::Read);
        for k in 1..=3 + c {
            read.succeeded += 1;
            read.documents += 1;
            latencies[Operation::Read].record((c + 1) * k * 1_000_000, (c + 1) * k * 1_100_000);
            read.statuses.add(200, 1);
            read.remote_ns += (c + 1) * k * 900_000;
        }
        if c % 2 == 1 {
            read.fail(crate::metrics::errors::Failure::Status(404));
            read.statuses.add(404, 1);
        }
        let create = m.operation(Operation::Create);
        for k in 0..5 {
            create.succeeded += 1;
            create.documents += 1;
            let create_latencies = &mut latencies[Operation::Create];
            crate::metrics::recorder::record_micros(
                &mut create_latencies.latency,
                (c * 7 + k) * 1_000 + 1_000,
            );
            create.statuses.add(201, 1);
            create.remote_ns += 1_000_000 * (c + 1);
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
        m.local_ns = 1_000_000 * (c + 2);
        m.send_ns = 500_000 * (c * c + 1);
        m.receive_ns = 300_000 * (c + 3);
        m.json_sent = 1_000 + c;
        m.json_received = 2_000 + c;
        m
    }

    fn interval(end: f64, connections: &[u64]) -> IntervalRow {
        let mut metrics = IntervalMetrics::default();
        for &c in connections {
            metrics.succeeded(Operation::Read, (c + 1) * 1_000_000);
            metrics.failed(Operation::Create, c % 2 == 0);
        }
        crate::engine::monitor::row(&metrics, end, 1.0, 0.1 * connections.len() as f64)
    }

    /// The result one node reports when it runs the connections `connections`.
    fn node_result(connections: &[u64], node: NodeInfo, seed: u64) -> RunResult {
        let mut latencies = StepLatencies::default();
        let outcome = PhaseOutcome {
            name: "crud".to_string(),
            operations: Operation::CRUD.to_vec(),
            started_at: UNIX_EPOCH + Duration::from_secs(1_000),
            wall: Duration::from_secs(4),
            connections: connections
                .iter()
                .map(|c| connection(*c, &mut latencies))
                .collect(),
            latencies,
            send_lag: crate::metrics::recorder::new_histogram(),
            aborted: Vec::new(),
            intervals: vec![interval(1.0, connections), interval(2.0, connections)],
            target_rate: None,
            interrupted: false,
            action: None,
            nodes: Vec::new(),
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
            vec![build::phase(&outcome)],
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
        assert_eq!(m.connections, 4);
        assert_eq!(m.wall_seconds, o.wall_seconds);
        let ic = (&m.iron_cushion, &o.iron_cushion);
        assert_eq!(ic.0.total_json_bytes_sent, ic.1.total_json_bytes_sent);
        assert_eq!(
            ic.0.total_json_bytes_received,
            ic.1.total_json_bytes_received
        );
        assert_eq!(
            ic.0.rates.keys().collect::<Vec<_>>(),
            ic.1.rates.keys().collect::<Vec<_>>()
        );
        for (key, rate) in &ic.1.rates {
            let merged_rate = ic.0.rates[key];
            assert!(
                (merged_rate - rate).abs() < 1e-6 * rate.max(1.0),
                "{key}: {merged_rate} vs {rate}"
            );
        }
        for (a, b) in [
            (&ic.0.local_processing, &ic.1.local_processing),
            (&ic.0.send_data, &ic.1.send_data),
            (&ic.0.receive_data, &ic.1.receive_data),
            (
                &ic.0.remote_processing["remoteReadProcessing"],
                &ic.1.remote_processing["remoteReadProcessing"],
            ),
        ] {
            assert_eq!((a.min, a.max), (b.min, b.max));
        }
        // Medians and sds are estimates; for these evenly spread times, close ones.
        let (a, b) = (&ic.0.local_processing, &ic.1.local_processing);
        assert!(
            (a.median - b.median).abs() < 1e-9 && (a.sd - b.sd).abs() < 0.2 * b.sd,
            "{a:?} {b:?}"
        );
        // Intervals at the same wall-clock times add up.
        assert_eq!(m.intervals.len(), 2);
        for (mi, oi) in m.intervals.iter().zip(&o.intervals) {
            assert_eq!(mi.end_ms, oi.end_ms);
            assert_eq!(mi.operations, oi.operations);
            assert_eq!(mi.elapsed_seconds, oi.elapsed_seconds);
        }
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
        a.phases[0].send_lag = Some(latency(&ha));
        b.phases[0].send_lag = Some(latency(&hb));
        a.phases[0].intervals[0].in_flight = 3;
        b.phases[0].intervals[0].in_flight = 4;
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
        // A closed-model phase has no send lag, merged or not.
        a.phases[0].send_lag = None;
        let alone = merge(&named(vec![a])).unwrap().result;
        assert_eq!(alone.phases[0].send_lag, None);
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
        schema.schema = "sofabench-result/2".into();
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
    fn spreads_keep_min_and_max_and_estimate_the_rest() {
        let s = |min, max, median, sd| Spread {
            min,
            max,
            median,
            sd,
        };
        let merged = merge_spreads(&[(s(1.0, 3.0, 2.0, 1.0), 2), (s(3.0, 5.0, 4.0, 1.0), 2)]);
        assert_eq!((merged.min, merged.max, merged.median), (1.0, 5.0, 3.0));
        assert!((merged.sd - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(merge_spreads(&[]), Spread::default());
        assert_eq!(
            merge_spreads(&[(s(1.0, 2.0, 1.5, 0.5), 3)]),
            s(1.0, 2.0, 1.5, 0.5)
        );
    }
}
