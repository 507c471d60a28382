//! A test-only TCP proxy that forwards bytes unchanged and adds up the body lengths
//! (`Content-Length`) of the HTTP messages going each way, to check what a tool reports
//! as bytes of JSON sent and received.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Body bytes seen going to the server and coming back.
#[derive(Default)]
pub struct BodyBytes {
    pub to_server: AtomicU64,
    pub from_server: AtomicU64,
}

pub struct CountingProxy {
    pub url: String,
    pub bytes: Arc<BodyBytes>,
}

impl CountingProxy {
    pub fn start(upstream_port: u16) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bytes = Arc::new(BodyBytes::default());
        let counters = bytes.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let counters = counters.clone();
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = counters.clone();
                std::thread::spawn(move || {
                    pump(client, server, |n| {
                        up.to_server.fetch_add(n, Ordering::Relaxed)
                    })
                });
                std::thread::spawn(move || {
                    pump(s2, c2, |n| {
                        counters.from_server.fetch_add(n, Ordering::Relaxed)
                    })
                });
            }
        });
        CountingProxy { url, bytes }
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, count: impl Fn(u64) -> u64) {
    let mut parser = MessageParser::default();
    let mut buf = [0u8; 16384];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        parser.feed(&buf[..n], &count);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Follows a stream of HTTP/1.1 messages with `Content-Length` bodies.
#[derive(Default)]
struct MessageParser {
    head: Vec<u8>,
    body_left: u64,
}

impl MessageParser {
    fn feed(&mut self, mut data: &[u8], count: &impl Fn(u64) -> u64) {
        while !data.is_empty() {
            if self.body_left > 0 {
                let take = (self.body_left as usize).min(data.len());
                self.body_left -= take as u64;
                data = &data[take..];
                continue;
            }
            self.head.push(data[0]);
            data = &data[1..];
            if self.head.ends_with(b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.head).to_ascii_lowercase();
                assert!(
                    !head.contains("transfer-encoding: chunked"),
                    "chunked bodies are not counted"
                );
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse::<u64>().unwrap());
                count(length);
                self.body_left = length;
                self.head.clear();
            }
        }
    }
}
