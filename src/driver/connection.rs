//! One HTTP/1.1 keep-alive connection to one node, and the client that keeps it open.
//!
//! The exchange runs in the worker's own task, on a socket only it uses: it writes the
//! request, reads the response and notes the moments Iron Cushion's timings need in
//! between, with nothing shared with other tasks and, once the buffers have grown to fit,
//! no allocation per request.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use std::future::poll_fn;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

use super::auth::{Auth, Credential, HeaderCopy};
use super::generated::{self, GeneratedBody, Streaming};
use super::http1::{self, Method, Response, ResponseReader};
use super::stream::Stream;
use super::tls::NodeTls;
use crate::metrics::process::OpenConnection;
use crate::target::{Node, Scheme, Target};

/// How long establishing a TCP connection, and then a TLS handshake, may each take before
/// the node counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection idle this long is closed and a new one opened before the next request.
/// Servers close idle keep-alive connections (PouchDB Server after about 5 s); a request
/// sent as the server closes the socket may or may not have been seen, so the client
/// retires the connection first rather than meet that race.
pub const IDLE_RETIRE: Duration = Duration::from_secs(4);

/// A connection idle this long is checked for a close from the server (a non-blocking
/// peek) before a request goes out on it. Servers close idle connections after seconds,
/// and say `Connection: close` when they close after an answer, so a check on every
/// request would only catch servers that close unannounced right after answering, at the
/// price of a system call per request: peeking always cost 8–10 % of the requests one
/// core of the client makes (8 connections of reads against bench/couch-target, 73–76k
/// against 82–84k per second). A close in a shorter gap is met by the request: a GET is
/// sent once more, a write's outcome is counted as unknown.
const PEEK_AFTER_IDLE: Duration = Duration::from_millis(1);

/// Free room the read buffer gets before each read: a CouchDB answer of a few KB then
/// comes in with one read, and a longer body, once its length is known, gets room for all
/// of it at once. Every connection keeps this much, so it stays small for 10,000 of them.
pub(super) const READ_SIZE: usize = 4 * 1024;

/// The most room made at once for the rest of a body of known length: a large body is read
/// into one allocation, but a wrong Content-Length does not allocate gigabytes up front.
const MAX_RESERVE: u64 = 16 * 1024 * 1024;

/// The largest response body accepted by default (`--max-response-size`): above CouchDB
/// 3's default `max_document_size` of 8 MB, with room for bulk and view answers.
pub const DEFAULT_MAX_RESPONSE: u64 = 64 * 1024 * 1024;

/// What every request to one node carries; built once, shared by its connections.
#[derive(Clone)]
pub struct Endpoint {
    pub node: Node,
    /// The Host and Accept header lines, rendered once.
    pub(super) headers: Vec<u8>,
    /// The auth mode's header lines, shared by the node's connections (and renewed, in
    /// the modes whose credential a server issues).
    pub credential: Arc<Credential>,
    /// The largest response body read from this node; a longer one fails its request.
    pub max_response: u64,
    /// For an `https://` node, what its handshake takes.
    tls: Option<NodeTls>,
    /// False with --disable-keepalive: each connection carries one request.
    pub(super) keep_alive: bool,
    /// The type of request bodies: JSON, but a form for an IAM token endpoint.
    pub(super) body_type: &'static str,
    /// Whether answers' session cookies are kept (a login's endpoint).
    keep_session_cookie: bool,
}

impl Endpoint {
    /// One endpoint per node of the target, authenticating as `auth` says, reading bodies
    /// of at most `max_response` bytes.
    pub fn all(target: &Target, auth: &Auth, max_response: u64) -> Vec<Arc<Endpoint>> {
        let credentials = auth.credentials_for(target);
        target
            .nodes
            .iter()
            .zip(credentials)
            .map(|(node, credential)| {
                let endpoint = Endpoint::new(node.clone(), credential)
                    .with_max_response(max_response)
                    .with_tls(target.tls.as_ref())
                    .with_keep_alive(target.keep_alive);
                Arc::new(endpoint)
            })
            .collect()
    }

    pub fn new(node: Node, credential: Arc<Credential>) -> Endpoint {
        let headers = http1::common_headers(&node.host_header, None);
        Endpoint {
            node,
            headers,
            credential,
            max_response: DEFAULT_MAX_RESPONSE,
            tls: None,
            keep_alive: true,
            body_type: http1::JSON,
            keep_session_cookie: false,
        }
    }

    /// An endpoint whose requests carry no credentials.
    pub fn plain(node: Node) -> Endpoint {
        Endpoint::new(node, Credential::none())
    }

    /// The same endpoint, sending bodies of type `body_type`.
    pub fn with_body_type(self, body_type: &'static str) -> Endpoint {
        Endpoint { body_type, ..self }
    }

    /// The same endpoint, keeping the session cookie of its answers (for logins).
    pub fn keeping_session_cookie(self) -> Endpoint {
        Endpoint {
            keep_session_cookie: true,
            ..self
        }
    }

    /// The same endpoint, with a new connection for every request when `keep_alive` is
    /// false: the requests say `Connection: close`, and no connection is used twice
    /// whatever the server answers.
    pub fn with_keep_alive(mut self, keep_alive: bool) -> Endpoint {
        if !keep_alive && self.keep_alive {
            self.headers.extend_from_slice(b"Connection: close\r\n");
        }
        Endpoint { keep_alive, ..self }
    }

    /// The same endpoint, shaking hands with `config` if its node is `https://`. The
    /// host was checked as a certificate name when the address was parsed; a node whose
    /// TLS cannot be set up fails each connection with the reason.
    pub fn with_tls(self, config: Option<&Arc<rustls::ClientConfig>>) -> Endpoint {
        let tls = match config {
            Some(config) if self.node.scheme == Scheme::Https => {
                NodeTls::new(config.clone(), &self.node.host).ok()
            }
            _ => None,
        };
        Endpoint { tls, ..self }
    }

    /// This endpoint (its credential shared) for small administrative answers: bodies
    /// of at most `limit` bytes, so that many such requests at once cannot take
    /// `--max-response-size` each.
    pub fn limited_to(&self, limit: u64) -> Arc<Endpoint> {
        Arc::new(self.clone().with_max_response(limit.min(self.max_response)))
    }

    /// The same endpoint, reading bodies of at most `limit` bytes.
    pub fn with_max_response(self, limit: u64) -> Endpoint {
        Endpoint {
            max_response: limit,
            ..self
        }
    }
}

