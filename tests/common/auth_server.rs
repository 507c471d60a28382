//! A test-only CouchDB-shaped server that checks credentials the way CouchDB 3 does, for
//! what PouchDB Server cannot show: the modes it does not implement (a JWT, proxy
//! authentication, IAM bearer tokens) and what no server does on demand (ending every
//! session at once, a slow login). Beside it, a local IAM token endpoint.
//!
//! Its databases keep documents in memory (create, read, bulk insert), and it records the
//! bodies of `POST /_replicate`. `GET /` and `POST /_session` need no credentials; every
//! other request without valid ones is answered 401, as CouchDB answers an admin-only
//! database, and counted.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// What the server takes as proof of who sends a request.
pub enum Check {
    /// `Authorization: Bearer` with an HS256 JWT signed with `key`, with a `sub` claim and,
    /// if it has one, an `exp` not past (`jwt_authentication_handler` with an HMAC key).
    Jwt { key: Vec<u8> },
    /// `X-Auth-CouchDB-UserName` with `X-Auth-CouchDB-Token` the lowercase hex HMAC-SHA256
    /// of the name keyed with `secret` (`proxy_authentication_handler`,
    /// `proxy_use_secret = true`).
    Proxy { secret: String },
    /// A bearer token `tokens` issued, until it expires.
    Iam(Arc<Tokens>),
    /// The `AuthSession` cookie of a `POST /_session` with this user and password; nothing
    /// else (no Basic).
    Cookie(Sessions),
}

/// How the server hands out session cookies.
pub struct Sessions {
    pub user: String,
    pub password: String,
    /// How long a cookie is taken.
    pub lifetime: Duration,
    /// Whether `Set-Cookie` says so (`Max-Age`), as CouchDB 3 does by default.
    pub max_age: bool,
    /// How long each login takes to answer.
    pub login_delay: Duration,
}

/// Bearer tokens a token endpoint issued, and when each expires.
#[derive(Default)]
pub struct Tokens {
    issued: Mutex<HashMap<String, Instant>>,
    count: AtomicU64,
}

impl Tokens {
    fn issue(&self, lifetime: Duration) -> String {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        let token = format!("iam-token-{n}-{}", std::process::id());
        let expiry = Instant::now() + lifetime;
        self.issued.lock().unwrap().insert(token.clone(), expiry);
        token
    }

    fn valid(&self, token: &str) -> bool {
        let issued = self.issued.lock().unwrap();
        issued
            .get(token)
            .is_some_and(|&expiry| Instant::now() < expiry)
    }

    /// Tokens issued so far.
    pub fn issued(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

/// What the server has seen.
#[derive(Default)]
struct Counts {
    logins: AtomicU64,
    refused: AtomicU64,
    /// Of `refused`, the requests to a document (`/db/…`): the run's operations, not its
    /// looks at the database or the node.
    refused_documents: AtomicU64,
    served: AtomicU64,
}

struct State {
    check: Check,
    counts: Counts,
    /// Cookie sessions: value → (issued, epoch); a cookie of an older epoch is ended.
    sessions: Mutex<HashMap<String, (Instant, u64)>>,
    epoch: AtomicU64,
    /// At this many served requests, every session ends (0: never).
    end_sessions_at: AtomicU64,
    /// Databases by name: document id → revision generation.
    databases: Mutex<HashMap<String, HashMap<String, u64>>>,
    replications: Mutex<Vec<Value>>,
    /// `X-Auth-CouchDB-Roles` as the server last saw it.
    roles: Mutex<Option<String>>,
}

pub struct AuthServer {
    pub url: String,
    state: Arc<State>,
}

impl AuthServer {
    pub fn start(check: Check) -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            check,
            counts: Counts::default(),
            sessions: Mutex::new(HashMap::new()),
            epoch: AtomicU64::new(0),
            end_sessions_at: AtomicU64::new(0),
            databases: Mutex::new(HashMap::new()),
            replications: Mutex::new(Vec::new()),
            roles: Mutex::new(None),
        });
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        AuthServer { url, state }
    }

    /// `POST /_session` requests so far.
    pub fn logins(&self) -> u64 {
        self.state.counts.logins.load(Ordering::SeqCst)
    }

    /// Requests answered 401 for want of valid credentials.
    pub fn refused(&self) -> u64 {
        self.state.counts.refused.load(Ordering::SeqCst)
    }

    /// Of [`AuthServer::refused`], the requests to a document (`/db/…`): the run's
    /// operations; the looks at the database's sizes (`GET /db`) and at the node's
    /// statistics (`/_node/…`) meet the 401 too.
    pub fn refused_documents(&self) -> u64 {
        self.state.counts.refused_documents.load(Ordering::SeqCst)
    }

    /// Requests that passed the check.
    pub fn served(&self) -> u64 {
        self.state.counts.served.load(Ordering::SeqCst)
    }

    /// Ends every session issued so far when the server has served `requests` in all.
    pub fn end_sessions_at(&self, requests: u64) {
        self.state.end_sessions_at.store(requests, Ordering::SeqCst);
    }

    /// Documents in database `name`.
    pub fn documents(&self, name: &str) -> usize {
        let databases = self.state.databases.lock().unwrap();
        databases.get(name).map_or(0, HashMap::len)
    }

    pub fn replications(&self) -> Vec<Value> {
        self.state.replications.lock().unwrap().clone()
    }

    pub fn roles(&self) -> Option<String> {
        self.state.roles.lock().unwrap().clone()
    }
}

