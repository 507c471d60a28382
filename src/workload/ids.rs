//! Document ids: a run's prefix and the document's number.
//!
//! The tool assigns every id, so connections never collide and a test can find each
//! document again. The prefix differs per run (unless `--id-prefix` fixes it), so a run
//! with `--reuse` adds documents instead of colliding with an earlier run's.

use std::fmt::Write as _;

/// Builds document ids.
#[derive(Clone, Debug)]
pub struct DocumentIds {
    prefix: String,
}

impl DocumentIds {
    pub fn new(prefix: &str) -> DocumentIds {
        DocumentIds {
            prefix: prefix.to_string(),
        }
    }

    /// A prefix for a run, from a random value.
    pub fn random_prefix(value: u64) -> String {
        format!("sb{:08x}", value as u32)
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Writes the id of document `number` into `out` (cleared first). Fixed-width numbers
    /// keep ids in insertion order, as CouchDB's B-tree likes them.
    pub fn write(&self, number: u64, out: &mut String) {
        out.clear();
        out.push_str(&self.prefix);
        let _ = write!(out, "-{number:010}");
    }

    /// The number in an id of this run's form, `None` for any other id. Only the
    /// prefix and the digits are checked; [`DocumentIds::write`] gives the one spelling.
    pub fn number_of(&self, id: &str) -> Option<u64> {
        let digits = id.strip_prefix(&self.prefix)?.strip_prefix('-')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    /// The id of document `number`, as a new string.
    pub fn id(&self, number: u64) -> String {
        let mut out = String::new();
        self.write(number, &mut out);
        out
    }
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
