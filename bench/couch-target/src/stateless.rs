//! The answers of the stateless target: every request answered in CouchDB's shape from
//! the request alone, nothing stored (bench/bench.py's target; see main.rs's table).

use std::io::Write as _;
use std::sync::OnceLock;

use crate::http::{Method, Request, escape, find, head_only, respond};

/// How large the answers to reads and queries are (`--answer-bytes`, `--rows`), set once
/// at start.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) answer_bytes: Option<usize>,
    pub(crate) rows: usize,
}

pub(crate) static SHAPE: OnceLock<Shape> = OnceLock::new();

fn shape() -> Shape {
    *SHAPE.get_or_init(|| Shape {
        answer_bytes: None,
        rows: 25,
    })
}

/// Buffers a connection reuses for its answers.
#[derive(Default)]
pub(crate) struct Scratch {
    body: Vec<u8>,
    ids: Vec<(usize, usize)>,
    generated: u64,
}

const WELCOME: &[u8] = br#"{"couchdb":"Welcome","version":"3.3.3","git_sha":"00000000","uuid":"00000000000000000000000000000000","features":[],"vendor":{"name":"sofabench couch-target"}}"#;
const NOT_FOUND_DB: &[u8] = br#"{"error":"not_found","reason":"Database does not exist."}"#;
const OK: &[u8] = br#"{"ok":true}"#;

/// Appends the answer to one request to `out`.
pub(crate) fn answer(
    request: &Request,
    input: &[u8],
    body: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) {
    let target = &input[request.target.0..request.target.1];
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    let path = path.strip_prefix(b"/").unwrap_or(path);
    let close = !request.keep_alive;
    let (database, document) = match path.iter().position(|&b| b == b'/') {
        Some(slash) => (&path[..slash], &path[slash + 1..]),
        None => (path, &b""[..]),
    };
    let method = request.method;
    let Scratch {
        body: b,
        ids,
        generated,
    } = scratch;
    b.clear();
    let status = if database.is_empty() {
        match method {
            Method::Get | Method::Head => {
                b.extend_from_slice(WELCOME);
                200
            }
            _ => method_not_allowed(b),
        }
    } else if document.is_empty() {
        match method {
            Method::Get | Method::Head => {
                b.extend_from_slice(NOT_FOUND_DB);
                404
            }
            Method::Put => {
                b.extend_from_slice(OK);
                201
            }
            Method::Delete => {
                b.extend_from_slice(OK);
                200
            }
            Method::Post => {
                *generated += 1;
                let id = format!("{:032x}", *generated);
                write_result(b, id.as_bytes(), 1);
                201
            }
            Method::Other => method_not_allowed(b),
        }
    } else if document == b"_bulk_docs" {
        if method != Method::Post {
            method_not_allowed(b)
        } else if bulk(body, ids) {
            b.push(b'[');
            for (i, &(from, to)) in ids.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                if from == to {
                    *generated += 1;
                    let id = format!("{:032x}", *generated);
                    write_result(b, id.as_bytes(), 1);
                } else {
                    write_result_json(b, &body[from..to], 1, false);
                }
            }
            b.push(b']');
            201
        } else {
            b.extend_from_slice(br#"{"error":"bad_request","reason":"Request body must be a JSON object with a docs array"}"#);
            400
        }
    } else if let Some(status) = query_answer(method, document, b) {
        status
    } else {
        match method {
            Method::Get | Method::Head => {
                write_document(b, document);
                200
            }
            Method::Put => {
                write_result(b, document, rev_generation(body, b"\"_rev\"") + 1);
                201
            }
            Method::Delete => {
                write_result(b, document, rev_generation(query, b"rev=") + 1);
                200
            }
            Method::Post | Method::Other => method_not_allowed(b),
        }
    };
    if method == Method::Head {
        head_only(out, status, b.len(), close);
    } else {
        respond(out, status, b, close);
    }
}

