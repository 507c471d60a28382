//! `--store`: `GET` and `POST /db/_changes`: the query, the rows (`style=all_docs` or
//! the winner only, `filter=_doc_ids`), the normal feed's answer, and what a longpoll or
//! continuous feed needs to be held (`crate::feed` holds it).

use std::collections::HashSet;
use std::io::Write as _;
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::watch;

use crate::http::{Method, escape, params, respond};
use crate::replication::{Answer, doc_ids};
use crate::store::Database;

/// CouchDB's default for a feed's `timeout` (and a `heartbeat=true`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest feed timeout or heartbeat taken as asked; longer is cut to this.
const LONGEST: Duration = Duration::from_secs(3600);
/// The shortest heartbeat: a shorter one is raised to this (a client asking for 0 must
/// not turn a held feed into a busy loop).
const SHORTEST_HEARTBEAT: Duration = Duration::from_millis(10);

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feed {
    Normal,
    Longpoll,
    Continuous,
}

/// Which rows a feed reads.
#[derive(Clone)]
pub struct Select {
    /// `filter=_doc_ids`: only these documents.
    pub ids: Option<Rc<HashSet<Box<str>>>>,
    /// `style=all_docs`: every leaf; otherwise the winner only.
    pub all_docs: bool,
}

/// A feed to hold: a longpoll with nothing to answer yet, or a continuous feed.
pub struct FeedRequest {
    pub database: Box<str>,
    /// Wakes the feed when its database changes (and only its database).
    pub changed: watch::Receiver<u64>,
    pub feed: Feed,
    pub since: u64,
    pub select: Select,
    pub limit: u64,
    pub heartbeat: Option<Duration>,
    pub timeout: Duration,
    pub close: bool,
}

/// What one scan of the changes found.
pub struct Batch {
    pub rows: u64,
    /// The sequence the scan reached: the last row's when `limit` cut it, else the
    /// database's.
    pub last_seq: u64,
}

struct Query {
    feed: Feed,
    since: Option<u64>,
    limit: u64,
    heartbeat: Option<Duration>,
    timeout: Duration,
    all_docs: bool,
    filter: Option<String>,
    doc_ids: Option<String>,
}

fn milliseconds(value: &str, name: &str) -> Result<Duration, String> {
    if value == "true" {
        return Ok(DEFAULT_TIMEOUT);
    }
    let ms: u64 = value
        .parse()
        .map_err(|_| format!("{name} needs milliseconds, not {value:?}"))?;
    Ok(Duration::from_millis(ms).min(LONGEST))
}

fn parse_query(query: &[u8]) -> Result<Query, String> {
    let mut q = Query {
        feed: Feed::Normal,
        since: Some(0),
        limit: u64::MAX,
        heartbeat: None,
        timeout: DEFAULT_TIMEOUT,
        all_docs: false,
        filter: None,
        doc_ids: None,
    };
    for (name, value) in params(query) {
        match &*name {
            "feed" => {
                q.feed = match &*value {
                    "normal" => Feed::Normal,
                    "longpoll" => Feed::Longpoll,
                    "continuous" | "eventsource" => Feed::Continuous,
                    other => return Err(format!("feed={other} is not a feed")),
                }
            }
            // `now` is None: the database's sequence, once it is known.
            "since" if value == "now" => q.since = None,
            "since" => {
                let digits: String = value.chars().take_while(|c| c.is_ascii_digit()).collect();
                q.since = Some(
                    digits
                        .parse()
                        .map_err(|_| format!("since={value} is not a sequence"))?,
                );
            }
            "limit" => {
                q.limit = value
                    .parse()
                    .map_err(|_| format!("limit={value} is not a number"))?
            }
            "heartbeat" => {
                q.heartbeat = Some(milliseconds(&value, "heartbeat")?.max(SHORTEST_HEARTBEAT))
            }
            "timeout" => q.timeout = milliseconds(&value, "timeout")?,
            "style" => q.all_docs = value == "all_docs",
            "filter" => q.filter = Some(value.into_owned()),
            "doc_ids" => q.doc_ids = Some(value.into_owned()),
            _ => {}
        }
    }
    Ok(q)
}

/// The answer to `_changes`: a normal feed's (or a longpoll's that has rows already) at
/// once, else a feed to hold.
pub fn answer(
    method: Method,
    name: &str,
    query: &[u8],
    body: &[u8],
    db: &mut Database,
    out: &mut Vec<u8>,
    close: bool,
) -> Option<Answer> {
    let refuse = |out: &mut Vec<u8>, reason: &str| {
        let mut b = br#"{"error":"bad_request","reason":""#.to_vec();
        escape(&mut b, reason.as_bytes());
        b.extend_from_slice(b"\"}");
        respond(out, 400, &b, close);
        Some(Answer::Done)
    };
    let q = match parse_query(query) {
        Ok(q) => q,
        Err(reason) => return refuse(out, &reason),
    };
    let ids = match q.filter.as_deref() {
        None => None,
        Some("_doc_ids") => {
            let body = if method == Method::Post { body } else { b"" };
            match doc_ids(q.doc_ids.as_deref(), body) {
                Ok(ids) => Some(ids),
                Err(reason) => return refuse(out, &reason),
            }
        }
        Some(other) => {
            return refuse(
                out,
                &format!("couch-target knows filter=_doc_ids only, not {other}"),
            );
        }
    };
    let select = Select {
        ids,
        all_docs: q.all_docs,
    };
    let since = q.since.unwrap_or(db.seq);
    if q.feed != Feed::Continuous {
        let mut rows = Vec::new();
        let batch = write_rows(db, since, &select, q.limit, &mut rows, b",\n");
        if q.feed == Feed::Normal || batch.rows > 0 || q.limit == 0 {
            let mut b = Vec::with_capacity(rows.len() + 64);
            envelope(
                &mut b,
                &rows,
                batch.last_seq,
                db.pending_after(batch.last_seq),
            );
            respond(out, 200, &b, close);
            return Some(Answer::Done);
        }
    }
    Some(Answer::Feed(FeedRequest {
        database: name.into(),
        changed: db.subscribe(),
        feed: q.feed,
        since,
        select,
        limit: q.limit,
        heartbeat: q.heartbeat,
        timeout: q.timeout,
        close,
    }))
}

