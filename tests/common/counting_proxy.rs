//! A test-only TCP proxy that forwards bytes unchanged and counts what goes through it:
//! the body lengths (`Content-Length`, or the chunks of a chunked body) of the HTTP
//! messages going each way, to check what a tool reports as bytes of JSON sent and
//! received; every request's method, target and time, and the connections opened, to hold
//! a tool's requests against a budget.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Body bytes seen going to the server and coming back.
#[derive(Default)]
pub struct BodyBytes {
    pub to_server: AtomicU64,
    pub from_server: AtomicU64,
}

/// One request as it went through.
#[derive(Clone, Debug)]
pub struct Seen {
    pub at: Instant,
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
}

pub struct CountingProxy {
    pub url: String,
    pub bytes: Arc<BodyBytes>,
    pub requests: Arc<Mutex<Vec<Seen>>>,
    pub connections: Arc<AtomicU64>,
}

impl CountingProxy {
    pub fn start(upstream_port: u16) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bytes = Arc::new(BodyBytes::default());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicU64::new(0));
        let (counters, seen, opened) = (bytes.clone(), requests.clone(), connections.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                opened.fetch_add(1, Ordering::Relaxed);
                // The methods of the requests in flight, so that the answer to a HEAD is
                // known to have no body.
                let heads = Arc::new(Mutex::new(VecDeque::new()));
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = MessageParser::requests(counters.clone(), seen.clone(), heads.clone());
                let down = MessageParser::responses(counters.clone(), heads);
                std::thread::spawn(move || pump(client, server, up));
                std::thread::spawn(move || pump(s2, c2, down));
            }
        });
        CountingProxy {
            url,
            bytes,
            requests,
            connections,
        }
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.requests.lock().unwrap().clone()
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, mut parser: MessageParser) {
    let mut buf = [0u8; 16384];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        parser.feed(&buf[..n]);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Where a parser is in the stream of messages.
enum State {
    Head,
    Body(u64),
    ChunkSize,
    ChunkData(u64),
    /// The CRLF after a chunk's data: bytes of it left.
    ChunkEnd(u8),
    Trailer,
}

/// Follows a stream of HTTP/1.1 messages (one direction of a connection).
struct MessageParser {
    line: Vec<u8>,
    state: State,
    bytes: Arc<BodyBytes>,
    to_server: bool,
    /// Requests: where each is recorded.
    seen: Option<Arc<Mutex<Vec<Seen>>>>,
    heads: Arc<Mutex<VecDeque<bool>>>,
}

impl MessageParser {
    fn requests(
        bytes: Arc<BodyBytes>,
        seen: Arc<Mutex<Vec<Seen>>>,
        heads: Arc<Mutex<VecDeque<bool>>>,
    ) -> MessageParser {
        MessageParser {
            line: Vec::new(),
            state: State::Head,
            bytes,
            to_server: true,
            seen: Some(seen),
            heads,
        }
    }

    fn responses(bytes: Arc<BodyBytes>, heads: Arc<Mutex<VecDeque<bool>>>) -> MessageParser {
        MessageParser {
            line: Vec::new(),
            state: State::Head,
            bytes,
            to_server: false,
            seen: None,
            heads,
        }
    }

    fn count(&self, n: u64) {
        let counter = if self.to_server {
            &self.bytes.to_server
        } else {
            &self.bytes.from_server
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.state {
                State::Body(left) | State::ChunkData(left) => {
                    let take = (left as usize).min(data.len());
                    self.count(take as u64);
                    data = &data[take..];
                    let left = left - take as u64;
                    self.state = match (&self.state, left) {
                        (State::Body(_), 0) => State::Head,
                        (State::Body(_), _) => State::Body(left),
                        (_, 0) => State::ChunkEnd(2),
                        _ => State::ChunkData(left),
                    };
                }
                State::ChunkEnd(left) => {
                    data = &data[1..];
                    self.state = if left > 1 {
                        State::ChunkEnd(left - 1)
                    } else {
                        State::ChunkSize
                    };
                }
                State::Head | State::ChunkSize | State::Trailer => {
                    self.line.push(data[0]);
                    data = &data[1..];
                    self.on_byte();
                }
            }
        }
    }

    /// After a byte of a head, a chunk size line or a trailer.
    fn on_byte(&mut self) {
        match self.state {
            State::Head if self.line.ends_with(b"\r\n\r\n") => {
                let head = String::from_utf8_lossy(&self.line).into_owned();
                self.line.clear();
                self.state = self.on_head(&head);
            }
            State::ChunkSize if self.line.ends_with(b"\r\n") => {
                let text = String::from_utf8_lossy(&self.line).into_owned();
                self.line.clear();
                let size = text.trim().split(';').next().unwrap_or("");
                let size = u64::from_str_radix(size, 16).unwrap();
                self.state = if size == 0 {
                    State::Trailer
                } else {
                    State::ChunkData(size)
                };
            }
            State::Trailer if self.line.ends_with(b"\r\n") => {
                let done = self.line == b"\r\n";
                self.line.clear();
                if done {
                    self.state = State::Head;
                }
            }
            _ => {}
        }
    }

    /// The state after a message's head.
    fn on_head(&mut self, head: &str) -> State {
        let lower = head.to_ascii_lowercase();
        let first = head.lines().next().unwrap_or("");
        let no_body = if let Some(seen) = &self.seen {
            let mut parts = first.split(' ');
            let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            seen.lock().unwrap().push(Seen {
                at: Instant::now(),
                method: method.to_string(),
                target: target.to_string(),
            });
            self.heads.lock().unwrap().push_back(method == "HEAD");
            false
        } else {
            let status: u16 = first
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if status < 200 {
                // An interim answer (100 Continue): the real one follows.
                return State::Head;
            }
            let to_head = self.heads.lock().unwrap().pop_front().unwrap_or(false);
            to_head || status == 204 || status == 304
        };
        if lower.contains("transfer-encoding: chunked") {
            self.count(0);
            return if no_body {
                State::Head
            } else {
                State::ChunkSize
            };
        }
        let length = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse::<u64>().unwrap());
        if no_body || length == 0 {
            State::Head
        } else {
            State::Body(length)
        }
    }
}
