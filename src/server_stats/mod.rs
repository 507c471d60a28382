//! What the server says about itself while a run goes on: CouchDB's own counters and
//! request times (`_node/_local/_stats`), its Erlang VM (`_node/_local/_system`), and its
//! background work (`_active_tasks`). Each answer is read into plain figures here; the
//! figures of two looks make an interval's deltas (`delta`).
//!
//! Every answer is the server's and untrusted: a missing or oddly typed field is a figure
//! not known (`None`), never a zero and never a panic. PouchDB Server answers none of the
//! `_node` endpoints (404), which the caller says once.

pub mod delta;
mod figure;
pub mod join;
pub mod node_stats;
pub mod system;
pub mod tasks;

pub use delta::{ServerInterval, between};
pub use join::{NodeInterval, NodeLooks, beside_intervals};
pub use node_stats::{NodeStats, RequestTime};
pub use system::SystemFigures;
pub use tasks::TaskCounts;

/// One look at one node: what each endpoint gave, when it answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerLook {
    pub stats: Option<NodeStats>,
    pub system: Option<SystemFigures>,
    pub tasks: Option<TaskCounts>,
}

/// A name from the server as sofabench writes it: plain characters, at most 48; a
/// server's odd name is cut, never copied whole into a result.
fn plain_name(name: &str) -> String {
    let plain = |c: &char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@');
    name.chars().filter(plain).take(48).collect()
}

/// A recorded answer of Apache CouchDB 3.5 (tests/fixtures/couchdb/).
#[cfg(test)]
fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/couchdb/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}
