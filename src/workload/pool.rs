//! The documents a connection knows: their numbers and latest revisions.
//!
//! Each connection only touches documents it inserted or created itself, so no two
//! connections ever race for one document, and the revision it holds is always current.

use rand::RngExt;

use crate::driver::Rev;
use crate::seed::Rng;

/// A document the connection has stored and not deleted.
#[derive(Clone, Debug)]
pub struct LiveDocument {
    /// The document's number, from which its id and content derive.
    pub number: u64,
    pub rev: Rev,
}

/// A connection's live documents, with picks in constant time.
#[derive(Default)]
pub struct DocumentPool {
    documents: Vec<LiveDocument>,
}

impl DocumentPool {
    pub fn with_capacity(capacity: usize) -> DocumentPool {
        DocumentPool {
            documents: Vec::with_capacity(capacity),
        }
    }

    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    pub fn add(&mut self, number: u64, rev: Rev) {
        self.documents.push(LiveDocument { number, rev });
    }

    /// A uniformly chosen live document's position, or `None` when there is none.
    pub fn pick(&self, rng: &mut Rng) -> Option<usize> {
        (!self.documents.is_empty()).then(|| rng.random_range(0..self.documents.len()))
    }

    pub fn get(&self, slot: usize) -> &LiveDocument {
        &self.documents[slot]
    }

    pub fn set_rev(&mut self, slot: usize, rev: Rev) {
        self.documents[slot].rev = rev;
    }

    /// Forgets a deleted document (the last one takes its place).
    pub fn remove(&mut self, slot: usize) {
        self.documents.swap_remove(slot);
    }

    pub fn iter(&self) -> impl Iterator<Item = &LiveDocument> {
        self.documents.iter()
    }
}
