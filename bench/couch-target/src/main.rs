//! couch-target: an HTTP/1.1 server that answers the CouchDB operations sofabench (and a
//! load generator such as wrk or oha) sends, in CouchDB's response shape, and stores
//! nothing. It is the fast local target of `bench/bench.py`: on one core it must answer
//! faster than any client can ask, so that a benchmark of clients measures the clients.
//!
//! ```text
//! couch-target [--port PORT] [--backlog N] [--delay-ms MS] [--answer-bytes N] [--rows R]
//!              [--store] [--count-every SECONDS]
//! ```
//!
//! `--delay-ms` holds every answer at least that long (tokio's timer: up to a millisecond
//! more), a server that is slow but not busy, for the open model's send-lag case.
//!
//! Prints `couch-target listening on 127.0.0.1:PORT` once it accepts connections
//! (`--port 0`, the default, picks a free port). One thread (a current-thread tokio
//! runtime): pin it with `taskset -c CPU`.
//!
//! | request | answer |
//! |---|---|
//! | `GET /` | 200 `{"couchdb":"Welcome",...}` |
//! | `GET /db`, `HEAD /db` | 404 `{"error":"not_found",...}` (no database ever exists) |
//! | `PUT /db` | 201 `{"ok":true}` |
//! | `DELETE /db` | 200 `{"ok":true}` |
//! | `POST /db/_bulk_docs` | 201 `[{"ok":true,"id":ID,"rev":"1-<32 hex>"}, ...]`, one per document |
//! | `POST /db` | 201 `{"ok":true,"id":<generated>,"rev":"1-..."}` |
//! | `PUT /db/id` | 201 `{"ok":true,"id":ID,"rev":"<g+1>-..."}` (`g` from the body's `_rev`, else 0) |
//! | `GET /db/id` | 200 a 250-byte document `{"_id":ID,"_rev":"1-...",...}` |
//! | `DELETE /db/id?rev=g-...` | 200 `{"ok":true,"id":ID,"rev":"<g+1>-..."}` |
//! | `POST /db/_index` | 200 `{"result":"created","id":"_design/idx","name":"idx"}` |
//! | `POST /db/_find` | 200 `{"docs":[...]}` of `--rows` documents (see below) |
//! | `GET /db/_design/d/_view/v`, `GET` or `POST /db/_all_docs` | 200 `{"total_rows":R,"offset":0,"rows":[{"id":…,"key":…,"value":…}, ...]}` of `--rows` rows |
//!
//! `--answer-bytes N` makes a read's document and every query's answer N bytes long (as
//! near as whole rows allow), padded with a string member; without it a document is 250
//! bytes and a query's answer holds `--rows` (default 25) rows of about 100 bytes. The
//! benchmark of a query against a read of the same size (bench/queries.py) uses it.
//!
//! `--store` keeps the databases created with `PUT /db` in memory, as much as CouchDB's
//! replication protocol needs (store.rs): for those databases `GET /db` has a real
//! `update_seq` and `doc_count`, and couch-target answers `GET`/`PUT`/`DELETE
//! /db/_local/<id>` (revisions `0-N`), `GET`/`POST /db/_changes` (`style=all_docs`,
//! `since`, `limit`, `feed=normal|longpoll|continuous`, `heartbeat`, `timeout`,
//! `filter=_doc_ids` with the ids in the query or the body), `POST /db/_revs_diff`,
//! `POST /db/_bulk_get` (`_revisions`, `latest=true`), `POST /db/_bulk_docs` (edits, or
//! with `"new_edits":false` the revisions as sent, answering only errors) and document
//! reads and writes. Bodies are not kept: a revision read gets a generated body of the size
//! it was written with. Held feeds wait on their own database's signal only: 10,000 of
//! them cost their connections' buffers. Without `--store` (and for databases the store
//! does not hold) every answer is the stateless one below.
//!
//! `--count-every S` prints, every S seconds, one JSON line of the requests of that
//! interval by kind and the connections and feeds held (count.rs).
//!
//! Any other path below a database (`/db/_design/x`, `/db/a/b`) is a document id.
//! Revisions are `<generation>-<32 hex digits>`, the digits a hash of the id and the
//! generation, so the same request always gets the same answer. Requests may be
//! pipelined; bodies need `Content-Length` (chunked bodies get 411).

mod changes;
mod connection;
mod count;
mod feed;
mod http;
mod replication;
mod stateless;
mod store;

use std::cell::RefCell;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use tokio::net::TcpSocket;

use connection::{Context, connection};
use stateless::{SHAPE, Shape};
fn main() {
    let mut port: u16 = 0;
    let mut backlog: u32 = 65535;
    let mut delay = Duration::ZERO;
    let mut answer_bytes = None;
    let mut rows = 25;
    let mut store = false;
    let mut count_every = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).unwrap_or_default();
        match name.as_str() {
            "--port" => {
                port = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--port needs a number"))
            }
            "--backlog" => {
                backlog = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--backlog needs a number"))
            }
            "--delay-ms" => {
                delay = Duration::from_millis(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--delay-ms needs a number")),
                )
            }
            "--answer-bytes" => {
                answer_bytes = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--answer-bytes needs a number")),
                )
            }
            "--rows" => {
                rows = value()
                    .parse()
                    .ok()
                    .filter(|&r| r > 0)
                    .unwrap_or_else(|| usage("--rows needs a number above 0"))
            }
            "--store" => store = true,
            "--count-every" => {
                count_every = Some(
                    value()
                        .parse::<f64>()
                        .ok()
                        .filter(|s| *s >= 0.01 && *s <= 86_400.0)
                        .map(Duration::from_secs_f64)
                        .unwrap_or_else(|| usage("--count-every needs seconds (0.01 to 86400)")),
                )
            }
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let _ = SHAPE.set(Shape { answer_bytes, rows });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let context = Rc::new(Context {
        delay,
        store: store.then(|| Rc::new(RefCell::new(store::Store::default()))),
    });
    if count_every.is_some() {
        count::enable();
    }
    // Every task on this one thread: the store is shared without a lock.
    let tasks = tokio::task::LocalSet::new();
    let served = tasks.block_on(&runtime, async move {
        if let Some(period) = count_every {
            tokio::task::spawn_local(count::report_every(period));
        }
        serve(port, backlog, context).await
    });
    if let Err(e) = served {
        eprintln!("couch-target: {e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("couch-target: {problem}");
    }
    eprintln!(
        "usage: couch-target [--port PORT] [--backlog N] [--delay-ms MS] [--answer-bytes N] [--rows R] [--store] [--count-every S]"
    );
    std::process::exit(if problem.is_empty() { 0 } else { 2 });
}

async fn serve(port: u16, backlog: u32, context: Rc<Context>) -> io::Result<()> {
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    // A backlog as deep as the kernel allows: 10,000 clients connecting at once must not
    // see dropped SYNs (which a client sees as a one-second stall).
    let listener = socket.listen(backlog)?;
    let local = listener.local_addr()?;
    let mut stdout = io::stdout();
    writeln!(stdout, "couch-target listening on {local}")?;
    stdout.flush()?;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let context = context.clone();
                tokio::task::spawn_local(async move {
                    let _ = connection(stream, context).await;
                });
            }
            // Out of file descriptors and the like: wait for connections to close.
            Err(e) => {
                eprintln!("couch-target: accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}
