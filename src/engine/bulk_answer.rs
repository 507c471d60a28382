//! Pairing the rows of a `_bulk_docs` answer with the documents of the request.
//!
//! Rows are matched by id, never by position: PouchDB Server on LevelDB answers some rows
//! out of request order, and CouchDB documents no order either. Pairing by position kept
//! one document's revision for its neighbour, and the neighbour's later update or delete
//! failed: failures the tool caused, reported as the database's.
//!
//! The one exception is documents sent without an `_id` (`--id-scheme server`): their
//! ids exist only in the answer, so its rows can only be taken in request order. The
//! answer must then hold exactly one row per document, each stored one with an id of its
//! own; a server that reorders rows gives documents each other's ids, which the tool
//! cannot see (the run's header says so).

use super::kept::MostKept;
use crate::driver::Rev;
use crate::driver::responses::{BulkItem, BulkRow};
use crate::metrics::Failure;
use crate::workload::DocumentIds;

/// What the answer said about one document of the request.
#[derive(Debug, PartialEq)]
pub enum DocumentOutcome {
    Stored(Rev),
    /// The server's error word for this document (`conflict`, `forbidden`, …).
    Refused(String),
    /// No row carried this document's id.
    NoRow,
    /// Two or more rows carried this document's id: which one holds is unknown.
    Repeated,
    /// Stored under the id the server gave (paired by position).
    StoredAs(Rev, Box<str>),
    /// Paired by position, stored, but with no id that can be used: why.
    NoId(&'static str),
}

/// The answer paired with the request: one outcome per requested document, in request
/// order, and the rows whose id was not one of the request's.
#[derive(Debug, PartialEq)]
pub struct Paired {
    pub documents: Vec<DocumentOutcome>,
    /// Ids (or `(none)`) of rows that match no requested document, the first few.
    pub strangers: Vec<String>,
    pub stranger_count: u64,
}

/// How many unmatched row ids are kept to show the user.
const STRANGERS_KEPT: usize = 3;

/// Pairs `rows` with the documents numbered `numbers` (ascending, as a connection numbers
/// its documents).
pub fn pair(rows: Vec<BulkRow<'_>>, numbers: &[u64], ids: &DocumentIds) -> Paired {
    let mut slots: Vec<Option<BulkItem>> = numbers.iter().map(|_| None).collect();
    let mut repeated = vec![false; numbers.len()];
    let mut strangers = Vec::new();
    let mut stranger_count = 0;
    let mut scratch = String::new();
    for row in rows {
        let position = row.id.as_deref().and_then(|id| {
            let number = ids.number_of(id)?;
            let position = numbers.binary_search(&number).ok()?;
            // The canonical spelling only: `x-0000000007` and `x-7` are different ids.
            ids.write(number, &mut scratch);
            (scratch == id).then_some(position)
        });
        match position {
            Some(p) if slots[p].is_some() || repeated[p] => {
                slots[p] = None;
                repeated[p] = true;
            }
            Some(p) => slots[p] = Some(row.item),
            None => {
                stranger_count += 1;
                if strangers.len() < STRANGERS_KEPT {
                    strangers.push(row.id.map_or("(none)".to_string(), |id| shorten(&id)));
                }
            }
        }
    }
    let documents = slots
        .into_iter()
        .zip(repeated)
        .map(|(slot, repeated)| match (slot, repeated) {
            (_, true) => DocumentOutcome::Repeated,
            (None, false) => DocumentOutcome::NoRow,
            (Some(BulkItem::Stored(rev)), false) => DocumentOutcome::Stored(rev),
            (Some(BulkItem::Failed(word)), false) => DocumentOutcome::Refused(word),
        })
        .collect();
    Paired {
        documents,
        strangers,
        stranger_count,
    }
}

/// `rows`, or `value_too_long` when one holds a revision or an id longer than `most`
/// allows: the answer fails as a whole, and nothing of it is kept.
pub fn within(rows: Vec<BulkRow<'_>>, most: MostKept) -> Result<Vec<BulkRow<'_>>, Failure> {
    let too_long = |row: &BulkRow| {
        let rev = match &row.item {
            BulkItem::Stored(rev) => rev.text_len(),
            BulkItem::Failed(_) => 0,
        };
        !most.allows(rev) || row.id.as_deref().is_some_and(|id| !most.allows(id.len()))
    };
    if rows.iter().any(too_long) {
        Err(Failure::ValueTooLong)
    } else {
        Ok(rows)
    }
}

/// The longest id the server may give a document: CouchDB's own are 32 characters, and
/// every later request on the document carries it.
pub const MOST_SERVER_ID: usize = 512;

/// Why an id a server gave cannot be used, or `None` when it can.
pub fn unusable_server_id(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        Some("empty")
    } else if id.len() > MOST_SERVER_ID {
        Some("longer than 512 bytes")
    } else if id.starts_with('_') {
        Some("starts with '_'")
    } else {
        None
    }
}

/// Pairs `rows` with the `count` documents of a request that sent them without ids,
/// by position; `Err` with the number of rows when they are not one per document.
pub fn pair_by_position(rows: Vec<BulkRow<'_>>, count: usize) -> Result<Paired, usize> {
    if rows.len() != count {
        return Err(rows.len());
    }
    let mut seen = std::collections::HashSet::with_capacity(count);
    let documents = rows
        .into_iter()
        .map(|row| match (row.item, row.id) {
            (BulkItem::Failed(word), _) => DocumentOutcome::Refused(word),
            (BulkItem::Stored(_), None) => DocumentOutcome::NoId("none"),
            (BulkItem::Stored(rev), Some(id)) => match unusable_server_id(&id) {
                Some(why) => DocumentOutcome::NoId(why),
                // Two documents under one id: the second overwrote nothing, the answer
                // is wrong.
                None if !seen.insert(id.clone()) => DocumentOutcome::NoId("given twice"),
                None => DocumentOutcome::StoredAs(rev, id.into()),
            },
        })
        .collect();
    Ok(Paired {
        documents,
        strangers: Vec::new(),
        stranger_count: 0,
    })
}

/// An id as shown to the user: a server may send anything, so it is cut short.
fn shorten(id: &str) -> String {
    crate::text::Quoted::of_text(&format!("{id:?}"), &(), 80).into_string()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn rev(generation: u32) -> Rev {
        Rev::parse(&format!("{generation}-6d7933ba841aac702de8c481a90355ad")).unwrap()
    }

    fn stored<'a>(id: &'a str, generation: u32) -> BulkRow<'a> {
        BulkRow {
            id: Some(Cow::Borrowed(id)),
            item: BulkItem::Stored(rev(generation)),
        }
    }

    #[test]
    fn rows_out_of_order_go_to_their_own_documents() {
        let ids = DocumentIds::new("p");
        let numbers = [3, 5, 7];
        let (a, b, c) = (ids.id(3), ids.id(5), ids.id(7));
        // The neighbours swapped, as PouchDB Server on LevelDB does.
        let rows = vec![stored(&b, 2), stored(&a, 1), stored(&c, 3)];
        let paired = pair(rows, &numbers, &ids);
        assert_eq!(
            paired.documents,
            vec![
                DocumentOutcome::Stored(rev(1)),
                DocumentOutcome::Stored(rev(2)),
                DocumentOutcome::Stored(rev(3)),
            ]
        );
        assert_eq!(paired.stranger_count, 0);
    }

    #[test]
    fn missing_repeated_and_unknown_ids_are_each_named() {
        let ids = DocumentIds::new("p");
        let numbers = [10, 20, 30];
        let (a, b) = (ids.id(10), ids.id(20));
        let other = ids.id(40);
        let rows = vec![
            stored(&a, 1),
            stored(&b, 1),
            BulkRow {
                id: Some(Cow::Borrowed(&b)),
                item: BulkItem::Failed("conflict".to_string()),
            },
            stored(&b, 1),
            stored(&other, 1),
            stored("p-10", 1),
            BulkRow {
                id: None,
                item: BulkItem::Failed("forbidden".to_string()),
            },
        ];
        let paired = pair(rows, &numbers, &ids);
        assert_eq!(
            paired.documents,
            vec![
                DocumentOutcome::Stored(rev(1)),
                DocumentOutcome::Repeated,
                DocumentOutcome::NoRow,
            ]
        );
        assert_eq!(paired.stranger_count, 3);
        assert_eq!(
            paired.strangers,
            vec![
                format!("{other:?}"),
                "\"p-10\"".to_string(),
                "(none)".to_string()
            ]
        );
    }

    #[test]
    fn refusals_stay_with_their_document() {
        let ids = DocumentIds::new("p");
        let numbers = [1, 2];
        let (a, b) = (ids.id(1), ids.id(2));
        let rows = vec![
            BulkRow {
                id: Some(Cow::Borrowed(&b)),
                item: BulkItem::Failed("conflict".to_string()),
            },
            stored(&a, 1),
        ];
        let paired = pair(rows, &numbers, &ids);
        assert_eq!(
            paired.documents,
            vec![
                DocumentOutcome::Stored(rev(1)),
                DocumentOutcome::Refused("conflict".to_string())
            ]
        );
    }

    #[test]
    fn ids_the_server_gave_pair_by_position_and_are_checked() {
        let row = |id: Option<&'static str>, item: BulkItem| BulkRow {
            id: id.map(Cow::Borrowed),
            item,
        };
        let long = Box::leak("x".repeat(MOST_SERVER_ID + 1).into_boxed_str());
        let rows = vec![
            row(Some("b7"), BulkItem::Stored(rev(1))),
            row(Some("a3"), BulkItem::Stored(rev(1))),
            row(Some("a3"), BulkItem::Stored(rev(1))),
            row(None, BulkItem::Stored(rev(1))),
            row(Some("_design/x"), BulkItem::Stored(rev(1))),
            row(Some(long), BulkItem::Stored(rev(1))),
            row(Some("c1"), BulkItem::Failed("forbidden".to_string())),
        ];
        let paired = pair_by_position(rows, 7).unwrap();
        assert_eq!(
            paired.documents,
            vec![
                DocumentOutcome::StoredAs(rev(1), "b7".into()),
                DocumentOutcome::StoredAs(rev(1), "a3".into()),
                DocumentOutcome::NoId("given twice"),
                DocumentOutcome::NoId("none"),
                DocumentOutcome::NoId("starts with '_'"),
                DocumentOutcome::NoId("longer than 512 bytes"),
                DocumentOutcome::Refused("forbidden".to_string()),
            ]
        );
        let two = vec![row(Some("a"), BulkItem::Stored(rev(1)))];
        assert_eq!(pair_by_position(two, 2), Err(1));
    }

    #[test]
    fn long_ids_are_cut_short() {
        let long = "x".repeat(1_000);
        assert!(shorten(&long).chars().count() < 90);
    }
}
