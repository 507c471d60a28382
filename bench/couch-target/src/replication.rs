//! `--store`: the answers of the databases the store holds: what CouchDB's replication
//! protocol asks (`_local` logs, `_changes`, `_revs_diff`, `_bulk_get`, `_bulk_docs` with
//! `new_edits: false`) and the plain document writes that fill a database. Anything else
//! (queries, and every database the store does not hold) is the stateless target's.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::changes::{self, FeedRequest};
use crate::http::{Method, Request, decode, escape, respond};
use crate::store::{Database, EditError, Incoming, MAX_LOCAL, Store, parse_rev};

/// What the connection does with a request the store answered.
pub enum Answer {
    /// The answer is in the output.
    Done,
    /// A feed to hold (nothing written yet).
    Feed(FeedRequest),
}

/// The store's answer to `request`, or None when the stateless target answers it.
pub fn answer(
    request: &Request,
    target: &[u8],
    body: &[u8],
    store: &mut Store,
    out: &mut Vec<u8>,
) -> Option<Answer> {
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    let path = path.strip_prefix(b"/").unwrap_or(path);
    let (database, rest) = match path.iter().position(|&b| b == b'/') {
        Some(slash) => (&path[..slash], &path[slash + 1..]),
        None => (path, &b""[..]),
    };
    if database.is_empty() {
        return None;
    }
    let name = decode(database);
    let close = !request.keep_alive;
    let method = request.method;
    if rest.is_empty() {
        return database_answer(method, &name, store, out, close).then_some(Answer::Done);
    }
    let db = store.get_mut(&name)?;
    let mut b = Vec::new();
    let status = match (method, rest) {
        (Method::Get | Method::Post, b"_changes") => {
            return changes::answer(method, &name, query, body, db, out, close);
        }
        (Method::Get, b"_all_docs") => all_docs(query, db, &mut b),
        (Method::Post, b"_revs_diff") => revs_diff(body, db, &mut b),
        (Method::Post, b"_bulk_get") => bulk_get(body, db, &mut b),
        (Method::Post, b"_bulk_docs") => bulk_docs(body, db, &mut b),
        (Method::Post, b"_ensure_full_commit") => {
            b.extend_from_slice(br#"{"ok":true,"instance_start_time":"0"}"#);
            201
        }
        (_, b"_security") => {
            b.extend_from_slice(if method == Method::Get {
                b"{}"
            } else {
                br#"{"ok":true}"#
            });
            200
        }
        _ if rest.starts_with(b"_local/") => local(method, &decode(&rest[7..]), body, db, &mut b),
        (_, id) if !id.starts_with(b"_") => document(method, &decode(id), query, body, db, &mut b),
        _ => return None,
    };
    respond(out, status, &b, close);
    Some(Answer::Done)
}

/// `PUT`, `GET`, `HEAD` and `DELETE /db`; false when the stateless target answers.
fn database_answer(
    method: Method,
    name: &str,
    store: &mut Store,
    out: &mut Vec<u8>,
    close: bool,
) -> bool {
    let mut b = Vec::new();
    let status = match method {
        Method::Put if store.create(name) => {
            b.extend_from_slice(br#"{"ok":true}"#);
            201
        }
        Method::Put => {
            b.extend_from_slice(
                br#"{"error":"file_exists","reason":"The database could not be created, the file already exists."}"#,
            );
            412
        }
        Method::Get | Method::Head => {
            let Some(db) = store.get(name) else {
                return false;
            };
            let (docs, deleted) = db.counts();
            b.extend_from_slice(br#"{"db_name":""#);
            escape(&mut b, name.as_bytes());
            let _ = write!(
                b,
                r#"","update_seq":{},"doc_count":{docs},"doc_del_count":{deleted},"instance_start_time":"0","purge_seq":0,"compact_running":false,"disk_format_version":8,"sizes":{{"file":0,"external":0,"active":0}}}}"#,
                db.seq
            );
            200
        }
        Method::Delete if store.delete(name) => {
            b.extend_from_slice(br#"{"ok":true}"#);
            200
        }
        _ => return false,
    };
    if method == Method::Head {
        crate::http::head_only(out, status, b.len(), close);
    } else {
        respond(out, status, &b, close);
    }
    true
}

fn bad_request(b: &mut Vec<u8>, reason: &str) -> u16 {
    b.extend_from_slice(br#"{"error":"bad_request","reason":""#);
    escape(b, reason.as_bytes());
    b.extend_from_slice(b"\"}");
    400
}

fn not_found(b: &mut Vec<u8>) -> u16 {
    b.extend_from_slice(br#"{"error":"not_found","reason":"missing"}"#);
    404
}

fn conflict(b: &mut Vec<u8>) -> u16 {
    b.extend_from_slice(br#"{"error":"conflict","reason":"Document update conflict."}"#);
    409
}

/// `GET`, `PUT` and `DELETE /db/_local/id`: the body kept whole, revisions `0-N`.
fn local(method: Method, id: &str, body: &[u8], db: &mut Database, b: &mut Vec<u8>) -> u16 {
    match method {
        Method::Get | Method::Head => {
            let Some(local) = db.local(id) else {
                return not_found(b);
            };
            b.extend_from_slice(br#"{"_id":"_local/"#);
            escape(b, id.as_bytes());
            let _ = write!(b, r#"","_rev":"0-{}""#, local.rev);
            if local.body.len() > 2 {
                b.push(b',');
                b.extend_from_slice(&local.body.as_bytes()[1..]);
            } else {
                b.push(b'}');
            }
            200
        }
        Method::Put => {
            if body.len() > MAX_LOCAL {
                return bad_request(b, "_local documents are kept up to 64 KB here");
            }
            let Ok(mut object) =
                serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(body)
            else {
                return bad_request(b, "a _local document must be a JSON object");
            };
            object.remove("_id");
            let rev = object.remove("_rev");
            let rev = rev.as_ref().and_then(|r| r.as_str());
            let kept = serde_json::Value::Object(object).to_string();
            match db.put_local(id, rev, kept.into()) {
                Some(n) => {
                    b.extend_from_slice(br#"{"ok":true,"id":"_local/"#);
                    escape(b, id.as_bytes());
                    let _ = write!(b, r#"","rev":"0-{n}"}}"#);
                    201
                }
                None => conflict(b),
            }
        }
        Method::Delete => {
            if db.delete_local(id) {
                b.extend_from_slice(br#"{"ok":true}"#);
                200
            } else {
                not_found(b)
            }
        }
        _ => crate::stateless::method_not_allowed(b),
    }
}

/// `GET /db/_all_docs` (`startkey`, `skip`, `limit`, `include_docs`, `conflicts`): the
/// documents whose winner is not deleted, by id; a document's body is generated.
fn all_docs(query: &[u8], db: &Database, b: &mut Vec<u8>) -> u16 {
    let mut start: Option<String> = None;
    let (mut skip, mut limit) = (0usize, usize::MAX);
    let (mut include_docs, mut conflicts) = (false, false);
    for (name, value) in crate::http::params(query) {
        let number = |v: &str| v.parse::<usize>().ok();
        match &*name {
            "startkey" | "start_key" => match serde_json::from_str::<String>(&value) {
                Ok(key) => start = Some(key),
                Err(_) => return bad_request(b, "startkey must be a JSON string"),
            },
            "skip" => skip = number(&value).unwrap_or(0),
            "limit" => limit = number(&value).unwrap_or(usize::MAX),
            "include_docs" => include_docs = value == "true",
            "conflicts" => conflicts = value == "true",
            _ => {}
        }
    }
    let mut ids: Vec<&str> = db
        .ids()
        .filter(|id| start.as_deref().is_none_or(|s| *id >= s))
        .filter(|id| db.doc(id).is_some_and(|d| !d.winner().deleted))
        .collect();
    ids.sort_unstable();
    let (total, _) = db.counts();
    let _ = write!(b, r#"{{"total_rows":{total},"offset":{skip},"rows":["#);
    for (i, id) in ids.iter().skip(skip).take(limit).enumerate() {
        let Some(doc) = db.doc(id) else { continue };
        let winner = doc.winner();
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(br#"{"id":""#);
        escape(b, id.as_bytes());
        b.extend_from_slice(br#"","key":""#);
        escape(b, id.as_bytes());
        let _ = write!(b, r#"","value":{{"rev":"{}"}}"#, winner.rev());
        if include_docs {
            b.extend_from_slice(br#","doc":{"_id":""#);
            escape(b, id.as_bytes());
            let _ = write!(b, r#"","_rev":"{}""#, winner.rev());
            let mut others: Vec<&crate::store::Leaf> = doc
                .leaves
                .iter()
                .filter(|l| !l.deleted && *l != winner)
                .collect();
            if conflicts && !others.is_empty() {
                others.sort_by(|x, y| (y.pos, &y.path[0]).cmp(&(x.pos, &x.path[0])));
                b.extend_from_slice(br#","_conflicts":["#);
                let revs: Vec<String> = others.iter().map(|l| l.rev()).collect();
                string_list(b, revs.iter().map(|r| r.as_str()));
                b.push(b']');
            }
            b.push(b'}');
        }
        b.push(b'}');
    }
    b.extend_from_slice(b"]}");
    200
}

/// `POST /db/_revs_diff`: for each document, the revisions it lacks.
fn revs_diff(body: &[u8], db: &Database, b: &mut Vec<u8>) -> u16 {
    let Ok(asked) = serde_json::from_slice::<BTreeMap<String, Vec<String>>>(body) else {
        return bad_request(b, "_revs_diff needs {\"id\":[\"rev\",...],...}");
    };
    b.push(b'{');
    let mut first = true;
    for (id, revs) in &asked {
        let missing: Vec<&String> = revs.iter().filter(|r| !db.knows(id, r)).collect();
        if missing.is_empty() {
            continue;
        }
        if !first {
            b.push(b',');
        }
        first = false;
        b.push(b'"');
        escape(b, id.as_bytes());
        b.extend_from_slice(br#"":{"missing":["#);
        string_list(b, missing.iter().map(|s| s.as_str()));
        b.extend_from_slice(b"]");
        let lowest = missing
            .iter()
            .filter_map(|r| parse_rev(r))
            .map(|(p, _)| p)
            .min();
        if let (Some(doc), Some(lowest)) = (db.doc(id), lowest) {
            let ancestors: Vec<String> = doc
                .leaves
                .iter()
                .filter(|l| l.pos < lowest)
                .map(|l| l.rev())
                .collect();
            if !ancestors.is_empty() {
                b.extend_from_slice(br#","possible_ancestors":["#);
                string_list(b, ancestors.iter().map(|s| s.as_str()));
                b.push(b']');
            }
        }
        b.push(b'}');
    }
    b.push(b'}');
    200
}

fn string_list<'a>(b: &mut Vec<u8>, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.push(b'"');
        escape(b, item.as_bytes());
        b.push(b'"');
    }
}

#[derive(Deserialize)]
struct BulkGet {
    docs: Vec<BulkGetDoc>,
}

#[derive(Deserialize)]
struct BulkGetDoc {
    id: String,
    rev: Option<String>,
}

/// `POST /db/_bulk_get?revs=true&latest=true`: each revision asked for (or the leaves
/// that descend from it), with `_revisions` and a generated body of its size.
fn bulk_get(body: &[u8], db: &Database, b: &mut Vec<u8>) -> u16 {
    let Ok(asked) = serde_json::from_slice::<BulkGet>(body) else {
        return bad_request(b, "_bulk_get needs {\"docs\":[{\"id\":..,\"rev\":..},...]}");
    };
    b.extend_from_slice(br#"{"results":["#);
    for (i, want) in asked.docs.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(br#"{"id":""#);
        escape(b, want.id.as_bytes());
        b.extend_from_slice(br#"","docs":["#);
        let doc = db.doc(&want.id);
        let found: Vec<&crate::store::Leaf> = match (doc, want.rev.as_deref().map(parse_rev)) {
            (Some(doc), None) => vec![doc.winner()],
            (Some(doc), Some(Some((pos, hash)))) => doc.leaves_from(pos, hash).collect(),
            _ => Vec::new(),
        };
        if found.is_empty() {
            b.extend_from_slice(br#"{"error":{"id":""#);
            escape(b, want.id.as_bytes());
            b.extend_from_slice(br#"","rev":""#);
            escape(b, want.rev.as_deref().unwrap_or("").as_bytes());
            b.extend_from_slice(br#"","error":"not_found","reason":"missing"}}"#);
        }
        for (k, leaf) in found.iter().enumerate() {
            if k > 0 {
                b.push(b',');
            }
            b.extend_from_slice(br#"{"ok":"#);
            write_revision(b, &want.id, leaf);
            b.push(b'}');
        }
        b.extend_from_slice(b"]}");
    }
    b.extend_from_slice(b"]}");
    200
}

/// A revision as `_bulk_get` returns it: `_revisions`, and a body padded to its size.
fn write_revision(b: &mut Vec<u8>, id: &str, leaf: &crate::store::Leaf) {
    let start = b.len();
    b.extend_from_slice(br#"{"_id":""#);
    escape(b, id.as_bytes());
    let _ = write!(
        b,
        r#"","_rev":"{}","_revisions":{{"start":{},"ids":["#,
        leaf.rev(),
        leaf.pos
    );
    string_list(b, leaf.path.iter().map(|h| &**h));
    b.extend_from_slice(b"]}");
    if leaf.deleted {
        b.extend_from_slice(br#","_deleted":true}"#);
        return;
    }
    // `,"pad":"` and `"}` around the padding.
    let used = b.len() - start + 10;
    b.extend_from_slice(br#","pad":""#);
    b.resize(b.len() + (leaf.bytes as usize).saturating_sub(used), b'x');
    b.extend_from_slice(b"\"}");
}

#[derive(Deserialize)]
struct BulkDocs<'a> {
    #[serde(borrow)]
    docs: Vec<&'a RawValue>,
    new_edits: Option<bool>,
}

#[derive(Deserialize)]
struct DocHead {
    #[serde(rename = "_id")]
    id: Option<String>,
    #[serde(rename = "_rev")]
    rev: Option<String>,
    #[serde(rename = "_deleted", default)]
    deleted: bool,
    #[serde(rename = "_revisions")]
    revisions: Option<Revisions>,
}

#[derive(Deserialize)]
struct Revisions {
    start: u64,
    ids: Vec<String>,
}

/// `POST /db/_bulk_docs`: with `new_edits: false` the revisions are stored as they come
/// and only errors are answered (`[]` when all is well); otherwise edits, one result per
/// document.
fn bulk_docs(body: &[u8], db: &mut Database, b: &mut Vec<u8>) -> u16 {
    let Ok(bulk) = serde_json::from_slice::<BulkDocs>(body) else {
        return bad_request(b, "Request body must be a JSON object with a docs array");
    };
    let replicated = bulk.new_edits == Some(false);
    b.push(b'[');
    let mut rows = 0;
    for raw in &bulk.docs {
        let bytes = u32::try_from(raw.get().len()).unwrap_or(u32::MAX);
        let head = serde_json::from_str::<DocHead>(raw.get());
        let row = match head {
            Err(_) => Some(Err((
                String::new(),
                "bad_request",
                "a document must be a JSON object",
            ))),
            Ok(head) if replicated => replicate_one(&head, bytes, db).err().map(Err),
            Ok(head) => Some(edit_one(&head, bytes, db)),
        };
        if let Some(row) = row {
            if rows > 0 {
                b.push(b',');
            }
            rows += 1;
            write_row(b, row);
        }
    }
    b.push(b']');
    db.announce();
    201
}

type Row = Result<(String, String), (String, &'static str, &'static str)>;

fn write_row(b: &mut Vec<u8>, row: Row) {
    match row {
        Ok((id, rev)) => {
            b.extend_from_slice(br#"{"ok":true,"id":""#);
            escape(b, id.as_bytes());
            let _ = write!(b, r#"","rev":"{rev}"}}"#);
        }
        Err((id, error, reason)) => {
            b.extend_from_slice(br#"{"id":""#);
            escape(b, id.as_bytes());
            let _ = write!(b, r#"","error":"{error}","reason":"{reason}"}}"#);
        }
    }
}

fn replicate_one(
    head: &DocHead,
    bytes: u32,
    db: &mut Database,
) -> Result<(), (String, &'static str, &'static str)> {
    let id = head.id.as_deref().unwrap_or("");
    let refuse = |reason| Err((id.to_string(), "bad_request", reason));
    let Some((pos, hash)) = head.rev.as_deref().and_then(parse_rev) else {
        return refuse("new_edits=false needs _id and _rev");
    };
    if id.is_empty() {
        return refuse("new_edits=false needs _id and _rev");
    }
    let own = [hash.to_string()];
    let ids: &[String] = match &head.revisions {
        Some(r) if r.start == pos && r.ids.first().map(|s| s.as_str()) == Some(hash) => &r.ids,
        Some(_) => return refuse("_revisions does not start at _rev"),
        None => &own,
    };
    db.merge(
        id,
        Incoming {
            pos,
            ids,
            deleted: head.deleted,
            bytes,
        },
    );
    Ok(())
}

fn edit_one(head: &DocHead, bytes: u32, db: &mut Database) -> Row {
    let id = match &head.id {
        Some(id) => id.clone(),
        None => format!("{:032x}", db.seq + 1),
    };
    match db.edit(&id, head.rev.as_deref(), head.deleted, bytes) {
        Ok(rev) => Ok((id, rev)),
        Err(EditError::Conflict) => Err((id, "conflict", "Document update conflict.")),
    }
}

/// `GET`, `PUT`, `DELETE /db/id` of a document the store holds.
fn document(
    method: Method,
    id: &str,
    query: &[u8],
    body: &[u8],
    db: &mut Database,
    b: &mut Vec<u8>,
) -> u16 {
    match method {
        Method::Get | Method::Head => match db.doc(id) {
            Some(doc) if !doc.winner().deleted => {
                let leaf = doc.winner().clone();
                write_revision(b, id, &leaf);
                200
            }
            _ => not_found(b),
        },
        Method::Put | Method::Delete => {
            let (rev, deleted) = if method == Method::Put {
                let head = serde_json::from_slice::<DocHead>(body);
                let Ok(head) = head else {
                    return bad_request(b, "a document must be a JSON object");
                };
                (head.rev, head.deleted)
            } else {
                let rev = crate::http::params(query)
                    .find(|(n, _)| n == "rev")
                    .map(|(_, v)| v.into_owned());
                (rev, true)
            };
            let bytes = u32::try_from(body.len()).unwrap_or(u32::MAX);
            match db.edit(id, rev.as_deref(), deleted, bytes) {
                Ok(rev) => {
                    db.announce();
                    write_row(b, Ok((id.to_string(), rev)));
                    if method == Method::Put { 201 } else { 200 }
                }
                Err(EditError::Conflict) => conflict(b),
            }
        }
        _ => crate::stateless::method_not_allowed(b),
    }
}

/// The `doc_ids` a feed follows (`filter=_doc_ids`), from the query or a POST body.
pub fn doc_ids(query_value: Option<&str>, body: &[u8]) -> Result<Rc<HashSet<Box<str>>>, String> {
    #[derive(Deserialize)]
    struct Body {
        doc_ids: Vec<String>,
    }
    let ids: Vec<String> = match query_value {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("doc_ids: {e}"))?,
        None => {
            serde_json::from_slice::<Body>(body)
                .map_err(|e| format!("filter=_doc_ids needs doc_ids: {e}"))?
                .doc_ids
        }
    };
    Ok(Rc::new(
        ids.into_iter().map(String::into_boxed_str).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Head, parse_head};

    fn ask(store: &mut Store, request: &str) -> (u16, serde_json::Value) {
        let input = request.as_bytes();
        let Head::Complete(r) = parse_head(input) else {
            panic!("incomplete: {request}");
        };
        let body = &input[r.head_len..r.head_len + r.body_len];
        let target = &input[r.target.0..r.target.1];
        let mut out = Vec::new();
        assert!(matches!(
            answer(&r, target, body, store, &mut out),
            Some(Answer::Done)
        ));
        let text = String::from_utf8(out).unwrap();
        let status = text[9..12].parse().unwrap();
        let body = text.split_once("\r\n\r\n").unwrap().1;
        (
            status,
            serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
        )
    }

    fn post(store: &mut Store, path: &str, body: &str) -> (u16, serde_json::Value) {
        let request = format!(
            "POST {path} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        ask(store, &request)
    }

    #[test]
    fn a_push_then_a_pull_as_a_replicator_makes_them() {
        let mut store = Store::default();
        assert_eq!(ask(&mut store, "PUT /db HTTP/1.1\r\n\r\n").0, 201);
        assert_eq!(ask(&mut store, "PUT /db HTTP/1.1\r\n\r\n").0, 412);
        let (status, diff) = post(&mut store, "/db/_revs_diff", r#"{"d":["2-b"]}"#);
        assert_eq!(
            (status, &diff["d"]["missing"][0]),
            (200, &serde_json::json!("2-b"))
        );
        let docs = r#"{"new_edits":false,"docs":[
            {"_id":"d","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"v":1},
            {"_id":"d","_rev":"2-c","_revisions":{"start":2,"ids":["c","a"]}},
            {"_id":"e","_rev":"1-x","_deleted":true},
            {"_id":"f","_rev":"3-x","_revisions":{"start":2,"ids":["x"]}}]}"#;
        let (status, rows) = post(&mut store, "/db/_bulk_docs", docs);
        assert_eq!(status, 201);
        assert_eq!(rows.as_array().unwrap().len(), 1, "only f's error: {rows}");
        assert_eq!(rows[0]["id"], "f");
        assert_eq!(
            post(&mut store, "/db/_revs_diff", r#"{"d":["2-b","1-a"]}"#).1,
            serde_json::json!({})
        );
        let (_, got) = post(
            &mut store,
            "/db/_bulk_get?revs=true&latest=true",
            r#"{"docs":[{"id":"d","rev":"1-a"},{"id":"e"}]}"#,
        );
        let d = got["results"][0]["docs"].as_array().unwrap();
        assert_eq!(d.len(), 2, "1-a's two leaves: {got}");
        assert_eq!(d[0]["ok"]["_revisions"]["ids"][1], "a");
        assert_eq!(got["results"][1]["docs"][0]["ok"]["_deleted"], true);
        let (_, all) = ask(
            &mut store,
            "GET /db/_all_docs?include_docs=true&conflicts=true HTTP/1.1\r\n\r\n",
        );
        assert_eq!(
            all["rows"].as_array().unwrap().len(),
            1,
            "e is deleted: {all}"
        );
        assert_eq!(all["rows"][0]["value"]["rev"], "2-c");
        assert_eq!(
            all["rows"][0]["doc"]["_conflicts"],
            serde_json::json!(["2-b"])
        );
        let (_, info) = ask(&mut store, "GET /db HTTP/1.1\r\n\r\n");
        assert_eq!(
            (info["update_seq"].as_u64(), info["doc_count"].as_u64()),
            (Some(3), Some(1))
        );
    }
}
