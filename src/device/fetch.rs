//! Fetching the revisions a device lacks, with their ancestry (`revs=true`) and the
//! newest leaf each leads to (`latest=true`): `POST _bulk_get`, or one
//! `GET /db/id?open_revs=[…]` per document where the server refuses `_bulk_get`.

use serde_json::{Value, json};

use super::cycle::Cycle;
use super::error::{Step, SyncError};
use super::http::{self, DeviceHttp};
use super::replica::{Leaf, MAX_ID_BYTES};
use crate::driver::Method;
use crate::workload::Rev;

/// The most ancestors of a fetched revision read (CouchDB's `_revs_limit` is 1000 unless
/// raised); a longer history is cut, which only loses ancestors the device never needs.
pub const MAX_HISTORY: usize = 10_000;

/// A revision fetched, with its ancestry as `_revisions` gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fetched {
    pub id: String,
    pub leaf: Leaf,
    pub start: u32,
    pub ids: Vec<String>,
}

/// What one fetch got.
#[derive(Debug, Default)]
pub struct Got {
    pub revisions: Vec<Fetched>,
    /// Revisions asked for that did not come (an error, `missing`, or an unusable
    /// document).
    pub failures: u64,
}

/// The revisions of `wanted` by `_bulk_get`; `None` when the server has no `_bulk_get`
/// (404, 405, 400, 501), so the caller falls back to `open_revs`.
pub async fn bulk_get(
    http: &mut impl DeviceHttp,
    cycle: &mut Cycle,
    db: &str,
    wanted: &[(String, Rev)],
) -> Result<Option<Got>, SyncError> {
    let docs: Vec<Value> = wanted
        .iter()
        .map(|(id, rev)| json!({"id": id, "rev": rev_text(rev)}))
        .collect();
    let body = json!({ "docs": docs }).to_string();
    let path = format!("{db}/_bulk_get?revs=true&latest=true");
    let answer = http::exchange(
        http,
        cycle,
        Step::BulkGet,
        (Method::Post, &path),
        Some(body.as_bytes()),
    )
    .await?;
    match answer.status {
        200 => {}
        400 | 404 | 405 | 501 => return Ok(None),
        _ => return Err(http::status_error(http, Step::BulkGet, &answer)),
    }
    let answer: Value = serde_json::from_slice(&answer.body)
        .map_err(|_| SyncError::bad(Step::BulkGet, "not JSON"))?;
    let results = answer
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| SyncError::bad(Step::BulkGet, "no \"results\" list"))?;
    let mut got = Got::default();
    // At most one result per revision asked for; the rest are not read.
    for result in results.iter().take(wanted.len()) {
        let Some(docs) = result.get("docs").and_then(Value::as_array) else {
            continue;
        };
        for doc in docs.iter().take(wanted.len()) {
            take_one(doc.get("ok"), wanted, &mut got);
        }
    }
    count_missing(wanted, &mut got);
    Ok(Some(got))
}

/// The revisions `revs` of document `id` by `GET ?open_revs=[…]`.
pub async fn open_revs(
    http: &mut impl DeviceHttp,
    cycle: &mut Cycle,
    db: &str,
    (id, revs): (&str, &[Rev]),
) -> Result<Got, SyncError> {
    let listed: Vec<String> = revs.iter().map(rev_text).collect();
    let open_revs: String =
        url::form_urlencoded::byte_serialize(json!(listed).to_string().as_bytes()).collect();
    let mut path = format!("{db}/");
    push_segment(&mut path, id);
    path.push_str(&format!("?revs=true&latest=true&open_revs={open_revs}"));
    let answer = http::exchange(http, cycle, Step::OpenRevs, (Method::Get, &path), None).await?;
    let wanted: Vec<(String, Rev)> = revs
        .iter()
        .map(|rev| (id.to_string(), rev.clone()))
        .collect();
    let mut got = Got::default();
    match answer.status {
        200 => {
            let answer: Value = serde_json::from_slice(&answer.body)
                .map_err(|_| SyncError::bad(Step::OpenRevs, "not JSON"))?;
            let rows = answer
                .as_array()
                .ok_or_else(|| SyncError::bad(Step::OpenRevs, "not a list"))?;
            for row in rows.iter().take(revs.len()) {
                take_one(row.get("ok"), &wanted, &mut got);
            }
        }
        // The document is gone (purged): nothing of it to take.
        404 => {}
        _ => return Err(http::status_error(http, Step::OpenRevs, &answer)),
    }
    count_missing(&wanted, &mut got);
    Ok(got)
}

