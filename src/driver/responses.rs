//! Reading CouchDB's answers: the revision a write produced, the revision a read found,
//! and the per-document results of `_bulk_docs`.

use std::borrow::Cow;

use serde::Deserialize;

use crate::workload::Rev;

/// `{"ok":true,"id":"…","rev":"…"}` from a create, update or delete, or one element of
/// a `_bulk_docs` answer (`{"id":"…","error":"conflict","reason":"…"}` on failure).
#[derive(Deserialize)]
struct WriteResult<'a> {
    /// Borrowed unless the id has escapes.
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    rev: Option<&'a str>,
    #[serde(default)]
    error: Option<String>,
}

/// A document as read: only its `_rev` matters here.
#[derive(Deserialize)]
struct ReadDocument<'a> {
    #[serde(borrow, rename = "_rev")]
    rev: Option<&'a str>,
}

/// The revision in a successful write's answer, or `None` if the body is not one.
pub fn written_rev(body: &[u8]) -> Option<Rev> {
    let result: WriteResult = serde_json::from_slice(body).ok()?;
    result.rev.and_then(Rev::parse)
}

/// The id and new revision from a `POST /db` answer, which named the document.
pub fn written_id_rev(body: &[u8]) -> Option<(String, Rev)> {
    let result: WriteResult = serde_json::from_slice(body).ok()?;
    Some((result.id?.into_owned(), result.rev.and_then(Rev::parse)?))
}

/// The `_rev` of a document read by id.
pub fn read_rev(body: &[u8]) -> Option<Rev> {
    if let Some(rev) = leading_rev(body) {
        return Rev::parse(rev);
    }
    let doc: ReadDocument = serde_json::from_slice(body).ok()?;
    doc.rev.and_then(Rev::parse)
}

/// The `_rev` of a document that starts `{"_id":"…","_rev":"…"`, as CouchDB and PouchDB
/// Server write every document. Reading only that prefix spares a parse of the whole
/// document on every read, the largest cost of a read after HTTP itself. The body's length
/// came from the HTTP framing, so a cut-off answer does not get this far. Anything else
/// (spaces, escapes, another key order) is left to the full parse.
fn leading_rev(body: &[u8]) -> Option<&str> {
    let rest = body.strip_prefix(br#"{"_id":""#)?;
    let id_end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    let rest = rest[id_end..].strip_prefix(br#"","_rev":""#)?;
    let rev_end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[rev_end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..rev_end]).ok()
}

/// The outcome of one document in a `_bulk_docs` request.
#[derive(Debug, PartialEq)]
pub enum BulkItem {
    Stored(Rev),
    /// The server's error word (`conflict`, `forbidden`, …), as it wrote it: the
    /// failure it becomes bounds it (`Failure::document`).
    Failed(String),
}

/// One row of a `_bulk_docs` answer: the document's id as the server wrote it (`None`
/// when the row has none) and what happened to it.
#[derive(Debug, PartialEq)]
pub struct BulkRow<'a> {
    pub id: Option<Cow<'a, str>>,
    pub item: BulkItem,
}

/// Whether a 404 answer says the document is missing or deleted (`"reason":"missing"` or
/// `"deleted"`), rather than that the database is (`"Database does not exist."`): only
/// the first is a miss of existing data, the other a failure.
pub fn document_missing(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct NotFound<'a> {
        #[serde(borrow)]
        reason: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<NotFound>(body)
        .ok()
        .and_then(|answer| answer.reason)
        .is_some_and(|reason| reason == "missing" || reason == "deleted")
}

