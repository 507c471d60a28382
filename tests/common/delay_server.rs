//! A test-only server that speaks just enough of the CouchDB API for a run, answers every
//! request after a fixed delay, and can stall: requests that arrive during a stall wait
//! until it ends. No database gives such timing on demand, which is what latency tests
//! need. It stores nothing: every write "succeeds" with a fresh revision.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct DelayServer {
    pub url: String,
    state: Arc<State>,
}

struct State {
    delay: Duration,
    stall_until: Mutex<Option<Instant>>,
    requests: AtomicU64,
    /// The next request to a document with this method is held this long, then its
    /// connection is closed without a byte of an answer.
    cut_next: Mutex<Option<(String, Duration)>>,
    /// Requests to documents by method.
    document_requests: Mutex<Vec<(String, u64)>>,
    /// `_bulk_docs` requests still to be answered with a 500 as a whole.
    bulk_failures: AtomicU64,
}

impl DelayServer {
    pub fn start(delay: Duration) -> DelayServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            delay,
            stall_until: Mutex::new(None),
            requests: AtomicU64::new(0),
            cut_next: Mutex::new(None),
            document_requests: Mutex::new(Vec::new()),
            bulk_failures: AtomicU64::new(0),
        });
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        DelayServer { url, state }
    }

    /// From now on, requests wait until `length` has passed.
    pub fn stall(&self, length: Duration) {
        *self.state.stall_until.lock().unwrap() = Some(Instant::now() + length);
    }

    /// The next `n` `_bulk_docs` requests fail as a whole (500), storing nothing.
    pub fn fail_bulk_requests(&self, n: u64) {
        self.state.bulk_failures.store(n, Ordering::Relaxed);
    }

    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }

    /// The next request to a document with `method` is held for `hold`, then its
    /// connection closes without an answer: a server that dies with a request in hand.
    pub fn cut_next(&self, method: &str, hold: Duration) {
        *self.state.cut_next.lock().unwrap() = Some((method.to_string(), hold));
    }

    /// How many requests to documents (`/db/id`) came with `method`.
    pub fn document_requests(&self, method: &str) -> u64 {
        let counts = self.state.document_requests.lock().unwrap();
        counts
            .iter()
            .find(|(m, _)| m == method)
            .map_or(0, |(_, n)| *n)
    }
}

/// Counts a request to a document; true when it is the one to cut.
fn note_document_request(state: &State, request_line: &str) -> Option<Duration> {
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or("");
    let path = words.next().unwrap_or("/").split('?').next().unwrap_or("/");
    let segments = path.trim_matches('/').split('/').count();
    if segments != 2 || path.contains("/_") {
        return None;
    }
    let mut counts = state.document_requests.lock().unwrap();
    match counts.iter_mut().find(|(m, _)| m == method) {
        Some((_, n)) => *n += 1,
        None => counts.push((method.to_string(), 1)),
    }
    let mut cut = state.cut_next.lock().unwrap();
    match cut.as_ref() {
        Some((m, hold)) if m == method => {
            let hold = *hold;
            *cut = None;
            Some(hold)
        }
        _ => None,
    }
}

fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0u64;
    loop {
        let Some(super::http_request::Request {
            line: request_line,
            headers,
            body,
        }) = super::http_request::read(&mut reader)
        else {
            return;
        };
        state.requests.fetch_add(1, Ordering::Relaxed);
        if let Some(hold) = note_document_request(state, &request_line) {
            std::thread::sleep(hold);
            return;
        }
        let arrived = Instant::now();
        let stall_until = *state.stall_until.lock().unwrap();
        let mut answer_at = arrived + state.delay;
        if let Some(until) = stall_until.filter(|&u| u > arrived) {
            answer_at = answer_at.max(until);
        }
        wait_until(answer_at);
        revision += 1;
        let fails = request_line.contains("/_bulk_docs ")
            && state
                .bulk_failures
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok();
        let (status, answer) = if fails {
            (
                "500 Internal Server Error",
                // Quotes the request back, as some servers' errors do.
                serde_json::json!({"error": "unknown_error", "reason": headers}).to_string(),
            )
        } else {
            answer_for(&request_line, &body, revision)
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// Sleeping overshoots by a tenth of a millisecond or more; the last stretch is spun so
/// the delay is what the test says, and a measured excess belongs to the client.
fn wait_until(at: Instant) {
    const SPIN: Duration = Duration::from_micros(300);
    let now = Instant::now();
    if at > now + SPIN {
        std::thread::sleep(at - now - SPIN);
    }
    while Instant::now() < at {
        std::hint::spin_loop();
    }
}

pub fn answer_for(request_line: &str, body: &[u8], revision: u64) -> (&'static str, String) {
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or("");
    let path = words.next().unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let rev = |generation: u64| format!("{generation}-{revision:032x}");
    match (method, segments.as_slice()) {
        ("GET", []) => (
            "200 OK",
            r#"{"couchdb":"Welcome","version":"test"}"#.to_string(),
        ),
        ("GET", [_db]) => (
            "404 Not Found",
            r#"{"error":"not_found","reason":"Database does not exist."}"#.to_string(),
        ),
        ("PUT", [_db]) => ("201 Created", r#"{"ok":true}"#.to_string()),
        ("DELETE", [_db]) => ("200 OK", r#"{"ok":true}"#.to_string()),
        ("POST", [_db, "_bulk_docs"]) => {
            let docs: serde_json::Value = serde_json::from_slice(body).unwrap();
            let items: Vec<String> = docs["docs"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    // A document without an id gets one, as a server does.
                    let id = match &d["_id"] {
                        serde_json::Value::Null => format!("\"given-{revision}-{i}\""),
                        id => id.to_string(),
                    };
                    format!(r#"{{"ok":true,"id":{id},"rev":"{}"}}"#, rev(1))
                })
                .collect();
            ("201 Created", format!("[{}]", items.join(",")))
        }
        ("GET", [_db, id]) => ("200 OK", format!(r#"{{"_id":"{id}","_rev":"{}"}}"#, rev(1))),
        ("PUT", [_db, id]) => {
            let doc: serde_json::Value = serde_json::from_slice(body).unwrap();
            let generation = doc["_rev"]
                .as_str()
                .and_then(|r| r.split('-').next()?.parse::<u64>().ok())
                .unwrap_or(0);
            (
                "201 Created",
                format!(
                    r#"{{"ok":true,"id":"{id}","rev":"{}"}}"#,
                    rev(generation + 1)
                ),
            )
        }
        ("DELETE", [_db, id]) => (
            "200 OK",
            format!(r#"{{"ok":true,"id":"{id}","rev":"{}"}}"#, rev(2)),
        ),
        ("PUT", [_db, id, _attachment]) => (
            "201 Created",
            format!(r#"{{"ok":true,"id":"{id}","rev":"{}"}}"#, rev(2)),
        ),
        _ => ("400 Bad Request", r#"{"error":"bad_request"}"#.to_string()),
    }
}
