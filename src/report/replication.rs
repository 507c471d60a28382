//! The lines on a phase's continuous replications: each replica's lag, what reached it,
//! and the jobs' last state.

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
        "  replication: {} to {}\n",
        if replication.two_way {
            "two-way"
        } else {
            "one-way"
        },
        names.join(", ")
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
            "    job {document}: listed in {listed} of {} intervals, last event {}, {} documents written\n",
            looks.len(),
            last.last_event.as_deref().unwrap_or("(not listed)"),
            last.docs_written.map_or("?".to_string(), grouped),
        ));
    }
    out
}
