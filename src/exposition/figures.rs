//! What the endpoint shows: the run's figures since it started, added up from the
//! intervals the monitor closes, plain data that is cheap to copy for every scrape.

use super::buckets::Buckets;
use crate::metrics::{FailureCounts, IntervalMetrics, IntervalRow};
use crate::text::cut;
use crate::workload::PerOperation;

/// The most failure kinds shown per operation: a server's error words become label
/// values, and a server that makes up a new word for every answer must not make a new
/// series for each. Kinds beyond these are added up as `other`.
pub const MOST_KINDS: usize = 20;

/// The longest label value made of what a server said, in characters.
const LONGEST_KIND: usize = 64;

/// Intervals shorter than this (the stub a phase's end leaves; `--interval` is at least
/// 100 ms) are added up, but say too little to replace the last interval's percentiles
/// and stall flag.
const SHORTEST_TELLING: f64 = 0.1;

/// Counts by failure kind, as label values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kinds {
    counts: Vec<(String, u64)>,
}

impl Kinds {
    fn add(&mut self, kind: &str, n: u64) {
        let kind = cut(kind, LONGEST_KIND);
        let kind = if self.counts.len() < MOST_KINDS || self.counts.iter().any(|(k, _)| *k == kind)
        {
            kind
        } else {
            "other".to_string()
        };
        match self.counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count = count.saturating_add(n),
            None => self.counts.push((kind, n)),
        }
    }

    /// The kinds with their counts, in the order they were first met.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counts.iter().map(|(k, n)| (k.as_str(), *n))
    }
}

/// One operation kind since the run started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationFigures {
    pub succeeded: u64,
    pub failed: u64,
    /// Failures of whole operations, by kind.
    pub failures: Kinds,
    /// Documents stored or operated on.
    pub documents: u64,
    /// Documents a bulk answer refused or did not account for, by the server's word.
    pub document_failures: Kinds,
    /// 429 answers after which the operation was sent again.
    pub retried_429: u64,
    /// Response times of successful operations.
    pub response: Buckets,
    /// The last interval's response time percentiles (p50, p99), microseconds, when it
    /// had successful operations of this kind.
    pub last_percentiles: Option<(u64, u64)>,
}

impl OperationFigures {
    fn add_failures(&mut self, failures: &FailureCounts) {
        for (failure, n) in failures.iter() {
            let name = failure.to_string();
            match name.strip_prefix("doc:") {
                Some(word) if failure.is_document() => self.document_failures.add(word, n),
                // Rows for documents never sent count among the documents, by their name.
                _ if failure.counts_documents() => self.document_failures.add(&name, n),
                _ => self.failures.add(&name, n),
            }
        }
    }
}

/// The phase running, or the last one that ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseFigure {
    /// From 1, in the order the phases ran.
    pub number: u64,
    pub name: String,
}

/// Everything the endpoint shows of the run, as of the last closed interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub operations: PerOperation<OperationFigures>,
    /// Operations that started late by more than the threshold.
    pub late: u64,
    /// Connections opened, first ones and reconnects.
    pub opened: u64,
    pub reconnects: u64,
    pub connect: Buckets,
    pub handshake: Buckets,
    pub phase: Option<PhaseFigure>,
    /// The operations per second this node aims at in the last interval (open model).
    pub target_rate: Option<f64>,
    /// At the last interval's end.
    pub in_flight: u64,
    pub waiting_after_429: u64,
    /// The last interval was stalled: operations in flight, none answered.
    pub stalled: bool,
    /// The run's phases are over; these are its final figures.
    pub finished: bool,
}

impl Figures {
    pub fn start_phase(&mut self, name: &str) {
        let number = self.phase.as_ref().map_or(1, |p| p.number + 1);
        self.phase = Some(PhaseFigure {
            number,
            name: name.to_string(),
        });
    }

