//! A phase's tally: everything its connections counted and timed, in one value that adds.
//!
//! The result file is made from a tally, and a result file turns back into one, so that
//! merging the results of several nodes is adding their tallies (as oha's `ResultData`
//! merges) and building the result again: no figure is ever recovered from a rate or a
//! spread. Each connection's times are kept, not their spread, because Iron Cushion's
//! median and sd over connections need them.

use hdrhistogram::Histogram;

use super::connection::{ConnectionMetrics, ConnectionTimes, OperationCounts};
use super::recorder::{NodeLatencies, OperationLatencies, StepLatencies, new_histogram};
use super::setup::SetupTally;
use crate::workload::{Operation, PerOperation};

/// One kind of operation, tallied: its counts and its histograms side by side.
#[derive(Clone, Debug, Default)]
pub struct OperationTally {
    pub counts: OperationCounts,
    pub latencies: OperationLatencies,
}

impl OperationTally {
    pub fn merge(&mut self, other: &OperationTally) {
        self.counts.merge(&other.counts);
        self.latencies.merge(&other.latencies);
    }

    /// Whether anything of this kind was tried (or planned and not run): a result lists
    /// only those.
    pub fn was_tried(&self) -> bool {
        let c = &self.counts;
        c.succeeded + c.failures.total() + c.not_run > 0
    }
}

/// Everything a phase's connections counted and timed.
#[derive(Clone, Debug)]
pub struct PhaseTally {
    pub operations: PerOperation<OperationTally>,
    /// One entry per connection, in no particular order once merged.
    pub connections: Vec<ConnectionTimes>,
    /// Bytes of JSON in request bodies (`totalJsonBytesSent`).
    pub json_sent: u64,
    /// Bytes of JSON in response bodies (`totalJsonBytesReceived`).
    pub json_received: u64,
    /// Operations that started late by more than the threshold (open model).
    pub late: u64,
    /// From scheduled to actual starts of operations whose connection was free at their
    /// slot (open model), microseconds.
    pub send_lag: Histogram<u64>,
    /// Per node of the target, by address, when it has several.
    pub nodes: Vec<(String, NodeLatencies)>,
    /// The connections opened, and what opening them took.
    pub setup: SetupTally,
}

impl Default for PhaseTally {
    fn default() -> PhaseTally {
        PhaseTally {
            operations: PerOperation::default(),
            connections: Vec::new(),
            json_sent: 0,
            json_received: 0,
            late: 0,
            send_lag: new_histogram(),
            nodes: Vec::new(),
            setup: SetupTally::default(),
        }
    }
}

impl PhaseTally {
    /// The tally of one engine's phase: its connections' counts and times, and the
    /// latencies its recorder took.
    pub fn of_connections(
        connections: Vec<ConnectionMetrics>,
        latencies: StepLatencies,
        send_lag: Histogram<u64>,
        nodes: Vec<(String, NodeLatencies)>,
    ) -> PhaseTally {
        let mut tally = PhaseTally {
            operations: latencies.map(|_, latencies| OperationTally {
                counts: OperationCounts::default(),
                latencies: latencies.clone(),
            }),
            send_lag,
            nodes,
            ..PhaseTally::default()
        };
        for connection in connections {
            tally
                .operations
                .merge_with(&connection.operations, |op, counts| op.counts.merge(counts));
            tally.json_sent = tally.json_sent.saturating_add(connection.json_sent);
            tally.json_received = tally.json_received.saturating_add(connection.json_received);
            tally.late = tally.late.saturating_add(connection.late);
            tally.connections.push(connection.times);
        }
        tally
    }

    /// Adds `other` (another node's share of the same phase) to this tally: its
    /// connections join these.
    pub fn merge(&mut self, other: &PhaseTally) {
        self.connections.extend(other.connections.iter().cloned());
        self.add_all_but_connections(other);
    }

