//! `--store`: holding a longpoll or continuous `_changes` feed. A held feed is a task
//! asleep on its database's change signal, its timer and its socket: 10,000 of them cost
//! their connections' buffers and nothing else, and a write wakes only the feeds of the
//! database written to.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::changes::{Batch, Feed, FeedRequest, envelope, envelope_end, write_rows};
use crate::count;
use crate::http::{chunk, chunked_head, last_chunk, respond};
use crate::store::Store;

/// While a feed is held, the most of what the client sends that is kept for later.
const MAX_PENDING_INPUT: usize = 64 * 1024;

/// Holds `feed` until it is answered; false when the connection is done with (the client
/// closed it, or asked to).
pub async fn hold(
    stream: &mut TcpStream,
    input: &mut Vec<u8>,
    feed: FeedRequest,
    store: &Rc<RefCell<Store>>,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    let _held = count::Held::feed();
    let open = match feed.feed {
        Feed::Continuous => continuous(stream, input, feed, store, out).await?,
        _ => longpoll(stream, input, feed, store, out).await?,
    };
    Ok(open)
}

/// Scans the database's changes after `since`: the rows, and the scan's end and
/// what is pending after it; None when the database is gone.
fn scan(
    store: &Rc<RefCell<Store>>,
    feed: &FeedRequest,
    since: u64,
    limit: u64,
    separator: &[u8],
) -> Option<(Vec<u8>, Batch, u64)> {
    let store = store.borrow();
    let db = store.get(&feed.database)?;
    let mut rows = Vec::new();
    let batch = write_rows(db, since, &feed.select, limit, &mut rows, separator);
    let pending = db.pending_after(batch.last_seq);
    Some((rows, batch, pending))
}

