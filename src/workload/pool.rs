//! The documents a connection knows: their numbers and latest revisions.
//!
//! Each connection only touches documents it inserted or created itself, so no two
//! connections ever race for one document, and the revision it holds is always current.

use rand::RngExt;
use rand_distr::{Distribution, Zipf};

use super::phase::KeyChoice;

use super::rev::Rev;
use crate::seed::Rng;

/// A document the connection has stored and not deleted.
#[derive(Clone, Debug)]
pub struct LiveDocument {
    /// The document's number, from which its id and content derive.
    pub number: u64,
    pub rev: Rev,
    /// The length of the attachment the connection wrote on it, 0 for none (at most
    /// [`super::attachment::MAX_ATTACHMENT`]: four bytes, so that the document's
    /// database fits beside it in the 56 bytes a document took before).
    pub attachment: u32,
    /// The id the server gave the document (`--id-scheme server`); `None` when its id is
    /// the one its number makes.
    pub server_id: Option<Box<str>>,
    /// Which of the run's databases holds it (`--databases`; 0 when there is one).
    pub database: u32,
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

    /// A document stored in the run's first (or only) database under its own id.
    pub fn add(&mut self, number: u64, rev: Rev) {
        self.add_stored(number, rev, None, 0);
    }

    /// A document stored in `database`, under the id the server gave it if it gave one.
    pub fn add_stored(
        &mut self,
        number: u64,
        rev: Rev,
        server_id: Option<Box<str>>,
        database: u32,
    ) {
        self.documents.push(LiveDocument {
            number,
            rev,
            attachment: 0,
            server_id,
            database,
        });
    }

    /// A live document's position chosen by `keys`, or `None` when there is none. The
    /// pool keeps documents roughly in the order they were stored (a delete moves the last
    /// one into the gap), which is the order zipfian ranks and "latest" refer to.
    pub fn pick_by(&self, rng: &mut Rng, keys: KeyChoice) -> Option<usize> {
        let n = self.documents.len();
        (n > 0).then(|| position_by(n, rng, keys))
    }

    /// The documents, for dealing them out to other connections.
    pub fn into_documents(self) -> Vec<LiveDocument> {
        self.documents
    }

    pub fn get(&self, slot: usize) -> &LiveDocument {
        &self.documents[slot]
    }

    pub fn set_rev(&mut self, slot: usize, rev: Rev) {
        self.documents[slot].rev = rev;
    }

    /// Notes the attachment of `length` bytes now on the document (0: none any more).
    pub fn set_attachment(&mut self, slot: usize, length: u64) {
        self.documents[slot].attachment = u32::try_from(length).unwrap_or(u32::MAX);
    }

    /// A document with an attachment, the first from a position `rng` draws on, or `None`
    /// when none has one.
    pub fn pick_attached(&self, rng: &mut Rng) -> Option<usize> {
        let n = self.documents.len();
        let from = rng.random_range(0..n.max(1));
        (from..n)
            .chain(0..from)
            .find(|&slot| self.documents[slot].attachment > 0)
    }

    /// Forgets a deleted document (the last one takes its place).
    pub fn remove(&mut self, slot: usize) {
        self.documents.swap_remove(slot);
    }

    pub fn iter(&self) -> impl Iterator<Item = &LiveDocument> {
        self.documents.iter()
    }
}

/// A position below `n` (at least 1) chosen by `keys`: uniform, zipfian with the earliest
/// positions the most popular, or zipfian over recency with the last the most popular.
pub fn position_by(n: usize, rng: &mut Rng, keys: KeyChoice) -> usize {
    let rank = |constant: f64, rng: &mut Rng| -> usize {
        // rand_distr's Zipf samples 1..=n by rejection-inversion in constant time.
        match Zipf::new(n as f64, constant) {
            Ok(zipf) => (zipf.sample(rng) as usize).clamp(1, n) - 1,
            Err(_) => rng.random_range(0..n),
        }
    };
    match keys {
        KeyChoice::Uniform => rng.random_range(0..n),
        KeyChoice::Zipfian(constant) => rank(constant, rng),
        KeyChoice::Latest => n - 1 - rank(0.99, rng),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    fn pool(n: u64) -> DocumentPool {
        let mut pool = DocumentPool::default();
        for number in 0..n {
            pool.add(number, Rev::parse("1-abc").unwrap());
        }
        pool
    }

    fn share_of_first_tenth(keys: KeyChoice) -> f64 {
        let pool = pool(1000);
        let mut rng = seed::rng(1);
        let hits = (0..20_000)
            .filter(|_| pool.pick_by(&mut rng, keys).unwrap() < 100)
            .count();
        hits as f64 / 20_000.0
    }

    #[test]
    fn key_distributions_favour_what_they_say() {
        let uniform = share_of_first_tenth(KeyChoice::Uniform);
        assert!((0.08..0.12).contains(&uniform), "{uniform}");
        let zipfian = share_of_first_tenth(KeyChoice::Zipfian(0.99));
        assert!(
            zipfian > 0.5,
            "the earliest tenth gets most reads: {zipfian}"
        );
        let latest = share_of_first_tenth(KeyChoice::Latest);
        assert!(latest < 0.1, "the oldest tenth gets few reads: {latest}");
        assert_eq!(
            DocumentPool::default().pick_by(&mut seed::rng(1), KeyChoice::Latest),
            None
        );
    }
}

#[cfg(test)]
mod footprint {
    /// Every live document of a long run is one of these: the database (`--databases`)
    /// fits beside the attachment's length, where padding was.
    #[test]
    fn a_live_document_takes_56_bytes() {
        assert_eq!(std::mem::size_of::<super::LiveDocument>(), 56);
    }
}
