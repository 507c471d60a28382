//! Document ids: a run's prefix, the document's number, and the id scheme.
//!
//! The tool assigns every id, so connections never collide and a test can find each
//! document again. The prefix differs per run (unless `--id-prefix` fixes it), so a run
//! with `--reuse` adds documents instead of colliding with an earlier run's.
//!
//! A document's id is a pure function of its number, both ways: the number's top bits
//! say its [`IdScheme`], so a document keeps the id it was stored with whichever phase
//! reads it later, and the pool keeps no id per document. Random-looking ids come from
//! a bijection of the number, so an answer's id still leads back to its number.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::seed;

/// How a phase names the documents it stores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdScheme {
    /// `<prefix>-<number>`, ten digits: ids in insertion order, as CouchDB's B-tree likes.
    #[default]
    Sequential,
    /// 32 hex digits that look random (like CouchDB's `random` uuids), reproducible from
    /// the run's prefix and the document's number: every insert lands at a random place
    /// in the B-tree.
    Uuid,
    /// Ids the server gives: creates are `POST /db` and bulk documents carry no `_id`.
    /// The id is then known only from the answer, so each document keeps its own, and a
    /// bulk answer's rows can only be paired with its documents by position.
    Server,
}

impl IdScheme {
    pub const ALL: [IdScheme; 3] = [IdScheme::Sequential, IdScheme::Uuid, IdScheme::Server];

    pub fn name(self) -> &'static str {
        match self {
            IdScheme::Sequential => "sequential",
            IdScheme::Uuid => "uuid",
            IdScheme::Server => "server",
        }
    }

    pub fn named(name: &str) -> Result<IdScheme, String> {
        IdScheme::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("id scheme {name:?} is unknown; use sequential, uuid or server"))
    }

    /// The value a sweep of id schemes records (its place in [`IdScheme::ALL`]).
    pub fn sweep_value(self) -> u64 {
        self as u64
    }
}

/// Where a number keeps its scheme: phase bases stay far below 2^62.
const SCHEME_SHIFT: u32 = 62;

/// Document number `number` stored under `scheme`.
pub fn tagged(number: u64, scheme: IdScheme) -> u64 {
    untagged(number) | (scheme as u64) << SCHEME_SHIFT
}

/// The number without its scheme.
pub fn untagged(number: u64) -> u64 {
    number & ((1 << SCHEME_SHIFT) - 1)
}

/// The scheme a document number was stored under.
pub fn scheme_of(number: u64) -> IdScheme {
    match number >> SCHEME_SHIFT {
        0 => IdScheme::Sequential,
        2 => IdScheme::Server,
        _ => IdScheme::Uuid,
    }
}

/// How documents spread over a partitioned database's partitions (`--partitions`,
/// `--partition-keys`).
#[derive(Clone, Debug, PartialEq)]
pub struct Partitions {
    pub count: u64,
    /// With a zipfian spread: the cumulative share of partitions `0..=k`; uniform without.
    cumulative: Option<Arc<[f64]>>,
}

/// The most partitions: a zipfian spread keeps one number per partition.
pub const MOST_PARTITIONS: u64 = 1_000_000;

impl Partitions {
    pub fn uniform(count: u64) -> Partitions {
        Partitions {
            count: count.clamp(1, MOST_PARTITIONS),
            cumulative: None,
        }
    }

    /// Partition `k` (from 0) holds a share ∝ 1/(k+1)^constant of the documents.
    pub fn zipfian(count: u64, constant: f64) -> Partitions {
        let count = count.clamp(1, MOST_PARTITIONS);
        let weights: Vec<f64> = (1..=count).map(|k| (k as f64).powf(-constant)).collect();
        let total: f64 = weights.iter().sum();
        let mut sum = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                sum += w / total;
                sum
            })
            .collect();
        Partitions {
            count,
            cumulative: Some(cumulative),
        }
    }

    /// The partition of a document, from a uniform draw.
    fn of(&self, draw: u64) -> u64 {
        match &self.cumulative {
            None => draw % self.count,
            Some(cumulative) => {
                let u = (draw >> 11) as f64 / (1u64 << 53) as f64;
                let k = cumulative.partition_point(|&c| c <= u) as u64;
                k.min(self.count - 1)
            }
        }
    }

    pub fn describe(&self) -> String {
        let spread = if self.cumulative.is_some() {
            "zipfian"
        } else {
            "uniform"
        };
        format!("{} partitions, {spread}", self.count)
    }
}