impl fmt::Debug for Endpoint {
    /// Without the header lines: base64 in the Authorization line hides no password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

/// Why an exchange did not produce a response.
#[derive(Debug)]
pub enum TransportError {
    /// The TCP connection could not be made.
    Connect(io::Error),
    /// The TCP connection was not made within [`CONNECT_TIMEOUT`].
    ConnectTimeout,
    /// The request or its response did not finish within the per-request timeout.
    Timeout,
    /// The connection broke while the request or its response was on the way, or the
    /// response did not follow HTTP/1.1 (then the error's kind is `InvalidData`).
    Broken(io::Error),
    /// The server closed the connection before answering.
    Closed,
    /// The response's head or body was past the limit (`--max-response-size`); the
    /// connection was closed without reading the rest. The status, when the head came.
    TooLarge(Option<u16>, http1::BadResponse),
    /// The TCP connection was made but the TLS handshake failed: no request was sent.
    Handshake(io::Error),
}

impl TransportError {
    /// True when TLS failed, and the message says what to do about it.
    pub fn is_tls_problem(&self) -> bool {
        match self {
            TransportError::Handshake(_) => true,
            TransportError::Broken(e) => super::tls::remedy(e).is_some(),
            _ => false,
        }
    }

    /// True when the server's answer said the request was refused (an error status) even
    /// though the answer was not read whole: nothing was applied.
    pub fn refused(&self) -> bool {
        matches!(self, TransportError::TooLarge(Some(status), _) if *status >= 400)
    }

    /// True when the node could not be reached at all, as opposed to a request going wrong.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            TransportError::Connect(_)
                | TransportError::ConnectTimeout
                | TransportError::Handshake(_)
        )
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Connect(e) => write!(f, "cannot connect: {e}"),
            TransportError::ConnectTimeout => write!(
                f,
                "cannot connect: no answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            ),
            TransportError::Timeout => write!(f, "request timed out"),
            TransportError::Broken(e) => match super::tls::remedy(e) {
                None => write!(f, "connection broken: {e}"),
                Some(remedy) => write!(f, "connection broken: {e}; {remedy}"),
            },
            TransportError::Closed => write!(f, "the server closed the connection"),
            TransportError::TooLarge(None, e) => e.fmt(f),
            TransportError::TooLarge(Some(status), e) => write!(f, "status {status}: {e}"),
            TransportError::Handshake(e) => write!(
                f,
                "TLS handshake failed: {e}; {}",
                super::tls::remedy(e).unwrap_or(
                    "check that the address is an https:// server (and not plain http://)"
                )
            ),
        }
    }
}

/// A response, with where its time went.
#[derive(Debug)]
pub struct Exchange {
    pub status: u16,
    pub body: Bytes,
    /// The answer body's length: `body`'s, or all of a counted answer's.
    pub body_length: u64,
    /// A query's rows, counted as its answer was read (`Streaming::count_rows`).
    pub rows: Option<u64>,
    pub timing: ExchangeTiming,
    /// When the request was handed to the connection and when its answer's last byte came:
    /// the caller's figures can use them instead of reading the clock again.
    pub started: Instant,
    pub finished: Instant,
    /// True when the request was sent a second time (a GET whose first attempt met a
    /// closed connection before any byte of an answer, or any request whose first attempt
    /// met a 401 that a new session or token answered); the first attempt's time is in
    /// `timing.wait`.
    pub resent: bool,
    /// A 429's `Retry-After`, as the server wrote it.
    pub retry_after: Option<Box<str>>,
    /// The answer's `Set-Cookie: AuthSession=…`, for an endpoint that keeps it.
    pub session_cookie: Option<String>,
}

/// Why a request got no answer, and what that means for the operation.
#[derive(Debug)]
pub struct Unanswered {
    pub error: TransportError,
    /// False only when the request provably never reached the server (no connection
    /// could be made). When true, a write may have been applied: its outcome is unknown.
    pub may_have_reached: bool,
    /// True when a GET was sent a second time before it failed.
    pub resent: bool,
    /// When the first attempt began, so that the failure's time counts.
    pub started: Instant,
}

impl Unanswered {
    /// True when the node could not be reached at all.
    pub fn is_unreachable(&self) -> bool {
        self.error.is_unreachable()
    }
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

/// Where the time of one exchange went, in nanoseconds. `send + wait + receive` is the
/// service time: from handing the request to the connection to the response's last byte.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExchangeTiming {
    /// Writing the request to the socket (Iron Cushion's `sendData`).
    pub send: u64,
    /// From the request's last byte out to the response's first byte in (`remoteProcessing`);
    /// for a resent GET, the first attempt's time too, since the server held it.
    pub wait: u64,
    /// From the response's first byte to its last (`receiveData`).
    pub receive: u64,
}

impl ExchangeTiming {
    pub fn service_time(&self) -> u64 {
        self.send + self.wait + self.receive
    }
}

/// A request to send: the method, the path below the node's base path, and the body.
pub struct Call<'a> {
    pub method: Method,
    pub path: &'a str,
    pub body: Option<&'a [u8]>,
}

/// How an attempt failed, and whether any byte of a response had come back by then.
pub(super) struct Failed {
    pub(super) error: TransportError,
    pub(super) answered: bool,
}

/// What setting up one connection took, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opening {
    /// From asking for the TCP connection to having it.
    pub connect_ns: u64,
    /// The TLS handshake after it, for `https://` nodes.
    pub handshake_ns: Option<u64>,
    /// Whether the client had a connection before this one.
    pub reconnect: bool,
}

/// The connections a client opened: every one counted, the latest kept for the worker.
#[derive(Default)]
pub(super) struct Openings {
    untaken: Vec<Opening>,
    total: u64,
}

impl Openings {
    fn note(&mut self, mut opening: Opening) {
        opening.reconnect = self.total > 0;
        self.total += 1;
        // Bounded: the worker takes them after every request.
        if self.untaken.len() < MAX_UNTAKEN_OPENINGS {
            self.untaken.push(opening);
        }
    }
}

