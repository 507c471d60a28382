//! Measurements: per-connection recorders that the report merges.

pub mod connection;
pub mod errors;
pub mod spread;

pub use connection::{ConnectionMetrics, OperationMetrics};
pub use errors::{Failure, FailureCounts};
pub use spread::Spread;
