//! A test-only proxy in front of a real server whose `_changes` feeds misbehave on
//! demand: the first feed connections each meet one trouble (a stall without heartbeat,
//! a reset mid-line, an endless line, garbage), the later ones reach the server.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a feed connection meets instead of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// A heartbeat, then silence (the socket stays open) for this long.
    Stall(Duration),
    /// Half a change line, then the connection closes.
    ResetMidLine,
    /// Bytes without a newline until the client hangs up (or this many were sent).
    EndlessLine(usize),
    /// A line that is no change.
    Garbage,
}

pub struct FeedProxy {
    pub url: String,
    troubles: Arc<Mutex<VecDeque<Trouble>>>,
    /// Bytes of endless lines the client took before hanging up.
    pub endless_sent: Arc<Mutex<usize>>,
}

impl FeedProxy {
    pub fn start(upstream_port: u16, troubles: &[Trouble]) -> FeedProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let queue = Arc::new(Mutex::new(
            troubles.iter().copied().collect::<VecDeque<_>>(),
        ));
        let endless_sent = Arc::new(Mutex::new(0));
        let (shared, sent) = (queue.clone(), endless_sent.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (queue, sent) = (shared.clone(), sent.clone());
                std::thread::spawn(move || serve(client, upstream_port, &queue, &sent));
            }
        });
        FeedProxy {
            url,
            troubles: queue,
            endless_sent,
        }
    }

    /// Troubles not yet met.
    pub fn left(&self) -> usize {
        self.troubles.lock().unwrap().len()
    }
}

/// Reads the first request's head, then misbehaves (a feed, while troubles are left) or
/// passes the connection through.
fn serve(
    mut client: TcpStream,
    upstream_port: u16,
    queue: &Mutex<VecDeque<Trouble>>,
    sent: &Mutex<usize>,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65_536 {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let is_feed = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .is_some_and(|l| l.contains("/_changes"));
    let trouble = if is_feed {
        queue.lock().unwrap().pop_front()
    } else {
        None
    };
    match trouble {
        Some(trouble) => misbehave(client, trouble, sent),
        None => {
            let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                return;
            };
            if server.write_all(&head).is_err() {
                return;
            }
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || pump(s2, c2));
            pump(client, server);
        }
    }
}

fn chunk(out: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    out.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")
}

fn misbehave(mut client: TcpStream, trouble: Trouble, sent: &Mutex<usize>) {
    let head =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if client.write_all(head).is_err() {
        return;
    }
    let _ = match trouble {
        Trouble::Stall(how_long) => {
            let _ = chunk(&mut client, b"\n");
            std::thread::sleep(how_long);
            Ok(())
        }
        Trouble::ResetMidLine => chunk(&mut client, b"{\"seq\":1,\"id\":\"half"),
        Trouble::Garbage => chunk(&mut client, b"<html>Bad Gateway</html>\n"),
        Trouble::EndlessLine(most) => {
            let block = vec![b'x'; 65_536];
            let mut total = 0;
            while total < most && chunk(&mut client, &block).is_ok() {
                total += block.len();
            }
            *sent.lock().unwrap() = total;
            Ok(())
        }
    };
    let _ = client.shutdown(Shutdown::Both);
}

fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16384];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}
