//! A phase: a stretch of work with one operation mix and one stop condition. Iron
//! Cushion's two steps are two phases; scenario files list as many as they like.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ids::IdScheme;
use super::operation::Operation;
use super::plan::{Counts, CrudBound, Weights};
use super::rate::Rate;
use super::size::DocSize;
use crate::query::PhaseQueries;
use crate::words::counted;

/// How reads, updates and deletes choose among the documents a connection knows, as
/// YCSB defines the distributions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyChoice {
    /// Every document equally likely.
    Uniform,
    /// Popular documents much more likely: rank `r` with probability ∝ 1/r^constant
    /// (YCSB's default constant is 0.99); the earliest documents are the most popular.
    Zipfian(f64),
    /// The newest documents most likely (zipfian over recency, constant 0.99).
    Latest,
}

/// The shape of the documents a phase stores: their size and how their ids are made.
/// Unset parts follow `--doc-size` and `--id-scheme`, else the template's own size and
/// sequential ids.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shape {
    pub doc_size: Option<DocSize>,
    pub ids: Option<IdScheme>,
}

impl Shape {
    /// This shape, with what it leaves unset taken from `under`.
    pub fn or(self, under: Shape) -> Shape {
        Shape {
            doc_size: self.doc_size.or(under.doc_size),
            ids: self.ids.or(under.ids),
        }
    }
}

/// Something a phase starts on the server while its operations run.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `POST /db/_compact`, `at` after the phase starts.
    Compact { at: Duration },
    /// `POST /_replicate` from the database to `target`, and back when `two_way`, `at`
    /// after the phase starts. `target` is a URL, or a database name on the run's own
    /// server (under `--replication-address`), which the run creates if it is missing.
    Replicate {
        at: Duration,
        target: String,
        two_way: bool,
    },
}

/// One phase of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    /// Relative weights of the five operations.
    pub mix: Weights,
    pub bound: CrudBound,
    pub connections: u64,
    /// Documents per bulk insert.
    pub batch_size: u64,
    /// Operations per second of all connections together (open model), constant or
    /// ramping over the phase's duration.
    pub rate: Option<Rate>,
    pub keys: KeyChoice,
    pub action: Option<Action>,
    /// Where the phase sits in a sweep, when it is one of a sweep's phases.
    pub sweep: Option<SweepPoint>,
    pub shape: Shape,
    /// `_changes` consumers following the database while the phase's operations run.
    pub changes: Option<super::changes::ChangesFeed>,
    /// Continuous replications running while the phase's operations run.
    pub replication: Option<super::replication::ContinuousReplication>,
    /// Devices replicating with the database while the phase runs.
    pub fleet: Option<super::fleet::Fleet>,
    /// The declared query each query operation of the mix runs.
    pub queries: PhaseQueries,
    /// The indexes of its queries that no earlier phase built are built while its
    /// operations run, not before it starts (`indexes = "during"`).
    pub indexes_during: bool,
    /// Before its operations start, the run waits (bounded) until the server shows no
    /// compaction of the database and no internal replication backlog, where it shows
    /// them (`fabric-bench`'s care for stable figures).
    pub settle: bool,
}

/// The setting a sweep varies from phase to phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweptSetting {
    /// The share of reads in the mix, in percent (the rest are creates).
    ReadRatio,
    Connections,
    /// Documents per bulk insert.
    BatchSize,
    /// Operations of all connections together.
    Total,
    /// The documents' target size in bytes (`--doc-size`).
    DocSize,
    /// The id scheme: 0 sequential, 1 uuid, 2 server (`--id-scheme`).
    IdScheme,
}

/// One phase of a sweep: the phases that share `series` differ only in `setting`, which
/// is `value` in this one. Reports draw a sweep's phases against the setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// What the swept phases share: a scenario file's phase name (its phases are named
    /// `<series>_<value>`), or a built-in scenario's series (`RR`, `write`, `read`, `bulk`).
    pub series: String,
    pub setting: SweptSetting,
    pub value: u64,
}

