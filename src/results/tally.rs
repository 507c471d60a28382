//! A phase result read back into a [`PhaseTally`]: the inverse of building the result
//! from a tally, so that merging results is adding tallies. Every figure comes from a
//! count, a histogram or a connection's time the result keeps, none from a rate.

use hdrhistogram::Histogram;

use super::{Latency, LoginsResult, OperationResult, PhaseResult, histogram};
use crate::metrics::recorder::{NodeLatencies, OperationLatencies};
use crate::metrics::setup::SetupTally;
use crate::metrics::{
    ConnectionTimes, Failure, LoginTally, OperationCounts, OperationTally, PhaseTally,
};
use crate::workload::{Operation, PerOperation};

/// Refuses a result's phases that do not read back into tallies (an unknown operation or
/// failure name, histograms that do not decode): what `merge`, `check` and `report`
/// read must mean what a run wrote. The message names the file.
pub fn check_readable(phases: &[PhaseResult], file: &str) -> Result<(), String> {
    for phase in phases {
        of_phase(phase)
            .map_err(|e| format!("{file}: {e}; give a result written by sofabench, unedited"))?;
    }
    Ok(())
}

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
        connections: connections(phase).map_err(context)?,
        json_sent: phase.iron_cushion.total_json_bytes_sent,
        json_received: phase.iron_cushion.total_json_bytes_received,
        late: phase.late,
        send_lag: match &phase.send_lag {
            Some(lag) => decoded(lag).map_err(context)?,
            None => crate::metrics::recorder::new_histogram(),
        },
        nodes,
        setup: setup(phase).map_err(context)?,
    })
}