async fn longpoll(
    stream: &mut TcpStream,
    input: &mut Vec<u8>,
    mut feed: FeedRequest,
    store: &Rc<RefCell<Store>>,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    let deadline = Instant::now() + feed.timeout;
    let mut beat = heartbeat(&feed);
    let mut started = false;
    let (rows, last_seq, pending) = loop {
        tokio::select! {
            changed = feed.changed.changed() => {
                if changed.is_err() {
                    break (Vec::new(), feed.since, 0);
                }
                match scan(store, &feed, feed.since, feed.limit, b",\n") {
                    Some((rows, batch, pending)) if batch.rows > 0 => break (rows, batch.last_seq, pending),
                    Some(_) => {}
                    None => break (Vec::new(), feed.since, 0),
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                match scan(store, &feed, feed.since, feed.limit, b",\n") {
                    Some((rows, batch, pending)) => break (rows, batch.last_seq, pending),
                    None => break (Vec::new(), feed.since, 0),
                }
            }
            _ = tick(&mut beat) => {
                if !started {
                    chunked_head(out, 200, feed.close);
                    chunk(out, b"{\"results\":[\n");
                    started = true;
                }
                chunk(out, b"\n");
                stream.write_all(out).await?;
                out.clear();
            }
            read = read_more(stream, input) => {
                if read? == 0 {
                    return Ok(false);
                }
            }
        }
    };
    let mut b = Vec::with_capacity(rows.len() + 64);
    if started {
        envelope_end(&mut b, &rows, last_seq, pending);
        chunk(out, &b);
        last_chunk(out);
    } else {
        envelope(&mut b, &rows, last_seq, pending);
        respond(out, 200, &b, feed.close);
    }
    stream.write_all(out).await?;
    out.clear();
    Ok(!feed.close)
}

async fn continuous(
    stream: &mut TcpStream,
    input: &mut Vec<u8>,
    mut feed: FeedRequest,
    store: &Rc<RefCell<Store>>,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    // With a heartbeat the feed runs until the client leaves (CouchDB ignores `timeout`).
    let deadline = feed
        .heartbeat
        .is_none()
        .then(|| Instant::now() + feed.timeout);
    let mut beat = heartbeat(&feed);
    let mut sent = feed.since;
    let mut left = feed.limit;
    chunked_head(out, 200, feed.close);
    // Until the database is gone, the limit reached, the timeout or the client leaving.
    while let Some((mut lines, batch, pending)) = scan(store, &feed, sent, left, b"\n") {
        sent = batch.last_seq;
        left -= batch.rows;
        if batch.rows > 0 {
            lines.push(b'\n');
            chunk(out, &lines);
        }
        if left == 0 {
            chunk(
                out,
                format!("{{\"last_seq\":{sent},\"pending\":{pending}}}\n").as_bytes(),
            );
            break;
        }
        stream.write_all(out).await?;
        out.clear();
        tokio::select! {
            changed = feed.changed.changed() => {
                if changed.is_err() {
                    break;
                }
            }
            _ = sleep_until(deadline) => {
                chunk(out, format!("{{\"last_seq\":{sent},\"pending\":0}}\n").as_bytes());
                break;
            }
            _ = tick(&mut beat) => {
                chunk(out, b"\n");
            }
            read = read_more(stream, input) => {
                if read? == 0 {
                    return Ok(false);
                }
            }
        }
    }
    last_chunk(out);
    stream.write_all(out).await?;
    out.clear();
    Ok(!feed.close)
}

fn heartbeat(feed: &FeedRequest) -> Option<Interval> {
    feed.heartbeat.map(|every| {
        let mut beat = tokio::time::interval_at(Instant::now() + every, every);
        beat.set_missed_tick_behavior(MissedTickBehavior::Delay);
        beat
    })
}

async fn tick(beat: &mut Option<Interval>) {
    match beat {
        Some(beat) => {
            beat.tick().await;
        }
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Reads what the client sends while its feed is held (the next request, or the end of
/// the connection: 0), keeping up to [`MAX_PENDING_INPUT`] of it.
async fn read_more(stream: &mut TcpStream, input: &mut Vec<u8>) -> io::Result<usize> {
    if input.len() >= MAX_PENDING_INPUT {
        std::future::pending::<()>().await;
    }
    input.reserve(1024);
    stream.read_buf(input).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::connection::{Context, connection};

    async fn target() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let context = Rc::new(Context {
            delay: Duration::ZERO,
            store: Some(Rc::new(RefCell::new(Store::default()))),
        });
        tokio::task::spawn_local(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::task::spawn_local(connection(stream, context.clone()));
            }
        });
        port
    }

    async fn send(port: u16, request: &str) -> TcpStream {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        stream
    }

    /// Reads until `until` is in what came, or the connection ends.
    async fn read_until(stream: &mut TcpStream, until: &str) -> String {
        let mut got = Vec::new();
        while !String::from_utf8_lossy(&got).contains(until) {
            if stream.read_buf(&mut got).await.unwrap() == 0 {
                break;
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    async fn write(port: u16, path: &str) {
        let mut s = send(
            port,
            &format!("PUT {path} HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}"),
        )
        .await;
        read_until(&mut s, "}").await;
    }

    fn run(test: impl std::future::Future<Output = ()>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&runtime, test);
    }

    #[test]
    fn a_write_answers_the_feeds_of_its_database_only() {
        run(async {
            let port = target().await;
            write(port, "/a").await;
            write(port, "/b").await;
            let feed = "_changes?feed=longpoll&since=now&style=all_docs&timeout=60000";
            let mut on_a = send(port, &format!("GET /a/{feed} HTTP/1.1\r\n\r\n")).await;
            let mut on_b = send(port, &format!("GET /b/{feed} HTTP/1.1\r\n\r\n")).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            write(port, "/a/doc").await;
            let answer = read_until(&mut on_a, "last_seq").await;
            assert!(answer.contains(r#""id":"doc""#), "{answer}");
            let mut nothing = [0u8; 64];
            let read =
                tokio::time::timeout(Duration::from_millis(300), on_b.read(&mut nothing)).await;
            assert!(read.is_err(), "b's feed answered a write to a");
            // The same connection is kept for the next request.
            on_a.write_all(b"GET /a HTTP/1.1\r\n\r\n").await.unwrap();
            assert!(
                read_until(&mut on_a, "update_seq")
                    .await
                    .contains(r#""update_seq":1"#)
            );
        });
    }

    #[test]
    fn held_feeds_beat_time_out_and_stream() {
        run(async {
            let port = target().await;
            write(port, "/a").await;
            let mut poll = send(
                port,
                "GET /a/_changes?feed=longpoll&since=0&heartbeat=20&timeout=200 HTTP/1.1\r\n\r\n",
            )
            .await;
            let answer = read_until(&mut poll, "0\r\n\r\n").await;
            assert!(answer.contains("Transfer-Encoding: chunked"), "{answer}");
            assert!(
                answer.contains(r#""last_seq":0"#) && answer.contains("1\r\n\n\r\n"),
                "{answer}"
            );
            let mut stream = send(
                port,
                "GET /a/_changes?feed=continuous&since=0&heartbeat=20 HTTP/1.1\r\n\r\n",
            )
            .await;
            read_until(&mut stream, "1\r\n\n\r\n").await;
            write(port, "/a/x").await;
            let line = read_until(&mut stream, "\"id\":\"x\"").await;
            assert!(
                line.contains(r#"{"seq":1,"id":"x","changes":[{"rev":"1-"#),
                "{line}"
            );
            let mut limited = send(
                port,
                "GET /a/_changes?feed=continuous&since=0&limit=1 HTTP/1.1\r\n\r\n",
            )
            .await;
            let all = read_until(&mut limited, "0\r\n\r\n").await;
            assert!(all.contains(r#"{"last_seq":1,"pending":0}"#), "{all}");
        });
    }
}
