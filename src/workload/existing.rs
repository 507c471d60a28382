//! Existing data (`--key-range`, `--key-sample`): reads, updates and deletes that target
//! documents already in the database, as the reference benchmarks' key ranges do (the
//! Aerospike benchmark's `keyrange`, titan's read hits), instead of documents the
//! connection stored itself. A target may be missing (never written, or deleted since):
//! its 404 is a miss, counted beside the hits, not a failure.

use super::ids::{self, DocumentIds, IdScheme};
use super::{KeyChoice, pool::position_by};
use crate::seed::Rng;

/// The most ids `--key-sample` keeps: each is held in memory by every node.
pub const MOST_SAMPLED: u64 = 1_000_000;

/// The highest document number a range may reach: a quadrillion documents, far below the
/// bits that tag an id's scheme, so new documents numbered past the range stay clear of it.
pub const MOST_NUMBER: u64 = 1_000_000_000_000_000;

/// Which documents the reads, updates and deletes target.
#[derive(Clone, Debug, PartialEq)]
pub enum ExistingKeys {
    /// Document numbers `low` (included) to `high` (excluded), with the ids the run's
    /// `--id-prefix` and id scheme give them: what an earlier run with that prefix wrote
    /// in its first phase.
    Range {
        low: u64,
        high: u64,
        scheme: IdScheme,
    },
    /// Ids sampled from the database's `_all_docs` before the first phase.
    Sample(Vec<Box<str>>),
}

/// What a write into existing data does about the revision it does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExistingWrites {
    /// `GET` the document's current revision first, then write over it.
    #[default]
    Fetch,
    /// Write without a revision: a document that is there answers 409, counted as a
    /// conflict (an expected outcome, not a failure).
    Blind,
}

impl ExistingWrites {
    pub fn name(self) -> &'static str {
        match self {
            ExistingWrites::Fetch => "fetch",
            ExistingWrites::Blind => "blind",
        }
    }

    pub fn parse(text: &str) -> Result<ExistingWrites, String> {
        match text {
            "fetch" => Ok(ExistingWrites::Fetch),
            "blind" => Ok(ExistingWrites::Blind),
            _ => Err(format!(
                "{text:?} is not a way to write into existing data; give fetch (read the current revision first) or blind (write without one and count the 409)"
            )),
        }
    }
}

/// Where the existing documents come from, as the flags say: a range, or a sample of
/// `_all_docs` to take once the database is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExistingSource {
    Range {
        low: u64,
        high: u64,
        scheme: IdScheme,
    },
    Sample(u64),
}

impl ExistingSource {
    /// The result file's words for the targets and the writes, e.g.
    /// `"range 0-100000 (sequential), writes fetch"`.
    pub fn describe(self, writes: ExistingWrites) -> String {
        let keys = match self {
            ExistingSource::Range { low, high, scheme } => {
                format!("range {low}-{high} ({})", scheme.name())
            }
            ExistingSource::Sample(n) => format!("{n} ids sampled from _all_docs"),
        };
        format!("{keys}, writes {}", writes.name())
    }
}

/// The existing documents a run targets, and how it writes into them.
#[derive(Clone, Debug, PartialEq)]
pub struct Existing {
    pub keys: ExistingKeys,
    pub writes: ExistingWrites,
}

