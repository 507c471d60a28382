//! What operations on existing data (`--key-range`, `--key-sample`) met: targets that
//! were not there, writes that met a revision they did not carry, and the revisions
//! fetched before writing. None of them is a failure.

use serde::{Deserialize, Serialize};

/// Counts of one operation kind on existing data, of one connection or added up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExistingCounts {
    /// Targets that were missing (404 `missing` or `deleted`); for a blind update, a
    /// write that found no document and so created it.
    pub misses: u64,
    /// Writes the server refused with 409 because the document had another revision.
    pub conflicts: u64,
    /// `GET`s for a document's current revision before writing over it.
    pub fetches: u64,
}

impl ExistingCounts {
    pub fn is_empty(&self) -> bool {
        *self == ExistingCounts::default()
    }

    /// Of `succeeded` operations, those that found their document as it was meant:
    /// neither missing nor refused with 409.
    pub fn found(&self, succeeded: u64) -> u64 {
        succeeded
            .saturating_sub(self.misses)
            .saturating_sub(self.conflicts)
    }

    pub fn merge(&mut self, other: &ExistingCounts) {
        self.misses = self.misses.saturating_add(other.misses);
        self.conflicts = self.conflicts.saturating_add(other.conflicts);
        self.fetches = self.fetches.saturating_add(other.fetches);
    }
}