/// A new byte stream to the endpoint's node (TCP, and over TLS its handshake), and what
/// setting it up took.
async fn open_stream(endpoint: &Endpoint) -> Result<(Stream, Opening), TransportError> {
    let began = Instant::now();
    let address = (endpoint.node.host.as_str(), endpoint.node.port);
    let tcp = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
        Err(_) => return Err(TransportError::ConnectTimeout),
        Ok(Err(e)) => return Err(TransportError::Connect(e)),
        Ok(Ok(tcp)) => tcp,
    };
    let connected = Instant::now();
    let stream = match (&endpoint.tls, endpoint.node.scheme) {
        (Some(tls), _) => {
            // Bounded on its own: with `--timeout 0` nothing else would end a
            // server that accepts connections and never shakes hands.
            let handshake = tokio::time::timeout(CONNECT_TIMEOUT, tls.handshake(tcp)).await;
            let stream = handshake.map_err(|_| {
                TransportError::Handshake(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no handshake within {} s", CONNECT_TIMEOUT.as_secs()),
                ))
            })??;
            Stream::Tls(Box::new(stream))
        }
        (None, Scheme::Http) => Stream::Plain(tcp),
        (None, Scheme::Https) => {
            return Err(TransportError::Handshake(io::Error::other(
                "no TLS configuration was made for this https:// node",
            )));
        }
    };
    stream.set_nodelay();
    let opened = Instant::now();
    let opening = Opening {
        connect_ns: nanos(began, connected),
        handshake_ns: endpoint.tls.as_ref().map(|_| nanos(connected, opened)),
        reconnect: false,
    };
    Ok((stream, opening))
}

/// An open connection and its buffers.
pub(super) struct Connection {
    pub(super) stream: Stream,
    /// The request being sent; cleared, not freed, for the next one.
    pub(super) request: Vec<u8>,
    /// Bytes read and not handed out yet. Each body is split off its front; once the
    /// worker has dropped that body, reserving room takes the same allocation back.
    pub(super) received: BytesMut,
    /// Exchanges completed on this socket; a failure on a reused socket may be a stale
    /// keep-alive that the server closed while idle.
    pub(super) completed: u64,
    /// Between whole exchanges, and the last response did not end the connection. An
    /// exchange whose future was dropped half-way (a timeout, the stop signal) leaves it
    /// false: its response may still come and must not be taken for the next one's.
    pub(super) idle: bool,
    /// When the last exchange ended (or the connection opened).
    pub(super) idle_since: Instant,
    /// Counts the connection among the open ones while it lives.
    _open: OpenConnection,
}

impl Connection {
    /// Connects to the endpoint's node, and over TLS shakes hands; returns the
    /// connection and what setting it up took.
    async fn open(endpoint: &Endpoint) -> Result<(Connection, Opening), TransportError> {
        let (stream, opening) = open_stream(endpoint).await?;
        let connection = Connection {
            stream,
            request: Vec::new(),
            received: BytesMut::new(),
            completed: 0,
            idle: true,
            idle_since: Instant::now(),
            _open: OpenConnection::count(),
        };
        Ok((connection, opening))
    }

    /// Whether another request may go out on this connection. Bytes that arrived unasked
    /// mean that the server and this client disagree on where an answer ended.
    fn reusable(&mut self) -> bool {
        if !self.idle || !self.received.is_empty() {
            return false;
        }
        let idle_for = self.idle_since.elapsed();
        idle_for < IDLE_RETIRE && (idle_for < PEEK_AFTER_IDLE || !self.stream.peer_closed())
    }