    /// Adds a closed interval: `metrics` as recorded, `row` as summed up for the report.
    pub fn add_interval(
        &mut self,
        metrics: &IntervalMetrics,
        row: &IntervalRow,
        target_rate: Option<f64>,
    ) {
        let telling = row.length >= SHORTEST_TELLING;
        for (operation, figures) in self.operations.iter_mut() {
            let interval = &metrics.operations[operation];
            figures.succeeded += interval.succeeded;
            figures.failed += interval.failed;
            figures.add_failures(&interval.failures);
            figures.documents += interval.documents;
            figures.retried_429 += interval.retried_429;
            figures.response.add(&interval.response);
            let summary = row.of(operation);
            if telling {
                figures.last_percentiles =
                    (summary.succeeded > 0).then_some((summary.p50_us, summary.p99_us));
            }
        }
        self.late += metrics.late;
        self.opened += metrics.setup.opened;
        self.reconnects += metrics.setup.reconnects;
        self.connect.add(&metrics.setup.connect);
        self.handshake.add(&metrics.setup.handshake);
        self.target_rate = target_rate;
        self.in_flight = row.in_flight;
        self.waiting_after_429 = row.waiting_after_429;
        if telling {
            self.stalled = row.stalled;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Failure;
    use crate::workload::Operation;

    fn interval() -> IntervalMetrics {
        let mut interval = IntervalMetrics::default();
        interval.succeeded(Operation::Read, 2_000_000);
        interval.failed(Operation::Read, &Failure::Status(500));
        interval.failed(Operation::Read, &Failure::Timeout);
        let mut refused = FailureCounts::default();
        refused.add(Failure::Document("conflict".to_string()), 3);
        interval.documents(Operation::BulkInsert, 997);
        interval.refused(Operation::BulkInsert, &refused);
        interval.setup.record(300_000, None, true);
        interval.late = 2;
        interval
    }

    #[test]
    fn intervals_add_up_and_the_last_one_gives_the_gauges() {
        let mut figures = Figures::default();
        figures.start_phase("crud");
        let metrics = interval();
        let mut row = metrics.row(1.0, 1.0, 0.1);
        row.in_flight = 7;
        figures.add_interval(&metrics, &row, Some(50.0));
        figures.add_interval(&metrics, &row, Some(50.0));
        let read = &figures.operations[Operation::Read];
        assert_eq!((read.succeeded, read.failed), (2, 4));
        let kinds: Vec<(&str, u64)> = read.failures.iter().collect();
        assert_eq!(kinds, [("500", 2), ("timeout", 2)]);
        assert_eq!(read.response.count(), 2);
        assert_eq!(read.last_percentiles, Some((2_000, 2_000)));
        let bulk = &figures.operations[Operation::BulkInsert];
        assert_eq!(bulk.documents, 2 * 997);
        let words: Vec<(&str, u64)> = bulk.document_failures.iter().collect();
        assert_eq!(words, [("conflict", 6)]);
        assert!(bulk.failures.iter().next().is_none());
        assert_eq!(
            (figures.late, figures.opened, figures.reconnects),
            (4, 2, 2)
        );
        assert_eq!((figures.in_flight, figures.target_rate), (7, Some(50.0)));
        // A phase's last stub says too little to replace the gauges; an interval without
        // reads leaves no read percentiles behind.
        let quiet = IntervalMetrics::default();
        let mut stub = quiet.row(2.0, 0.002, 0.0);
        stub.stalled = true;
        figures.add_interval(&quiet, &stub, None);
        assert_eq!(
            figures.operations[Operation::Read].last_percentiles,
            Some((2_000, 2_000))
        );
        assert!(!figures.stalled);
        figures.add_interval(&quiet, &quiet.row(3.0, 1.0, 0.0), None);
        assert_eq!(figures.operations[Operation::Read].last_percentiles, None);
        figures.start_phase("next");
        assert_eq!(figures.phase.as_ref().map(|p| p.number), Some(2));
    }

    #[test]
    fn a_server_that_makes_up_words_gets_a_bounded_number_of_kinds() {
        let mut kinds = Kinds::default();
        for n in 0..1_000 {
            kinds.add(&format!("word-{n}-{}", "x".repeat(200)), 1);
        }
        let all: Vec<(&str, u64)> = kinds.iter().collect();
        assert_eq!(all.len(), MOST_KINDS + 1);
        assert_eq!(all[MOST_KINDS], ("other", 1_000 - MOST_KINDS as u64));
        assert!(
            all.iter()
                .all(|(k, _)| k.chars().count() <= LONGEST_KIND + 1)
        );
        assert_eq!(all.iter().map(|(_, n)| n).sum::<u64>(), 1_000);
    }
}
