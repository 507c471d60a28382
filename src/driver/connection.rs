//! One HTTP/1.1 keep-alive connection to one node, and the client that keeps it open.

use std::fmt;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::timed_io::{IoClock, TimedStream};
use crate::target::{Credentials, Node};

/// How long establishing a TCP connection may take before the node counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What every request to one node carries; built once, shared by its connections.
#[derive(Debug)]
pub struct Endpoint {
    pub node: Node,
    host: HeaderValue,
    authorization: Option<HeaderValue>,
}

impl Endpoint {
    /// One endpoint per node of the target, with its credentials.
    pub fn all(target: &crate::target::Target) -> Vec<Arc<Endpoint>> {
        target
            .nodes
            .iter()
            .map(|node| Arc::new(Endpoint::new(node.clone(), target.credentials.as_ref())))
            .collect()
    }

    pub fn new(node: Node, credentials: Option<&Credentials>) -> Endpoint {
        let host = HeaderValue::from_str(&node.host_header)
            .unwrap_or_else(|_| HeaderValue::from_static("localhost"));
        let authorization = credentials.map(|c| {
            let mut value = HeaderValue::from_str(&c.basic_header())
                .unwrap_or_else(|_| HeaderValue::from_static(""));
            value.set_sensitive(true);
            value
        });
        Endpoint {
            node,
            host,
            authorization,
        }
    }
}

/// Why an exchange did not produce a response.
#[derive(Debug)]
pub enum TransportError {
    /// The TCP connection could not be made.
    Connect(std::io::Error),
    /// The TCP connection was not made within [`CONNECT_TIMEOUT`].
    ConnectTimeout,
    /// The request or its response did not finish within the per-request timeout.
    Timeout,
    /// The connection broke while the request or its response was on the way.
    Broken(hyper::Error),
    /// The server closed the connection before answering.
    Closed,
}

impl TransportError {
    /// True when the node could not be reached at all, as opposed to a request going wrong.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            TransportError::Connect(_) | TransportError::ConnectTimeout
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
            TransportError::Broken(e) => write!(f, "connection broken: {e}"),
            TransportError::Closed => write!(f, "the server closed the connection"),
        }
    }
}

/// A response, with where its time went.
#[derive(Debug)]
pub struct Exchange {
    pub status: u16,
    pub body: Bytes,
    pub timing: ExchangeTiming,
}

/// Where the time of one exchange went, in nanoseconds. `send + wait + receive` is the
/// service time: from handing the request to the connection to the response's last byte.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExchangeTiming {
    /// Writing the request to the socket (Iron Cushion's `sendData`).
    pub send: u64,
    /// From the request's last byte out to the response's first byte in (`remoteProcessing`).
    pub wait: u64,
    /// From the response's first byte to its last (`receiveData`).
    pub receive: u64,
}

impl ExchangeTiming {
    pub fn service_time(&self) -> u64 {
        self.send + self.wait + self.receive
    }
}

type Io = TokioIo<TimedStream>;

/// An open HTTP/1.1 connection.
///
/// hyper splits a connection into the sender and the future that does the socket work.
/// The worker polls both itself, in its own task, instead of spawning the connection:
/// a request then never waits for another thread to wake up, which would add tens of
/// microseconds to every measured latency (and CPU to every request).
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    io: http1::Connection<Io, Full<Bytes>>,
    clock: Arc<IoClock>,
    /// Exchanges completed on this socket; a failure on a reused socket may be a stale
    /// keep-alive that the server closed while idle.
    completed: u64,
}

impl Connection {
    /// Waits for `work` while doing the connection's socket work. Fails when the
    /// connection ends first.
    async fn drive<T>(
        &mut self,
        work: impl Future<Output = Result<T, hyper::Error>>,
    ) -> Result<T, TransportError> {
        tokio::pin!(work);
        let ended = tokio::select! {
            biased;
            done = &mut work => return done.map_err(TransportError::Broken),
            ended = &mut self.io => ended,
        };
        // The connection may have delivered the answer and then seen the server close
        // the socket in the same poll: the answer still counts.
        let last_look = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
        if let Poll::Ready(done) = last_look {
            return done.map_err(TransportError::Broken);
        }
        match ended {
            Err(error) => Err(TransportError::Broken(error)),
            Ok(()) => Err(TransportError::Closed),
        }
    }
}

async fn connect(endpoint: &Endpoint) -> Result<Connection, TransportError> {
    let address = (endpoint.node.host.as_str(), endpoint.node.port);
    let stream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
        Err(_) => return Err(TransportError::ConnectTimeout),
        Ok(Err(e)) => return Err(TransportError::Connect(e)),
        Ok(Ok(stream)) => stream,
    };
    // Requests are written whole; waiting to coalesce them only adds latency.
    let _ = stream.set_nodelay(true);
    let clock = IoClock::new(Instant::now());
    let io = TokioIo::new(TimedStream::new(stream, clock.clone()));
    let (sender, io) = http1::handshake(io).await.map_err(TransportError::Broken)?;
    Ok(Connection {
        sender,
        io,
        clock,
        completed: 0,
    })
}