/// The value of header `name` in a request's header lines.
fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An HS256 JWT of `claims` signed with `key`, as an identity provider would issue it.
pub fn jwt(key: &[u8], claims: &Value) -> String {
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = base64url(claims.to_string().as_bytes());
    let signature = base64url(&hmac_sha256(key, format!("{header}.{payload}").as_bytes()));
    format!("{header}.{payload}.{signature}")
}

/// Seconds since the Unix epoch, for `exp` claims.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl State {
    /// Whether the request's credentials pass, as CouchDB's handler would decide.
    fn passes(&self, headers: &str) -> bool {
        match &self.check {
            Check::Jwt { key } => header(headers, "Authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .is_some_and(|token| jwt_valid(key, token)),
            Check::Proxy { secret } => {
                *self.roles.lock().unwrap() =
                    header(headers, "X-Auth-CouchDB-Roles").map(str::to_string);
                let Some(user) = header(headers, "X-Auth-CouchDB-UserName") else {
                    return false;
                };
                let expected: String = hmac_sha256(secret.as_bytes(), user.as_bytes())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                header(headers, "X-Auth-CouchDB-Token") == Some(expected.as_str())
            }
            Check::Iam(tokens) => header(headers, "Authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .is_some_and(|token| tokens.valid(token)),
            Check::Cookie(sessions) => {
                let cookie = header(headers, "Cookie").and_then(|c| {
                    c.split(';')
                        .find_map(|p| p.trim().strip_prefix("AuthSession="))
                });
                let Some(cookie) = cookie else { return false };
                let epoch = self.epoch.load(Ordering::SeqCst);
                let issued = self.sessions.lock().unwrap().get(cookie).copied();
                issued.is_some_and(|(at, e)| e == epoch && at.elapsed() < sessions.lifetime)
            }
        }
    }

    fn log_in(&self, body: &[u8]) -> (&'static str, Value, Option<String>) {
        self.counts.logins.fetch_add(1, Ordering::SeqCst);
        let Check::Cookie(sessions) = &self.check else {
            return ("404 Object Not Found", json!({"error": "not_found"}), None);
        };
        std::thread::sleep(sessions.login_delay);
        let form: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        if form["name"] != json!(sessions.user) || form["password"] != json!(sessions.password) {
            let refusal =
                json!({"error": "unauthorized", "reason": "Name or password is incorrect."});
            return ("401 Unauthorized", refusal, None);
        }
        let n = self.counts.logins.load(Ordering::SeqCst);
        let cookie = base64url(format!("{}:{n:X}:{}", sessions.user, unix_now()).as_bytes());
        let epoch = self.epoch.load(Ordering::SeqCst);
        self.sessions
            .lock()
            .unwrap()
            .insert(cookie.clone(), (Instant::now(), epoch));
        let max_age = if sessions.max_age {
            format!("; Max-Age={}", sessions.lifetime.as_secs())
        } else {
            String::new()
        };
        let set_cookie =
            format!("Set-Cookie: AuthSession={cookie}; Version=1; Path=/{max_age}; HttpOnly\r\n");
        let answer = json!({"ok": true, "name": sessions.user, "roles": ["_admin"]});
        ("200 OK", answer, Some(set_cookie))
    }

    /// Counts a served request, and ends the sessions when it is the one asked for.
    fn served(&self) {
        let n = self.counts.served.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.end_sessions_at.load(Ordering::SeqCst) {
            self.epoch.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn answer(&self, method: &str, path: &str, body: &[u8]) -> (&'static str, Value) {
        let path = path.split('?').next().unwrap_or("");
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let mut databases = self.databases.lock().unwrap();
        match (method, segments.as_slice()) {
            ("POST", ["_replicate"]) => {
                let request = serde_json::from_slice(body).unwrap_or(Value::Null);
                self.replications.lock().unwrap().push(request);
                (
                    "200 OK",
                    json!({"ok": true, "history": [{"doc_write_failures": 0}]}),
                )
            }
            ("PUT", [db]) if databases.contains_key(*db) => {
                ("412 Precondition Failed", json!({"error": "file_exists"}))
            }
            ("PUT", [db]) => {
                databases.insert(db.to_string(), HashMap::new());
                ("201 Created", json!({"ok": true}))
            }
            ("DELETE", [db]) => {
                databases.remove(*db);
                ("200 OK", json!({"ok": true}))
            }
            (_, [db, rest @ ..]) => match databases.get_mut(*db) {
                Some(docs) => document(docs, (method, db, rest), body),
                None => ("404 Object Not Found", json!({"error": "not_found"})),
            },
            _ => (
                "404 Object Not Found",
                json!({"error": "not_found", "reason": "missing"}),
            ),
        }
    }
}

/// A request to database `db` (`rest` is the path below it) that holds `docs`.
fn document(
    docs: &mut HashMap<String, u64>,
    (method, db, rest): (&str, &str, &[&str]),
    body: &[u8],
) -> (&'static str, Value) {
    let rev = |generation: u64| format!("{generation}-{:032x}", generation * 7919);
    match (method, rest) {
        ("GET", []) => (
            "200 OK",
            json!({"db_name": db, "doc_count": docs.len(), "update_seq": "0"}),
        ),
        ("POST", ["_bulk_docs"]) => {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let rows: Vec<Value> = request["docs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|doc| doc["_id"].as_str())
                .map(|id| {
                    docs.insert(id.to_string(), 1);
                    json!({"ok": true, "id": id, "rev": rev(1)})
                })
                .collect();
            ("201 Created", Value::Array(rows))
        }
        ("PUT", [id]) => {
            let generation = docs.get(*id).copied().unwrap_or(0) + 1;
            docs.insert(id.to_string(), generation);
            (
                "201 Created",
                json!({"ok": true, "id": id, "rev": rev(generation)}),
            )
        }
        // A `normal` feed with nothing to say: enough for a feed to meet the checks.
        ("GET", ["_changes"]) => ("200 OK", json!({"results": [], "last_seq": "0"})),
        ("GET", [id]) => match docs.get(*id) {
            Some(&generation) => ("200 OK", json!({"_id": id, "_rev": rev(generation)})),
            None => ("404 Object Not Found", json!({"error": "not_found"})),
        },
        _ => (
            "404 Object Not Found",
            json!({"error": "not_found", "reason": "missing"}),
        ),
    }
}

fn jwt_valid(key: &[u8], token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    let [header, payload, signature] = parts.as_slice() else {
        return false;
    };
    let expected = base64url(&hmac_sha256(key, format!("{header}.{payload}").as_bytes()));
    let decode = |part: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
    };
    let (Some(header), Some(claims)) = (decode(header), decode(payload)) else {
        return false;
    };
    let unexpired = claims["exp"].as_u64().is_none_or(|exp| exp > unix_now());
    *signature == expected && header["alg"] == "HS256" && claims["sub"].is_string() && unexpired
}

/// Whether `path` names a document of a database (`/db/id`), not a database or the node.
fn to_document(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or("");
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    segments.next().is_some_and(|db| !db.starts_with('_')) && segments.next().is_some()
}

fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(request) = super::http_request::read(&mut reader) {
        let mut words = request.line.split_whitespace();
        let method = words.next().unwrap_or("");
        let path = words.next().unwrap_or("/");
        let (status, answer, extra) = match (method, path) {
            ("GET", "/") => (
                "200 OK",
                json!({"couchdb": "Welcome", "version": "3.5.0"}),
                None,
            ),
            ("POST", "/_session") => state.log_in(&request.body),
            _ if !state.passes(&request.headers) => {
                state.counts.refused.fetch_add(1, Ordering::SeqCst);
                if to_document(path) {
                    state
                        .counts
                        .refused_documents
                        .fetch_add(1, Ordering::SeqCst);
                }
                let refusal = json!({"error": "unauthorized", "reason": "You are not authorized to access this db."});
                ("401 Unauthorized", refusal, None)
            }
            _ => {
                state.served();
                let (status, answer) = state.answer(method, path, &request.body);
                (status, answer, None)
            }
        };
        let answer = answer.to_string();
        let response = format!(
            "HTTP/1.1 {status}\r\nServer: CouchDB/3.5.0 (Erlang OTP/26)\r\n{}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            extra.unwrap_or_default(),
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// What a token endpoint answers to a right API key.
#[derive(Clone, Copy, Debug)]
pub enum TokenAnswer {
    /// A token good for this long, as IBM Cloud IAM answers.
    Token(Duration),
    /// `200` with an HTML page.
    NotJson,
    /// `200` with a body of this many bytes.
    Huge(usize),
}

/// A local IAM token endpoint: `POST` of `grant_type=urn:ibm:params:oauth:grant-type:apikey
/// &apikey=…` as a form.
pub struct TokenEndpoint {
    pub url: String,
    pub port: u16,
    pub tokens: Arc<Tokens>,
    requests: Arc<AtomicU64>,
}

impl TokenEndpoint {
    pub fn start(api_key: &str, answer: TokenAnswer) -> TokenEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/identity/token");
        let tokens = Arc::new(Tokens::default());
        let requests = Arc::new(AtomicU64::new(0));
        let (issuer, counter, key) = (tokens.clone(), requests.clone(), api_key.to_string());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (issuer, counter, key) = (issuer.clone(), counter.clone(), key.clone());
                std::thread::spawn(move || {
                    serve_tokens(stream, &issuer, &counter, &key, answer);
                });
            }
        });
        TokenEndpoint {
            url,
            port,
            tokens,
            requests,
        }
    }

    /// Token requests so far, right or wrong.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

fn serve_tokens(
    stream: TcpStream,
    tokens: &Tokens,
    requests: &AtomicU64,
    key: &str,
    answer: TokenAnswer,
) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(request) = super::http_request::read(&mut reader) {
        requests.fetch_add(1, Ordering::SeqCst);
        let form: HashMap<String, String> = url::form_urlencoded::parse(&request.body)
            .into_owned()
            .collect();
        let is_form =
            header(&request.headers, "Content-Type") == Some("application/x-www-form-urlencoded");
        let right = is_form
            && request.line.starts_with("POST /identity/token ")
            && form.get("grant_type").map(String::as_str)
                == Some("urn:ibm:params:oauth:grant-type:apikey")
            && form.get("apikey").map(String::as_str) == Some(key);
        let (status, body) = match answer {
            _ if !right => (
                "400 Bad Request",
                json!({"errorCode": "BXNIM0415E", "errorMessage": "Provided API key could not be found."}).to_string(),
            ),
            TokenAnswer::Token(lifetime) => {
                let token = tokens.issue(lifetime);
                let expires_in = lifetime.as_secs();
                let body = json!({
                    "access_token": token,
                    "refresh_token": "not-used",
                    "token_type": "Bearer",
                    "expires_in": expires_in,
                    "expiration": unix_now() + expires_in,
                    "scope": "ibm openid",
                });
                ("200 OK", body.to_string())
            }
            TokenAnswer::NotJson => ("200 OK", "<html>Service busy, try later</html>".to_string()),
            TokenAnswer::Huge(bytes) => ("200 OK", "x".repeat(bytes)),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
