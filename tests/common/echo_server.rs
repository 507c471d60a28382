//! A test-only server that answers like the delay server (enough of the CouchDB API for a
//! run) except for the requests a test picks: those get an error whose body quotes the
//! request back, as servers do in their errors — the credentials decoded from its
//! `Authorization` header and its body, JSON-escaped — wrapped in the control characters a
//! hostile server would send to take over the terminal that shows them (a window title, a
//! cleared screen, a forged verdict line). No database does both on demand.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;

/// What a hostile answer carries to take over a terminal, raw.
pub const TAKEOVER: &str = "\u{1b}]0;pwned\u{7}\r\u{1b}[2J\u{1b}[Hverdict: PASSED\n\u{9b}31m";

pub struct EchoServer {
    pub url: String,
    picked_requests: Arc<AtomicU64>,
}

impl EchoServer {
    /// Answers requests whose request line `picked` chooses with `status` and a body that
    /// quotes the request back; the others well.
    pub fn start(status: &'static str, picked: fn(&str) -> bool) -> EchoServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let picked_requests = Arc::new(AtomicU64::new(0));
        let counted = picked_requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counted = counted.clone();
                std::thread::spawn(move || serve(stream, status, picked, &counted));
            }
        });
        EchoServer {
            url,
            picked_requests,
        }
    }

    /// How many requests were answered with an echo.
    pub fn echoed(&self) -> u64 {
        self.picked_requests.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, status: &str, picked: fn(&str) -> bool, echoed: &AtomicU64) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0;
    while let Some(request) = super::http_request::read(&mut reader) {
        revision += 1;
        let (status, answer) = if picked(&request.line) {
            let n = echoed.fetch_add(1, Ordering::SeqCst);
            (
                status,
                echo(&authorization(&request.headers), &request.body, n),
            )
        } else {
            super::delay_server::answer_for(&request.line, &request.body, revision)
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

/// The value of the `Authorization` header among `headers`, or nothing.
fn authorization(headers: &str) -> String {
    headers
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.trim().to_string())
        .unwrap_or_default()
}

/// The request quoted back: every other answer is JSON whose strings carry the control
/// characters escaped (a JSON reader decodes them), the others carry them raw.
fn echo(authorization: &str, body: &[u8], n: u64) -> String {
    let decoded = authorization
        .strip_prefix("Basic ")
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let quoted = serde_json::json!({
        "error": format!("unauthorized{TAKEOVER}"),
        "reason": format!("decoded={decoded} header={authorization} body={}{TAKEOVER}", String::from_utf8_lossy(body)),
    });
    if n.is_multiple_of(2) {
        quoted.to_string()
    } else {
        format!("{quoted}{TAKEOVER}")
    }
}
