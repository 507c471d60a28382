//! A test-only server that limits its rate as Cloudant does: the first requests to
//! documents it gets are turned away with `429 Too Many Requests` and a `Retry-After`;
//! the rest, and everything else, are answered as the delay server answers them (enough
//! of the CouchDB API for a run). No database limits its rate on demand.
//!
//! It counts the requests to documents it saw and turned away, and on each connection how
//! long the client waited after a 429 before its next request.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOO_MANY: &str = r#"{"error":"too_many_requests","reason":"You've exceeded your current limit of 5 requests per second for query class."}"#;

pub struct LimitingServer {
    pub url: String,
    state: Arc<State>,
}

struct State {
    retry_after: String,
    /// Requests to documents still to turn away.
    to_turn_away: AtomicU64,
    /// Requests to documents seen, turned away or not.
    documents: AtomicU64,
    /// From each 429 to the next request on its connection.
    waits: Mutex<Vec<Duration>>,
}

impl LimitingServer {
    /// Turns the first `turn_away` requests to documents away, each with `Retry-After:
    /// retry_after`.
    pub fn start(turn_away: u64, retry_after: &str) -> LimitingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            retry_after: retry_after.to_string(),
            to_turn_away: AtomicU64::new(turn_away),
            documents: AtomicU64::new(0),
            waits: Mutex::new(Vec::new()),
        });
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        LimitingServer { url, state }
    }

    /// Requests to documents (`/db/id`) the server got, turned away or not.
    pub fn document_requests(&self) -> u64 {
        self.state.documents.load(Ordering::Relaxed)
    }

    /// How long each connection waited after a 429 before its next request.
    pub fn waits_after_429(&self) -> Vec<Duration> {
        self.state.waits.lock().unwrap().clone()
    }
}

/// `GET`, `PUT` or `DELETE /db/id`: a request to one document.
fn is_document_request(request_line: &str) -> bool {
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    path.trim_matches('/').split('/').count() == 2 && !path.contains("/_")
}

fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0;
    let mut last_429: Option<Instant> = None;
    while let Some(request) = super::http_request::read(&mut reader) {
        if let Some(at) = last_429.take() {
            state.waits.lock().unwrap().push(at.elapsed());
        }
        let document = is_document_request(&request.line);
        state
            .documents
            .fetch_add(u64::from(document), Ordering::Relaxed);
        let turned_away = document
            && state
                .to_turn_away
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok();
        let response = if turned_away {
            last_429 = Some(Instant::now());
            format!(
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{TOO_MANY}",
                state.retry_after,
                TOO_MANY.len()
            )
        } else {
            revision += 1;
            let (status, answer) =
                super::delay_server::answer_for(&request.line, &request.body, revision);
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            )
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
