//! What a run does: the operations, how many of each every connection performs, in what
//! order, and on which documents.

pub mod attachment;
pub mod changes;
pub mod databases;
pub mod existing;
pub mod fleet;
pub mod fleet_input;
pub mod hot;
pub mod ids;
pub mod limits;
pub mod nodes;
pub mod operation;
pub mod order;
pub mod per_operation;
pub mod phase;
pub mod plan;
pub mod pool;
pub mod rate;
pub mod replication;
pub mod rev;
pub mod size;

pub use attachment::AttachmentSizes;
pub use databases::Databases;
pub use existing::{Existing, ExistingKeys, ExistingSource, ExistingWrites};
pub use hot::HotDocuments;
pub use ids::{DocumentIds, IdScheme, Partitions};
pub use operation::Operation;
pub use order::{OperationOrder, Targets};
pub use per_operation::PerOperation;
pub use phase::{Action, KeyChoice, Phase, Shape, SweepPoint, SweptSetting};
pub use plan::{Counts, CrudBound, Plan, Weights};
pub use pool::DocumentPool;
pub use rate::{Rate, Schedule};
pub use rev::Rev;
pub use size::DocSize;
