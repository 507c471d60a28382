//! A test-only server that answers like the delay server (enough of the CouchDB API for a
//! run) except `GET /db` once the database exists, which it answers badly: never (the
//! request is held), or with garbage. No real database does either on demand, and the
//! disk looks of a run must survive both without delaying anything.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How `GET /db` is answered after `PUT /db`.
#[derive(Clone, Copy, Debug)]
pub enum DbInfo {
    /// Never: the connection is held open without a byte.
    Stall,
    /// 200 with a body that is not JSON.
    Garbage,
    /// 200 with JSON whose sizes are of the wrong types and signs.
    OddSizes,
}

pub struct DbInfoServer {
    pub url: String,
    looks: Arc<AtomicU64>,
}

impl DbInfoServer {
    pub fn start(info: DbInfo) -> DbInfoServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let created = Arc::new(AtomicBool::new(false));
        let looks = Arc::new(AtomicU64::new(0));
        let counted = looks.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (created, looks) = (created.clone(), counted.clone());
                std::thread::spawn(move || serve(stream, info, &created, &looks));
            }
        });
        DbInfoServer { url, looks }
    }

    /// `GET /db` requests after the database was created.
    pub fn looks(&self) -> u64 {
        self.looks.load(Ordering::Relaxed)
    }
}

fn database_info(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (method, path) = (words.next(), words.next().unwrap_or(""));
    method == Some("GET") && path.trim_matches('/').split('/').count() == 1 && path != "/"
}

fn serve(stream: TcpStream, info: DbInfo, created: &AtomicBool, looks: &AtomicU64) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0;
    loop {
        let Some(super::http_request::Request { line, body, .. }) =
            super::http_request::read(&mut reader)
        else {
            return;
        };
        revision += 1;
        let (status, answer) = if database_info(&line) && created.load(Ordering::Relaxed) {
            looks.fetch_add(1, Ordering::Relaxed);
            match info {
                DbInfo::Stall => {
                    std::thread::sleep(Duration::from_secs(120));
                    return;
                }
                DbInfo::Garbage => ("200 OK", "\u{0}\u{1}{{{not json".to_string()),
                DbInfo::OddSizes => (
                    "200 OK",
                    r#"{"doc_count":-5,"sizes":{"file":"big","active":-1,"external":1.5},"disk_size":null}"#
                        .to_string(),
                ),
            }
        } else {
            if line.starts_with("PUT ") && line.trim_end().matches('/').count() == 2 {
                created.store(true, Ordering::Relaxed);
            }
            super::delay_server::answer_for(&line, &body, revision)
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
