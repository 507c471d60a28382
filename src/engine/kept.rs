//! The longest value the run keeps from a server's answer for a document
//! (`--max-kept-value`): a revision, an id the server gave, an id sampled from the
//! database. What the run keeps per document is then bounded by what the user chose, not
//! by what the server sends; a longer value fails its operation as `value_too_long` and is
//! not kept. A bound on length only, never on format: any server's revisions pass.

use crate::metrics::Failure;
use crate::workload::Rev;

/// The most bytes of one kept value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MostKept(pub usize);

impl MostKept {
    /// CouchDB's revisions are 34 bytes and its generated ids 32: 512 leaves room for
    /// any server's, and for ids people choose.
    pub const DEFAULT: MostKept = MostKept(512);

    /// Whether a value of `length` bytes may be kept.
    pub fn allows(self, length: usize) -> bool {
        length <= self.0
    }

    /// `rev`, or `value_too_long` when it is longer than may be kept.
    pub fn rev(self, rev: Rev) -> Result<Rev, Failure> {
        if self.allows(rev.text_len()) {
            Ok(rev)
        } else {
            Err(Failure::ValueTooLong)
        }
    }

    /// `value_too_long` when `id` is longer than may be kept.
    pub fn id(self, id: &str) -> Result<(), Failure> {
        if self.allows(id.len()) {
            Ok(())
        } else {
            Err(Failure::ValueTooLong)
        }
    }
}

impl Default for MostKept {
    fn default() -> MostKept {
        MostKept::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_shape_passes_below_the_bound_and_nothing_above() {
        let most = MostKept(40);
        let couch = Rev::parse("3-917fa2381192822767f010b95b45325b").unwrap();
        assert_eq!(most.rev(couch.clone()), Ok(couch));
        let other = Rev::parse("12-Zm9vYmFy").unwrap();
        assert_eq!(most.rev(other.clone()), Ok(other));
        let long = Rev::parse(&format!("1-{}", "a".repeat(39))).unwrap();
        assert_eq!(most.rev(long), Err(Failure::ValueTooLong));
        assert_eq!(most.id(&"x".repeat(40)), Ok(()));
        assert_eq!(most.id(&"x".repeat(41)), Err(Failure::ValueTooLong));
    }
}