    /// Sends `call` and reads its whole response; `start` is when the call was made.
    async fn exchange(
        &mut self,
        (endpoint, headers): (&Endpoint, &[u8]),
        (call, streaming): (&Call<'_>, Streaming),
        start: Instant,
    ) -> Result<Exchange, Failed> {
        self.idle = false;
        self.request.clear();
        let paths = (endpoint.node.base_path.as_str(), call.path);
        match streaming.body {
            None => http1::write_request(
                &mut self.request,
                call.method,
                paths,
                headers,
                (endpoint.body_type, call.body),
            ),
            Some(body) => {
                let described = Some((body.content_type, body.length));
                http1::write_head(&mut self.request, call.method, paths, headers, described);
            }
        }
        let limit = streaming
            .count_answer_up_to
            .unwrap_or(endpoint.max_response);
        let reader = ResponseReader::new(call.method, limit);
        let mut reader = if streaming.count_rows {
            reader.counting_rows()
        } else if streaming.count_answer_up_to.is_some() {
            reader.counting()
        } else {
            reader
        }
        .keeping_session_cookie(endpoint.keep_session_cookie);
        let sent = match streaming.body {
            None => self.send_request(&mut reader).await?,
            Some(body) => self.send_generated(&mut reader, body).await?,
        };
        let written = Instant::now();
        let whole = matches!(sent, Sent::Whole);
        let (response, first_byte) = match sent {
            Sent::Whole => self.receive(&mut reader, None).await?,
            Sent::Answered(Some(response), first) => (response, first),
            Sent::Answered(None, first) => self.receive(&mut reader, Some(first)).await?,
            Sent::Failed(error) => match self.receive(&mut reader, None).await {
                // The server answered and closed before taking the whole request.
                Ok(answer) => answer,
                Err(_) => {
                    return Err(Failed {
                        error: TransportError::Broken(error),
                        answered: false,
                    });
                }
            },
        };
        let done = Instant::now();
        self.completed += 1;
        // The rest of a request cut short by its answer would be taken for the next one.
        self.idle = response.keep_alive && whole && endpoint.keep_alive;
        self.idle_since = done;
        Ok(Exchange {
            status: response.status,
            body: response.body,
            body_length: response.body_length,
            rows: response.rows,
            timing: ExchangeTiming {
                send: nanos(start, written),
                wait: nanos(written, first_byte),
                receive: nanos(first_byte, done),
            },
            started: start,
            finished: done,
            resent: false,
            retry_after: response.retry_after,
            session_cookie: response.session_cookie,
        })
    }

    /// Writes the request, watching for an answer that comes before its end: a server
    /// that refuses a large body (413, 401, a 5xx) may answer at once and stop reading,
    /// and a client that only wrote would wait for a timeout, or forever.
    ///
    /// A request the socket takes at once (nearly all) costs the one write it always did:
    /// the socket is only read for an answer while a write (or, over TLS, the flush of
    /// the last records) waits for room.
    async fn send_request(&mut self, reader: &mut ResponseReader) -> Result<Sent, Failed> {
        let mut written = 0;
        let mut first_byte = None;
        loop {
            let rest = &self.request[written..];
            let step = poll_fn(|cx| poll_send_step(&mut self.stream, rest, cx)).await;
            match step {
                SendStep::Wrote(Ok(0)) => {
                    return Ok(Sent::Failed(io::ErrorKind::WriteZero.into()));
                }
                SendStep::Wrote(Ok(n)) => written += n,
                SendStep::Flushed(Ok(())) => break,
                SendStep::Wrote(Err(e)) | SendStep::Flushed(Err(e))
                    if e.kind() == io::ErrorKind::Interrupted => {}
                // A peer that closes after answering makes the write fail; the answer may
                // be there to read.
                SendStep::Wrote(Err(e)) | SendStep::Flushed(Err(e)) | SendStep::Read(Err(e)) => {
                    return Ok(Sent::Failed(e));
                }
                SendStep::Read(Ok(bytes)) if bytes.is_empty() => {
                    return Ok(Sent::Failed(io::ErrorKind::ConnectionReset.into()));
                }
                SendStep::Read(Ok(bytes)) => {
                    self.received.extend_from_slice(&bytes);
                    let first = *first_byte.get_or_insert_with(Instant::now);
                    let parsed = reader.read(&mut self.received).map_err(unreadable)?;
                    // An interim answer (100 Continue) asks for the rest; a final one
                    // ends the request here.
                    if parsed.is_some() || reader.has_final_head() {
                        return Ok(Sent::Answered(parsed, first));
                    }
                }
            }
        }
        Ok(match first_byte {
            None => Sent::Whole,
            // Interim answers came while writing; the final one is still to come.
            Some(first) => Sent::Answered(None, first),
        })
    }

    /// Sends the head in `self.request`, then `body` one chunk at a time, each made into
    /// the same buffer as it goes: a body of gigabytes takes one chunk of memory. An answer
    /// before the end (a refusal) ends the sending, as for any request.
    async fn send_generated(
        &mut self,
        reader: &mut ResponseReader,
        body: GeneratedBody,
    ) -> Result<Sent, Failed> {
        let mut offset = 0;
        loop {
            let room = generated::CHUNK.saturating_sub(self.request.len());
            let before = self.request.len();
            body.write_part(offset, room, &mut self.request);
            offset += (self.request.len() - before) as u64;
            let sent = self.send_request(reader).await?;
            self.request.clear();
            if offset >= body.length || !matches!(sent, Sent::Whole) {
                // The chunk's room is not kept by a connection that sends small requests.
                self.request.shrink_to(READ_SIZE);
                return Ok(sent);
            }
        }
    }

    /// Reads until the response is complete; returns it and when its first byte came
    /// (`first_byte` if some of it came already).
    async fn receive(
        &mut self,
        reader: &mut ResponseReader,
        mut first_byte: Option<Instant>,
    ) -> Result<(Response, Instant), Failed> {
        loop {
            // A counted answer is let go read by read: one chunk of room is enough.
            let expected = if reader.is_counting() {
                generated::CHUNK
            } else {
                reader.bytes_expected(&self.received).min(MAX_RESERVE) as usize
            };
            self.received.reserve(expected.max(READ_SIZE));
            let read = self.stream.read_buf(&mut self.received).await;
            let answered = first_byte.is_some();
            let broken = |error| Failed {
                error: TransportError::Broken(error),
                answered,
            };
            if read.map_err(broken)? == 0 {
                return match (reader.end(&mut self.received), first_byte) {
                    (_, None) => Err(Failed {
                        error: TransportError::Closed,
                        answered,
                    }),
                    (Some(response), Some(first)) => Ok((response, first)),
                    (None, Some(_)) => Err(broken(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection in the middle of its response",
                    ))),
                };
            }
            let first = *first_byte.get_or_insert_with(Instant::now);
            let parsed = reader.read(&mut self.received).map_err(unreadable)?;
            if let Some(response) = parsed {
                return Ok((response, first));
            }
        }
    }
}

/// How the request went out.
enum Sent {
    /// Whole, with no byte of an answer yet.
    Whole,
    /// The final answer's head came before the request's end (or interim answers came
    /// while it was written): the answer if it is all in, and when its first byte came.
    Answered(Option<Response>, Instant),
    /// A write failed; the server may have answered before closing.
    Failed(io::Error),
}

/// What one step of sending did: wrote part of the request, flushed it all out, or read
/// bytes of an early answer (`Ok(empty)` when the server closed).
enum SendStep {
    Wrote(io::Result<usize>),
    Flushed(io::Result<()>),
    Read(io::Result<Vec<u8>>),
}

/// Writes `rest` (or flushes, once it is all written); only when that waits, reads what
/// the server may have answered early. A small copy for the read: it happens only when a
/// server answers before the end of a request.
fn poll_send_step(stream: &mut Stream, rest: &[u8], cx: &mut Context<'_>) -> Poll<SendStep> {
    let mut stream = Pin::new(stream);
    let progress = if rest.is_empty() {
        stream.as_mut().poll_flush(cx).map(SendStep::Flushed)
    } else {
        stream.as_mut().poll_write(cx, rest).map(SendStep::Wrote)
    };
    if progress.is_ready() {
        return progress;
    }
    let mut space = [0u8; READ_SIZE];
    let mut early = ReadBuf::new(&mut space);
    stream
        .poll_read(cx, &mut early)
        .map(|read| SendStep::Read(read.map(|()| early.filled().to_vec())))
}

/// A response the reader refused: too large (with its status if the head came), or not
/// HTTP/1.1.
pub(super) fn unreadable(e: http1::BadResponse) -> Failed {
    let error = if e.is_too_large() {
        TransportError::TooLarge(e.status(), e)
    } else {
        TransportError::Broken(io::Error::new(io::ErrorKind::InvalidData, e))
    };
    Failed {
        error,
        answered: true,
    }
}

fn nanos(from: Instant, to: Instant) -> u64 {
    to.saturating_duration_since(from).as_nanos() as u64
}

/// Keeps one connection to one node open, reopening it when the server closes it.
pub struct Client {
    pub(super) endpoint: Arc<Endpoint>,
    /// The node's header lines as this client sends them, copied again when they change.
    pub(super) headers: HeaderCopy,
    pub(super) connection: Option<Connection>,
    timeout: Option<Duration>,
    /// The per-request timer, made once and moved on for each request: moving a pending
    /// timer later is one atomic store, registering a new one a trip to the timer wheel.
    timer: Option<Pin<Box<Sleep>>>,
    /// Connections opened, and those not yet taken by [`Client::take_openings`].
    pub(super) openings: Openings,
}

