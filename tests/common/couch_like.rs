//! A test-only server that answers like Apache CouchDB 3.x where background actions meet
//! it, built from the JSON of `tests/fixtures/couchdb/` (answers recorded from a live
//! CouchDB 3.5.0: see the README there). No CouchDB is available in CI, and
//! PouchDB Server compacts before it answers, so only such a server shows a compaction
//! that runs on after its 202, the way CouchDB's does.
//!
//! After `POST /db/_compact` the compaction follows the test's [`Timeline`]: nothing shows
//! at first (the shards have not started), then `compact_running: true` and
//! `_active_tasks` entries for the database's shards, then nothing, and `sizes.file` drops
//! to its size after. Creates (`PUT /db/id`) succeed, so a phase can run beside it, and
//! `POST /_replicate` bodies are kept for the test to look at.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// When, after `_compact` answered, the compaction shows where.
#[derive(Clone, Copy, Debug)]
pub struct Timeline {
    /// Nothing shows until then (`compact_running: false`, no task).
    pub starts_after: Duration,
    /// `compact_running: true` from `starts_after` for this long.
    pub database_running: Duration,
    /// `_active_tasks` lists the shards' compactions from `starts_after` for this long.
    pub tasks_running: Duration,
}

impl Timeline {
    /// A compaction that has ended by the time `_compact` answers.
    pub const INSTANT: Timeline = Timeline {
        starts_after: Duration::ZERO,
        database_running: Duration::ZERO,
        tasks_running: Duration::ZERO,
    };

    /// When the compaction has ended, seen from `_compact`'s answer.
    pub fn end(&self) -> Duration {
        self.starts_after + self.database_running.max(self.tasks_running)
    }
}

pub const SIZE_BEFORE: u64 = 137_433_211;
pub const SIZE_AFTER: u64 = 52_001_337;

pub struct CouchLike {
    pub url: String,
    state: Arc<State>,
}

struct State {
    database: String,
    timeline: Timeline,
    compact_answered: Mutex<Option<Instant>>,
    replications: Mutex<Vec<Value>>,
    /// Requests answered so far: the `requests` counter of `_node/_local/_stats`.
    requests: AtomicU64,
    /// `_node/_local/_system` never answers.
    stall_system: AtomicBool,
    /// Whether the database exists, when a `PUT` makes it (`None`: it always does).
    exists: Option<AtomicBool>,
}

fn fixture(name: &str) -> Value {
    let path = super::repository()
        .join("tests/fixtures/couchdb")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

impl CouchLike {
    pub fn start(database: &str, timeline: Timeline) -> CouchLike {
        CouchLike::launch(database, timeline, false)
    }

    fn launch(database: &str, timeline: Timeline, fresh: bool) -> CouchLike {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            database: database.to_string(),
            timeline,
            compact_answered: Mutex::new(None),
            replications: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            stall_system: AtomicBool::new(false),
            exists: fresh.then(|| AtomicBool::new(false)),
        });
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        CouchLike { url, state }
    }

    /// Like [`CouchLike::start`], but the database does not exist until a `PUT` makes it
    /// and is gone again after a `DELETE`, as on a real server.
    pub fn fresh(database: &str) -> CouchLike {
        CouchLike::launch(database, Timeline::INSTANT, true)
    }

    /// Whether the database exists (always, unless made [`CouchLike::fresh`]).
    pub fn exists(&self) -> bool {
        self.state.database_exists()
    }

    /// From now on `GET /_node/_local/_system` is read and never answered.
    pub fn stall_system(&self) {
        self.state.stall_system.store(true, Ordering::SeqCst);
    }

    /// Requests the server has read so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// The bodies of the `POST /_replicate` requests so far.
    pub fn replications(&self) -> Vec<Value> {
        self.state.replications.lock().unwrap().clone()
    }
}

