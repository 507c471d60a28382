//! couch-target: an HTTP/1.1 server that answers the CouchDB operations sofabench (and a
//! load generator such as wrk or oha) sends, in CouchDB's response shape, and stores
//! nothing. It is the fast local target of `bench/bench.py`: on one core it must answer
//! faster than any client can ask, so that a benchmark of clients measures the clients.
//!
//! ```text
//! couch-target [--port PORT] [--backlog N] [--delay-ms MS] [--answer-bytes N] [--rows R]
//! ```
//!
//! `--delay-ms` holds every answer at least that long (tokio's timer: up to a millisecond
//! more), a server that is slow but not busy, for the open model's send-lag case.
//!
//! Prints `couch-target listening on 127.0.0.1:PORT` once it accepts connections
//! (`--port 0`, the default, picks a free port). One thread (a current-thread tokio
//! runtime): pin it with `taskset -c CPU`.
//!
//! | request | answer |
//! |---|---|
//! | `GET /` | 200 `{"couchdb":"Welcome",...}` |
//! | `GET /db`, `HEAD /db` | 404 `{"error":"not_found",...}` (no database ever exists) |
//! | `PUT /db` | 201 `{"ok":true}` |
//! | `DELETE /db` | 200 `{"ok":true}` |
//! | `POST /db/_bulk_docs` | 201 `[{"ok":true,"id":ID,"rev":"1-<32 hex>"}, ...]`, one per document |
//! | `POST /db` | 201 `{"ok":true,"id":<generated>,"rev":"1-..."}` |
//! | `PUT /db/id` | 201 `{"ok":true,"id":ID,"rev":"<g+1>-..."}` (`g` from the body's `_rev`, else 0) |
//! | `GET /db/id` | 200 a 250-byte document `{"_id":ID,"_rev":"1-...",...}` |
//! | `DELETE /db/id?rev=g-...` | 200 `{"ok":true,"id":ID,"rev":"<g+1>-..."}` |
//! | `POST /db/_index` | 200 `{"result":"created","id":"_design/idx","name":"idx"}` |
//! | `POST /db/_find` | 200 `{"docs":[...]}` of `--rows` documents (see below) |
//! | `GET /db/_design/d/_view/v`, `GET` or `POST /db/_all_docs` | 200 `{"total_rows":R,"offset":0,"rows":[{"id":…,"key":…,"value":…}, ...]}` of `--rows` rows |
//!
//! `--answer-bytes N` makes a read's document and every query's answer N bytes long (as
//! near as whole rows allow), padded with a string member; without it a document is 250
//! bytes and a query's answer holds `--rows` (default 25) rows of about 100 bytes. The
//! benchmark of a query against a read of the same size (bench/queries.py) uses it.
//!
//! Any other path below a database (`/db/_design/x`, `/db/a/b`) is a document id.
//! Revisions are `<generation>-<32 hex digits>`, the digits a hash of the id and the
//! generation, so the same request always gets the same answer. Requests may be
//! pipelined; bodies need `Content-Length` (chunked bodies get 411).

use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Largest request head accepted; larger gets 431 and the connection is closed.
const MAX_HEAD: usize = 64 * 1024;
/// A connection's read buffer starts this small (10,000 idle connections cost 40 MB) and
/// grows for large bodies; it is given back once it is empty and larger than `KEEP`.
const INITIAL_BUFFER: usize = 4096;
const KEEP: usize = 256 * 1024;

/// How large the answers to reads and queries are (`--answer-bytes`, `--rows`), set once
/// at start.
#[derive(Clone, Copy)]
struct Shape {
    answer_bytes: Option<usize>,
    rows: usize,
}

static SHAPE: OnceLock<Shape> = OnceLock::new();

fn shape() -> Shape {
    *SHAPE.get_or_init(|| Shape {
        answer_bytes: None,
        rows: 25,
    })
}