/// The answer to a query or an index's creation, when `document` names one.
fn query_answer(method: Method, document: &[u8], b: &mut Vec<u8>) -> Option<u16> {
    let view = document.starts_with(b"_design/") && contains(document, b"/_view/");
    match (method, document) {
        (Method::Post, b"_index") => {
            b.extend_from_slice(br#"{"result":"created","id":"_design/idx","name":"idx"}"#);
            Some(200)
        }
        (Method::Post, b"_find") => {
            write_rows(b, b"{\"docs\":[", true);
            Some(200)
        }
        (Method::Get | Method::Post, b"_all_docs") => {
            write_rows(b, b"{\"total_rows\":1000000,\"offset\":0,\"rows\":[", false);
            Some(200)
        }
        (Method::Get, _) if view => {
            write_rows(b, b"{\"total_rows\":1000000,\"offset\":0,\"rows\":[", false);
            Some(200)
        }
        _ => None,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `opening`, then `--rows` rows (documents for `_find`, `{"id","key","value"}` rows
/// otherwise) padded so that the whole is `--answer-bytes` long, then `]}`.
fn write_rows(b: &mut Vec<u8>, opening: &[u8], documents: bool) {
    let Shape { answer_bytes, rows } = shape();
    let total = answer_bytes.unwrap_or(100 * rows);
    // Each row's share of what the envelope leaves, less its commas.
    let per_row = total.saturating_sub(opening.len() + 2 + rows) / rows;
    b.extend_from_slice(opening);
    for k in 0..rows {
        if k > 0 {
            b.push(b',');
        }
        let start = b.len();
        let id = format!("row{k:08}");
        if documents {
            let _ = write!(b, r#"{{"_id":"{id}","_rev":""#);
            write_rev(b, id.as_bytes(), 1);
            b.extend_from_slice(br#"","pad":""#);
        } else {
            let _ = write!(b, r#"{{"id":"{id}","key":"{id}","value":""#);
        }
        // The padding, less the closing `"}`.
        let used = b.len() - start + 2;
        b.resize(b.len() + per_row.saturating_sub(used), b'x');
        b.extend_from_slice(b"\"}");
    }
    b.extend_from_slice(b"]}");
}

pub(crate) fn method_not_allowed(b: &mut Vec<u8>) -> u16 {
    b.extend_from_slice(
        br#"{"error":"method_not_allowed","reason":"Only the operations sofabench uses."}"#,
    );
    405
}

/// `{"ok":true,"id":ID,"rev":"G-HEX"}`; `id` from a URL (escaped here).
fn write_result(b: &mut Vec<u8>, id: &[u8], generation: u64) {
    write_result_json(b, id, generation, true);
}

/// Like [`write_result`]; `escaped`: `id` needs escaping (false: it is a JSON string's
/// contents from a body, already escaped).
fn write_result_json(b: &mut Vec<u8>, id: &[u8], generation: u64, escaped: bool) {
    b.extend_from_slice(br#"{"ok":true,"id":""#);
    if escaped {
        escape(b, id);
    } else {
        b.extend_from_slice(id);
    }
    b.extend_from_slice(br#"","rev":""#);
    write_rev(b, id, generation);
    b.extend_from_slice(br#""}"#);
}

/// The document every read gets: 250 bytes with a 21-character id such as sofabench's
/// `sb1234abcd-0000000042`, about the size of Iron Cushion's example document.
fn write_document(b: &mut Vec<u8>, id: &[u8]) {
    let start = b.len();
    b.extend_from_slice(br#"{"_id":""#);
    escape(b, id);
    b.extend_from_slice(br#"","_rev":""#);
    write_rev(b, id, 1);
    b.extend_from_slice(
        br#"","array1":[[0.7211,0.2131],{},true,null],"boolean1":true,"integer1":64523,"obj1":{"array2":[],"obj2":{"boolean2":false}},"string1":"couch-target answers every read with this.""#,
    );
    if let Some(bytes) = shape().answer_bytes {
        // `,"pad":"` and `"` around the padding, and the closing `}`.
        let used = b.len() - start + 10;
        b.extend_from_slice(br#","pad":""#);
        b.resize(b.len() + bytes.saturating_sub(used), b'x');
        b.push(b'"');
    }
    b.push(b'}');
}

pub(crate) fn write_rev(b: &mut Vec<u8>, id: &[u8], generation: u64) {
    let _ = write!(b, "{generation}-");
    let high = fnv1a(id, 0xcbf2_9ce4_8422_2325 ^ generation);
    let low = fnv1a(id, 0x8422_2325_cbf2_9ce4 ^ generation.rotate_left(17));
    let _ = write!(b, "{high:016x}{low:016x}");
}

pub(crate) fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    let mut hash = seed;
    for &byte in bytes {
        hash ^= byte as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The generation of the revision after `key` in `text` (`"_rev":"3-...` in a body,
/// `rev=3-...` in a query), or 0 when there is none.
fn rev_generation(text: &[u8], key: &[u8]) -> u64 {
    let Some(at) = find(text, key) else {
        return 0;
    };
    let rest = &text[at + key.len()..];
    let rest = rest
        .iter()
        .position(|b| b.is_ascii_digit())
        .filter(|&p| rest[..p].iter().all(|b| matches!(b, b' ' | b':' | b'"')))
        .map_or(&b""[..], |p| &rest[p..]);
    let mut generation = 0u64;
    for &byte in rest.iter().take_while(|b| b.is_ascii_digit()) {
        generation = generation
            .saturating_mul(10)
            .saturating_add((byte - b'0') as u64);
    }
    generation
}

/// Scans a `_bulk_docs` body `{"docs":[{...},{...}]}`: one entry per document in
/// `ids`, the range of its `_id` string in `body` (empty when it has none).
/// A single pass over the bytes that follows strings and nesting; false when the body
/// does not look like that.
fn bulk(body: &[u8], ids: &mut Vec<(usize, usize)>) -> bool {
    ids.clear();
    let mut depth = 0usize;
    let mut docs_array = false;
    // Inside a document (depth 3): was the last string a key `_id`, and what came last.
    let mut id_key_pending = false;
    let mut after_colon = false;
    let mut i = 0;
    while i < body.len() {
        let byte = body[i];
        match byte {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < body.len() && body[j] != b'"' {
                    j += if body[j] == b'\\' { 2 } else { 1 };
                }
                if j >= body.len() {
                    return false;
                }
                if depth == 3 && docs_array {
                    if after_colon {
                        if id_key_pending && let Some(last) = ids.last_mut() {
                            *last = (start, j);
                        }
                        id_key_pending = false;
                    } else {
                        id_key_pending = &body[start..j] == b"_id";
                    }
                }
                after_colon = false;
                i = j + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 2 {
                    docs_array = byte == b'[';
                }
                if depth == 3 && docs_array {
                    if byte != b'{' {
                        return false;
                    }
                    ids.push((0, 0));
                }
                after_colon = false;
            }
            b'}' | b']' => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
                after_colon = false;
            }
            b':' => after_colon = true,
            b',' => {
                after_colon = false;
                if depth == 3 {
                    id_key_pending = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    depth == 0 && docs_array
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Head, parse_head};

    fn ask(request: &str) -> String {
        let input = request.as_bytes();
        let Head::Complete(r) = parse_head(input) else {
            panic!("incomplete: {request}");
        };
        let body = &input[r.head_len..r.head_len + r.body_len];
        let mut out = Vec::new();
        answer(&r, input, body, &mut Scratch::default(), &mut out);
        String::from_utf8(out).unwrap()
    }

    fn body_of(response: &str) -> &str {
        response.split_once("\r\n\r\n").unwrap().1
    }

    #[test]
    fn setup_requests() {
        assert!(ask("GET / HTTP/1.1\r\n\r\n").contains("\"couchdb\":\"Welcome\""));
        assert!(ask("GET /bench HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask("PUT /bench HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 201"));
        assert!(ask("DELETE /bench HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn bulk_docs_answers_one_result_per_document() {
        let docs = r#"{"docs":[{"_id":"a-1","x":{"_id":"no"},"s":"_id"},{"y":[1,{"_id":"z"}],"_id":"a\"2"},{"k":"}]"}]}"#;
        let request = format!(
            "POST /bench/_bulk_docs HTTP/1.1\r\nContent-Length: {}\r\n\r\n{docs}",
            docs.len()
        );
        let response = ask(&request);
        assert!(response.starts_with("HTTP/1.1 201"), "{response}");
        let body = body_of(&response);
        assert_eq!(body.matches("\"ok\":true").count(), 3, "{body}");
        assert!(
            body.contains(r#"{"ok":true,"id":"a-1","rev":"1-"#),
            "{body}"
        );
        assert!(body.contains(r#""id":"a\"2","#), "{body}");
        let rev = body
            .split("\"rev\":\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(rev.len(), 34);
        assert!(rev[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn documents() {
        let read = ask("GET /bench/sb1234abcd-0000000042 HTTP/1.1\r\n\r\n");
        let body = body_of(&read);
        assert_eq!(body.len(), 250, "{body}");
        assert!(body.starts_with(r#"{"_id":"sb1234abcd-0000000042","_rev":"1-"#));
        let put =
            "PUT /bench/d HTTP/1.1\r\nContent-Length: 24\r\n\r\n{\"_rev\":\"3-abc\",\"x\":123}";
        assert!(body_of(&ask(put)).contains("\"rev\":\"4-"));
        let create = "PUT /bench/d HTTP/1.1\r\ncontent-length: 7\r\n\r\n{\"x\":1}";
        assert!(body_of(&ask(create)).contains("\"rev\":\"1-"));
        let delete = ask("DELETE /bench/d?rev=7-abc HTTP/1.1\r\n\r\n");
        assert!(delete.starts_with("HTTP/1.1 200"));
        assert!(body_of(&delete).starts_with(r#"{"ok":true,"id":"d","rev":"8-"#));
    }
}