impl State {
    fn database_exists(&self) -> bool {
        self.exists
            .as_ref()
            .is_none_or(|exists| exists.load(Ordering::SeqCst))
    }

    fn made(&self, exists: bool) {
        if let Some(flag) = &self.exists {
            flag.store(exists, Ordering::SeqCst);
        }
    }

    /// Time since `_compact` answered, if it was asked.
    fn since_compact(&self) -> Option<Duration> {
        self.compact_answered.lock().unwrap().map(|t| t.elapsed())
    }

    fn within(&self, length: Duration) -> bool {
        let t = self.timeline;
        self.since_compact()
            .is_some_and(|s| s >= t.starts_after && s < t.starts_after + length)
    }

    fn database_info(&self) -> Value {
        let mut info = fixture("db_info.json");
        info["db_name"] = json!(self.database);
        info["compact_running"] = json!(self.within(self.timeline.database_running));
        let done = self
            .since_compact()
            .is_some_and(|s| s >= self.timeline.end());
        info["sizes"]["file"] = json!(if done { SIZE_AFTER } else { SIZE_BEFORE });
        info
    }

    fn active_tasks(&self) -> Value {
        if !self.within(self.timeline.tasks_running) {
            return json!([]);
        }
        let text = fixture("active_tasks_compacting.json")
            .to_string()
            .replace("DBNAME", &self.database);
        serde_json::from_str(&text).unwrap()
    }

    /// The recorded statistics, with `requests` grown to the requests read so far.
    fn node_stats(&self) -> Value {
        let mut stats = fixture("node_stats.json");
        stats["couchdb"]["httpd"]["requests"]["value"] =
            json!(self.requests.load(Ordering::SeqCst));
        stats
    }

    fn answer(&self, method: &str, path: &str, body: &[u8]) -> (&'static str, Value) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let segments: Vec<&str> = path
            .split('?')
            .next()
            .unwrap_or("")
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        match (method, segments.as_slice()) {
            ("GET", []) => ("200 OK", fixture("welcome.json")),
            ("GET", ["_active_tasks"]) => ("200 OK", self.active_tasks()),
            ("GET", ["_node", "_local", "_stats"]) => ("200 OK", self.node_stats()),
            ("GET", ["_node", "_local", "_system"]) => {
                while self.stall_system.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                ("200 OK", fixture("node_system.json"))
            }
            ("POST", ["_replicate"]) => {
                let request = serde_json::from_slice(body).unwrap_or(Value::Null);
                self.replications.lock().unwrap().push(request);
                ("200 OK", fixture("replicate_ok.json"))
            }
            ("GET", [db]) if *db == self.database && self.database_exists() => {
                ("200 OK", self.database_info())
            }
            ("PUT", [_db]) => {
                self.made(true);
                ("201 Created", json!({"ok": true}))
            }
            ("DELETE", [_db]) => {
                self.made(false);
                ("200 OK", json!({"ok": true}))
            }
            ("POST", [db, "_compact"]) if *db == self.database => {
                *self.compact_answered.lock().unwrap() = Some(Instant::now());
                ("202 Accepted", fixture("compact_accepted.json"))
            }
            ("PUT", [_db, id]) => (
                "201 Created",
                json!({"ok": true, "id": id, "rev": "1-967a00dff5e02add41819138abb3284d"}),
            ),
            _ => (
                "404 Object Not Found",
                json!({"error": "not_found", "reason": "missing"}),
            ),
        }
    }
}

fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let Some(super::http_request::Request {
            line: request_line,
            body,
            ..
        }) = super::http_request::read(&mut reader)
        else {
            return;
        };
        let mut words = request_line.split_whitespace();
        let method = words.next().unwrap_or("");
        let path = words.next().unwrap_or("/");
        let (status, answer) = state.answer(method, path, &body);
        let answer = answer.to_string();
        let response = format!(
            "HTTP/1.1 {status}\r\nServer: CouchDB/3.5.0 (Erlang OTP/26)\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
