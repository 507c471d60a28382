//! The kinds of operation a run performs.

use std::fmt;

/// One kind of request against the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// `POST /db/_bulk_docs` with a batch of new documents.
    BulkInsert,
    /// `PUT /db/{id}` of a new document.
    Create,
    /// `GET /db/{id}`.
    Read,
    /// `PUT /db/{id}` with the `_rev` the connection knows.
    Update,
    /// `DELETE /db/{id}?rev=…`.
    Delete,
    /// `POST /db/_find`: a Mango query the scenario declares.
    Find,
    /// `GET /db/_design/{design}/_view/{view}`: a view query the scenario declares.
    View,
    /// `GET /db/_all_docs` (or `POST` with `keys`).
    AllDocs,
    /// `PUT /db/{id}/{name}?rev=…` of a standalone attachment, its body made as it is sent.
    AttachmentWrite,
    /// `GET /db/{id}/{name}` of an attachment written earlier, counted, not kept.
    AttachmentRead,
    /// `GET /db/_changes`: one read of the feed, its rows counted (not a consumer
    /// following it, as a phase's `changes` consumers do).
    ChangesRead,
}

impl Operation {
    /// How many kinds of operation there are.
    pub const COUNT: usize = 11;

    pub const ALL: [Operation; Operation::COUNT] = [
        Operation::BulkInsert,
        Operation::Create,
        Operation::Read,
        Operation::Update,
        Operation::Delete,
        Operation::Find,
        Operation::View,
        Operation::AllDocs,
        Operation::AttachmentWrite,
        Operation::AttachmentRead,
        Operation::ChangesRead,
    ];

    /// The operations that run a query the scenario declares.
    pub const QUERIES: [Operation; 4] = [
        Operation::Find,
        Operation::View,
        Operation::AllDocs,
        Operation::ChangesRead,
    ];

    /// The four operations of the CRUD step, in Iron Cushion's order.
    pub const CRUD: [Operation; 4] = [
        Operation::Create,
        Operation::Read,
        Operation::Update,
        Operation::Delete,
    ];

    /// Position in [`Operation::ALL`], for [`PerOperation`](super::PerOperation) only.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in reports and files.
    pub fn name(self) -> &'static str {
        match self {
            Operation::BulkInsert => "bulk_insert",
            Operation::Create => "create",
            Operation::Read => "read",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::Find => "find",
            Operation::View => "view",
            Operation::AllDocs => "all_docs",
            Operation::AttachmentWrite => "attachment_write",
            Operation::AttachmentRead => "attachment_read",
            Operation::ChangesRead => "changes_read",
        }
    }

    /// The operation a report or file names `name`.
    pub fn named(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }

    /// True for operations that need a document the connection knows: its `_rev`, or
    /// (queries) its values, from which a query's parameters are drawn.
    pub fn needs_document(self) -> bool {
        matches!(
            self,
            Operation::Read
                | Operation::Update
                | Operation::Delete
                | Operation::Find
                | Operation::View
                | Operation::AllDocs
                | Operation::ChangesRead
                | Operation::AttachmentWrite
                | Operation::AttachmentRead
        )
    }

    /// True for the operations that run a declared query.
    pub fn is_query(self) -> bool {
        Operation::QUERIES.contains(&self)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
