//! The run layer, between the command line and the engine: one checked [`Setup`] made
//! from the flags once, and the [`runner`] that carries it out (the database before and
//! after, the phases, Ctrl-C, the result, its files, the thresholds and the verdict).
//!
//! Nothing here knows about flags: the command line turns them into a `Setup`, so that
//! everything below sees typed, validated values only.

mod config;
mod databases;
mod device_users;
mod existing;
mod header;
mod hot;
mod indexes;
mod length;
pub mod output;
mod record;
pub mod repeat;
pub mod runner;
mod search;
mod settle;
mod setup;
pub mod thresholds;
pub mod verdict;

pub use config::{ConfigRecord, TlsRecord};
pub use setup::{DatabasePolicy, Setup};
