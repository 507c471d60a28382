//! What went on beside a phase's operations, on the same time axis as its latency
//! charts: each node's own figures (requests it counted, memory, queues, background
//! tasks), the `_changes` consumers' rate and lag, each replica's documents replicated
//! per second and lag, and the database's size on disk. A
//! latency jump can then be read against what the server was doing at that moment.

use serde::Serialize;

use super::measures::rate;
use super::steps::Steps;
use crate::results::replication::ReplicaResult;
use crate::results::{IntervalResult, PhaseResult};
use crate::server_stats::ServerInterval;

const MIB: f64 = 1024.0 * 1024.0;

/// Per node, in the phase's interval order; `None` where the node did not say.
#[derive(Debug, Serialize)]
pub struct NodeSeries {
    pub node: String,
    /// Requests the node counted, per second of the interval.
    pub requests: Vec<Option<f64>>,
    /// CouchDB's own request-time p99 in milliseconds, over its stats window.
    pub request_p99: Vec<Option<f64>>,
    pub memory_mib: Vec<Option<f64>>,
    pub run_queue: Vec<Option<f64>>,
    /// Background tasks of every kind running at the interval's end.
    pub tasks: Vec<Option<f64>>,
}

#[derive(Debug, Serialize)]
pub struct ChangesSeries {
    pub changes_per_second: Vec<Option<f64>>,
    pub lag_seconds: Vec<Option<f64>>,
}

/// One replica of the phase's continuous replications: the documents its feed showed per
/// second, and its lag.
#[derive(Debug, Serialize)]
pub struct ReplicaSeries {
    pub replica: String,
    pub docs_per_second: Vec<Option<f64>>,
    pub lag_seconds: Vec<Option<f64>>,
}

#[derive(Debug, Serialize)]
pub struct DiskSeries {
    pub file_mib: Vec<Option<f64>>,
    pub active_mib: Vec<Option<f64>>,
}

/// Only what the phase has some value of; each series lies on the phase's own x.
#[derive(Debug, Default, Serialize)]
pub struct Beside {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<NodeSeries>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangesSeries>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replication: Vec<ReplicaSeries>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskSeries>,
}

impl Beside {
    pub fn has(&self, chart: &str) -> bool {
        let node_has =
            |pick: fn(&NodeSeries) -> &Vec<Option<f64>>| self.server.iter().any(|n| any(pick(n)));
        match chart {
            "server-requests" => node_has(|n| &n.requests) || node_has(|n| &n.request_p99),
            "server-memory" => node_has(|n| &n.memory_mib),
            "server-work" => node_has(|n| &n.tasks) || node_has(|n| &n.run_queue),
            "changes" => self.changes.is_some(),
            "replication" => !self.replication.is_empty(),
            "disk" => self.disk.is_some(),
            _ => false,
        }
    }
}

fn any(values: &[Option<f64>]) -> bool {
    values.iter().any(Option::is_some)
}

/// The nodes that told something in some interval, in the order first seen.
fn nodes(phase: &PhaseResult) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    for node in phase.intervals.iter().flat_map(|i| &i.server) {
        if !nodes.contains(&node.node) {
            nodes.push(node.node.clone());
        }
    }
    nodes
}

/// Columns per node, in [`NodeSeries`]' order.
const PER_NODE: usize = 5;

fn node_values(figures: Option<&ServerInterval>, interval: &IntervalResult) -> Vec<Option<f64>> {
    let Some(f) = figures else {
        return vec![None; PER_NODE];
    };
    // No counts at all: the node has no statistics, or this was its first look.
    let requests = f
        .counts
        .get("requests")
        .copied()
        .or((!f.counts.is_empty()).then_some(0));
    vec![
        requests.and_then(|n| rate(n, interval)),
        f.request_time_ms.map(|t| t.p99),
        f.memory_bytes.map(|b| b as f64 / MIB),
        f.run_queue.map(|n| n as f64),
        f.tasks.as_ref().map(|t| t.values().sum::<u64>() as f64),
    ]
}

fn interval_values(
    phase: &PhaseResult,
    nodes: &[String],
    interval: &IntervalResult,
) -> Vec<Option<f64>> {
    let mut values = Vec::new();
    for name in nodes {
        let figures = interval.server.iter().find(|n| &n.node == name);
        values.extend(node_values(figures.map(|n| &n.figures), interval));
    }
    let changes = phase
        .changes
        .as_ref()
        .and_then(|c| c.beside(interval.elapsed_seconds, interval.length_seconds));
    values.push(changes.map(|c| c.changes_per_second));
    values.push(changes.map(|c| c.lag_seconds));
    for replica in replicas(phase) {
        let lag = replica
            .lag
            .beside(interval.elapsed_seconds, interval.length_seconds);
        values.push(lag.map(|c| c.changes_per_second));
        values.push(lag.map(|c| c.lag_seconds));
    }
    let disk = interval.disk.as_ref();
    values.push(disk.and_then(|d| d.file).map(|b| b as f64 / MIB));
    values.push(disk.and_then(|d| d.active).map(|b| b as f64 / MIB));
    values
}

/// The phase's replicas, none for a phase without continuous replication.
fn replicas(phase: &PhaseResult) -> &[ReplicaResult] {
    phase.replication.as_ref().map_or(&[], |r| &r.replicas[..])
}