impl Client {
    pub fn new(endpoint: Arc<Endpoint>, timeout: Option<Duration>) -> Client {
        Client {
            endpoint,
            headers: HeaderCopy::default(),
            connection: None,
            timeout,
            timer: None,
            openings: Openings::default(),
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn endpoint_arc(&self) -> &Arc<Endpoint> {
        &self.endpoint
    }

    /// Opens the connection now, so that the first request does not pay for it.
    pub async fn open(&mut self) -> Result<(), TransportError> {
        ensure_open(
            &mut self.connection,
            &self.endpoint,
            &mut self.openings,
            None,
        )
        .await
        .map(|_| ())
    }

    /// Sends one request and reads its whole response.
    ///
    /// A request is sent again only when that cannot apply it twice or hide its time: a
    /// GET whose first attempt, on a reused connection, met a close before any byte of an
    /// answer, once, with the first attempt's time counted. Writes are never resent: a
    /// write whose answer was lost may have been applied, and the caller counts its
    /// outcome as unknown. Closes the client can see coming (an idle connection past
    /// [`IDLE_RETIRE`], or one the server has closed already) are met by opening a new
    /// connection before sending.
    ///
    /// A 401 in a mode whose credential a server issues (cookie, iam) means the session or
    /// token is no longer taken and the request was not applied: once a new one is there
    /// (one login for all the node's connections), the request is sent once more, as a
    /// resend. The time waiting for the login is left out of the exchange's times (logins
    /// are counted and timed apart) and added to its timeout.
    pub async fn send(&mut self, call: &Call<'_>) -> Result<Exchange, Unanswered> {
        self.send_streaming(call, Streaming::NONE).await
    }

    /// [`Client::send`], with a body made as it is written and/or an answer counted rather
    /// than kept (`streaming`).
    pub async fn send_streaming(
        &mut self,
        call: &Call<'_>,
        streaming: Streaming,
    ) -> Result<Exchange, Unanswered> {
        let first_start = Instant::now();
        let mut deadline = self.timeout.map(|limit| first_start + limit);
        let mut resent = false;
        let mut waited_for_login: Option<Duration> = None;
        loop {
            let opened = ensure_open(
                &mut self.connection,
                &self.endpoint,
                &mut self.openings,
                deadline,
            )
            .await;
            let connection = opened.map_err(|error| Unanswered {
                // A GET being resent may have reached the server the first time; it
                // changes nothing, so the flag only matters for writes, sent once.
                may_have_reached: resent,
                error,
                resent,
                started: first_start,
            })?;
            let reused = connection.completed > 0;
            let start = Instant::now();
            let headers = (self.headers).current(&self.endpoint.headers, &self.endpoint.credential);
            let exchange = connection.exchange((&self.endpoint, headers), (call, streaming), start);
            let result = match deadline {
                None => exchange.await,
                Some(at) => within(&mut self.timer, at, exchange).await,
            };
            let failed = match result {
                Ok(mut done) => {
                    if done.status == 401
                        && waited_for_login.is_none()
                        && let Some(waited) = self.renew_credential().await
                    {
                        waited_for_login = Some(waited);
                        deadline = deadline.map(|at| at + waited);
                        resent = true;
                        continue;
                    }
                    // A resent request's first attempt is time the operation waited; a
                    // login it waited for is not.
                    let login = waited_for_login.map_or(0, |w| w.as_nanos() as u64);
                    done.timing.wait += nanos(first_start, start).saturating_sub(login);
                    done.started = first_start;
                    done.resent = resent;
                    return Ok(done);
                }
                Err(failed) => failed,
            };
            // A timed-out or broken connection may still carry a late response: never
            // reuse it.
            self.connection = None;
            let closed_unanswered = reused
                && !failed.answered
                && matches!(
                    failed.error,
                    TransportError::Broken(_) | TransportError::Closed
                );
            if !(closed_unanswered && call.method == Method::Get && !resent) {
                return Err(Unanswered {
                    error: failed.error,
                    may_have_reached: true,
                    resent,
                    started: first_start,
                });
            }
            resent = true;
        }
    }

    /// After a 401: a new session or token for the node, if its mode has them, and how
    /// long this request waited for it; `None` when none came.
    pub(super) async fn renew_credential(&mut self) -> Option<Duration> {
        if !self.endpoint.credential.renews() {
            return None;
        }
        let asked = Instant::now();
        let credential = self.endpoint.credential.clone();
        credential.renew(self.headers.generation()).await.ok()?;
        Some(asked.elapsed())
    }

    /// Forgets the open connection, so the next request opens a new one (on another node
    /// after [`Client::move_to`]).
    pub fn disconnect(&mut self) {
        self.connection = None;
    }

    /// Points the client at another node; the next request connects there.
    pub fn move_to(&mut self, endpoint: Arc<Endpoint>) {
        self.connection = None;
        self.endpoint = endpoint;
        self.headers.forget();
    }

    /// Hands each connection opened since the last call to `take`, oldest first.
    #[inline]
    pub fn take_openings(&mut self, take: impl FnMut(Opening)) {
        if !self.openings.untaken.is_empty() {
            self.openings.untaken.drain(..).for_each(take);
        }
    }
}

/// The most openings a client keeps for the worker to take. A worker takes them after
/// each request, which opens at most two connections; a client used without taking them
/// (setup, background calls) keeps a few and forgets the rest.
const MAX_UNTAKEN_OPENINGS: usize = 16;

/// The open connection in `slot`, after opening a new one if there is none or it cannot
/// be reused; an opening ends at `deadline` at the latest.
pub(super) async fn ensure_open<'a>(
    slot: &'a mut Option<Connection>,
    endpoint: &Endpoint,
    openings: &mut Openings,
    deadline: Option<Instant>,
) -> Result<&'a mut Connection, TransportError> {
    let reusable = slot.as_mut().is_some_and(Connection::reusable);
    let connection = match slot.take() {
        Some(open) if reusable => open,
        unusable => {
            // Closed before the next one opens: a client never holds two sockets.
            drop(unusable);
            // Only an opening is timed here: a timer made for every request would cost
            // the hot path a trip to the runtime's handle.
            let opening = Connection::open(endpoint);
            let (opened, opening) = match deadline {
                None => opening.await?,
                Some(at) => tokio::time::timeout_at(at.into(), opening)
                    .await
                    .map_err(|_| TransportError::Timeout)??,
            };
            openings.note(opening);
            opened
        }
    };
    Ok(slot.insert(connection))
}

