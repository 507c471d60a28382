//! One client connection: requests read (pipelined ones too), answered in order, all
//! answers of what was read in one write; a held feed (`--store`) in between.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http::{Head, Request, parse_head, respond};
use crate::replication::{self, Answer};
use crate::stateless::{self, Scratch};
use crate::store::Store;
use crate::{count, feed};

/// Largest request head accepted; larger gets 431 and the connection is closed.
const MAX_HEAD: usize = 64 * 1024;
/// A connection's read buffer starts this small (10,000 idle connections cost 40 MB) and
/// grows for large bodies; it is given back once it is empty and larger than `KEEP`.
const INITIAL_BUFFER: usize = 4096;
const KEEP: usize = 256 * 1024;

/// What every connection shares.
pub struct Context {
    /// Every answer is held at least this long (`--delay-ms`).
    pub delay: Duration,
    /// `--store`: the databases the store holds.
    pub store: Option<Rc<RefCell<Store>>>,
}

/// Serves one connection until the client closes it: answers every complete request in
/// what was read, all answers in one write (after `delay`, if any).
pub async fn connection(mut stream: TcpStream, context: Rc<Context>) -> io::Result<()> {
    let _open = count::Held::connection();
    let mut input: Vec<u8> = Vec::with_capacity(INITIAL_BUFFER);
    let mut output: Vec<u8> = Vec::new();
    let mut scratch = Scratch::default();
    loop {
        let mut start = 0;
        let mut close = false;
        let mut wanted = 0;
        let mut held = None;
        while start < input.len() {
            match parse_head(&input[start..]) {
                Head::Incomplete => break,
                Head::Bad(status) => {
                    respond(&mut output, status, b"{\"error\":\"bad_request\"}", true);
                    close = true;
                    break;
                }
                Head::Complete(request) => {
                    let end = start + request.head_len + request.body_len;
                    if end > input.len() {
                        wanted = end - start;
                        break;
                    }
                    let body = &input[start + request.head_len..end];
                    let keep_alive = request.keep_alive;
                    let answer = answer(
                        &request,
                        &input[start..],
                        body,
                        &mut scratch,
                        &mut output,
                        &context,
                    );
                    start = end;
                    if let Answer::Feed(feed) = answer {
                        held = Some(feed);
                        break;
                    }
                    if !keep_alive {
                        close = true;
                        break;
                    }
                }
            }
        }
        if !output.is_empty() {
            if !context.delay.is_zero() {
                tokio::time::sleep(context.delay).await;
            }
            stream.write_all(&output).await?;
            output.clear();
        }
        if close {
            return Ok(());
        }
        input.drain(..start);
        if let (Some(feed), Some(store)) = (held, &context.store) {
            if !feed::hold(&mut stream, &mut input, feed, store, &mut output).await? {
                return Ok(());
            }
            // Whatever came in meanwhile is parsed before reading more.
            if !input.is_empty() {
                continue;
            }
        }
        if input.is_empty() && input.capacity() > KEEP {
            input = Vec::with_capacity(INITIAL_BUFFER);
        }
        if input.len() >= MAX_HEAD && wanted == 0 {
            respond(&mut output, 431, b"{\"error\":\"header_too_large\"}", true);
            stream.write_all(&output).await?;
            return Ok(());
        }
        // A large body: make room for all of it at once.
        let room = wanted.saturating_sub(input.len()).max(1024);
        if input.capacity() - input.len() < room {
            input.reserve(room);
        }
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
    }
}

/// Appends the answer to one request to `out`: the store's, for the databases it holds,
/// else the stateless target's.
fn answer(
    request: &Request,
    input: &[u8],
    body: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
    context: &Context,
) -> Answer {
    let target = &input[request.target.0..request.target.1];
    count::request(request.method, target);
    if let Some(store) = &context.store
        && let Some(answer) =
            replication::answer(request, target, body, &mut store.borrow_mut(), out)
    {
        return answer;
    }
    stateless::answer(request, input, body, scratch, out);
    Answer::Done
}
