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
    /// `PUT /db/{id}/{name}?rev=…` of a standalone attachment, its body made as it is sent.
    AttachmentWrite,
    /// `GET /db/{id}/{name}` of an attachment written earlier, counted, not kept.
    AttachmentRead,
}

impl Operation {
    /// How many kinds of operation there are.
    pub const COUNT: usize = 7;

    pub const ALL: [Operation; Operation::COUNT] = [
        Operation::BulkInsert,
        Operation::Create,
        Operation::Read,
        Operation::Update,
        Operation::Delete,
        Operation::AttachmentWrite,
        Operation::AttachmentRead,
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
            Operation::AttachmentWrite => "attachment_write",
            Operation::AttachmentRead => "attachment_read",
        }
    }

    /// The operation a report or file names `name`.
    pub fn named(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }

    /// True for operations that need a document (and its `_rev`) the connection knows.
    pub fn needs_document(self) -> bool {
        matches!(
            self,
            Operation::Read
                | Operation::Update
                | Operation::Delete
                | Operation::AttachmentWrite
                | Operation::AttachmentRead
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