fn main() {
    let mut port: u16 = 0;
    let mut backlog: u32 = 65535;
    let mut delay = Duration::ZERO;
    let mut answer_bytes = None;
    let mut rows = 25;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).unwrap_or_default();
        match name.as_str() {
            "--port" => {
                port = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--port needs a number"))
            }
            "--backlog" => {
                backlog = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--backlog needs a number"))
            }
            "--delay-ms" => {
                delay = Duration::from_millis(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--delay-ms needs a number")),
                )
            }
            "--answer-bytes" => {
                answer_bytes = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--answer-bytes needs a number")),
                )
            }
            "--rows" => {
                rows = value()
                    .parse()
                    .ok()
                    .filter(|&r| r > 0)
                    .unwrap_or_else(|| usage("--rows needs a number above 0"))
            }
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let _ = SHAPE.set(Shape { answer_bytes, rows });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    if let Err(e) = runtime.block_on(serve(port, backlog, delay)) {
        eprintln!("couch-target: {e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("couch-target: {problem}");
    }
    eprintln!(
        "usage: couch-target [--port PORT] [--backlog N] [--delay-ms MS] [--answer-bytes N] [--rows R]"
    );
    std::process::exit(if problem.is_empty() { 0 } else { 2 });
}

async fn serve(port: u16, backlog: u32, delay: Duration) -> io::Result<()> {
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    // A backlog as deep as the kernel allows: 10,000 clients connecting at once must not
    // see dropped SYNs (which a client sees as a one-second stall).
    let listener = socket.listen(backlog)?;
    let local = listener.local_addr()?;
    let mut stdout = io::stdout();
    writeln!(stdout, "couch-target listening on {local}")?;
    stdout.flush()?;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let _ = connection(stream, delay).await;
                });
            }
            // Out of file descriptors and the like: wait for connections to close.
            Err(e) => {
                eprintln!("couch-target: accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Serves one connection until the client closes it: answers every complete request in
/// what was read, all answers in one write (after `delay`, if any).
async fn connection(mut stream: TcpStream, delay: Duration) -> io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(INITIAL_BUFFER);
    let mut output: Vec<u8> = Vec::new();
    let mut scratch = Scratch::default();
    loop {
        let mut start = 0;
        let mut close = false;
        let mut wanted = 0;
        while start < input.len() {
            match parse_head(&input[start..]) {
                Head::Incomplete => break,
                Head::Bad(status) => {
                    respond(&mut output, status, b"{\"error\":\"bad_request\"}", true);
                    close = true;
                    break;
                }
                Head::Complete(request) => {
                    let end = start + request.head_len + request.body_len;
                    if end > input.len() {
                        wanted = end - start;
                        break;
                    }
                    let body = &input[start + request.head_len..end];
                    let keep_alive = request.keep_alive;
                    answer(&request, &input[start..], body, &mut scratch, &mut output);
                    start = end;
                    if !keep_alive {
                        close = true;
                        break;
                    }
                }
            }
        }
        if !output.is_empty() {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            stream.write_all(&output).await?;
            output.clear();
        }
        if close {
            return Ok(());
        }
        input.drain(..start);
        if input.is_empty() && input.capacity() > KEEP {
            input = Vec::with_capacity(INITIAL_BUFFER);
        }
        if input.len() >= MAX_HEAD && wanted == 0 {
            respond(&mut output, 431, b"{\"error\":\"header_too_large\"}", true);
            stream.write_all(&output).await?;
            return Ok(());
        }
        // A large body: make room for all of it at once.
        let room = wanted.saturating_sub(input.len()).max(1024);
        if input.capacity() - input.len() < room {
            input.reserve(room);
        }
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    Get,
    Head,
    Put,
    Post,
    Delete,
    Other,
}

/// A parsed request head; `target` is a range of the connection's input.
#[derive(Debug)]
struct Request {
    method: Method,
    target: (usize, usize),
    head_len: usize,
    body_len: usize,
    keep_alive: bool,
}

#[derive(Debug)]
enum Head {
    Incomplete,
    Bad(u16),
    Complete(Request),
}

fn parse_head(input: &[u8]) -> Head {
    let Some(end) = find(input, b"\r\n\r\n") else {
        return Head::Incomplete;
    };
    let head = &input[..end];
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let Some(request_line) = lines.next() else {
        return Head::Bad(400);
    };
    let mut parts = request_line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Head::Bad(400);
    };
    let target_start = target.as_ptr() as usize - input.as_ptr() as usize;
    let method = match method {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"PUT" => Method::Put,
        b"POST" => Method::Post,
        b"DELETE" => Method::Delete,
        _ => Method::Other,
    };
    let mut keep_alive = version == b"HTTP/1.1";
    let mut body_len = 0;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Head::Bad(400);
        };
        let name = &line[..colon];
        let value = trim(&line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            match std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                Some(n) => body_len = n,
                None => return Head::Bad(400),
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                keep_alive = false;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Head::Bad(411);
        }
    }
    Head::Complete(Request {
        method,
        target: (target_start, target_start + target.len()),
        head_len: end + 4,
        body_len,
        keep_alive,
    })
}