/// A normal (or longpoll) answer around rows written by [`write_rows`] with `,\n`.
pub fn envelope(b: &mut Vec<u8>, rows: &[u8], last_seq: u64, pending: u64) {
    b.extend_from_slice(b"{\"results\":[\n");
    envelope_end(b, rows, last_seq, pending);
}

/// The rest of [`envelope`] after `{"results":[` and a newline went out.
pub fn envelope_end(b: &mut Vec<u8>, rows: &[u8], last_seq: u64, pending: u64) {
    b.extend_from_slice(rows);
    let _ = writeln!(b, "\n],\n\"last_seq\":{last_seq},\"pending\":{pending}}}");
}

/// Writes the rows after `since` that `select` keeps, at most `limit`, each followed by
/// `separator` but the last (a continuous feed passes `\n` and ends the last itself).
pub fn write_rows(
    db: &Database,
    since: u64,
    select: &Select,
    limit: u64,
    b: &mut Vec<u8>,
    separator: &[u8],
) -> Batch {
    let mut rows = 0;
    for (seq, id, doc) in db.changes_since(since) {
        if rows == limit {
            break;
        }
        if select.ids.as_ref().is_some_and(|ids| !ids.contains(id)) {
            continue;
        }
        if rows > 0 {
            b.extend_from_slice(separator);
        }
        rows += 1;
        let _ = write!(b, r#"{{"seq":{seq},"id":""#);
        escape(b, id.as_bytes());
        b.extend_from_slice(br#"","changes":["#);
        let leaves = doc
            .leaves_winner_first()
            .take(if select.all_docs { usize::MAX } else { 1 });
        for (k, leaf) in leaves.enumerate() {
            if k > 0 {
                b.push(b',');
            }
            let _ = write!(b, r#"{{"rev":"{}"}}"#, leaf.rev());
        }
        b.push(b']');
        if doc.winner().deleted {
            b.extend_from_slice(br#","deleted":true"#);
        }
        b.push(b'}');
        if rows == limit {
            return Batch {
                rows,
                last_seq: seq,
            };
        }
    }
    Batch {
        rows,
        last_seq: db.seq.max(since),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Incoming, Store};

    fn store() -> Store {
        let mut store = Store::default();
        store.create("db");
        let db = store.get_mut("db").unwrap();
        for id in ["a", "b", "c"] {
            db.edit(id, None, false, 100).unwrap();
        }
        let ids = vec!["x".to_string()];
        db.merge(
            "b",
            Incoming {
                pos: 1,
                ids: &ids,
                deleted: false,
                bytes: 9,
            },
        );
        store
    }

    fn feed(query: &str, body: &str) -> (String, Option<FeedRequest>) {
        let mut store = store();
        let db = store.get_mut("db").unwrap();
        let mut out = Vec::new();
        let method = if body.is_empty() {
            Method::Get
        } else {
            Method::Post
        };
        let answer = answer(
            method,
            "db",
            query.as_bytes(),
            body.as_bytes(),
            db,
            &mut out,
            false,
        );
        let held = match answer {
            Some(Answer::Feed(f)) => Some(f),
            _ => None,
        };
        (String::from_utf8(out).unwrap(), held)
    }

    #[test]
    fn normal_feeds_list_leaves_filter_and_limit() {
        let (out, held) = feed("style=all_docs&since=0", "");
        assert!(held.is_none());
        let body = out.split_once("\r\n\r\n").unwrap().1;
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        let results = value["results"].as_array().unwrap();
        assert_eq!(results.len(), 3, "{body}");
        assert_eq!(value["last_seq"], 4);
        let b = results.iter().find(|r| r["id"] == "b").unwrap();
        assert_eq!(b["seq"], 4);
        assert_eq!(b["changes"].as_array().unwrap().len(), 2);
        let (out, _) = feed("limit=1&since=1", "");
        let value: serde_json::Value =
            serde_json::from_str(out.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(value["results"].as_array().unwrap().len(), 1);
        assert_eq!(value["last_seq"], 3);
        assert_eq!(value["pending"], 1);
        let (out, _) = feed(
            "filter=_doc_ids&style=all_docs",
            r#"{"doc_ids":["c","zz"]}"#,
        );
        let value: serde_json::Value =
            serde_json::from_str(out.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(value["results"][0]["id"], "c");
        assert_eq!(value["results"].as_array().unwrap().len(), 1);
        assert_eq!(value["last_seq"], 4);
    }

    #[test]
    fn longpolls_with_nothing_new_are_held() {
        let (out, held) = feed("feed=longpoll&since=4&heartbeat=10000&timeout=500", "");
        assert!(out.is_empty());
        let held = held.unwrap();
        assert_eq!(
            (held.since, held.heartbeat, held.timeout),
            (4, Some(Duration::from_secs(10)), Duration::from_millis(500))
        );
        let (out, held) = feed("feed=longpoll&since=3", "");
        assert!(held.is_none() && out.contains("\"seq\":4"), "{out}");
        let (_, held) = feed("feed=continuous&since=now", "");
        assert_eq!(held.unwrap().since, 4);
        let (out, _) = feed("feed=sideways", "");
        assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    }
}