pub fn beside(phase: &PhaseResult) -> Beside {
    let nodes = nodes(phase);
    let replica_count = replicas(phase).len();
    let mut steps = Steps::new(nodes.len() * PER_NODE + 4 + 2 * replica_count);
    steps.phase(0.0, phase, |interval| {
        interval_values(phase, &nodes, interval)
    });
    let mut columns = steps.columns.into_iter();
    let mut next = || columns.next().unwrap_or_default();
    let server = nodes
        .into_iter()
        .map(|node| NodeSeries {
            node,
            requests: next(),
            request_p99: next(),
            memory_mib: next(),
            run_queue: next(),
            tasks: next(),
        })
        .collect();
    let (changes_per_second, lag_seconds) = (next(), next());
    let replication: Vec<ReplicaSeries> = replicas(phase)
        .iter()
        .map(|replica| ReplicaSeries {
            replica: replica.shown().to_string(),
            docs_per_second: next(),
            lag_seconds: next(),
        })
        .collect();
    let (file_mib, active_mib) = (next(), next());
    Beside {
        server,
        changes: (phase.changes.is_some() && any(&changes_per_second)).then_some(ChangesSeries {
            changes_per_second,
            lag_seconds,
        }),
        replication: if replication.iter().any(|r| any(&r.docs_per_second)) {
            replication
        } else {
            Vec::new()
        },
        disk: (any(&file_mib) || any(&active_mib)).then_some(DiskSeries {
            file_mib,
            active_mib,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::server_stats::NodeInterval;

    fn node(name: &str, requests: Option<u64>, memory: Option<u64>) -> NodeInterval {
        NodeInterval {
            node: name.to_string(),
            figures: ServerInterval {
                counts: requests
                    .map(|n| BTreeMap::from([("requests".to_string(), n)]))
                    .unwrap_or_default(),
                memory_bytes: memory,
                ..ServerInterval::default()
            },
        }
    }

    fn interval(elapsed_seconds: f64, server: Vec<NodeInterval>) -> IntervalResult {
        IntervalResult {
            elapsed_seconds,
            length_seconds: 0.5,
            server,
            ..IntervalResult::default()
        }
    }

    #[test]
    fn each_node_is_a_line_of_its_own_with_gaps_where_it_said_nothing() {
        let mut phase = PhaseResult::of_operations("p", 1.0, Vec::new());
        phase.intervals = vec![
            // A first look has no growth yet; the second node did not answer.
            interval(0.5, vec![node("a", None, Some(2 * 1024 * 1024))]),
            interval(
                1.0,
                vec![node("a", Some(100), None), node("b", Some(10), Some(0))],
            ),
        ];
        let beside = beside(&phase);
        let names: Vec<&str> = beside.server.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        // x is the phase's start, then each interval's end.
        assert_eq!(beside.server[0].requests, [None, None, Some(200.0)]);
        assert_eq!(beside.server[0].memory_mib, [None, Some(2.0), None]);
        assert_eq!(beside.server[1].requests, [None, None, Some(20.0)]);
        assert!(beside.has("server-requests") && beside.has("server-memory"));
        assert!(!beside.has("server-work") && !beside.has("changes") && !beside.has("disk"));
    }

    #[test]
    fn each_replica_is_a_line_of_its_own() {
        use crate::metrics::changes::ChangesInterval;
        use crate::results::replication::ReplicationResult;
        let look = |elapsed_seconds: f64, per_second: f64| ChangesInterval {
            elapsed_seconds,
            changes_per_second: per_second,
            lag_seconds: per_second / 100.0,
            open_feeds: 1,
            length_seconds: 1.0,
        };
        let replica = |name: &str, looks: Vec<ChangesInterval>| ReplicaResult {
            database: name.to_string(),
            url: None,
            documents: Vec::new(),
            created: true,
            lag: crate::results::changes::with_intervals(looks),
        };
        let mut phase = PhaseResult::of_operations("p", 1.0, Vec::new());
        phase.intervals = vec![interval(0.5, Vec::new()), interval(1.0, Vec::new())];
        phase.replication = Some(ReplicationResult {
            two_way: false,
            replicas: vec![
                replica("a", vec![look(0.5, 10.0), look(1.0, 20.0)]),
                replica("b", vec![look(1.0, 5.0)]),
            ],
            jobs: Vec::new(),
            notes: Vec::new(),
            client_nodes: 1,
        });
        let beside = beside(&phase);
        assert!(beside.has("replication") && !beside.has("changes"));
        let names: Vec<&str> = beside
            .replication
            .iter()
            .map(|r| r.replica.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            beside.replication[0].docs_per_second,
            [None, Some(10.0), Some(20.0)]
        );
        assert_eq!(
            beside.replication[0].lag_seconds,
            [None, Some(0.1), Some(0.2)]
        );
        assert_eq!(
            beside.replication[1].docs_per_second,
            [None, None, Some(5.0)]
        );
    }

    #[test]
    fn a_phase_without_figures_has_no_charts_beside() {
        let mut phase = PhaseResult::of_operations("p", 1.0, Vec::new());
        phase.intervals = vec![interval(0.5, Vec::new()), interval(1.0, Vec::new())];
        let beside = beside(&phase);
        assert!(beside.server.is_empty() && beside.changes.is_none() && beside.disk.is_none());
        let json = serde_json::to_string(&beside).unwrap();
        assert_eq!(json, "{}");
    }
}