/// The phase's connection openings; none in a result that does not record them.
fn setup(phase: &PhaseResult) -> Result<SetupTally, String> {
    let Some(result) = &phase.connection_setup else {
        return Ok(SetupTally::default());
    };
    let connect = decoded(&result.connect)?;
    let handshake = match &result.handshake {
        Some(handshake) => decoded(handshake)?,
        None => crate::metrics::recorder::new_histogram(),
    };
    if connect.len() != result.opened || result.reconnects > result.opened {
        return Err(format!(
            "connection_setup says {} connections opened ({} reconnects) but times {}",
            result.opened,
            result.reconnects,
            connect.len()
        ));
    }
    Ok(SetupTally {
        opened: result.opened,
        reconnects: result.reconnects,
        connect,
        handshake,
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
        retried_429: result.retried_429,
        retry_429_wait_ns: result.retry_429_wait_ns,
        unknown: result.unknown_outcomes,
        not_run: result.not_run,
        bytes_sent: result.bytes_sent,
        bytes_received: result.bytes_received,
        rows: result.rows.unwrap_or(0),
        hot: match &result.hot {
            Some(hot) => {
                super::hot_counts(hot).map_err(|e| format!("{}: {e}", result.operation))?
            }
            None => Default::default(),
        },
        existing: result.existing.clone().unwrap_or_default(),
        rows_checked: result.row_check.as_ref().map_or(0, |c| c.answers),
        rows_wrong: result.row_check.as_ref().map_or(0, |c| c.wrong),
        rows_expected: result.row_check.as_ref().map_or(0, |c| c.expected_rows),
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

/// A phase's logins as a tally again, for adding up.
pub fn of_logins(logins: &LoginsResult) -> Result<LoginTally, String> {
    Ok(LoginTally {
        count: logins.count,
        failed: logins.failed,
        times: decoded(&logins.latency)?,
    })
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
/// Columns of different lengths cannot say which time is whose: refused.
fn connections(phase: &PhaseResult) -> Result<Vec<ConnectionTimes>, String> {
    let Some(columns) = &phase.connection_times else {
        return Ok(Vec::new());
    };
    let count = columns.local_ns.len();
    let named = [
        ("send_ns", &columns.send_ns),
        ("receive_ns", &columns.receive_ns),
    ];
    let remote = columns.remote_ns.iter().map(|(name, c)| (name.as_str(), c));
    for (name, column) in named.into_iter().chain(remote) {
        if column.len() != count {
            return Err(format!(
                "connection_times: {name} has {} entries but local_ns has {count}; the file was changed or cut",
                column.len()
            ));
        }
    }
    Ok((0..count)
        .map(|i| ConnectionTimes {
            local_ns: columns.local_ns[i],
            send_ns: columns.send_ns[i],
            receive_ns: columns.receive_ns[i],
            remote_ns: PerOperation::from_fn(|op| {
                columns
                    .remote_ns
                    .get(op.name())
                    .map_or(0, |column| column[i])
            }),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ConnectionMetrics;
    use crate::metrics::recorder::{StepLatencies, record_micros};
    use crate::results::build::{self, PhaseFacts};

    fn facts(mix: Vec<Operation>) -> PhaseFacts {
        PhaseFacts {
            interval_width: 1,
            name: "crud".into(),
            mix,
            started_at_ms: 0,
            wall_seconds: 2.0,
            target_rate: Some(50.0),
            ramp: None,
            intervals: Vec::new(),
            aborted: Vec::new(),
            action: None,
            logins: None,
            sweep: None,
            disk: None,
            server_notes: Vec::new(),
        }
    }

    /// A tally with something in every part a result keeps.
    fn tally() -> PhaseTally {
        let mut latencies = StepLatencies::default();
        let mut connections = Vec::new();
        for c in 0..3u64 {
            let mut m = ConnectionMetrics::default();
            let bulk = m.operation(Operation::BulkInsert);
            bulk.succeeded = 2;
            bulk.documents = 19;
            bulk.documents_failed = 1;
            bulk.failures.add(Failure::Document("conflict".into()), 1);
            bulk.samples
                .add(&Failure::Document("conflict".into()), "a conflict");
            bulk.statuses.add(201, 2);
            let read = m.operation(Operation::Read);
            read.succeeded = 5 + c;
            read.resends = c;
            read.failures.add(Failure::Status(404), 1);
            read.statuses.add(404, 1);
            read.failures.add(Failure::RateLimited, 1);
            read.samples.add(
                &Failure::RateLimited,
                "Retry-After: 5 · {\"error\":\"too_many_requests\"}",
            );
            read.statuses.add(429, 3);
            read.retried_429 = 2;
            read.retry_429_wait_ns = 5_000_000_000 + c;
            read.not_run = 2;
            m.operation(Operation::Update).unknown = 1;
            m.operation(Operation::Update)
                .failures
                .add(Failure::Timeout, 1);
            m.times.local_ns = 1_000 * (c + 1);
            m.times.remote_ns[Operation::Read] = 7_000 * (c + 2);
            m.json_sent = 100;
            m.late = 1;
            connections.push(m);
            record_micros(&mut latencies[Operation::Read].latency, 1_000_000 * (c + 1));
            record_micros(
                &mut latencies[Operation::Read].response,
                2_000_000 * (c + 1),
            );
            record_micros(&mut latencies[Operation::Update].failed, 30_000_000);
        }
        let mut send_lag = crate::metrics::recorder::new_histogram();
        send_lag.record(40).unwrap();
        let mut setup = SetupTally::default();
        setup.record(200_000, Some(3_000_000), false);
        setup.record(400_000, Some(1_000_000), true);
        PhaseTally {
            setup,
            ..PhaseTally::of_connections(connections, latencies, send_lag, Vec::new())
        }
    }

    /// Histograms compared by what they hold: one histogram has several encodings.
    fn canonical(mut result: PhaseResult) -> PhaseResult {
        let again = |l: &mut Latency| l.histogram = histogram::encode(&decoded(l).unwrap());
        for op in &mut result.operations {
            again(&mut op.latency);
            again(&mut op.response);
            op.failed_latency.as_mut().map(again);
        }
        result.send_lag.as_mut().map(again);
        if let Some(setup) = &mut result.connection_setup {
            again(&mut setup.connect);
            setup.handshake.as_mut().map(again);
        }
        result
    }

    #[test]
    fn a_result_reads_back_into_the_tally_it_was_built_from() {
        let mix = vec![Operation::BulkInsert, Operation::Read, Operation::Update];
        let built = build::from_tally(facts(mix.clone()), &tally());
        let read = &built.operations[1];
        assert_eq!(
            (read.retried_429, read.failures["rate_limited"]),
            (6, 3),
            "429s are their own kind, and their retries are kept"
        );
        assert_eq!(read.retry_429_wait_ns, 15_000_000_003);
        let back = of_phase(&built).unwrap();
        assert_eq!(back.connections, tally().connections);
        assert_eq!((back.setup.opened, back.setup.reconnects), (2, 1));
        assert_eq!(back.setup.handshake.len(), 2);
        let rebuilt = build::from_tally(facts(mix), &back);
        assert_eq!(canonical(rebuilt), canonical(built));
    }

    #[test]
    fn unknown_names_in_a_result_are_refused_with_the_phase() {
        let mut built = build::from_tally(facts(vec![Operation::Read]), &tally());
        built.operations[1].failures.insert("gremlins".into(), 1);
        let err = of_phase(&built).unwrap_err();
        assert!(
            err.contains("phase crud") && err.contains("\"gremlins\""),
            "{err}"
        );
        built.operations[1].operation = "teleport".into();
        assert!(of_phase(&built).unwrap_err().contains("\"teleport\""));
        let err = check_readable(&[built], "r.json").unwrap_err();
        assert!(err.starts_with("r.json: phase crud"), "{err}");
    }

    #[test]
    fn connection_setup_counts_must_match_their_times() {
        let mut built = build::from_tally(facts(vec![Operation::Read]), &tally());
        built.connection_setup.as_mut().unwrap().opened = 5;
        let err = of_phase(&built).unwrap_err();
        assert!(err.contains("5 connections opened"), "{err}");
    }

    #[test]
    fn connection_times_of_different_lengths_are_refused() {
        let mut built = build::from_tally(facts(vec![Operation::Read]), &tally());
        let times = built.connection_times.as_mut().unwrap();
        times.remote_ns.get_mut("read").unwrap().pop();
        let err = of_phase(&built).unwrap_err();
        assert!(
            err.contains("read has 2 entries but local_ns has 3"),
            "{err}"
        );
    }
}
