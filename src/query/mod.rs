//! Queries a scenario declares: Mango `_find`, view and `_all_docs` queries whose
//! parameters are drawn from the documents a connection knows, and the indexes and
//! design documents they need.
//!
//! * [`declare`] reads the declarations of a scenario file.
//! * [`request`] writes one query's request from a document's values.
//! * [`field`] finds a top-level value in a generated document.
//! * [`builds`] plans which indexes are built around which phase.
//! * [`setup`] creates the indexes and design documents and times their builds.

pub mod builds;
pub mod declare;
pub mod expected;
pub mod field;
pub mod request;
pub mod setup;

use std::sync::Arc;

use crate::workload::Operation;

/// One declared query.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub name: String,
    pub kind: QueryKind,
    /// Sent to the drawn document's partition (`/db/_partition/P/…`), in a partitioned
    /// database.
    pub partition: bool,
}

/// What a query asks, by its operation.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryKind {
    Find(Find),
    View(View),
    AllDocs(AllDocs),
    ChangesRead(ChangesRead),
}

impl Query {
    /// The operation of a phase's mix that runs this query.
    pub fn operation(&self) -> Operation {
        match self.kind {
            QueryKind::Find(_) => Operation::Find,
            QueryKind::View(_) => Operation::View,
            QueryKind::AllDocs(_) => Operation::AllDocs,
            QueryKind::ChangesRead(_) => Operation::ChangesRead,
        }
    }
}

/// Which value a query matches, drawn from a document the connection knows.
#[derive(Clone, Debug, PartialEq)]
pub struct Draw {
    /// The top-level field, as JSON writes its key (`"Age"`, quotes included).
    pub quoted_field: String,
    /// `None`: the document's value exactly. `Some(w)`: from the value to the value
    /// plus `w` (numbers), or from the value on (strings, e.g. timestamps).
    pub range: Option<serde_json::Number>,
}

/// `POST /db/_find`.
#[derive(Clone, Debug, PartialEq)]
pub struct Find {
    pub draw: Draw,
    pub limit: Option<u64>,
    /// Sort by the drawn field, ascending.
    pub sort: bool,
    /// Fields the answer keeps (all when empty).
    pub fields: Vec<String>,
    /// The Mango index definition (`{"fields": [...]}`) created before the phases.
    pub index: Option<serde_json::Value>,
}

/// `GET /db/_design/{design}/_view/{view}`.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub draw: Draw,
    pub design: String,
    pub view: String,
    /// The map function and the reduce function, if any, put in the design document.
    pub map: String,
    pub reduce_function: Option<String>,
    /// `reduce=` (only with a reduce function; CouchDB reduces by default).
    pub reduce: Option<bool>,
    pub group: bool,
    /// `update=true|false|lazy`.
    pub update: Option<Update>,
    pub stable: bool,
    pub limit: Option<u64>,
}

/// When a view query lets the index be updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    True,
    False,
    Lazy,
}

impl Update {
    pub fn name(self) -> &'static str {
        match self {
            Update::True => "true",
            Update::False => "false",
            Update::Lazy => "lazy",
        }
    }
}

/// `GET /db/_all_docs` over a range of ids from a known document's, or `POST` with the
/// ids of `keys` known documents, or every document (`whole`).
#[derive(Clone, Debug, PartialEq)]
pub struct AllDocs {
    /// Ids of this many known documents (`keys`); 0 for a range from one document's id.
    pub keys: u64,
    pub include_docs: bool,
    pub limit: Option<u64>,
    /// From the first document on (no `startkey`, no document drawn): with no limit, a
    /// read of the whole database, as CouchDB's `fabric_bench` times it.
    pub whole: bool,
}

/// `GET /db/_changes` once (the normal feed, from the start), as `fabric_bench` times it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangesRead {
    pub include_docs: bool,
    pub limit: Option<u64>,
}

/// The most bytes a read of the whole database (`_all_docs` or `_changes` without a
/// limit) is counted up to: its answer is counted as it comes, never held, so it may pass
/// `--max-response-size`; 100,000 documents of 146 KB with `include_docs` make 15 GB.
pub const WHOLE_READ_MOST: u64 = 64 << 30;

impl Query {
    /// True for a query that reads from the first row on without drawing a document.
    pub fn is_whole(&self) -> bool {
        match &self.kind {
            QueryKind::AllDocs(all) => all.whole,
            QueryKind::ChangesRead(_) => true,
            _ => false,
        }
    }
}

/// The query each query operation of a phase runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseQueries {
    pub find: Option<Arc<Query>>,
    pub view: Option<Arc<Query>>,
    pub all_docs: Option<Arc<Query>>,
    pub changes_read: Option<Arc<Query>>,
    /// The rows each `find` answer should hold, when the phase writes nothing and the
    /// query can be checked (set by the engine as the phase starts).
    pub find_rows: Option<Arc<expected::Expected>>,
}

impl PhaseQueries {
    /// The query `operation` runs in the phase, if it is a query operation given one.
    pub fn of(&self, operation: Operation) -> Option<&Arc<Query>> {
        match operation {
            Operation::Find => self.find.as_ref(),
            Operation::View => self.view.as_ref(),
            Operation::AllDocs => self.all_docs.as_ref(),
            Operation::ChangesRead => self.changes_read.as_ref(),
            _ => None,
        }
    }

    /// True when the phase declares no query.
    pub fn is_empty(&self) -> bool {
        self.find.is_none()
            && self.view.is_none()
            && self.all_docs.is_none()
            && self.changes_read.is_none()
    }

    pub fn set(&mut self, query: Arc<Query>) {
        match query.operation() {
            Operation::Find => self.find = Some(query),
            Operation::View => self.view = Some(query),
            Operation::ChangesRead => self.changes_read = Some(query),
            _ => self.all_docs = Some(query),
        }
    }
}