/// A request to send: the method, the path below the node's base path, and the body.
pub struct Call<'a> {
    pub method: Method,
    pub path: &'a str,
    pub body: Option<Bytes>,
}

/// Keeps one connection to one node open, reopening it when the server closes it.
pub struct Client {
    endpoint: Arc<Endpoint>,
    connection: Option<Connection>,
    timeout: Option<Duration>,
    /// How many times a connection had to be (re)opened.
    pub connects: u64,
}

impl Client {
    pub fn new(endpoint: Arc<Endpoint>, timeout: Option<Duration>) -> Client {
        Client {
            endpoint,
            connection: None,
            timeout,
            connects: 0,
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Opens the connection now, so that the first request does not pay for it.
    pub async fn open(&mut self) -> Result<(), TransportError> {
        self.ensure_open().await.map(|_| ())
    }

    async fn ensure_open(&mut self) -> Result<&mut Connection, TransportError> {
        // An idle connection the server closed is found out when a request goes out on
        // it; `send` resends in that case.
        let usable = self
            .connection
            .as_ref()
            .is_some_and(|c| c.sender.is_ready() && !c.sender.is_closed());
        if !usable {
            self.connection = None;
            self.connection = Some(connect(&self.endpoint).await?);
            self.connects += 1;
        }
        Ok(self
            .connection
            .as_mut()
            .expect("connection was just opened"))
    }

    /// Sends one request and reads its whole response.
    ///
    /// A request that fails on a reused connection before any byte of a response came back
    /// is sent once more on a new connection: the server closed an idle keep-alive
    /// connection as the request went out, so it never saw it. That is the one case where
    /// resending cannot apply an operation twice.
    pub async fn send(&mut self, call: &Call<'_>) -> Result<Exchange, TransportError> {
        let mut retried = false;
        loop {
            let request = self.build_request(call);
            let timeout = self.timeout;
            let connection = self.ensure_open().await?;
            let reused = connection.completed > 0;
            let result = match timeout {
                None => exchange(connection, request).await,
                Some(limit) => tokio::time::timeout(limit, exchange(connection, request))
                    .await
                    .unwrap_or(Err(TransportError::Timeout)),
            };
            match result {
                Ok(done) => return Ok(done),
                Err(error) => {
                    let no_response = self
                        .connection
                        .as_ref()
                        .is_some_and(|c| c.clock.moments().first_read.is_none());
                    // A timed-out or broken connection may still carry a late response:
                    // never reuse it.
                    self.connection = None;
                    let stale = reused
                        && no_response
                        && matches!(error, TransportError::Broken(_) | TransportError::Closed)
                        && !retried;
                    if !stale {
                        return Err(error);
                    }
                    retried = true;
                }
            }
        }
    }

    fn build_request(&self, call: &Call<'_>) -> Request<Full<Bytes>> {
        let uri = format!("{}{}", self.endpoint.node.base_path, call.path);
        let mut builder = Request::builder()
            .method(call.method.clone())
            .uri(uri)
            .header(HOST, self.endpoint.host.clone())
            .header(ACCEPT, HeaderValue::from_static("application/json"));
        if call.body.is_some() {
            builder = builder.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if let Some(auth) = &self.endpoint.authorization {
            builder = builder.header(AUTHORIZATION, auth.clone());
        }
        builder
            .body(Full::new(call.body.clone().unwrap_or_default()))
            .expect("request parts are valid: path built from encoded segments")
    }
}

async fn exchange(
    connection: &mut Connection,
    request: Request<Full<Bytes>>,
) -> Result<Exchange, TransportError> {
    connection.clock.reset();
    let handed_over = connection.clock.since_epoch(Instant::now());
    let sending = connection.sender.send_request(request);
    let response: hyper::Response<Incoming> = connection.drive(sending).await?;
    let status = response.status().as_u16();
    let body = connection
        .drive(response.into_body().collect())
        .await?
        .to_bytes();
    let done = connection.clock.since_epoch(Instant::now());
    connection.completed += 1;
    let moments = connection.clock.moments();
    let write_start = moments.first_write_start.unwrap_or(handed_over);
    let write_end = moments
        .last_write_end
        .unwrap_or(write_start)
        .max(write_start);
    let first_read = moments.first_read.unwrap_or(done).clamp(write_end, done);
    Ok(Exchange {
        status,
        body,
        timing: ExchangeTiming {
            // hyper's hand-over to the socket is part of sending.
            send: write_end.saturating_sub(handed_over),
            wait: first_read - write_end,
            receive: done - first_read,
        },
    })
}
