//! The figures of an operation in a phase that `compare` and the spread of repetitions
//! show: its rates and latency percentiles, each with its label and its better direction.

use super::primary_latency;
use crate::report::numbers::grouped_decimal;
use crate::results::{OperationResult, PhaseResult, per_second};
use crate::workload::Operation;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    DocsPerSec,
    Throughput,
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl Measure {
    pub const ALL: [Measure; 7] = [
        Measure::DocsPerSec,
        Measure::Throughput,
        Measure::P50,
        Measure::P90,
        Measure::P99,
        Measure::P999,
        Measure::Max,
    ];

    /// The figures whose change `compare` tests against the noise of repetitions, and
    /// whose spread a run with repetitions prints. Fewer tests mean fewer changes marked
    /// by chance; the tail beyond p99 and the maximum are too noisy to test usefully.
    pub const TESTED: [Measure; 4] = [
        Measure::DocsPerSec,
        Measure::Throughput,
        Measure::P50,
        Measure::P99,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Measure::DocsPerSec => "docs/s",
            Measure::Throughput => "throughput/s",
            Measure::P50 => "p50 ms",
            Measure::P90 => "p90 ms",
            Measure::P99 => "p99 ms",
            Measure::P999 => "p99.9 ms",
            Measure::Max => "max ms",
        }
    }

    /// Its name in a row's name (`crud.read.p99`), as `compare --judge` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::DocsPerSec => "docs",
            Measure::Throughput => "throughput",
            Measure::P50 => "p50",
            Measure::P90 => "p90",
            Measure::P99 => "p99",
            Measure::P999 => "p99.9",
            Measure::Max => "max",
        }
    }

    /// The rate an operation is compared by: documents per second for a bulk insert
    /// (whose throughput counts requests), the throughput otherwise.
    pub fn rate_of(operation: &str) -> Measure {
        if Measure::DocsPerSec.applies_to(operation) {
            Measure::DocsPerSec
        } else {
            Measure::Throughput
        }
    }

    /// Whether `compare` judges the measure of `operation` unless told which rows to
    /// judge: its rate, p50 and p99.
    pub fn judged_by_default(self, operation: &str) -> bool {
        self == Measure::rate_of(operation) || matches!(self, Measure::P50 | Measure::P99)
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Measure::Throughput | Measure::DocsPerSec)
    }

    pub fn is_tested(self) -> bool {
        Measure::TESTED.contains(&self)
    }

    /// Whether the measure is shown for `operation`: documents per second only where an
    /// operation carries many documents.
    pub fn applies_to(self, operation: &str) -> bool {
        self != Measure::DocsPerSec || operation == Operation::BulkInsert.name()
    }

    /// The value in one phase, if there is one (no latency without successes).
    pub fn of(self, phase: &PhaseResult, op: &OperationResult) -> Option<f64> {
        match self {
            Measure::Throughput => return Some(op.throughput),
            // From the counts, so that results written before `documents_per_sec` compare.
            Measure::DocsPerSec => return Some(per_second(op.documents, phase.wall_seconds)),
            _ => {}
        }
        let l = primary_latency(phase, op);
        if l.count == 0 {
            return None;
        }
        Some(match self {
            Measure::P50 => l.p50_ms,
            Measure::P90 => l.p90_ms,
            Measure::P99 => l.p99_ms,
            Measure::P999 => l.p999_ms,
            _ => l.max_ms,
        })
    }

    /// The values of the measure over phases (a phase's repetitions), for `operation`:
    /// one per phase that has a value.
    pub fn values(self, phases: &[&PhaseResult], operation: &str) -> Vec<f64> {
        phases
            .iter()
            .filter_map(|p| {
                p.operations
                    .iter()
                    .find(|o| o.operation == operation)
                    .and_then(|o| self.of(p, o))
            })
            .collect()
    }

    pub fn show(self, value: f64) -> String {
        let decimals = if self.higher_is_better() { 1 } else { 3 };
        grouped_decimal(value, decimals)
    }
}

/// The operations of some phases, in the order they first appear.
pub fn operations<'p>(phases: impl IntoIterator<Item = &'p PhaseResult>) -> Vec<&'p str> {
    let mut operations: Vec<&str> = Vec::new();
    for phase in phases {
        for op in &phase.operations {
            if !operations.contains(&op.operation.as_str()) {
                operations.push(&op.operation);
            }
        }
    }
    operations
}
