//! Hot documents (`--hot-docs N`): a set of documents every connection's updates share,
//! so that they meet each other's revisions as an application's counters and shared
//! records do. Which one an update touches follows the phase's key choice (`keys`).

use super::pool::position_by;
use super::{DocumentIds, KeyChoice, Rev};
use crate::seed::Rng;

/// The most hot documents a run may share: they are made in one setup step, and every
/// connection keeps a revision for each.
pub const MOST_HOT_DOCUMENTS: u64 = 100_000;

/// The shared documents: their ids, and the revision each had when the run made them
/// (`None` when it did not learn it, e.g. the document was there already: the first
/// update fetches it).
#[derive(Clone, Debug, PartialEq)]
pub struct HotDocuments {
    pub ids: Vec<String>,
    pub revs: Vec<Option<Rev>>,
}

impl HotDocuments {
    /// `count` hot documents with ids from `ids`, revisions not known yet.
    pub fn named(ids: &DocumentIds, count: u64) -> HotDocuments {
        HotDocuments {
            ids: (0..count).map(|k| ids.hot(k)).collect(),
            revs: vec![None; count as usize],
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The hot document an update touches, by `keys` (zipfian: the first the most often).
    pub fn pick(&self, rng: &mut Rng, keys: KeyChoice) -> usize {
        position_by(self.ids.len().max(1), rng, keys)
    }
}

/// Reads `--hot-docs`: how many documents the connections' updates share.
pub fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=MOST_HOT_DOCUMENTS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of hot documents; give a whole number from 1 to {MOST_HOT_DOCUMENTS}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    #[test]
    fn counts_are_bounded() {
        assert_eq!(parse_count("8"), Ok(8));
        assert!(parse_count("0").is_err());
        assert!(parse_count("100001").is_err());
        assert!(parse_count("many").unwrap_err().contains("1 to 100000"));
    }

    #[test]
    fn picks_stay_in_the_set_and_follow_the_keys() {
        let hot = HotDocuments::named(&DocumentIds::new("p"), 10);
        let mut rng = seed::rng(3);
        let mut seen = [0u32; 10];
        for _ in 0..5000 {
            seen[hot.pick(&mut rng, KeyChoice::Zipfian(0.99))] += 1;
        }
        assert!(seen[0] > seen[9] * 3, "{seen:?}");
        assert_eq!(hot.ids[9], "p-hot-000009");
    }
}
