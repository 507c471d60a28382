//! The lines on a phase's continuous replications: each replica's lag, what reached it,
//! and the jobs' last state.

use crate::metrics::replication::JobLook;
use crate::report::changes::{seen, troubles};
use crate::report::numbers::grouped;
use crate::results::replication::ReplicaResult;
use crate::results::{PhaseResult, ReplicationResult};

/// The block; none for a phase without replications.
pub fn lines(phase: &PhaseResult) -> String {
    let Some(replication) = &phase.replication else {
        return String::new();
    };
    let names: Vec<String> = replication
        .replicas
        .iter()
        .map(|r| format!("{:?}", r.shown()))
        .collect();
    let mut out = format!(
        "  replication: {} to {}{}\n",
        if replication.two_way {
            "two-way"
        } else {
            "one-way"
        },
        names.join(", "),
        super::changes::sampled(replication.client_nodes)
    );
    for replica in &replication.replicas {
        out.push_str(&replica_lines(replica));
    }
    out.push_str(&jobs(replication));
    for note in &replication.notes {
        out.push_str(&format!("    note: {note}\n"));
    }
    out
}

fn replica_lines(replica: &ReplicaResult) -> String {
    let lag = &replica.lag;
    let l = &lag.latency;
    let peak = lag
        .intervals
        .iter()
        .map(|i| i.changes_per_second)
        .fold(0.0, f64::max);
    let mut out = format!(
        "    {:?}: replication lag (answer on the source → replica's feed), ms: {}  ({} writes)\n",
        replica.shown(),
        super::changes::percentiles(l),
        grouped(l.count)
    );
    out.push_str(&format!(
        "    documents replicated: {}, at most {peak:.1}/s in an interval\n",
        grouped(lag.changes)
    ));
    out.push_str(&seen(lag));
    out.push_str(&troubles(lag));
    out
}

/// Each job's last look, where the server showed the jobs.
fn jobs(replication: &ReplicationResult) -> String {
    let documents = replication.replicas.iter().flat_map(|r| &r.documents);
    let mut out = String::new();
    for document in documents {
        let looks: Vec<_> = replication
            .jobs
            .iter()
            .filter(|j| &j.document == document)
            .collect();
        let Some(last) = looks.last() else {
            continue;
        };
        let listed = looks.iter().filter(|j| j.last_event.is_some()).count();
        out.push_str(&format!(
            "    job {document}: listed in {listed} of {} intervals, last event {}, {} documents written; over time: {}\n",
            looks.len(),
            last.last_event.as_deref().unwrap_or("(not listed)"),
            last.docs_written.map_or("?".to_string(), grouped),
            event_runs(&looks),
        ));
    }
    out
}

/// A job's state over the phase, as runs of the same event: `started 1.0–7.0 s,
/// crashed 8.0 s, not listed 9.0–10.0 s` (seconds from the phase's start).
pub fn event_runs(looks: &[&JobLook]) -> String {
    let event = |look: &JobLook| look.last_event.clone().unwrap_or("not listed".to_string());
    let mut runs: Vec<(String, f64, f64)> = Vec::new();
    for look in looks {
        let now = event(look);
        match runs.last_mut() {
            Some((last, _, until)) if *last == now => *until = look.elapsed_seconds,
            _ => runs.push((now, look.elapsed_seconds, look.elapsed_seconds)),
        }
    }
    let texts: Vec<String> = runs
        .iter()
        .map(|(event, from, until)| {
            if from == until {
                format!("{event} {from:.1} s")
            } else {
                format!("{event} {from:.1}–{until:.1} s")
            }
        })
        .collect();
    texts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(elapsed_seconds: f64, event: Option<&str>) -> JobLook {
        JobLook {
            elapsed_seconds,
            document: "d".to_string(),
            last_event: event.map(str::to_string),
            docs_written: None,
            changes_pending: None,
            doc_write_failures: None,
        }
    }

    #[test]
    fn a_jobs_states_over_time_are_runs_of_one_event() {
        let looks = [
            look(1.0, None),
            look(2.0, Some("started")),
            look(3.0, Some("started")),
            look(4.0, Some("crashed")),
            look(5.0, Some("started")),
        ];
        let refs: Vec<&JobLook> = looks.iter().collect();
        assert_eq!(
            event_runs(&refs),
            "not listed 1.0 s, started 2.0–3.0 s, crashed 4.0 s, started 5.0 s"
        );
        assert_eq!(event_runs(&[]), "");
    }
}
