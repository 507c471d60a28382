//! The HTTP side of the endpoint: hyper's HTTP/1 server on a thread and runtime of its
//! own, apart from the runtime that measures, answering GET /metrics and nothing else.
//!
//! Bounded like any server: at most [`MOST_CONNECTIONS`] at once (more are closed as soon
//! as they are accepted), request heads of at most [`MOST_HEAD_BYTES`] (hyper answers 431
//! beyond), [`HEAD_TIME`] to send the head, [`CONNECTION_TIME`] for the whole exchange,
//! and one request per connection. A client that connects and says nothing, sends a huge
//! header or opens hundreds of connections costs a file descriptor for a few seconds and
//! never the measured run anything.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{ACCEPT, ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot, watch};

use super::figures::Figures;
use super::render::{ProcessFigures, RunLabels, render};
use super::text::Format;

/// Connections served at once; Prometheus needs one per scrape.
pub const MOST_CONNECTIONS: usize = 16;
/// The largest request head (request line and headers); a scraper's is a few hundred bytes.
pub const MOST_HEAD_BYTES: usize = 8 * 1024;
/// Headers in a request head.
const MOST_HEADERS: usize = 64;
/// The most a connection's read buffer holds (hyper's smallest allowed).
const MOST_BUFFERED: usize = 8 * 1024;
/// How long a client has to send its request head.
pub const HEAD_TIME: Duration = Duration::from_secs(5);
/// How long a connection may last, answer included (Prometheus's default scrape
/// timeout is 10 s).
pub const CONNECTION_TIME: Duration = Duration::from_secs(10);
/// After failing to accept (out of file descriptors), a pause rather than a spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// What the server answers with.
#[derive(Clone)]
pub struct Content {
    pub run: RunLabels,
    pub figures: watch::Receiver<Arc<Figures>>,
    /// Told each time the run's final figures were served.
    pub final_served: Arc<Notify>,
}

/// The running server; stopping it (or dropping it) closes every connection.
pub struct Server {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Serves `content` on `listener` (bound already, so that a bad address is refused
    /// before the run starts).
    pub fn start(listener: std::net::TcpListener, content: Content) -> io::Result<Server> {
        let address = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("sofabench-metrics".to_string())
            .spawn(move || {
                runtime.block_on(accept(listener, content, stopped));
                // Dropping the runtime here drops every connection still open.
            })?;
        Ok(Server {
            address,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, closes every connection, and waits for the thread to end.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept(
    listener: std::net::TcpListener,
    content: Content,
    mut stopped: oneshot::Receiver<()>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let permits = Arc::new(Semaphore::new(MOST_CONNECTIONS));
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Beyond the limit, the connection is closed at once (dropped).
                    if let Ok(permit) = permits.clone().try_acquire_owned() {
                        tokio::spawn(serve(stream, content.clone(), permit));
                    }
                }
                Err(_) => tokio::time::sleep(ACCEPT_PAUSE).await,
            },
        }
    }
}

/// One connection, one request, within [`CONNECTION_TIME`].
async fn serve(stream: TcpStream, content: Content, _permit: OwnedSemaphorePermit) {
    let final_served = content.final_served.clone();
    // Set when the answer holds the final figures; told once it has been sent whole.
    let was_final = Arc::new(AtomicBool::new(false));
    let noted = was_final.clone();
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let (answer, is_final) = answer(&request, &content);
        noted.store(is_final, Ordering::Relaxed);
        async move { Ok::<_, Infallible>(answer) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIME)
        .max_header_size(MOST_HEAD_BYTES)
        .max_headers(MOST_HEADERS)
        .max_buf_size(MOST_BUFFERED)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service);
    let served = tokio::time::timeout(CONNECTION_TIME, connection).await;
    if matches!(served, Ok(Ok(()))) && was_final.load(Ordering::Relaxed) {
        final_served.notify_one();
    }
}

/// GET /metrics gets the latest figures in the format the scraper prefers, and whether
/// they are the run's final ones; any other path is not found, any other method on it
/// not allowed.
fn answer(request: &Request<Incoming>, content: &Content) -> (Response<Full<Bytes>>, bool) {
    if request.uri().path() != "/metrics" {
        let text = "not found: the metrics are at /metrics\n";
        return (plain(StatusCode::NOT_FOUND, text), false);
    }
    if request.method() != Method::GET {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: GET /metrics\n",
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return (response, false);
    }
    let accept = request.headers().get(ACCEPT).and_then(|v| v.to_str().ok());
    let format = Format::from_accept(accept);
    // A copy of the pointer only: the monitor publishes the next figures meanwhile.
    let figures = content.figures.borrow().clone();
    let text = render(&content.run, &figures, &ProcessFigures::now(), format);
    let mut response = Response::new(Full::new(Bytes::from(text)));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    (response, figures.finished)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