impl Existing {
    /// How many documents can be targeted.
    pub fn len(&self) -> u64 {
        match &self.keys {
            ExistingKeys::Range { low, high, .. } => high - low,
            ExistingKeys::Sample(ids) => ids.len() as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first number new documents may take so that they stay clear of the range
    /// (0 for a sample: its ids are the database's, not of this run's numbering).
    pub fn numbers_from(&self) -> u64 {
        match &self.keys {
            ExistingKeys::Range { high, .. } => *high,
            ExistingKeys::Sample(_) => 0,
        }
    }

    /// Writes into `out` (cleared first) the id of a target chosen by `keys` (uniform,
    /// zipfian with the range's start or the sample's first id the most popular, or
    /// `latest` with its end the most popular), and returns the number a write to it
    /// makes its content from: the document's own in a range, the id's place in a
    /// sample. Writes nothing when there is no target.
    pub fn pick(&self, rng: &mut Rng, keys: KeyChoice, ids: &DocumentIds, out: &mut String) -> u64 {
        out.clear();
        let n = self.len();
        if n == 0 {
            return 0;
        }
        // A range longer than a usize can count is picked within its first usize::MAX.
        let position = position_by(usize::try_from(n).unwrap_or(usize::MAX), rng, keys) as u64;
        match &self.keys {
            ExistingKeys::Range { low, scheme, .. } => {
                let number = ids::tagged(low + position, *scheme);
                ids.write(number, out);
                number
            }
            ExistingKeys::Sample(sample) => {
                out.push_str(&sample[position as usize]);
                position
            }
        }
    }
}

/// Reads `--key-range LOW-HIGH`: document numbers LOW (included) to HIGH (excluded).
pub fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!(
            "{text:?} is not a key range; give LOW-HIGH in document numbers, LOW below HIGH, e.g. 0-100000 for the first 100,000 documents an earlier run with the same --id-prefix stored"
        )
    };
    let (low, high) = text.trim().split_once('-').ok_or_else(bad)?;
    let low: u64 = low.trim().parse().map_err(|_| bad())?;
    let high: u64 = high.trim().parse().map_err(|_| bad())?;
    if low >= high || high > MOST_NUMBER {
        return Err(bad());
    }
    Ok((low, high))
}

/// Reads `--key-sample N`: how many ids to sample from `_all_docs`.
pub fn parse_sample(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=MOST_SAMPLED).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of ids to sample; give a whole number from 1 to {MOST_SAMPLED}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    #[test]
    fn ranges_are_low_below_high() {
        assert_eq!(parse_range("0-100000"), Ok((0, 100_000)));
        assert_eq!(parse_range(" 5 - 6 "), Ok((5, 6)));
        for bad in ["", "5", "6-5", "5-5", "-5", "a-b", "0-99999999999999999999"] {
            assert!(parse_range(bad).unwrap_err().contains("LOW-HIGH"), "{bad}");
        }
        assert!(parse_sample("0").is_err());
        assert!(
            parse_sample("1000001")
                .unwrap_err()
                .contains("1 to 1000000")
        );
        assert_eq!(parse_sample("10"), Ok(10));
        assert!(ExistingWrites::parse("fetch").is_ok());
        assert!(ExistingWrites::parse("x").unwrap_err().contains("blind"));
    }

    #[test]
    fn picks_name_documents_of_the_range_or_the_sample() {
        let ids = DocumentIds::new("data");
        let range = Existing {
            keys: ExistingKeys::Range {
                low: 10,
                high: 13,
                scheme: IdScheme::Sequential,
            },
            writes: ExistingWrites::Fetch,
        };
        let mut rng = seed::rng(1);
        let mut id = String::new();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            range.pick(&mut rng, KeyChoice::Uniform, &ids, &mut id);
            seen.insert(id.clone());
        }
        let expected: std::collections::BTreeSet<String> =
            (10..13).map(|n| format!("data-{n:010}")).collect();
        assert_eq!(seen, expected);
        assert_eq!(range.numbers_from(), 13);
        let source = ExistingSource::Range {
            low: 10,
            high: 13,
            scheme: IdScheme::Sequential,
        };
        assert_eq!(
            source.describe(ExistingWrites::Fetch),
            "range 10-13 (sequential), writes fetch"
        );

        let sample = Existing {
            keys: ExistingKeys::Sample(vec!["a".into(), "b/c".into()]),
            writes: ExistingWrites::Blind,
        };
        sample.pick(&mut rng, KeyChoice::Zipfian(0.99), &ids, &mut id);
        assert!(id == "a" || id == "b/c", "{id}");
        assert_eq!(
            ExistingSource::Sample(2).describe(ExistingWrites::Blind),
            "2 ids sampled from _all_docs, writes blind"
        );
    }
}
