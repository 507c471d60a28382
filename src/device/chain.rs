//! The revisions a device makes. Each is derived from the device, the document, the
//! chain of local edits it belongs to and its generation, so that a chain of thousands
//! of unpushed edits is kept as a few numbers and rebuilt when it is pushed.
//!
//! SHA-256 (the crate's hash; CouchDB's own revision hash is MD5 of the body, which a
//! replication client never has to reproduce: with `new_edits: false` the server keeps
//! the revisions it is given).

use sha2::{Digest, Sha256};

use crate::workload::Rev;

/// Makes a device's revisions.
#[derive(Clone)]
pub struct RevMaker {
    /// The hash state after the device's seed and name, cloned for every revision.
    prefix: Sha256,
}

impl RevMaker {
    pub fn new(seed: u64, device: &str) -> RevMaker {
        let mut prefix = Sha256::new();
        prefix.update(b"sofabench-device-rev\0");
        prefix.update(seed.to_le_bytes());
        prefix.update((device.len() as u64).to_le_bytes());
        prefix.update(device.as_bytes());
        RevMaker { prefix }
    }

    /// The revision of generation `generation` in chain `chain` of document `id`.
    pub fn rev(&self, id: &str, chain: u64, generation: u32) -> Rev {
        let mut hash = self.prefix.clone();
        hash.update((id.len() as u64).to_le_bytes());
        hash.update(id.as_bytes());
        hash.update(chain.to_le_bytes());
        hash.update(generation.to_le_bytes());
        let full = hash.finalize();
        let mut digest = [0u8; 16];
        digest.copy_from_slice(&full[..16]);
        Rev::Hex { generation, digest }
    }
}

/// A document's local edits not yet pushed: generations `base_generation + 1` to
/// `base_generation + length`, all of chain `number`, growing from `base` (a revision the
/// server has, or none for a document the device created).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub base: Option<Rev>,
    pub number: u64,
    pub length: u32,
}

impl Chain {
    pub fn base_generation(&self) -> u32 {
        self.base.as_ref().map_or(0, Rev::generation)
    }

    pub fn tip_generation(&self) -> u32 {
        self.base_generation().saturating_add(self.length)
    }

    /// The chain's revisions, newest first, then the base: the ids of `_revisions`,
    /// reaching back to a revision the server has.
    pub fn history(&self, maker: &RevMaker, id: &str) -> Vec<Rev> {
        let base = self.base_generation();
        let mut revs: Vec<Rev> = (1..=self.length)
            .rev()
            .map(|step| maker.rev(id, self.number, base.saturating_add(step)))
            .collect();
        revs.extend(self.base.clone());
        revs
    }

    /// Whether `rev` is one of the chain's own revisions.
    pub fn holds(&self, maker: &RevMaker, id: &str, rev: &Rev) -> bool {
        let generation = rev.generation();
        generation > self.base_generation()
            && generation <= self.tip_generation()
            && maker.rev(id, self.number, generation) == *rev
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_differ_by_device_document_chain_and_generation() {
        let maker = RevMaker::new(7, "dev-a");
        let one = maker.rev("doc", 1, 1);
        assert_eq!(one, maker.rev("doc", 1, 1));
        assert!(matches!(one, Rev::Hex { generation: 1, .. }));
        for other in [
            RevMaker::new(7, "dev-b").rev("doc", 1, 1),
            RevMaker::new(8, "dev-a").rev("doc", 1, 1),
            maker.rev("doc2", 1, 1),
            maker.rev("doc", 2, 1),
        ] {
            assert_ne!(one, other);
        }
    }

    #[test]
    fn a_long_chain_is_rebuilt_newest_first_down_to_its_base() {
        let maker = RevMaker::new(1, "d");
        let base = Rev::parse("3-917fa2381192822767f010b95b45325b");
        let chain = Chain {
            base: base.clone(),
            number: 9,
            length: 2000,
        };
        let history = chain.history(&maker, "x");
        assert_eq!(history.len(), 2001);
        assert_eq!(history[0], maker.rev("x", 9, 2003));
        assert_eq!(history[1999], maker.rev("x", 9, 4));
        assert_eq!(history.last(), base.as_ref());
        let generations: Vec<u32> = history.iter().map(Rev::generation).collect();
        assert!(generations.windows(2).all(|w| w[0] == w[1] + 1));
        assert!(chain.holds(&maker, "x", &history[5]));
        assert!(!chain.holds(&maker, "x", history.last().unwrap()));
        assert!(!chain.holds(&maker, "y", &history[5]));
    }
}