fn trim(mut bytes: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = bytes {
        bytes = rest;
    }
    bytes
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Buffers a connection reuses for its answers.
#[derive(Default)]
struct Scratch {
    body: Vec<u8>,
    ids: Vec<(usize, usize)>,
    generated: u64,
}

const WELCOME: &[u8] = br#"{"couchdb":"Welcome","version":"3.3.3","git_sha":"00000000","uuid":"00000000000000000000000000000000","features":[],"vendor":{"name":"sofabench couch-target"}}"#;
const NOT_FOUND_DB: &[u8] = br#"{"error":"not_found","reason":"Database does not exist."}"#;
const OK: &[u8] = br#"{"ok":true}"#;

/// Appends the answer to one request to `out`.
fn answer(request: &Request, input: &[u8], body: &[u8], scratch: &mut Scratch, out: &mut Vec<u8>) {
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

fn method_not_allowed(b: &mut Vec<u8>) -> u16 {
    b.extend_from_slice(
        br#"{"error":"method_not_allowed","reason":"Only the operations sofabench uses."}"#,
    );
    405
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        404 => "Object Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        431 => "Request Header Fields Too Large",
        _ => "Unknown",
    }
}

fn head_only(out: &mut Vec<u8>, status: u16, length: usize, close: bool) {
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\nServer: couch-target\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n{}\r\n",
        reason(status),
        if close { "Connection: close\r\n" } else { "" }
    );
}

fn respond(out: &mut Vec<u8>, status: u16, body: &[u8], close: bool) {
    head_only(out, status, body.len(), close);
    out.extend_from_slice(body);
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

fn write_rev(b: &mut Vec<u8>, id: &[u8], generation: u64) {
    let _ = write!(b, "{generation}-");
    let high = fnv1a(id, 0xcbf2_9ce4_8422_2325 ^ generation);
    let low = fnv1a(id, 0x8422_2325_cbf2_9ce4 ^ generation.rotate_left(17));
    let _ = write!(b, "{high:016x}{low:016x}");
}

fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    let mut hash = seed;
    for &byte in bytes {
        hash ^= byte as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// JSON-escapes what came in a URL.
fn escape(b: &mut Vec<u8>, text: &[u8]) {
    for &byte in text {
        match byte {
            b'"' => b.extend_from_slice(b"\\\""),
            b'\\' => b.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                let _ = write!(b, "\\u{byte:04x}");
            }
            _ => b.push(byte),
        }
    }
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

    #[test]
    fn heads() {
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\n"),
            Head::Incomplete
        ));
        let Head::Complete(r) = parse_head(b"GET / HTTP/1.0\r\n\r\n") else {
            panic!()
        };
        assert!(!r.keep_alive);
        let Head::Complete(r) = parse_head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n") else {
            panic!()
        };
        assert!(!r.keep_alive);
        assert!(matches!(
            parse_head(b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Head::Bad(411)
        ));
    }
}
