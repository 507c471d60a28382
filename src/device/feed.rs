//! The changes feed as a device reads it: `style=all_docs` (every leaf of a changed
//! document), a batch at a time, filtered as its scope says.

use std::time::Duration;

use serde_json::{Value, json};

use super::replica::{MAX_ID_BYTES, MAX_LEAVES};
use super::seq::Seq;
use super::spec::Scope;
use crate::driver::Method;
use crate::workload::Rev;
use crate::workload::changes::FeedKind;

/// One feed request.
pub struct FeedRequest {
    pub method: Method,
    pub path: String,
    pub body: Option<Vec<u8>>,
}

/// The request for a batch of at most `batch` changes after `since`; `wait` holds it
/// on the server until there is a change or `timeout` passes (longpoll). A continuous
/// feed is read as longpoll: one bounded answer per batch.
pub fn request(
    scope: &Scope,
    since: &Seq,
    batch: u32,
    wait: Option<(FeedKind, Duration)>,
) -> FeedRequest {
    let mut path = format!(
        "{}/_changes?style=all_docs&since={}&limit={batch}",
        scope.path(),
        since.query_value()
    );
    match wait {
        Some((FeedKind::Longpoll | FeedKind::Continuous, timeout)) => {
            path.push_str(&format!("&feed=longpoll&timeout={}", timeout.as_millis()));
        }
        Some((FeedKind::Normal, _)) | None => {}
    }
    let body = match scope {
        Scope::Database { .. } => None,
        Scope::DocIds { ids, .. } => {
            path.push_str("&filter=_doc_ids");
            Some(json!({ "doc_ids": ids.as_ref() }))
        }
        Scope::Selector { selector, .. } => {
            path.push_str("&filter=_selector");
            Some(json!({ "selector": selector.as_ref() }))
        }
    };
    FeedRequest {
        method: if body.is_some() {
            Method::Post
        } else {
            Method::Get
        },
        path,
        body: body.map(|body| body.to_string().into_bytes()),
    }
}

/// One row of the feed: a document and its leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub seq: Option<Seq>,
    pub id: String,
    pub revs: Vec<Rev>,
}

/// One answer of the feed.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub changes: Vec<Change>,
    /// Rows read (kept or not).
    pub rows: u64,
    /// Where the next read starts: the answer's `last_seq`, or the last kept row's
    /// sequence when rows beyond the batch were left.
    pub next: Option<Seq>,
    /// Whether rows beyond `most` were left (then the next read takes them).
    pub truncated: bool,
}

/// Reads a feed answer, keeping at most `most` rows; rows without an id or a revision
/// are skipped, and at most [`MAX_LEAVES`] revisions are taken of a row.
pub fn parse(body: &[u8], most: usize) -> Result<Batch, String> {
    let answer: Value = serde_json::from_slice(body).map_err(|_| "not JSON".to_string())?;
    let results = answer
        .get("results")
        .and_then(Value::as_array)
        .ok_or("no \"results\" list")?;
    let truncated = results.len() > most;
    let changes: Vec<Change> = results.iter().take(most).filter_map(change_of).collect();
    let next = if truncated {
        results[..most]
            .iter()
            .rev()
            .find_map(|row| row.get("seq").and_then(Seq::of))
    } else {
        answer.get("last_seq").and_then(Seq::of).or_else(|| {
            results
                .iter()
                .rev()
                .find_map(|row| row.get("seq").and_then(Seq::of))
        })
    };
    Ok(Batch {
        changes,
        rows: results.len().min(most) as u64,
        next,
        truncated,
    })
}

fn change_of(row: &Value) -> Option<Change> {
    let id = row.get("id")?.as_str()?;
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return None;
    }
    let revs: Vec<Rev> = row
        .get("changes")?
        .as_array()?
        .iter()
        .take(MAX_LEAVES)
        .filter_map(|change| Rev::parse(change.get("rev")?.as_str()?))
        .collect();
    (!revs.is_empty()).then(|| Change {
        seq: row.get("seq").and_then(Seq::of),
        id: id.to_string(),
        revs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn requests_follow_the_scope_and_the_wait() {
        let db = Scope::Database { path: "/db".into() };
        let plain = request(&db, &Seq::zero(), 100, None);
        assert_eq!(plain.path, "/db/_changes?style=all_docs&since=0&limit=100");
        assert!(plain.method == Method::Get && plain.body.is_none());
        let held = request(
            &db,
            &Seq::of_number(5),
            10,
            Some((FeedKind::Longpoll, Duration::from_secs(2))),
        );
        assert!(
            held.path
                .ends_with("since=5&limit=10&feed=longpoll&timeout=2000"),
            "{}",
            held.path
        );
        let ids = Scope::DocIds {
            path: "/db".into(),
            ids: Arc::from(vec!["a".to_string(), "b\"".to_string()]),
        };
        let filtered = request(&ids, &Seq::zero(), 100, None);
        assert!(filtered.method == Method::Post && filtered.path.ends_with("&filter=_doc_ids"));
        let body: Value = serde_json::from_slice(filtered.body.as_deref().unwrap()).unwrap();
        assert_eq!(body, json!({"doc_ids": ["a", "b\""]}));
        let selector = Scope::Selector {
            path: "/db".into(),
            selector: Arc::new(json!({"owner": "x"})),
        };
        let body: Value =
            serde_json::from_slice(&request(&selector, &Seq::zero(), 1, None).body.unwrap())
                .unwrap();
        assert_eq!(body, json!({"selector": {"owner": "x"}}));
    }

    #[test]
    fn answers_are_read_defensively_and_bounded() {
        let body = json!({"results": [
            {"seq": 1, "id": "a", "changes": [{"rev": "1-aa"}, {"rev": "2-bb"}]},
            {"seq": 2, "id": 7, "changes": [{"rev": "1-aa"}]},
            {"seq": 3, "id": "c", "changes": [{"rev": "bad"}]},
            {"seq": 4, "id": "d", "changes": [{"rev": "1-dd"}], "deleted": true}
        ], "last_seq": 4, "pending": 0})
        .to_string();
        let batch = parse(body.as_bytes(), 10).unwrap();
        assert_eq!(batch.rows, 4);
        assert_eq!(batch.changes.len(), 2);
        assert_eq!(batch.changes[0].revs.len(), 2);
        assert_eq!(
            (batch.next, batch.truncated),
            (Some(Seq::of_number(4)), false)
        );
        let cut = parse(body.as_bytes(), 1).unwrap();
        assert_eq!(
            (cut.rows, cut.next, cut.truncated),
            (1, Some(Seq::of_number(1)), true)
        );
        assert!(parse(b"[]", 10).is_err());
        assert!(parse(b"nonsense", 10).is_err());
    }
}
