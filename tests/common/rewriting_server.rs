//! A test-only server that answers like the delay server (enough of the CouchDB API for a
//! run, storing nothing) except where a test's rewrite gives an answer of its own: a
//! revision of 10 MB, bulk rows for ids never sent, statistics of 60 MB, a longpoll that
//! answers at once. No real database sends such answers on demand, and a client must keep
//! its memory and its pace whatever they are. A database exists once it was created.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::Run;

/// The answer (status line's end, body) to a request (its line and body), or `None` for
/// the usual one. Asked once per request, so that it may count them.
pub type Rewrite = fn(&str, &[u8]) -> Option<(&'static str, String)>;

pub struct RewritingServer {
    pub url: String,
}

impl RewritingServer {
    pub fn start(rewrite: Rewrite) -> RewritingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let created = Arc::new(AtomicBool::new(false));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let created = created.clone();
                std::thread::spawn(move || serve(stream, rewrite, &created));
            }
        });
        RewritingServer { url }
    }
}

/// `GET /db` of a database that exists: no documents, at sequence `1`.
pub fn database_info(name: &str) -> String {
    format!(
        r#"{{"db_name":"{name}","doc_count":0,"doc_del_count":0,"update_seq":"1","sizes":{{"file":1,"active":1,"external":1}}}}"#
    )
}

fn serve(stream: TcpStream, rewrite: Rewrite, created: &AtomicBool) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0;
    while let Some(request) = super::http_request::read(&mut reader) {
        revision += 1;
        let line = request.line.as_str();
        let (status, answer) = match rewrite(line, &request.body) {
            Some(answer) => answer,
            None => usual(line, &request.body, revision, created),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(answer.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// The delay server's answer, but a database that was created exists.
fn usual(line: &str, body: &[u8], revision: u64, created: &AtomicBool) -> (&'static str, String) {
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let database = path.split('?').next().unwrap_or("").trim_matches('/');
    let one_segment = !database.is_empty() && !database.contains('/') && !database.starts_with('_');
    match method {
        "PUT" if one_segment => created.store(true, Ordering::SeqCst),
        "GET" if one_segment && created.load(Ordering::SeqCst) => {
            return ("200 OK", database_info(database));
        }
        _ => {}
    }
    super::delay_server::answer_for(line, body, revision)
}

/// Runs sofabench with its address space limited to `kib` KiB, ended after 60 s (exit
/// 124); returns the run and its peak resident memory, KiB, as the kernel counted it.
pub fn sofabench_measured(kib: u64, args: &[&str]) -> (Run, u64) {
    let peak = tempfile::NamedTempFile::new().unwrap();
    let started = Instant::now();
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib}; exec /usr/bin/time -f %M -o \"$0\" timeout 60 \"$1\" \"${{@:2}}\""
        ))
        .arg(peak.path())
        .arg(env!("CARGO_BIN_EXE_sofabench"))
        .args(args)
        .current_dir(super::repository())
        .env("NO_COLOR", "1")
        .output()
        .expect("run sofabench");
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: started.elapsed(),
    };
    let text = std::fs::read_to_string(peak.path()).unwrap_or_default();
    // A run killed by a signal makes time write a line about it first.
    let kib = text.lines().last().and_then(|l| l.trim().parse().ok());
    (run, kib.unwrap_or(u64::MAX))
}
