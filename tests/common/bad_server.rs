//! A test-only server that answers like the delay server (enough of the CouchDB API for a
//! run) except for the requests a test picks, which it answers badly: an endless body, a
//! huge one, endless `100 Continue`, or a 413 before it has read the request's body. No
//! real database misbehaves on demand, and a client must survive all of these.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use super::Run;

/// How the picked requests are answered.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// `Transfer-Encoding: chunked`, and chunks that never end.
    EndlessChunks,
    /// `Content-Length: 9999999999999999999`, and a body that never ends.
    HugeLength,
    /// A whole answer of this many bytes, announced by its Content-Length.
    Large(usize),
    /// `100 Continue` heads, without end and never a final answer.
    EndlessContinue,
    /// `413` as soon as the head is in; the body is never read and the connection stays
    /// open, as a server that refuses large bodies may do.
    RefuseBody,
    /// `413` as soon as the head is in, then the connection closed with the body unread
    /// (which makes the server's kernel reset it).
    RefuseBodyAndClose,
    /// The good answer, a JSON array, without its last element: a bulk answer one row
    /// short.
    MissingRow,
    /// A query's answer of this many rows, `{"rows":[…]}`, chunked in 64 KiB pieces.
    ManyRows(usize),
    /// No answer at all: the connection is held open and never written to.
    Stall,
}

pub struct BadServer {
    pub url: String,
}

impl BadServer {
    /// Answers requests whose request line (`GET /db/id HTTP/1.1`) `picked` chooses with
    /// `fault`, and the others well.
    pub fn start(fault: Fault, picked: fn(&str) -> bool) -> BadServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve(stream, fault, picked));
            }
        });
        BadServer { url }
    }
}

/// Reads of one document: `GET /db/id`.
pub fn document_reads(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (method, path) = (words.next(), words.next().unwrap_or(""));
    method == Some("GET") && path.trim_matches('/').split('/').count() == 2 && !path.contains("/_")
}

/// Reads of an attachment: `GET /db/id/name`.
pub fn attachment_reads(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (method, path) = (words.next(), words.next().unwrap_or(""));
    method == Some("GET") && path.trim_matches('/').split('/').count() == 3
}

/// The server check every run starts with: `GET /`.
pub fn welcome(line: &str) -> bool {
    line.starts_with("GET / ")
}

/// Bulk inserts.
pub fn bulk_inserts(line: &str) -> bool {
    line.contains("/_bulk_docs ")
}

/// `_all_docs` queries.
pub fn all_docs_queries(line: &str) -> bool {
    line.contains("/_all_docs")
}

/// The query that waits for a view's index to be built (`…?limit=1&reduce=false&update=true`).
pub fn index_waits(line: &str) -> bool {
    line.contains("/_view/") && line.contains("limit=1&reduce=false&update=true")
}

/// One row of [`Fault::ManyRows`]'s answer, as `_all_docs` writes them.
pub const ROW: &str = r#"{"id":"r","key":"r","value":{"rev":"1-a"}}"#;

fn serve(stream: TcpStream, fault: Fault, picked: fn(&str) -> bool) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut revision = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        // `picked` is asked once per request, so that a test's predicate may count them.
        if matches!(fault, Fault::RefuseBody | Fault::RefuseBodyAndClose) && picked(&line) {
            let answer = r#"{"error":"too_large","reason":"the request entity is too large"}"#;
            let head = format!(
                "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            let _ = writer.write_all(head.as_bytes());
            if matches!(fault, Fault::RefuseBody) {
                // Holds the connection open without reading a byte more.
                std::thread::sleep(Duration::from_secs(60));
            }
            return;
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        revision += 1;
        let (status, answer) = super::delay_server::answer_for(&line, &body, revision);
        let refusing = matches!(fault, Fault::RefuseBody | Fault::RefuseBodyAndClose);
        if !refusing && picked(&line) {
            if misbehave(&mut writer, fault, &answer) {
                continue;
            }
            return;
        }
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// Writes `fault`'s answer until it is done or the client goes away; true when the
/// answer was whole and the connection can carry the next request. `good` is the JSON a
/// good answer would be: a large answer is that, padded.
fn misbehave(writer: &mut TcpStream, fault: Fault, good: &str) -> bool {
    let block = vec![b'x'; 64 * 1024];
    match fault {
        Fault::EndlessChunks => {
            let mut chunk = format!("{:x}\r\n", block.len()).into_bytes();
            chunk.extend_from_slice(&block);
            chunk.extend_from_slice(b"\r\n");
            let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
            if writer.write_all(head).is_ok() {
                while writer.write_all(&chunk).is_ok() {}
            }
        }
        Fault::HugeLength => {
            let head = b"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n";
            if writer.write_all(head).is_ok() {
                while writer.write_all(&block).is_ok() {}
            }
        }
        Fault::Large(size) => {
            let start = format!("{},\"pad\":\"", good.strip_suffix('}').unwrap());
            let end = "\"}";
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n{start}");
            let mut left = size - start.len() - end.len();
            let mut ok = writer.write_all(head.as_bytes()).is_ok();
            while ok && left > 0 {
                let n = left.min(block.len());
                ok = writer.write_all(&block[..n]).is_ok();
                left -= n;
            }
            ok = ok && writer.write_all(end.as_bytes()).is_ok();
            return ok;
        }
        Fault::MissingRow => {
            let mut rows: Vec<serde_json::Value> = serde_json::from_str(good).unwrap();
            rows.pop();
            let answer = serde_json::to_string(&rows).unwrap();
            let response = format!(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            return writer.write_all(response.as_bytes()).is_ok();
        }
        Fault::ManyRows(rows) => return many_rows(writer, rows),
        Fault::Stall => std::thread::sleep(Duration::from_secs(120)),
        Fault::EndlessContinue => {
            let continues = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(1000);
            while writer.write_all(&continues).is_ok() {}
        }
        Fault::RefuseBody | Fault::RefuseBodyAndClose => unreachable!("answered before the body"),
    }
    false
}

/// `{"total_rows":N,"offset":0,"rows":[ROW,ROW,…]}` of `rows` rows, in chunks of about
/// 64 KiB; true when it was all written.
fn many_rows(writer: &mut TcpStream, rows: usize) -> bool {
    let head =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if writer.write_all(head).is_err() {
        return false;
    }
    let mut piece = format!(r#"{{"total_rows":{rows},"offset":0,"rows":["#);
    let mut chunk = |piece: &mut String| {
        let framed = format!("{:x}\r\n{piece}\r\n", piece.len());
        piece.clear();
        writer.write_all(framed.as_bytes()).is_ok()
    };
    for k in 0..rows {
        if k > 0 {
            piece.push(',');
        }
        piece.push_str(ROW);
        if piece.len() >= 64 * 1024 && !chunk(&mut piece) {
            return false;
        }
    }
    piece.push_str("]}");
    chunk(&mut piece) && writer.write_all(b"0\r\n\r\n").is_ok()
}

/// Runs sofabench with its address space limited to `kib` KiB: a client whose memory
/// followed the server's answers would be killed, or fail to allocate, instead of ending.
/// A run that hangs is ended after 60 s (exit 124).
pub fn sofabench_within(kib: u64, args: &[&str]) -> Run {
    let started = Instant::now();
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; exec timeout 60 \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_sofabench"))
        .args(args)
        .current_dir(super::repository())
        .env("NO_COLOR", "1")
        .output()
        .expect("run sofabench");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: started.elapsed(),
    }
}