/// Builds document ids.
#[derive(Clone, Debug)]
pub struct DocumentIds {
    prefix: String,
    /// Keys the uuid bijection and the partition draw, from the prefix: a run that
    /// reuses a prefix finds its documents again.
    key: u64,
    partitions: Option<Partitions>,
}

impl DocumentIds {
    pub fn new(prefix: &str) -> DocumentIds {
        let key = prefix
            .bytes()
            .fold(seed::derive(0, seed::label::RUN), |k, b| {
                seed::derive(k, u64::from(b))
            });
        DocumentIds {
            prefix: prefix.to_string(),
            key,
            partitions: None,
        }
    }

    /// Ids of the form `partition:docid`, for a partitioned database.
    pub fn with_partitions(self, partitions: Option<Partitions>) -> DocumentIds {
        DocumentIds { partitions, ..self }
    }

    pub fn partitions(&self) -> Option<&Partitions> {
        self.partitions.as_ref()
    }

    /// A prefix for a run, from a random value.
    pub fn random_prefix(value: u64) -> String {
        format!("sb{:08x}", value as u32)
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Writes the id of document `number` into `out` (cleared first). Fixed-width numbers
    /// keep sequential ids in insertion order, as CouchDB's B-tree likes them. A document
    /// of the server scheme has the id its answer gave, kept with it (see
    /// [`super::pool::LiveDocument::server_id`]); this writes its sequential form, which
    /// no request carries.
    pub fn write(&self, number: u64, out: &mut String) {
        out.clear();
        let plain = untagged(number);
        if let Some(partitions) = &self.partitions {
            let draw = seed::derive(self.key ^ 0x7061_7274, plain);
            let _ = write!(out, "p{}:", partitions.of(draw));
        }
        match scheme_of(number) {
            IdScheme::Sequential | IdScheme::Server => {
                out.push_str(&self.prefix);
                let _ = write!(out, "-{plain:010}");
            }
            IdScheme::Uuid => {
                let high = mix(plain ^ self.key);
                let low = mix(high ^ self.key.rotate_left(32));
                let _ = write!(out, "{high:016x}{low:016x}");
            }
        }
    }

    /// The id of hot document `k` (`--hot-docs`): `PREFIX-hot-K`, which no sequential or
    /// uuid id spells, in a partition drawn from `k` on a partitioned database.
    pub fn hot(&self, k: u64) -> String {
        let mut out = String::new();
        if let Some(partitions) = &self.partitions {
            let draw = seed::derive(self.key ^ 0x686f_7400, k);
            let _ = write!(out, "p{}:", partitions.of(draw));
        }
        let _ = write!(out, "{}-hot-{k:06}", self.prefix);
        out
    }

    /// The number in an id of this run's form, `None` for any other id. The number is
    /// read back, then its id written again and compared: one spelling per number.
    pub fn number_of(&self, id: &str) -> Option<u64> {
        let docid = match &self.partitions {
            Some(_) => id.split_once(':')?.1,
            None => id,
        };
        let number = self.sequential_number(docid).or_else(|| {
            let high = docid.get(..16).filter(|_| docid.len() == 32)?;
            let high = u64::from_str_radix(high, 16).ok()?;
            Some(tagged(unmix(high) ^ self.key, IdScheme::Uuid))
        })?;
        let mut again = String::with_capacity(id.len());
        self.write(number, &mut again);
        (again == id).then_some(number)
    }

    fn sequential_number(&self, docid: &str) -> Option<u64> {
        let digits = docid.strip_prefix(&self.prefix)?.strip_prefix('-')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().filter(|&n| untagged(n) == n)
    }

    /// The id of document `number`, as a new string.
    pub fn id(&self, number: u64) -> String {
        let mut out = String::new();
        self.write(number, &mut out);
        out
    }
}

/// SplitMix64's output function, a bijection on `u64` (as in [`crate::seed`]).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(M1);
    z = (z ^ (z >> 27)).wrapping_mul(M2);
    z ^ (z >> 31)
}

/// The inverse of [`mix`].
fn unmix(mut z: u64) -> u64 {
    z = unshift(z, 31);
    z = unshift(z.wrapping_mul(inverse(M2)), 27);
    unshift(z.wrapping_mul(inverse(M1)), 30)
}

const M1: u64 = 0xBF58_476D_1CE4_E5B9;
const M2: u64 = 0x94D0_49BB_1331_11EB;

