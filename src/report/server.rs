//! The lines on what the servers said about themselves during a phase (`server_stats`):
//! per node, the requests it counted, its own request times, its VM's memory and run
//! queue at their highest, and the background tasks seen, so a latency jump can be set
//! beside what the server was doing.

use std::collections::BTreeMap;

use super::numbers::{grouped, grouped_decimal};
use crate::results::PhaseResult;
use crate::server_stats::NodeInterval;

/// The lines of a phase; none when no node said anything.
pub fn lines(phase: &PhaseResult) -> String {
    let mut by_node: BTreeMap<&str, Vec<&NodeInterval>> = BTreeMap::new();
    for interval in &phase.intervals {
        for node in &interval.server {
            by_node.entry(node.node.as_str()).or_default().push(node);
        }
    }
    let mut out = String::new();
    for (node, looks) in by_node {
        out.push_str(&node_line(node, &looks));
        out.push_str(&tasks_line(&looks));
    }
    out
}

/// Why the server's figures were not asked again, each said once for the whole run
/// however many phases met it (every phase of a run against PouchDB Server does).
pub fn notes<'a>(phases: impl IntoIterator<Item = &'a PhaseResult>) -> String {
    let mut notes: Vec<&str> = Vec::new();
    for note in phases.into_iter().flat_map(|p| &p.server_notes) {
        if !notes.contains(&note.as_str()) {
            notes.push(note);
        }
    }
    notes
        .iter()
        .map(|note| format!("  server figures not asked again: {note}\n"))
        .collect()
}

/// One node's figures over the phase.
fn node_line(node: &str, looks: &[&NodeInterval]) -> String {
    let mut parts = Vec::new();
    let requests: u64 = looks
        .iter()
        .filter_map(|l| l.figures.counts.get("requests"))
        .fold(0, |sum, n| sum.saturating_add(*n));
    if looks
        .iter()
        .any(|l| l.figures.counts.contains_key("requests"))
    {
        parts.push(format!("{} requests counted", grouped(requests)));
    }
    if let Some(p99) = highest(looks, |l| l.figures.request_time_ms.map(|t| t.p99)) {
        parts.push(format!(
            "its request time p99 up to {} ms (over its own stats window)",
            grouped_decimal(p99, 1)
        ));
    }
    if let Some(memory) = highest(looks, |l| l.figures.memory_bytes.map(|b| b as f64)) {
        parts.push(format!(
            "memory up to {} MB",
            grouped_decimal(memory / 1e6, 1)
        ));
    }
    if let Some(queue) = highest(looks, |l| l.figures.run_queue.map(|n| n as f64)) {
        parts.push(format!("run queue up to {queue}"));
    }
    if looks.iter().any(|l| l.figures.counters_reset) {
        parts.push("its counters went back (a restart?)".to_string());
    }
    // A node that only listed its (idle) tasks, as PouchDB Server does, has nothing to say.
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "  server {node} ({} looks): {}\n",
        looks.len(),
        parts.join("; ")
    )
}

/// The background tasks seen, by kind, with how many looks saw each.
fn tasks_line(looks: &[&NodeInterval]) -> String {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for look in looks {
        for (kind, n) in look.figures.tasks.iter().flatten() {
            if *n > 0 {
                *seen.entry(kind.as_str()).or_default() += 1;
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let kinds: Vec<String> = seen
        .iter()
        .map(|(kind, n)| format!("{kind} in {n} of {} looks", looks.len()))
        .collect();
    format!("    background tasks: {}\n", kinds.join(", "))
}

/// The highest of a figure over the looks that have it.
fn highest(looks: &[&NodeInterval], figure: impl Fn(&NodeInterval) -> Option<f64>) -> Option<f64> {
    looks
        .iter()
        .filter_map(|l| figure(l))
        .filter(|x| x.is_finite())
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::IntervalResult;
    use crate::server_stats::ServerInterval;
    use crate::server_stats::delta::RequestTimeFigures;

    fn interval(server: Vec<NodeInterval>) -> IntervalResult {
        IntervalResult {
            server,
            ..IntervalResult::default()
        }
    }

    fn node(requests: Option<u64>, p99: f64, tasks: &[(&str, u64)]) -> NodeInterval {
        NodeInterval {
            node: "http://a:5984".to_string(),
            figures: ServerInterval {
                counts: requests
                    .map(|n| BTreeMap::from([("requests".to_string(), n)]))
                    .unwrap_or_default(),
                request_time_ms: Some(RequestTimeFigures {
                    p99,
                    ..RequestTimeFigures::default()
                }),
                memory_bytes: Some(97_400_000),
                run_queue: Some(2),
                tasks: Some(tasks.iter().map(|(k, n)| (k.to_string(), *n)).collect()),
                ..ServerInterval::default()
            },
        }
    }

    #[test]
    fn a_node_says_its_requests_times_memory_and_tasks() {
        let mut phase = PhaseResult::of_operations("crud", 3.0, Vec::new());
        phase.intervals = vec![
            interval(vec![node(None, 20.0, &[("indexer", 2)])]),
            interval(vec![node(
                Some(150),
                562.03,
                &[("indexer", 1), ("replication", 1)],
            )]),
            interval(vec![node(Some(1_200), 30.0, &[("replication", 0)])]),
        ];
        phase.server_notes = vec!["http://b:5984: GET /_node/_local/_stats gave 404".to_string()];
        let text = lines(&phase);
        assert_eq!(
            text,
            "  server http://a:5984 (3 looks): 1,350 requests counted; its request time p99 up to 562.0 ms (over its own stats window); memory up to 97.4 MB; run queue up to 2\n\
             \x20   background tasks: indexer in 2 of 3 looks, replication in 1 of 3 looks\n"
        );
        let again = phase.clone();
        assert_eq!(
            notes([&phase, &again]),
            "  server figures not asked again: http://b:5984: GET /_node/_local/_stats gave 404\n",
            "a note is said once however many phases met it"
        );
        assert_eq!(
            lines(&PhaseResult::of_operations("crud", 1.0, Vec::new())),
            ""
        );
    }
}
