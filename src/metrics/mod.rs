//! Measurements: per-connection recorders that the report merges.

pub mod connection;
pub mod errors;
pub mod interval;
pub mod spread;

pub use connection::{ConnectionMetrics, OperationMetrics, StatusCounts};
pub use errors::{Failure, FailureCounts};
pub use interval::{IntervalMetrics, IntervalRow, SharedInterval};
pub use spread::Spread;