/// The inverse of `x ^ (x >> shift)`.
fn unshift(z: u64, shift: u32) -> u64 {
    let mut x = z;
    let mut bits = shift;
    while bits < 64 {
        x = z ^ (x >> shift);
        bits += shift;
    }
    x
}

/// The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct
/// bits each step: 3, 6, 12, 24, 48, 96).
const fn inverse(odd: u64) -> u64 {
    let mut x = odd;
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// The longest `--id-prefix`: ids are sent and kept per document, and CouchDB's own ids
/// are 32 characters.
const MOST_PREFIX: usize = 100;

/// Checks a user-given prefix: ids must not start with `_` and must stay URL-safe and
/// short.
pub fn validate_prefix(prefix: &str) -> Result<(), String> {
    if prefix.len() > MOST_PREFIX {
        return Err(format!(
            "--id-prefix of {} characters: at most {MOST_PREFIX} (every document id starts with it); give a shorter one",
            prefix.len()
        ));
    }
    let ok = !prefix.is_empty()
        && !prefix.starts_with('_')
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--id-prefix {prefix:?} is not usable; use letters, digits, '-', '_' and '.', not starting with '_'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixing_is_undone() {
        for z in [0, 1, 42, u64::MAX, 0x1234_5678_9abc_def0] {
            assert_eq!(unmix(mix(z)), z);
        }
    }

    #[test]
    fn sequential_ids_are_unchanged_and_read_back() {
        let ids = DocumentIds::new("p");
        assert_eq!(ids.id(7), "p-0000000007");
        assert_eq!(ids.number_of("p-0000000007"), Some(7));
        assert_eq!(ids.number_of("p-7"), None);
        assert_eq!(ids.number_of("q-0000000007"), None);
    }

    #[test]
    fn hot_ids_are_apart_from_the_documents_ids() {
        let ids = DocumentIds::new("p");
        assert_eq!(ids.hot(3), "p-hot-000003");
        assert_eq!(ids.number_of(&ids.hot(3)), None);
        let parted = ids.with_partitions(Some(Partitions::uniform(4)));
        let (partition, rest) = parted
            .hot(3)
            .split_once(':')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        assert!(partition.starts_with('p'), "{partition}");
        assert_eq!(rest, "p-hot-000003");
    }

    #[test]
    fn uuid_ids_look_random_and_lead_back_to_their_number() {
        let ids = DocumentIds::new("p");
        let numbers: Vec<u64> = (0..50).map(|n| tagged(n, IdScheme::Uuid)).collect();
        let written: Vec<String> = numbers.iter().map(|&n| ids.id(n)).collect();
        for (id, &n) in written.iter().zip(&numbers) {
            assert_eq!(id.len(), 32, "{id}");
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
            assert_eq!(ids.number_of(id), Some(n));
            assert_eq!(scheme_of(n), IdScheme::Uuid);
        }
        let mut sorted = written.clone();
        sorted.sort();
        assert_ne!(sorted, written, "insertion order is not id order");
        // Another run's prefix gives other ids, and does not read this run's back.
        let other = DocumentIds::new("q");
        assert_ne!(other.id(numbers[0]), written[0]);
        assert_eq!(other.number_of(&written[0]), None);
        assert_eq!(ids.number_of(&written[0].to_uppercase()), None);
    }

    #[test]
    fn partitioned_ids_name_a_partition_and_read_back() {
        let ids = DocumentIds::new("p").with_partitions(Some(Partitions::uniform(4)));
        let mut seen = [0; 4];
        for n in 0..400 {
            for number in [n, tagged(n, IdScheme::Uuid)] {
                let id = ids.id(number);
                let (partition, _) = id.split_once(':').unwrap();
                let k: usize = partition.strip_prefix('p').unwrap().parse().unwrap();
                seen[k] += 1;
                assert_eq!(ids.number_of(&id), Some(number), "{id}");
            }
        }
        assert!(seen.iter().all(|&s| s > 100), "{seen:?}");
        let wrong = ids.id(3).replacen(":", "x:", 1);
        assert_eq!(ids.number_of(&wrong), None);
    }

    #[test]
    fn a_zipfian_spread_favours_the_first_partitions() {
        let ids = DocumentIds::new("p").with_partitions(Some(Partitions::zipfian(100, 0.99)));
        let first = (0..2000).filter(|&n| ids.id(n).starts_with("p0:")).count();
        // Partition 0's share of 100 under 1/k^0.99 is about 19 %; uniform is 1 %.
        assert!((250..550).contains(&first), "{first}");
    }
}
