//! A test-only proxy in front of a real server (or of nothing) whose answers a test's
//! handler chooses request by request: the server's answer as it is, rewritten, or one of
//! its own (a status and body, an answer cut off mid-body, a stall, an endless body). No
//! database misbehaves on demand like this, and a replication client must stay correct,
//! bounded and quick to give up whatever it meets.

use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the handler sees it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The path with its query, as sent.
    pub path: String,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn is(&self, method: &str, part: &str) -> bool {
        self.method == method && self.path.contains(part)
    }
}

/// What the client gets.
pub enum Reply {
    Answer(u16, Vec<u8>),
    /// A head promising more than these bytes, these bytes, then the connection closes.
    Cut(Vec<u8>),
    /// Nothing for this long, then the connection closes.
    Stall(Duration),
    /// A chunked body of JSON-looking bytes that does not end (until the client hangs up,
    /// or 512 MB).
    Endless,
}

/// The server behind the proxy.
pub struct Upstream {
    /// `http://user:password@host:port`, or `None` when there is none.
    base: Option<String>,
}

impl Upstream {
    /// The server's answer to `seen` (status 0 when there is no server or no answer).
    pub fn forward(&self, seen: &Seen) -> (u16, Vec<u8>) {
        let Some(base) = &self.base else {
            return (0, Vec::new());
        };
        let request = ureq::request(&seen.method, &format!("{base}{}", seen.path))
            .timeout(Duration::from_secs(60))
            .set("Accept", "application/json")
            .set("Content-Type", "application/json");
        let result = if seen.body.is_empty() {
            request.call()
        } else {
            request.send_bytes(&seen.body)
        };
        let response = match result {
            Ok(response) | Err(ureq::Error::Status(_, response)) => response,
            Err(_) => return (0, Vec::new()),
        };
        let status = response.status();
        let mut body = Vec::new();
        let _ = response.into_reader().read_to_end(&mut body);
        (status, body)
    }

    /// The server's answer, passed on.
    pub fn pass(&self, seen: &Seen) -> Reply {
        let (status, body) = self.forward(seen);
        if status == 0 {
            return Reply::Cut(Vec::new());
        }
        Reply::Answer(status, body)
    }
}

pub type Handler = Arc<dyn Fn(&Seen, &Upstream) -> Reply + Send + Sync>;

pub struct HostileProxy {
    pub url: String,
    /// Every request seen, in order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl HostileProxy {
    /// A proxy forwarding to `upstream` (with its credentials in the URL) as `handler`
    /// says.
    pub fn start(
        upstream: Option<&str>,
        handler: impl Fn(&Seen, &Upstream) -> Reply + Send + Sync + 'static,
    ) -> HostileProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let upstream = Arc::new(Upstream {
            base: upstream.map(str::to_string),
        });
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, upstream, log) = (handler.clone(), upstream.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &handler, &upstream, &log));
            }
        });
        HostileProxy { url, seen }
    }

    /// Requests seen whose line has `part`.
    pub fn count(&self, part: &str) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|s| format!("{} {}", s.method, s.path).contains(part))
            .count()
    }
}

fn serve(stream: TcpStream, handler: &Handler, upstream: &Upstream, log: &Mutex<Vec<Seen>>) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(request) = super::http_request::read(&mut reader) {
        let mut words = request.line.split_whitespace();
        let seen = Seen {
            method: words.next().unwrap_or("").to_string(),
            path: words.next().unwrap_or("/").to_string(),
            body: request.body,
        };
        log.lock().unwrap().push(seen.clone());
        let kept_open = match handler(&seen, upstream) {
            Reply::Answer(status, body) => answer(&mut writer, status, &body),
            Reply::Cut(bytes) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    bytes.len() + 1000
                );
                let _ = writer.write_all(head.as_bytes());
                let _ = writer.write_all(&bytes);
                false
            }
            Reply::Stall(how_long) => {
                std::thread::sleep(how_long);
                false
            }
            Reply::Endless => {
                endless(&mut writer);
                false
            }
        };
        if !kept_open {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

fn answer(writer: &mut TcpStream, status: u16, body: &[u8]) -> bool {
    let head = format!(
        "HTTP/1.1 {status} Whatever\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    writer.write_all(head.as_bytes()).is_ok() && writer.write_all(body).is_ok()
}

fn endless(writer: &mut TcpStream) {
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut block = b"{\"results\":[".to_vec();
    let row = b"{\"seq\":1,\"id\":\"x\",\"changes\":[{\"rev\":\"1-a\"}]},";
    while block.len() < 65_536 {
        block.extend_from_slice(row);
    }
    let mut sent = 0usize;
    while sent < 512 << 20 {
        let chunk = format!("{:x}\r\n", block.len());
        if writer.write_all(chunk.as_bytes()).is_err()
            || writer.write_all(&block).is_err()
            || writer.write_all(b"\r\n").is_err()
        {
            return;
        }
        sent += block.len();
    }
}