/// Takes one fetched document if it is usable and of a document asked for.
fn take_one(doc: Option<&Value>, wanted: &[(String, Rev)], got: &mut Got) {
    let Some(fetched) = doc.and_then(fetched_of) else {
        return;
    };
    if wanted.iter().any(|(id, _)| *id == fetched.id)
        && !got
            .revisions
            .iter()
            .any(|g| g.id == fetched.id && g.leaf.rev == fetched.leaf.rev)
    {
        got.revisions.push(fetched);
    }
}

/// Counts the revisions asked for of which no revision came for their document.
fn count_missing(wanted: &[(String, Rev)], got: &mut Got) {
    let missing = wanted
        .iter()
        .filter(|(id, _)| !got.revisions.iter().any(|g| g.id == *id))
        .count();
    got.failures = got.failures.saturating_add(missing as u64);
}

/// A fetched document's id, revision, deleted flag and ancestry; `None` unless its
/// `_revisions` starts at its own revision.
fn fetched_of(doc: &Value) -> Option<Fetched> {
    let id = doc.get("_id")?.as_str()?;
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return None;
    }
    let rev = Rev::parse(doc.get("_rev")?.as_str()?)?;
    let deleted = doc
        .get("_deleted")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let revisions = doc.get("_revisions")?;
    let start = u32::try_from(revisions.get("start")?.as_u64()?).ok()?;
    let ids: Vec<String> = revisions
        .get("ids")?
        .as_array()?
        .iter()
        .take(MAX_HISTORY)
        .map(|id| id.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    let own_hash = rev_text(&rev);
    let first_ok = ids
        .first()
        .is_some_and(|first| own_hash.split_once('-').is_some_and(|(_, h)| h == first));
    (start == rev.generation() && first_ok && ids.len() <= start as usize).then(|| Fetched {
        id: id.to_string(),
        leaf: Leaf { rev, deleted },
        start,
        ids,
    })
}

pub fn rev_text(rev: &Rev) -> String {
    let mut text = String::with_capacity(rev.text_len());
    rev.write_to(&mut text);
    text
}

/// Appends `id` to a path as one segment (a design document's `_design/` kept as CouchDB
/// expects it).
pub fn push_segment(path: &mut String, id: &str) {
    let (prefix, rest) = match id.strip_prefix("_design/") {
        Some(rest) => ("_design/", rest),
        None => ("", id),
    };
    path.push_str(prefix);
    for byte in rest.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b':') {
            path.push(byte as char);
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetched_document_needs_a_history_that_starts_at_it() {
        let good = json!({"_id": "a", "_rev": "3-cc", "_revisions": {"start": 3, "ids": ["cc", "bb", "aa"]}});
        let fetched = fetched_of(&good).unwrap();
        assert_eq!(
            (fetched.start, fetched.ids.len(), fetched.leaf.deleted),
            (3, 3, false)
        );
        for bad in [
            json!({"_id": "a", "_rev": "3-cc"}),
            json!({"_id": "a", "_rev": "3-cc", "_revisions": {"start": 2, "ids": ["cc"]}}),
            json!({"_id": "a", "_rev": "3-cc", "_revisions": {"start": 3, "ids": ["dd"]}}),
            json!({"_id": "a", "_rev": "1-cc", "_revisions": {"start": 1, "ids": ["cc", "x"]}}),
            json!({"_id": 5, "_rev": "1-cc", "_revisions": {"start": 1, "ids": ["cc"]}}),
        ] {
            assert!(fetched_of(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn ids_become_one_path_segment() {
        let mut path = String::from("/db/");
        push_segment(&mut path, "a/b c?");
        assert_eq!(path, "/db/a%2Fb%20c%3F");
        let mut path = String::new();
        push_segment(&mut path, "_design/x y");
        assert_eq!(path, "_design/x%20y");
    }
}
