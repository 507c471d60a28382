//! A server that answers from a script, on a virtual clock: the engine's unit tests drive
//! a worker with it, so every timing is exact and no test waits.
//!
//! Time moves only when the worker waits (for a slot or a retry) or when an answer
//! takes time, so a test knows to the nanosecond when each request went out.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use super::{Clock, Transport};
use crate::driver::{
    Call, Endpoint, Exchange, ExchangeTiming, Method, Streaming, TransportError, Unanswered,
};
use crate::engine::stop::Stop;
use crate::target::{Node, Scheme};

/// The wall-clock time at which every virtual clock begins: 2026-01-01T00:00:00Z.
pub const WALL_START_SECS: u64 = 1_767_225_600;

/// Time that passes only when told to; clones share it.
#[derive(Clone)]
pub struct VirtualClock {
    start: Instant,
    nanos: Arc<AtomicU64>,
}

impl VirtualClock {
    pub fn new() -> VirtualClock {
        VirtualClock {
            start: Instant::now(),
            nanos: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The moment the clock began.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Nanoseconds since the clock began: how long what ran on it took.
    pub fn elapsed_ns(&self) -> u64 {
        self.nanos.load(Ordering::Relaxed)
    }

    /// `ms` milliseconds after the clock began.
    pub fn at_ms(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Moves the clock on to `at`, unless it is there already.
    pub fn advance_to(&self, at: Instant) {
        let nanos = at.saturating_duration_since(self.start).as_nanos() as u64;
        self.nanos.fetch_max(nanos, Ordering::Relaxed);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.start + Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    fn wall(&self) -> SystemTime {
        let elapsed = Duration::from_nanos(self.nanos.load(Ordering::Relaxed));
        SystemTime::UNIX_EPOCH + Duration::from_secs(WALL_START_SECS) + elapsed
    }

    fn sleep_until(&mut self, at: Instant) -> impl Future<Output = ()> + Send {
        self.advance_to(at);
        std::future::ready(())
    }
}

/// What the server does with the next request.
pub enum Reply {
    /// Answers with this status and body, after these times.
    Answer {
        status: u16,
        body: String,
        timing: ExchangeTiming,
        resent: bool,
        /// A 429's `Retry-After`.
        retry_after: Option<String>,
    },
    /// Never answers: the exchange ends with `error` after `took`.
    Lost {
        error: TransportError,
        may_have_reached: bool,
        resent: bool,
        took: Duration,
    },
    /// Never answers, and the run is interrupted meanwhile (its stop and abandon raised).
    Interrupt(Stop),
    /// Replies as the inner reply, and the run is stopped (the first Ctrl-C) as the
    /// answer comes in.
    Stopping(Box<Reply>, Stop),
}

impl Reply {
    /// An answer that took `wait_ms` of the server's time, none on the wire.
    pub fn answer(status: u16, body: &str, wait_ms: u64) -> Reply {
        Reply::Answer {
            status,
            body: body.to_string(),
            timing: ExchangeTiming {
                send: 0,
                wait: millis(wait_ms),
                receive: 0,
            },
            resent: false,
            retry_after: None,
        }
    }

    /// A 429 after `wait_ms`, with this `Retry-After` (or none).
    pub fn too_many(retry_after: Option<&str>, wait_ms: u64) -> Reply {
        let body = r#"{"error":"too_many_requests","reason":"You've exceeded your rate limit allowance."}"#;
        let mut reply = Reply::answer(429, body, wait_ms);
        if let Reply::Answer {
            retry_after: header,
            ..
        } = &mut reply
        {
            *header = retry_after.map(str::to_string);
        }
        reply
    }

    /// A connection broken after the request went out: it may have been applied.
    pub fn broken() -> Reply {
        Reply::Lost {
            error: TransportError::Broken(io::ErrorKind::ConnectionReset.into()),
            may_have_reached: true,
            resent: false,
            took: Duration::from_millis(1),
        }
    }
}

fn millis(ms: u64) -> u64 {
    ms * 1_000_000
}

/// A request as the server saw it, and when (virtual time) it came.
pub struct Received {
    pub method: Method,
    pub path: String,
    pub body: Vec<u8>,
    pub at: Instant,
}

/// The scripted server behind one connection.
pub struct ScriptedServer {
    clock: VirtualClock,
    endpoint: Arc<Endpoint>,
    script: VecDeque<Reply>,
    /// No connection can be made before this moment.
    down_until: Option<Instant>,
    /// How long an answer the script does not give takes (server time).
    pub default_wait_ms: u64,
    /// Every request that reached the server, in order.
    pub received: Vec<Received>,
    /// Tries to connect, whether they succeeded or not.
    pub opens: u64,
}

impl ScriptedServer {
    /// A server that answers every request as CouchDB would, after 1 ms, unless the
    /// script says otherwise.
    pub fn new(clock: &VirtualClock) -> ScriptedServer {
        let node = Node {
            scheme: Scheme::Http,
            host: "127.0.0.1".to_string(),
            port: 5984,
            host_header: "127.0.0.1:5984".to_string(),
            base_path: String::new(),
        };
        ScriptedServer {
            clock: clock.clone(),
            endpoint: Arc::new(Endpoint::plain(node)),
            script: VecDeque::new(),
            down_until: None,
            default_wait_ms: 1,
            received: Vec::new(),
            opens: 0,
        }
    }

    /// The next requests get these replies, in order; later ones the default.
    pub fn then(mut self, replies: impl IntoIterator<Item = Reply>) -> ScriptedServer {
        self.script.extend(replies);
        self
    }

    /// Nobody can connect until `at`.
    pub fn down_until(mut self, at: Instant) -> ScriptedServer {
        self.down_until = Some(at);
        self
    }

    fn is_down(&self) -> bool {
        self.down_until.is_some_and(|at| self.clock.now() < at)
    }

    /// Moments at which the requests came, in milliseconds after the clock began.
    pub fn received_at_ms(&self) -> Vec<f64> {
        let since = |at: Instant| (at - self.clock.start()).as_secs_f64() * 1e3;
        self.received.iter().map(|r| since(r.at)).collect()
    }

    /// The reply to `call`, `None` for one that never comes.
    fn reply_to(&mut self, call: &Call<'_>) -> Option<Result<Exchange, Unanswered>> {
        let started = self.clock.now();
        if self.is_down() {
            return Some(Err(refused(started)));
        }
        self.received.push(Received {
            method: call.method,
            path: call.path.to_string(),
            body: call.body.unwrap_or_default().to_vec(),
            at: started,
        });
        let mut reply = self
            .script
            .pop_front()
            .unwrap_or_else(|| couch_answer(call, self.default_wait_ms));
        if let Reply::Stopping(inner, stop) = reply {
            stop.stop.raise();
            reply = *inner;
        }
        match reply {
            Reply::Answer {
                status,
                body,
                timing,
                resent,
                retry_after,
            } => {
                let finished = started + Duration::from_nanos(timing.service_time());
                self.clock.advance_to(finished);
                Some(Ok(Exchange {
                    status,
                    body_length: body.len() as u64,
                    body: body.into(),
                    rows: None,
                    timing,
                    started,
                    finished,
                    resent,
                    retry_after: retry_after.map(Into::into),
                    session_cookie: None,
                }))
            }
            Reply::Lost {
                error,
                may_have_reached,
                resent,
                took,
            } => {
                self.clock.advance_to(started + took);
                Some(Err(Unanswered {
                    error,
                    may_have_reached,
                    resent,
                    started,
                }))
            }
            Reply::Interrupt(stop) => {
                stop.stop.raise();
                stop.abandon.raise();
                None
            }
            Reply::Stopping(..) => unreachable!("unwrapped above"),
        }
    }
}

/// A connection refused: the request never left.
fn refused(started: Instant) -> Unanswered {
    Unanswered {
        error: TransportError::Connect(io::ErrorKind::ConnectionRefused.into()),
        may_have_reached: false,
        resent: false,
        started,
    }
}

impl Transport for ScriptedServer {
    /// The script answers as for any request: it neither reads a generated body nor
    /// sends a long answer. Rows are counted as a connection counts them.
    fn send(
        &mut self,
        call: &Call<'_>,
        streaming: Streaming,
    ) -> impl Future<Output = Result<Exchange, Unanswered>> + Send {
        let mut reply = self.reply_to(call);
        if let Some(Ok(exchange)) = reply.as_mut()
            && streaming.count_rows
        {
            exchange.rows = crate::driver::rows::count(&exchange.body);
        }
        async move {
            match reply {
                Some(result) => result,
                None => std::future::pending().await,
            }
        }
    }

    fn open(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        self.opens += 1;
        let result = if self.is_down() {
            Err(refused(self.clock.now()).error)
        } else {
            Ok(())
        };
        std::future::ready(result)
    }

    fn endpoint(&self) -> &Arc<Endpoint> {
        &self.endpoint
    }

    fn move_to(&mut self, endpoint: Arc<Endpoint>) {
        self.endpoint = endpoint;
    }

    /// The scripted server has no connections to open; openings are checked against real
    /// sockets (tests/tls.rs).
    fn take_openings(&mut self, _take: impl FnMut(crate::driver::Opening)) {}
}

/// A revision's 32 hex digits; the server's answers need not differ in them.
const DIGEST: &str = "0123456789abcdef0123456789abcdef";

/// What CouchDB answers to `call` when all goes well.
fn couch_answer(call: &Call<'_>, wait_ms: u64) -> Reply {
    let id = call.path.rsplit('/').next().unwrap_or_default();
    let id = id.split('?').next().unwrap_or_default();
    let (status, body) = match call.method {
        Method::Get => (200, format!(r#"{{"_id":"{id}","_rev":"1-{DIGEST}"}}"#)),
        Method::Post => (201, bulk_rows(call.body.unwrap_or_default())),
        _ => (
            201,
            format!(r#"{{"ok":true,"id":"{id}","rev":"2-{DIGEST}"}}"#),
        ),
    };
    Reply::answer(status, &body, wait_ms)
}

/// `_bulk_docs` rows storing every document of a request's body.
fn bulk_rows(body: &[u8]) -> String {
    let request: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let docs = request["docs"].as_array().cloned().unwrap_or_default();
    let rows: Vec<String> = docs
        .iter()
        .map(|doc| {
            let id = doc["_id"].as_str().unwrap_or_default();
            format!(r#"{{"ok":true,"id":"{id}","rev":"1-{DIGEST}"}}"#)
        })
        .collect();
    format!("[{}]", rows.join(","))
}
