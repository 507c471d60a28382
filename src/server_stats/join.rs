//! Puts the looks at the servers beside the interval rows they belong to: each node's
//! look taken as an interval ended, with counters' growth since that node's look before.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ServerInterval, ServerLook, between};

/// One node's looks over a phase, in the order taken, each `at` after the phase's start.
#[derive(Clone, Debug, Default)]
pub struct NodeLooks {
    /// The node's address, without credentials.
    pub node: String,
    pub looks: Vec<(Duration, ServerLook)>,
}

/// One node's figures over one interval, as the result file keeps them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeInterval {
    /// The node's address, without credentials.
    pub node: String,
    #[serde(flatten)]
    pub figures: ServerInterval,
}

/// For each interval ending `ends[i].0` seconds after the phase's start (`ends[i].1`
/// long), the figures of each node whose look was taken as it ended. A look counts for
/// the interval whose end it is nearest, within half the interval; an interval without
/// one (the phase's last, partial one; a look that missed its moment) has none.
pub fn beside_intervals(ends: &[(f64, f64)], nodes: &[NodeLooks]) -> Vec<Vec<NodeInterval>> {
    let mut nodes = nodes.to_vec();
    let mut joiner = Joiner::default();
    ends.iter()
        .map(|&(end, length)| joiner.beside(end, length, &mut nodes))
        .collect()
}

/// Puts looks beside intervals as the intervals close, in time order, using up each
/// node's looks as it goes: what a long phase keeps of its looks is only those not yet
/// placed. Each node's last look placed stays as the starting point of its growth.
#[derive(Debug, Default)]
pub struct Joiner {
    previous: Vec<Option<ServerLook>>,
}

impl Joiner {
    /// The figures of each node whose look was taken as the interval ending `end`
    /// seconds after the phase's start (`length` long) ended; looks up to then are used
    /// up from `nodes`.
    pub fn beside(&mut self, end: f64, length: f64, nodes: &mut [NodeLooks]) -> Vec<NodeInterval> {
        if self.previous.len() < nodes.len() {
            self.previous.resize(nodes.len(), None);
        }
        let tolerance = (length / 2.0).max(0.05);
        let mut figures = Vec::new();
        for (node, previous) in nodes.iter_mut().zip(&mut self.previous) {
            // Looks before this interval's end: growth's starting points only.
            let before = node
                .looks
                .iter()
                .take_while(|(at, _)| at.as_secs_f64() < end - tolerance)
                .count();
            if let Some((_, look)) = node.looks.drain(..before).next_back() {
                *previous = Some(look);
            }
            if node
                .looks
                .first()
                .is_some_and(|(at, _)| at.as_secs_f64() <= end + tolerance)
            {
                let (_, look) = node.looks.remove(0);
                figures.push(NodeInterval {
                    node: node.node.clone(),
                    figures: between(previous.as_ref(), &look),
                });
                *previous = Some(look);
            }
        }
        figures
    }
}

/// Two adjacent intervals' figures as one, node by node: growth adds up, levels are the
/// later interval's end's. A node only the earlier interval has keeps its figures.
pub fn absorb(earlier: &mut Vec<NodeInterval>, later: Vec<NodeInterval>) {
    for next in later {
        match earlier.iter_mut().find(|n| n.node == next.node) {
            Some(node) => node.figures.absorb(next.figures),
            None => earlier.push(next),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::server_stats::NodeStats;

    fn node(name: &str, looks: &[(f64, u64)]) -> NodeLooks {
        NodeLooks {
            node: name.to_string(),
            looks: looks
                .iter()
                .map(|&(at, requests)| {
                    let look = ServerLook {
                        stats: Some(NodeStats {
                            counters: BTreeMap::from([("requests".to_string(), requests)]),
                            ..NodeStats::default()
                        }),
                        ..ServerLook::default()
                    };
                    (Duration::from_secs_f64(at), look)
                })
                .collect(),
        }
    }

    #[test]
    fn each_interval_gets_the_look_at_its_end_and_growth_since_the_one_before() {
        // Node b's look for the interval ending at 3 s missed its moment.
        let a = node(
            "http://a",
            &[(1.02, 10), (2.01, 25), (3.01, 40), (4.03, 45)],
        );
        let b = node("http://b", &[(1.01, 100), (2.02, 130), (4.05, 160)]);
        let ends = [(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0), (4.4, 0.4)];
        let rows = beside_intervals(&ends, &[a, b]);
        assert_eq!(rows.len(), 5);
        // The first look has nothing to grow from.
        assert_eq!(rows[0].len(), 2);
        assert!(rows[0][0].figures.counts.is_empty());
        assert_eq!(rows[1][1].figures.counts["requests"], 30);
        assert_eq!(rows[2].len(), 1);
        assert_eq!(rows[2][0].figures.counts["requests"], 15);
        // Node b's growth runs from its last answer, two intervals back.
        assert_eq!(rows[3][1].node, "http://b");
        assert_eq!(rows[3][1].figures.counts["requests"], 30);
        assert!(rows[4].is_empty());
    }

    #[test]
    fn a_look_far_from_any_end_is_not_taken_for_one() {
        let a = node("http://a", &[(0.2, 1), (1.9, 5)]);
        let rows = beside_intervals(&[(1.0, 1.0), (3.0, 1.0)], &[a]);
        assert!(rows[0].is_empty());
        assert!(rows[1].is_empty());
    }
}
