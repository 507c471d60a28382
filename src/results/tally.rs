//! A phase result read back into a [`PhaseTally`]: the inverse of building the result
//! from a tally, so that merging results is adding tallies. Every figure comes from a
//! count, a histogram or a connection's time the result keeps, none from a rate.

use hdrhistogram::Histogram;

use super::{Latency, OperationResult, PhaseResult, histogram};
use crate::metrics::recorder::{NodeLatencies, OperationLatencies};
use crate::metrics::{ConnectionTimes, Failure, OperationCounts, OperationTally, PhaseTally};
use crate::workload::{Operation, PerOperation};

/// The tally a phase result was built from. A result of schema 1 keeps no connection
/// times: its tally has none, which the caller must check where they matter.
pub fn of_phase(phase: &PhaseResult) -> Result<PhaseTally, String> {
    let context = |e: String| format!("phase {}: {e}", phase.name);
    let mut operations: PerOperation<OperationTally> = PerOperation::default();
    for result in &phase.operations {
        let operation = Operation::named(&result.operation)
            .ok_or_else(|| context(format!("unknown operation {:?}", result.operation)))?;
        operations[operation] = of_operation(operation, result).map_err(context)?;
    }
    let nodes = phase
        .target_nodes
        .iter()
        .map(|node| {
            Ok((
                node.address.clone(),
                NodeLatencies {
                    answered: node.answered,
                    failed: node.failed,
                    latency: decoded(&node.latency)?,
                },
            ))
        })
        .collect::<Result<_, String>>()
        .map_err(context)?;
    Ok(PhaseTally {
        operations,
        connections: connections(phase),
        json_sent: phase.iron_cushion.total_json_bytes_sent,
        json_received: phase.iron_cushion.total_json_bytes_received,
        late: phase.late,
        send_lag: match &phase.send_lag {
            Some(lag) => decoded(lag).map_err(context)?,
            None => crate::metrics::recorder::new_histogram(),
        },
        nodes,
    })
}

/// One operation's tally: its counts, and its histograms decoded.
pub fn of_operation(
    operation: Operation,
    result: &OperationResult,
) -> Result<OperationTally, String> {
    let mut counts = OperationCounts {
        succeeded: result.succeeded,
        documents: result.documents,
        // Only a bulk insert counts its failed documents apart from its failures.
        documents_failed: match operation {
            Operation::BulkInsert => result.documents_failed,
            _ => 0,
        },
        resends: result.resends,
        unknown: result.unknown_outcomes,
        not_run: result.not_run,
        ..OperationCounts::default()
    };
    for (name, &n) in &result.failures {
        counts.failures.add(failure(name)?, n);
    }
    for (name, texts) in &result.failure_samples {
        let kind = failure(name)?;
        for text in texts {
            counts.samples.add(&kind, text);
        }
    }
    for (status, &n) in &result.statuses {
        let status = status
            .parse()
            .map_err(|_| format!("{}: status {status:?} is not a number", result.operation))?;
        counts.statuses.add(status, n);
    }
    let mut latencies = OperationLatencies {
        latency: decoded(&result.latency)?,
        response: decoded(&result.response)?,
        ..OperationLatencies::default()
    };
    if let Some(failed) = &result.failed_latency {
        latencies.failed = decoded(failed)?;
    }
    Ok(OperationTally { counts, latencies })
}

fn failure(name: &str) -> Result<Failure, String> {
    Failure::named(name).ok_or_else(|| format!("unknown failure kind {name:?}"))
}

fn decoded(latency: &Latency) -> Result<Histogram<u64>, String> {
    let mut histogram = crate::metrics::recorder::new_histogram();
    let kept = histogram::decode(&latency.histogram)?;
    histogram
        .add(&kept)
        .map_err(|e| format!("histograms cannot be added: {e:?}"))?;
    Ok(histogram)
}

/// Each connection's times, from the result's columns (none in a result of schema 1).
fn connections(phase: &PhaseResult) -> Vec<ConnectionTimes> {
    let Some(columns) = &phase.connection_times else {
        return Vec::new();
    };
    let at = |column: &[u64], i: usize| column.get(i).copied().unwrap_or(0);
    (0..columns.local_ns.len())
        .map(|i| ConnectionTimes {
            local_ns: at(&columns.local_ns, i),
            send_ns: at(&columns.send_ns, i),
            receive_ns: at(&columns.receive_ns, i),
            remote_ns: PerOperation::from_fn(|op| {
                columns
                    .remote_ns
                    .get(op.name())
                    .map_or(0, |column| at(column, i))
            }),
        })
        .collect()
}
