//! The tallies: what connections count (per connection, without locks) and time (into
//! the shared recorder's per-thread shards), added up into one [`PhaseTally`] per phase.

pub mod changes;
pub mod coarse;
pub mod connection;
pub mod devices;
pub mod errors;
pub mod existing;
pub mod histogram;
pub mod hot;
pub mod interval;
pub mod late;
pub mod logins;
pub mod outcome;
pub mod process;
pub mod recorder;
pub mod replication;
pub mod setup;
pub mod spread;
pub mod tally;

pub use connection::{ConnectionMetrics, ConnectionTimes, OperationCounts, StatusCounts};
pub use errors::{Failure, FailureCounts, FailureSamples};
pub use existing::ExistingCounts;
pub use hot::HotCounts;
pub use interval::{IntervalMetrics, IntervalRow, IntervalSummary};
pub use logins::LoginTally;
pub use outcome::{ActionReport, PhaseOutcome};
pub use recorder::{NodeLatencies, OperationLatencies, Recorder, StepLatencies};
pub use spread::Spread;
pub use tally::{OperationTally, PhaseTally};