    /// Adds `later` (the same phase run again by as many connections, as a repetition of
    /// the run does) to this tally: connection `c`'s times add to connection `c`'s, so
    /// Iron Cushion's figures read as if each connection had done both stretches of work.
    pub fn follow(&mut self, later: &PhaseTally) {
        for (c, times) in later.connections.iter().enumerate() {
            match self.connections.get_mut(c) {
                Some(mine) => mine.add(times),
                None => self.connections.push(times.clone()),
            }
        }
        self.add_all_but_connections(later);
    }

    fn add_all_but_connections(&mut self, other: &PhaseTally) {
        self.operations
            .merge_with(&other.operations, OperationTally::merge);
        self.json_sent = self.json_sent.saturating_add(other.json_sent);
        self.json_received = self.json_received.saturating_add(other.json_received);
        self.late = self.late.saturating_add(other.late);
        let _ = self.send_lag.add(&other.send_lag);
        self.setup.merge(&other.setup);
        for (address, node) in &other.nodes {
            match self.nodes.iter_mut().find(|(a, _)| a == address) {
                Some((_, mine)) => mine.merge(node),
                None => self.nodes.push((address.clone(), node.clone())),
            }
        }
    }

    /// The operations that were tried, with their tallies, in [`Operation::ALL`] order.
    pub fn tried(&self) -> impl Iterator<Item = (Operation, &OperationTally)> {
        self.operations.iter().filter(|(_, op)| op.was_tried())
    }

    /// The counts of every operation kind added up.
    pub fn total_counts(&self) -> OperationCounts {
        let mut total = OperationCounts::default();
        for op in self.operations.values() {
            total.merge(&op.counts);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::recorder::record_micros;

    fn connection(reads: u64, remote_ns: u64) -> ConnectionMetrics {
        let mut c = ConnectionMetrics::default();
        c.operation(Operation::Read).succeeded = reads;
        c.times.remote_ns[Operation::Read] = remote_ns;
        c.json_sent = 10;
        c
    }

    #[test]
    fn merging_two_nodes_is_adding_their_tallies() {
        let mut latencies = StepLatencies::default();
        record_micros(&mut latencies[Operation::Read].latency, 2_000_000);
        let one = PhaseTally::of_connections(
            vec![connection(3, 5), connection(4, 7)],
            latencies.clone(),
            new_histogram(),
            vec![("http://a".into(), NodeLatencies::default())],
        );
        assert_eq!(one.operations[Operation::Read].counts.succeeded, 7);
        let mut both = one.clone();
        both.merge(&one);
        assert_eq!(both.operations[Operation::Read].counts.succeeded, 14);
        assert_eq!(both.operations[Operation::Read].latencies.latency.len(), 2);
        assert_eq!(both.connections.len(), 4);
        assert_eq!(both.json_sent, 40);
        assert_eq!(both.nodes.len(), 1, "one node address, added up");
        let tried: Vec<Operation> = both.tried().map(|(op, _)| op).collect();
        assert_eq!(tried, [Operation::Read]);
        assert_eq!(both.total_counts().succeeded, 14);
    }

    #[test]
    fn a_repetition_adds_each_connections_times_to_its_own() {
        let tally = |connections| {
            PhaseTally::of_connections(
                connections,
                StepLatencies::default(),
                new_histogram(),
                Vec::new(),
            )
        };
        let mut first = tally(vec![connection(3, 5), connection(4, 7)]);
        first.follow(&tally(vec![connection(1, 10), connection(2, 20)]));
        assert_eq!(first.connections.len(), 2);
        let remote: Vec<u64> = first
            .connections
            .iter()
            .map(|t| t.remote_ns[Operation::Read])
            .collect();
        assert_eq!(remote, [15, 27]);
        assert_eq!(first.operations[Operation::Read].counts.succeeded, 10);
        assert_eq!(first.json_sent, 40);
        // A later repetition with more connections keeps the ones it adds.
        first.follow(&tally(vec![
            connection(0, 1),
            connection(0, 1),
            connection(0, 9),
        ]));
        assert_eq!(first.connections.len(), 3);
        assert_eq!(first.connections[2].remote_ns[Operation::Read], 9);
    }
}
