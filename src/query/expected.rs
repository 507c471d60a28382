//! The rows a `find` query should return, worked out from the seed: a document's values
//! are a function of the seed, its number and its version, so the values of every
//! document the run stored can be written again and counted, and each answer of a phase
//! that writes nothing checked against them.
//!
//! Checked: `find` queries that set a `limit` (CouchDB caps an answer at 25 rows without
//! one, PouchDB Server does not), on equality, or on a range of a number. Not checked: a
//! range of strings (servers order strings by different collations), views (their map
//! function may emit anything), `_all_docs`, queries of one partition.

use std::collections::HashMap;

use super::{Find, Query, QueryKind, field};
use crate::template::DocumentWriter;

/// The values the drawn field has across the documents of the run.
#[derive(Debug, PartialEq)]
pub struct Expected {
    /// How many documents hold each value, by the value's JSON bytes (equality).
    counts: HashMap<Box<[u8]>, u64>,
    /// The numeric values, sorted (ranges); empty for an equality query.
    numbers: Vec<f64>,
    width: Option<serde_json::Number>,
    limit: u64,
}

/// Whether `query` is one [`Expected`] can check.
pub fn checkable(query: &Query) -> Option<&Find> {
    match &query.kind {
        QueryKind::Find(find) if find.limit.is_some() && !query.partition => Some(find),
        _ => None,
    }
}

impl Expected {
    /// The values of `find`'s field in `documents` (number and version each), written
    /// again by `writer`; `None` when the field holds something other than numbers
    /// under a range.
    pub fn of(
        find: &Find,
        writer: &DocumentWriter,
        documents: impl Iterator<Item = (u64, u32)>,
    ) -> Option<Expected> {
        let mut expected = Expected {
            counts: HashMap::new(),
            numbers: Vec::new(),
            width: find.draw.range.clone(),
            limit: find.limit?,
        };
        let key = find.draw.quoted_field.as_bytes();
        let mut document = Vec::new();
        for (number, version) in documents {
            document.clear();
            writer.write(&mut document, number, version.max(1), None, None);
            let value = field::top_level_value(&document, key)?;
            match expected.width {
                None => *expected.counts.entry(value.into()).or_insert(0) += 1,
                Some(_) => expected.numbers.push(number_of(value)?),
            }
        }
        expected.numbers.sort_unstable_by(f64::total_cmp);
        Some(expected)
    }

    /// The rows an answer to the query drawn from `value` should hold.
    pub fn rows(&self, value: &[u8]) -> Option<u64> {
        let matching = match &self.width {
            None => self.counts.get(value).copied().unwrap_or(0),
            Some(width) => {
                let low = number_of(value)?;
                let high = number_of(super::request::range_end(value, width)?.as_bytes())?;
                let from = self.numbers.partition_point(|n| *n < low);
                let to = self.numbers.partition_point(|n| *n <= high);
                to.saturating_sub(from) as u64
            }
        };
        Some(matching.min(self.limit))
    }
}

/// A JSON number's value; `None` for anything else.
fn number_of(value: &[u8]) -> Option<f64> {
    serde_json::from_slice::<serde_json::Number>(value)
        .ok()?
        .as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Draw;
    use crate::template::Template;

    fn writer() -> DocumentWriter {
        let template = Template::from_json_str(
            r#"{"c": {"$string": {"distinct": 4}}, "n": {"$integer": {"min": 0, "max": 9}}, "s": ""}"#,
            "t.json",
        )
        .unwrap();
        DocumentWriter::new(template, 9)
    }

    fn find(field: &str, range: Option<i64>, limit: u64) -> Find {
        Find {
            draw: Draw {
                quoted_field: format!("\"{field}\""),
                range: range.map(serde_json::Number::from),
            },
            limit: Some(limit),
            sort: false,
            fields: Vec::new(),
            index: None,
        }
    }

    /// The documents `0..count` at version `version`, parsed.
    fn parsed(w: &DocumentWriter, count: u64, version: u32) -> Vec<serde_json::Value> {
        (0..count)
            .map(|n| {
                let mut out = Vec::new();
                w.write(&mut out, n, version, None, None);
                serde_json::from_slice(&out).unwrap()
            })
            .collect()
    }

    #[test]
    fn equality_counts_the_documents_holding_the_value() {
        let w = writer();
        let docs = parsed(&w, 400, 3);
        let expected = Expected::of(&find("c", None, 1000), &w, (0..400).map(|n| (n, 3))).unwrap();
        for doc in &docs {
            let value = serde_json::to_vec(&doc["c"]).unwrap();
            let holding = docs.iter().filter(|d| d["c"] == doc["c"]).count() as u64;
            assert!(holding > 50, "{holding}");
            assert_eq!(expected.rows(&value), Some(holding));
        }
        assert_eq!(expected.rows(b"\"nowhere\""), Some(0));
        let capped = Expected::of(&find("c", None, 25), &w, (0..400).map(|n| (n, 3))).unwrap();
        assert_eq!(
            capped.rows(&serde_json::to_vec(&docs[0]["c"]).unwrap()),
            Some(25)
        );
    }

    #[test]
    fn a_numeric_range_counts_both_ends() {
        let w = writer();
        let docs = parsed(&w, 300, 1);
        let expected =
            Expected::of(&find("n", Some(2), 1000), &w, (0..300).map(|n| (n, 1))).unwrap();
        for low in 0..10i64 {
            let holding = docs
                .iter()
                .filter(|d| (low..=low + 2).contains(&d["n"].as_i64().unwrap()))
                .count() as u64;
            assert_eq!(
                expected.rows(low.to_string().as_bytes()),
                Some(holding),
                "{low}"
            );
        }
    }

    #[test]
    fn what_cannot_be_checked_is_said() {
        let w = writer();
        assert!(Expected::of(&find("s", Some(5), 10), &w, (0..3).map(|n| (n, 1))).is_none());
        assert!(Expected::of(&find("missing", None, 10), &w, (0..3).map(|n| (n, 1))).is_none());
        let mut unlimited = find("c", None, 1);
        unlimited.limit = None;
        let query = Query {
            name: "q".into(),
            kind: QueryKind::Find(unlimited),
            partition: false,
        };
        assert!(checkable(&query).is_none());
        let partitioned = Query {
            name: "q".into(),
            kind: QueryKind::Find(find("c", None, 1)),
            partition: true,
        };
        assert!(checkable(&partitioned).is_none());
    }
}
