//! Measurements: per-connection counts and shared latency recorders, which the report
//! merges.

pub mod connection;
pub mod errors;
pub mod interval;
pub mod recorder;
pub mod spread;

pub use connection::{ConnectionMetrics, OperationMetrics, StatusCounts};
pub use errors::{Failure, FailureCounts, FailureSamples};
pub use interval::{IntervalMetrics, IntervalRow, IntervalSummary};
pub use recorder::{NodeLatencies, OperationLatencies, Recorder, StepLatencies};
pub use spread::Spread;