/// The rows of a `_bulk_docs` answer, in the order the server wrote them; `None` when the
/// body is not such an array. Neither CouchDB nor PouchDB Server promises request order
/// (PouchDB Server on LevelDB swaps neighbours now and then), so rows are matched to
/// documents by id, never by position.
pub fn bulk_rows(body: &[u8]) -> Option<Vec<BulkRow<'_>>> {
    let results: Vec<WriteResult> = serde_json::from_slice(body).ok()?;
    Some(
        results
            .into_iter()
            .map(|r| BulkRow {
                id: r.id,
                item: match (r.error, r.rev.and_then(Rev::parse)) {
                    (None, Some(rev)) => BulkItem::Stored(rev),
                    (Some(error), _) => BulkItem::Failed(error),
                    (None, None) => BulkItem::Failed("no_rev".to_string()),
                },
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_revisions_from_answers() {
        let rev = "1-6d7933ba841aac702de8c481a90355ad";
        let body = format!(r#"{{"ok":true,"id":"a","rev":"{rev}"}}"#);
        assert_eq!(written_rev(body.as_bytes()), Rev::parse(rev));
        let doc = format!(r#"{{"x":[1,{{"y":"\u00e9"}}],"_id":"a","_rev":"{rev}"}}"#);
        assert_eq!(read_rev(doc.as_bytes()), Rev::parse(rev));
        assert_eq!(written_rev(b"<html>"), None);
        assert_eq!(read_rev(br#"{"error":"not_found"}"#), None);
    }

    #[test]
    fn reads_the_leading_rev_and_falls_back_to_a_full_parse() {
        let rev = "2-6d7933ba841aac702de8c481a90355ad";
        let couch = format!(r#"{{"_id":"doc-1","_rev":"{rev}","x":1}}"#);
        assert_eq!(leading_rev(couch.as_bytes()), Some(rev));
        assert_eq!(read_rev(couch.as_bytes()), Rev::parse(rev));
        // An escape in the id or another key order: the full parse decides.
        let escaped = format!(r#"{{"_id":"a\"b","_rev":"{rev}"}}"#);
        assert_eq!(leading_rev(escaped.as_bytes()), None);
        assert_eq!(read_rev(escaped.as_bytes()), Rev::parse(rev));
        let reordered = format!(r#"{{"x":{{"_rev":"9-x"}},"_id":"a","_rev":"{rev}"}}"#);
        assert_eq!(leading_rev(reordered.as_bytes()), None);
        assert_eq!(read_rev(reordered.as_bytes()), Rev::parse(rev));
        assert_eq!(read_rev(br#"{"_id":"a","_rev":"#), None);
    }

    #[test]
    fn bulk_answers_keep_per_document_errors() {
        let body = br#"[{"ok":true,"id":"a","rev":"1-6d7933ba841aac702de8c481a90355ad"},
                        {"id":"b","error":"conflict","reason":"Document update conflict."}]"#;
        let rows = bulk_rows(body).unwrap();
        assert_eq!(rows[0].id.as_deref(), Some("a"));
        assert!(matches!(rows[0].item, BulkItem::Stored(_)));
        assert_eq!(rows[1].id.as_deref(), Some("b"));
        assert_eq!(rows[1].item, BulkItem::Failed("conflict".to_string()));
        assert_eq!(bulk_rows(br#"{"error":"bad_request"}"#), None);
        // A row without an id is kept without it; an escaped id is unescaped.
        let rows = bulk_rows(br#"[{"ok":true,"rev":"1-x"},{"id":"a\u0062","error":"e"}]"#);
        let rows = rows.unwrap();
        assert_eq!(rows[0].id, None);
        assert_eq!(rows[1].id.as_deref(), Some("ab"));
    }

    #[test]
    fn a_missing_document_is_told_from_a_missing_database() {
        assert!(document_missing(
            br#"{"error":"not_found","reason":"missing"}"#
        ));
        assert!(document_missing(
            br#"{"error":"not_found","reason":"deleted"}"#
        ));
        assert!(!document_missing(
            br#"{"error":"not_found","reason":"Database does not exist."}"#
        ));
        assert!(!document_missing(b"<html>not found</html>"));
        assert!(!document_missing(b""));
    }
}