/// `work`'s outcome, or a timeout at `deadline`.
async fn within<T>(
    timer: &mut Option<Pin<Box<Sleep>>>,
    deadline: Instant,
    work: impl Future<Output = Result<T, Failed>>,
) -> Result<T, Failed> {
    let deadline = tokio::time::Instant::from_std(deadline);
    let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
    timer.as_mut().reset(deadline);
    tokio::select! {
        // The timer first: a server that always has another byte ready (endless interim
        // answers, an endless body) keeps the exchange busy until the task's budget runs
        // out, and polled second the timer would then never get its turn.
        biased;
        () = timer.as_mut() => Err(Failed {
            error: TransportError::Timeout,
            answered: false,
        }),
        done = work => done,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    /// A server on a free local port: each connection it accepts runs `script` with the
    /// socket and the connection's number (from 0). Returns the client's endpoint and the
    /// count of accepted connections.
    async fn serve<S, F>(script: S) -> (Arc<Endpoint>, Arc<AtomicUsize>)
    where
        S: Fn(TcpStream, usize) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let number = counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(script(stream, number));
            }
        });
        let node = Node {
            scheme: Scheme::Http,
            host: "127.0.0.1".to_string(),
            port,
            host_header: format!("127.0.0.1:{port}"),
            base_path: String::new(),
        };
        (Arc::new(Endpoint::plain(node)), accepted)
    }

    /// Reads one request (head and Content-Length body); `None` when the client closed.
    async fn read_request(stream: &mut TcpStream) -> Option<String> {
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await.ok()? == 0 {
                return None;
            }
            seen.push(byte[0]);
        }
        let head = String::from_utf8(seen.clone()).unwrap();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .map_or(0, |n| n.parse().unwrap());
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.ok()?;
        seen.extend_from_slice(&body);
        Some(String::from_utf8(seen).unwrap())
    }

    /// Answers every request on the connection with `answer`.
    async fn answer_all(mut stream: TcpStream, answer: &'static [u8]) {
        while read_request(&mut stream).await.is_some() {
            stream.write_all(answer).await.unwrap();
        }
    }

    fn get(path: &str) -> Call<'_> {
        Call {
            method: Method::Get,
            path,
            body: None,
        }
    }

    fn client(endpoint: Arc<Endpoint>) -> Client {
        Client::new(endpoint, Some(Duration::from_secs(10)))
    }

    #[tokio::test]
    async fn content_length_answers_on_one_kept_alive_connection() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            while let Some(request) = read_request(&mut stream).await {
                let body = format!("{{\"request\":{:?}}}", request);
                let answer = format!(
                    "HTTP/1.1 201 Created\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(answer.as_bytes()).await.unwrap();
            }
        })
        .await;
        let mut client = client(endpoint);
        for _ in 0..3 {
            let call = Call {
                method: Method::Put,
                path: "/db/doc",
                body: Some(b"{}"),
            };
            let answer = client.send(&call).await.unwrap();
            assert_eq!(answer.status, 201);
            let echoed: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
            let port = client.endpoint().node.port;
            assert_eq!(
                echoed["request"],
                format!(
                    "PUT /db/doc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
                )
            );
        }
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (1, 1)
        );
    }

    #[tokio::test]
    async fn chunked_answer_split_over_many_reads() {
        const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;name=value\r\nhello\r\n1\r\n,\r\n6 ; x=\"y\"\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n";
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            while read_request(&mut stream).await.is_some() {
                for piece in ANSWER.chunks(3) {
                    stream.write_all(piece).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        })
        .await;
        let mut client = client(endpoint);
        for _ in 0..2 {
            let answer = client.send(&get("/db/a")).await.unwrap();
            assert_eq!(&answer.body[..], b"hello, world");
        }
        // The decoder took exactly the answer: the connection carried the second request.
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn body_delimited_by_closing_ends_the_connection() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            stream.write_all(b" the end").await.unwrap();
        })
        .await;
        let mut client = client(endpoint);
        for _ in 0..2 {
            let answer = client.send(&get("/")).await.unwrap();
            assert_eq!(&answer.body[..], b"until the end");
        }
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    #[tokio::test]
    async fn continue_comes_before_the_answer() {
        let (endpoint, _) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            answer_all_after(
                stream,
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok",
            )
            .await;
        })
        .await;
        let answer = client(endpoint).send(&get("/")).await.unwrap();
        assert_eq!((answer.status, &answer.body[..]), (202, &b"ok"[..]));
    }

    /// Writes `answer` to a request already read, then answers the rest like [`answer_all`].
    async fn answer_all_after(mut stream: TcpStream, answer: &'static [u8]) {
        stream.write_all(answer).await.unwrap();
        answer_all(stream, answer).await;
    }

    #[tokio::test]
    async fn idle_connection_closed_by_the_server_is_retried_once() {
        let (endpoint, accepted) = serve(|mut stream, number| async move {
            if number == 0 {
                // Answers one request, then closes the idle connection.
                read_request(&mut stream).await.unwrap();
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
                    .await
                    .unwrap();
            } else {
                answer_all(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain").await;
            }
        })
        .await;
        let mut client = client(endpoint);
        assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"first");
        // Let the server's close arrive before the next request goes out.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"again");
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    #[tokio::test]
    async fn reset_in_the_middle_of_a_body_is_an_error_without_retry() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
            read_request(&mut stream).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome of it")
                .await
                .unwrap();
            // Long enough for the client to read what came; then a reset, not a close.
            tokio::time::sleep(Duration::from_millis(100)).await;
            stream.set_zero_linger().unwrap();
        })
        .await;
        let mut client = client(endpoint);
        client.send(&get("/")).await.unwrap();
        let error = client.send(&get("/")).await.unwrap_err();
        assert!(matches!(error.error, TransportError::Broken(_)), "{error}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (1, 1)
        );
    }

    #[tokio::test]
    async fn no_answer_in_time_is_a_timeout() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        let mut client = Client::new(endpoint, Some(Duration::from_millis(200)));
        let started = Instant::now();
        let error = client.send(&get("/")).await.unwrap_err();
        assert!(matches!(error.error, TransportError::Timeout), "{error}");
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(5));
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn the_timer_is_moved_on_for_each_request() {
        let (endpoint, _) = serve(|mut stream, _| async move {
            while read_request(&mut stream).await.is_some() {
                tokio::time::sleep(Duration::from_millis(60)).await;
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    .await
                    .unwrap();
            }
        })
        .await;
        // Four requests of 60 ms each outlast one 150 ms timeout, not four.
        let mut client = Client::new(endpoint, Some(Duration::from_millis(150)));
        for _ in 0..4 {
            client.send(&get("/")).await.unwrap();
        }
    }

    #[tokio::test]
    async fn malformed_status_line_is_an_error() {
        let (endpoint, _) = serve(|stream, _| async move {
            answer_all(stream, b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n").await;
        })
        .await;
        let error = client(endpoint).send(&get("/")).await.unwrap_err();
        let TransportError::Broken(cause) = &error.error else {
            panic!("{error}");
        };
        assert_eq!(cause.kind(), io::ErrorKind::InvalidData);
        assert!(
            error.to_string().contains("invalid response status"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn empty_bodies_keep_the_connection() {
        let (endpoint, accepted) = serve(|stream, _| async move {
            answer_all(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").await;
        })
        .await;
        let mut client = client(endpoint);
        for _ in 0..3 {
            let answer = client.send(&get("/")).await.unwrap();
            assert_eq!((answer.status, answer.body.len()), (200, 0));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn large_body_arrives_whole() {
        const SIZE: usize = 2 * 1024 * 1024;
        let (endpoint, _) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            let mut answer =
                format!("HTTP/1.1 200 OK\r\nContent-Length: {SIZE}\r\n\r\n").into_bytes();
            answer.extend((0..SIZE).map(|i| (i % 251) as u8));
            stream.write_all(&answer).await.unwrap();
        })
        .await;
        let answer = client(endpoint).send(&get("/")).await.unwrap();
        assert_eq!(answer.body.len(), SIZE);
        assert!(
            answer
                .body
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i % 251) as u8)
        );
    }

    #[tokio::test]
    async fn bodies_reuse_the_read_buffer_once_dropped() {
        let (endpoint, _) = serve(|stream, _| async move {
            answer_all(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody").await;
        })
        .await;
        let mut client = client(endpoint);
        let first = client.send(&get("/")).await.unwrap().body.as_ptr() as usize;
        for _ in 0..3 {
            let again = client.send(&get("/")).await.unwrap().body.as_ptr() as usize;
            assert_eq!(again, first, "a new allocation for a body");
        }
    }

    #[tokio::test]
    async fn timing_splits_waiting_from_receiving() {
        let (endpoint, _) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            tokio::time::sleep(Duration::from_millis(40)).await;
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbo")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(120)).await;
            stream.write_all(b"dy").await.unwrap();
        })
        .await;
        let mut client = client(endpoint);
        client.open().await.unwrap();
        let started = Instant::now();
        let timing = client.send(&get("/")).await.unwrap().timing;
        let elapsed = started.elapsed().as_nanos() as u64;
        let ms = |ns: u64| Duration::from_nanos(ns).as_millis();
        assert!(
            ms(timing.wait) >= 40 && timing.wait < timing.receive,
            "{timing:?}"
        );
        assert!(ms(timing.receive) >= 120, "{timing:?}");
        assert!(timing.send < timing.wait, "{timing:?}");
        assert!(
            timing.service_time() <= elapsed,
            "{timing:?} in {elapsed} ns"
        );
    }

    #[tokio::test]
    async fn connection_close_from_the_server_is_not_reused() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
            // Keeps the socket open but answers nothing more: reusing it would time out.
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        let mut client = Client::new(endpoint, Some(Duration::from_secs(2)));
        for _ in 0..2 {
            assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"ok");
        }
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    #[tokio::test]
    async fn bytes_after_an_answer_end_the_connection() {
        let (endpoint, accepted) = serve(|stream, _| async move {
            answer_all(
                stream,
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
            )
            .await;
        })
        .await;
        let mut client = client(endpoint);
        for _ in 0..2 {
            assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"ok");
        }
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    #[tokio::test]
    async fn a_request_given_up_half_way_leaves_its_connection_unused() {
        let (endpoint, accepted) = serve(|mut stream, number| async move {
            while read_request(&mut stream).await.is_some() {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{number}");
                stream.write_all(answer.as_bytes()).await.unwrap();
            }
        })
        .await;
        let mut client = client(endpoint);
        let given_up =
            tokio::time::timeout(Duration::from_millis(20), client.send(&get("/"))).await;
        assert!(given_up.is_err());
        // The first connection's late answer is not taken for the second request's.
        assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"1");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// Answers the first request on each connection, then holds the second for `hold`
    /// and closes without a byte of an answer, as a server that dies with it would.
    async fn hold_then_close(
        hold: Duration,
    ) -> (Arc<Endpoint>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let requests = Arc::new(AtomicUsize::new(0));
        let seen = requests.clone();
        let (endpoint, accepted) = serve(move |mut stream, number| {
            let seen = seen.clone();
            async move {
                let mut answered = 0;
                while read_request(&mut stream).await.is_some() {
                    seen.fetch_add(1, Ordering::SeqCst);
                    if number == 0 && answered == 1 {
                        tokio::time::sleep(hold).await;
                        return;
                    }
                    answered += 1;
                    stream
                        .write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
                        .await
                        .unwrap();
                }
            }
        })
        .await;
        (endpoint, accepted, requests)
    }

    #[tokio::test]
    async fn a_write_whose_answer_was_lost_is_not_resent_and_may_have_been_applied() {
        let (endpoint, _, requests) = hold_then_close(Duration::from_millis(300)).await;
        let mut client = client(endpoint);
        let put = Call {
            method: Method::Put,
            path: "/db/doc",
            body: Some(b"{}"),
        };
        client.send(&put).await.unwrap();
        let started = Instant::now();
        let lost = client.send(&put).await.unwrap_err();
        assert!(matches!(lost.error, TransportError::Closed), "{lost}");
        assert!(lost.may_have_reached && !lost.resent);
        assert!(lost.started >= started && lost.started.elapsed() >= Duration::from_millis(300));
        // The server saw the write once: it was not sent again.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(requests.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_read_that_met_a_close_is_resent_once_with_its_time_counted() {
        let (endpoint, accepted, requests) = hold_then_close(Duration::from_millis(300)).await;
        let mut client = client(endpoint);
        client.send(&get("/db/doc")).await.unwrap();
        let answer = client.send(&get("/db/doc")).await.unwrap();
        assert!(answer.resent);
        // The 300 ms the server held the first attempt are in the service time.
        let held = Duration::from_nanos(answer.timing.service_time());
        assert!(held >= Duration::from_millis(300), "{held:?}");
        assert_eq!(requests.load(Ordering::SeqCst), 3);
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_connection_idle_past_the_retire_age_is_replaced_before_sending() {
        let (endpoint, accepted) = serve(|stream, _| async move {
            answer_all(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
        })
        .await;
        let mut client = client(endpoint);
        client.send(&get("/")).await.unwrap();
        client.send(&get("/")).await.unwrap();
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
        if let Some(connection) = client.connection.as_mut() {
            connection.idle_since -= IDLE_RETIRE;
        }
        let answer = client.send(&get("/")).await.unwrap();
        assert!(!answer.resent);
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    #[tokio::test]
    async fn a_close_seen_before_sending_opens_a_new_connection_without_a_resend() {
        let requests = Arc::new(AtomicUsize::new(0));
        let seen = requests.clone();
        let (endpoint, accepted) = serve(move |mut stream, _| {
            let seen = seen.clone();
            async move {
                // One answer, then the server closes the idle connection.
                read_request(&mut stream).await.unwrap();
                seen.fetch_add(1, Ordering::SeqCst);
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    .await
                    .unwrap();
            }
        })
        .await;
        let mut client = client(endpoint);
        client.send(&get("/")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let answer = client.send(&get("/")).await.unwrap();
        assert!(!answer.resent, "the close was not seen before sending");
        assert_eq!(requests.load(Ordering::SeqCst), 2);
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    fn limited(endpoint: Arc<Endpoint>, limit: u64) -> Arc<Endpoint> {
        Arc::new(Arc::into_inner(endpoint).unwrap().with_max_response(limit))
    }

    /// Reads a request's head only, the way a server that refuses its body does.
    async fn read_head(stream: &mut TcpStream) {
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap() == 1 {
            seen.push(byte[0]);
        }
    }

    #[tokio::test]
    async fn an_answer_before_the_end_of_a_large_body_is_read_even_without_a_timeout() {
        let (endpoint, accepted) = serve(|mut stream, _| async move {
            read_head(&mut stream).await;
            stream
                .write_all(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 2\r\n\r\nno")
                .await
                .unwrap();
            // Reads nothing more, and keeps the connection open.
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        let mut client = Client::new(endpoint, None);
        let body = vec![b' '; 50 << 20];
        let post = Call {
            method: Method::Post,
            path: "/db/_bulk_docs",
            body: Some(&body),
        };
        let sending = client.send(&post);
        let answer = tokio::time::timeout(Duration::from_secs(10), sending)
            .await
            .expect("no hang")
            .unwrap();
        assert_eq!((answer.status, &answer.body[..]), (413, &b"no"[..]));
        // The rest of the body is not sent as the next request: a new connection is.
        let again = tokio::time::timeout(Duration::from_secs(10), client.send(&post)).await;
        assert_eq!(again.unwrap().unwrap().status, 413);
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    /// A GET to `endpoint` with a 300 ms timeout fails as a timeout, well before 2 s.
    async fn times_out_in_time(endpoint: Arc<Endpoint>) {
        let mut client = Client::new(endpoint, Some(Duration::from_millis(300)));
        let started = Instant::now();
        let error = client.send(&get("/")).await.unwrap_err();
        assert!(matches!(error.error, TransportError::Timeout), "{error}");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    #[tokio::test]
    async fn endless_interim_answers_end_at_the_timeout() {
        let (endpoint, _) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            let continues = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(100);
            while stream.write_all(&continues).await.is_ok() {}
        })
        .await;
        times_out_in_time(endpoint).await;
    }

    #[tokio::test]
    async fn a_slow_drip_ends_at_the_timeout() {
        let (endpoint, _) = serve(|mut stream, _| async move {
            read_request(&mut stream).await.unwrap();
            let head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
            let mut ok = stream.write_all(head).await.is_ok();
            while ok {
                tokio::time::sleep(Duration::from_millis(20)).await;
                ok = stream.write_all(b"x").await.is_ok();
            }
        })
        .await;
        times_out_in_time(endpoint).await;
    }

    #[tokio::test]
    async fn answers_past_the_limit_fail_as_too_large_and_close_the_connection() {
        let (endpoint, accepted) = serve(|mut stream, number| async move {
            read_request(&mut stream).await.unwrap();
            let head: &[u8] = match number {
                0 => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                1 => b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 9999999999999999999\r\n\r\n",
                _ => b"HTTP/1.1 200 OK\r\n\r\n",
            };
            let mut endless = head.to_vec();
            let chunk = [b'x'; 4096];
            loop {
                if number == 0 {
                    endless.extend_from_slice(b"1000\r\n");
                }
                endless.extend_from_slice(&chunk);
                if number == 0 {
                    endless.extend_from_slice(b"\r\n");
                }
                if stream.write_all(&endless).await.is_err() {
                    return;
                }
                endless.clear();
            }
        })
        .await;
        let mut client = Client::new(limited(endpoint, 1 << 20), Some(Duration::from_secs(10)));
        for (framing, status) in [
            ("chunked", 200),
            ("Content-Length", 413),
            ("until close", 200),
        ] {
            let error = client.send(&get("/")).await.unwrap_err();
            assert!(
                matches!(error.error, TransportError::TooLarge(Some(s), _) if s == status),
                "{framing}: {error}"
            );
            assert!(error.to_string().contains("too large"), "{error}");
            // A refusal is known not to have been applied, however long its answer.
            assert_eq!(error.error.refused(), status >= 400, "{framing}");
        }
        assert_eq!(
            (client.openings.total, accepted.load(Ordering::SeqCst)),
            (3, 3)
        );
    }

    #[tokio::test]
    async fn an_answer_at_the_limit_is_read() {
        let (endpoint, _) = serve(|stream, _| async move {
            answer_all(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody").await;
        })
        .await;
        let mut client = Client::new(limited(endpoint, 4), None);
        assert_eq!(&client.send(&get("/")).await.unwrap().body[..], b"body");
    }

    #[tokio::test]
    async fn an_unreachable_node_is_known_not_to_have_seen_the_request() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let node = crate::target::Target::parse(&format!("http://127.0.0.1:{port}"), "db")
            .unwrap()
            .nodes[0]
            .clone();
        let mut client = client(Arc::new(Endpoint::plain(node)));
        let lost = client.send(&get("/")).await.unwrap_err();
        assert!(lost.is_unreachable() && !lost.may_have_reached, "{lost}");
    }
}
