//! A test-only TCP proxy that holds every piece of a request on its way to the server for
//! a fixed delay and passes answers back at once: put between a server's replicator and
//! its databases, every request the replicator makes (reading the source, writing the
//! target) arrives that much later, an injected replication delay.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

pub struct DelayProxy {
    pub url: String,
}

impl DelayProxy {
    pub fn start(upstream_port: u16, delay: Duration) -> DelayProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let (client_in, server_out) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pass(client_in, server_out, delay));
                std::thread::spawn(move || pass(server, client, Duration::ZERO));
            }
        });
        DelayProxy { url }
    }
}

/// Copies `from` to `to`, each piece after `delay`, until either side closes.
fn pass(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        std::thread::sleep(delay);
        if to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
