//! A test-only server with a known capacity: it serves requests to documents one at a
//! time, each taking the same time, so it answers at most `capacity` of them per second
//! and queues the rest in arrival order (as a database at its limit does). Below that
//! rate every answer takes one service time; above it the queue, and the time, grow.
//! Everything else (the database's setup) is answered at once. It speaks the CouchDB API
//! as the delay server does, storing nothing. No database has a capacity on demand, which
//! is what a test of the rate search needs.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct CapacityServer {
    pub url: String,
    state: Arc<State>,
}

struct State {
    /// One request's time: 1 / capacity.
    service: Duration,
    /// When the server is free for the next request to a document.
    free_at: Mutex<Instant>,
    /// Requests to documents answered.
    answered: AtomicU64,
}

impl CapacityServer {
    /// A server that answers `capacity` requests to documents per second at most.
    pub fn start(capacity: f64) -> CapacityServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            service: Duration::from_secs_f64(1.0 / capacity),
            free_at: Mutex::new(Instant::now()),
            answered: AtomicU64::new(0),
        });
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        CapacityServer { url, state }
    }

    pub fn answered(&self) -> u64 {
        self.state.answered.load(Ordering::Relaxed)
    }
}

/// Whether the request is to a document (`/db/id`), which takes the server's time.
fn to_a_document(request_line: &str) -> bool {
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    path.trim_matches('/').split('/').count() == 2 && !path.contains("/_")
}

/// When the request that arrives now is answered: after those ahead of it, one service
/// time each. The times are absolute, so a late wake-up does not lower the capacity.
fn answer_time(state: &State) -> Instant {
    let mut free_at = state.free_at.lock().unwrap();
    let done = (*free_at).max(Instant::now()) + state.service;
    *free_at = done;
    done
}

fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0u64;
    while let Some(request) = super::http_request::read(&mut reader) {
        if to_a_document(&request.line) {
            let at = answer_time(state);
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            state.answered.fetch_add(1, Ordering::Relaxed);
        }
        revision += 1;
        let (status, answer) =
            super::delay_server::answer_for(&request.line, &request.body, revision);
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