impl Phase {
    /// The operations the mix includes, in [`Operation::ALL`] order.
    pub fn operations(&self) -> Vec<Operation> {
        Operation::ALL
            .into_iter()
            .filter(|&op| self.mix[op] > 0)
            .collect()
    }

    /// Operations of connection `c`, or `None` when only time bounds the phase.
    pub fn operations_of(&self, connection: u64) -> Option<u64> {
        let share = self.bound.total.map(|total| {
            let n = self.connections.max(1);
            total / n + u64::from(connection < total % n)
        });
        match (self.bound.per_connection, share) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// All connections' operations, when counted.
    pub fn total_operations(&self) -> Option<u64> {
        (0..self.connections).map(|c| self.operations_of(c)).sum()
    }

    /// Connection `c`'s operations by kind, when counted.
    pub fn counts_of(&self, connection: u64) -> Option<Counts> {
        self.operations_of(connection).map(|n| self.mix.split(n))
    }

    /// True unless a bound of 0 operations makes the phase empty. A phase with a fleet
    /// of devices and a duration has work even without connections: its devices'.
    pub fn has_work(&self) -> bool {
        let b = self.bound;
        let devices = self.fleet.as_ref().is_some_and(|f| f.devices > 0);
        if devices && b.duration.is_some_and(|d| !d.is_zero()) {
            return true;
        }
        self.connections > 0
            && b.per_connection != Some(0)
            && b.total != Some(0)
            && (b.per_connection.is_some() || b.total.is_some() || b.duration.is_some())
    }

    /// How many new document numbers the phase may use per connection at most, when
    /// counted (a bulk insert uses `batch_size`).
    pub fn new_documents_of(&self, connection: u64) -> Option<u64> {
        self.counts_of(connection)
            .map(|c| c[Operation::Create] + c[Operation::BulkInsert] * self.batch_size)
    }

    /// A sentence saying what the phase does, for the run's header.
    pub fn describe(&self) -> String {
        let mut bounds = Vec::new();
        if let Some(n) = self.bound.per_connection {
            bounds.push(format!("{} per connection", counted(n, "operation")));
        }
        if let Some(n) = self.bound.total {
            bounds.push(format!("{} in total", counted(n, "operation")));
        }
        if let Some(d) = self.bound.duration {
            bounds.push(format!("{d:?}"));
        }
        let mix: Vec<String> = self
            .operations()
            .iter()
            .map(|op| format!("{op} {}", self.mix[*op]))
            .collect();
        let rate = match self.rate {
            None => String::new(),
            Some(r) if r.is_ramp() => format!(" ramping from {} to {} ops/s", r.from, r.to),
            Some(r) => format!(" at {r} ops/s"),
        };
        let keys = match self.keys {
            KeyChoice::Uniform => String::new(),
            KeyChoice::Zipfian(c) => format!(", zipfian keys ({c})"),
            KeyChoice::Latest => ", latest keys".to_string(),
        };
        let mut shape = String::new();
        if let Some(size) = self.shape.doc_size {
            shape.push_str(&format!(", documents of {size}"));
        }
        if let Some(ids) = self.shape.ids.filter(|&s| s != IdScheme::Sequential) {
            shape.push_str(&format!(", {} ids", ids.name()));
        }
        format!(
            "{}: {}, {} ({}){rate}{keys}{shape}",
            self.name,
            crate::words::counted(self.connections, "connection"),
            bounds.join(" or "),
            mix.join(", ")
        )
    }
}

#[cfg(test)]
impl Phase {
    /// A small counted phase for tests: 2 connections of 10 operations each.
    pub fn sample(name: &str, mix: Weights) -> Phase {
        Phase {
            name: name.to_string(),
            mix,
            bound: CrudBound {
                per_connection: Some(10),
                total: None,
                duration: None,
            },
            connections: 2,
            batch_size: 10,
            rate: None,
            keys: KeyChoice::Uniform,
            action: None,
            sweep: None,
            shape: Shape::default(),
            changes: None,
            replication: None,
            fleet: None,
            queries: Default::default(),
            indexes_during: false,
            settle: false,
        }
    }
}
