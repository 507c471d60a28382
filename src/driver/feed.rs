//! A streaming answer over the client's own connection: a `_changes` feed read piece by
//! piece, or line by line, as the server sends it.
//!
//! The request goes out as [`Client::send`]'s do (the same header lines and credential,
//! TLS, the connect timeout, a new session or token after a 401), and the answer is taken
//! apart by the same HTTP/1.1 reader, whatever its framing. What differs is the waiting:
//! the answer may never end, so no deadline bounds it; each read is bounded instead (no
//! byte for the caller's stall bound is a stall), each line by the caller's line bound,
//! and the whole body by the caller's total where it has one. An idle feed holds only the
//! connection's read buffer and the line it is in the middle of.

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::connection::{
    Call, Client, Connection, Endpoint, Failed, READ_SIZE, TransportError, Unanswered, ensure_open,
    unreadable,
};
use super::http1::{self, BadResponse, Piece, ResponseReader};
use super::lines::{Lines, TooLong};

/// The bounds a caller puts on one streaming answer.
#[derive(Clone, Copy, Debug)]
pub struct FeedLimits {
    /// The longest wait for the next bytes (the head's included): a feed that sends
    /// nothing, not even a heartbeat, for this long has stalled.
    pub stall: Duration,
    /// The longest line [`Feed::next_line`] hands out, without its newline.
    pub line: usize,
    /// The most bytes the body may have in all; `None` for an endless feed.
    pub total: Option<u64>,
}

/// Why a feed's answer could not be read on.
#[derive(Debug)]
pub enum FeedError {
    /// No byte came within the stall bound.
    Stall,
    /// The connection broke, or the server closed it before the answer's end.
    Reset(io::Error),
    /// The answer does not follow HTTP/1.1 (a garbage chunk size, say).
    Bad(BadResponse),
    /// A line past the line bound, or a body past its total.
    TooLong,
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Stall => write!(f, "the feed stalled: no byte within its bound"),
            FeedError::Reset(e) => write!(f, "connection broken: {e}"),
            FeedError::Bad(e) => e.fmt(f),
            FeedError::TooLong => write!(f, "a line or answer past its bound"),
        }
    }
}

/// One streaming answer, read over the connection of the [`Client`] it borrows. When
/// the answer ends cleanly on a connection that stays open, the client sends its next
/// request on it; a feed dropped half-way, or one that failed, leaves the connection for
/// the client to replace.
pub struct Feed<'a> {
    connection: &'a mut Connection,
    reader: ResponseReader,
    status: u16,
    stall: Duration,
    /// Whether the endpoint lets connections carry more than one request.
    keep_alive: bool,
    resent: bool,
    done: bool,
    lines: Lines,
}

impl Client {
    /// Sends `call` and returns its answer once the head is in, for the caller to read the
    /// body as it comes ([`Feed::next_piece`], [`Feed::next_line`]), within `limits`.
    ///
    /// As with [`Client::send`]: a GET that met a close on a reused connection before any
    /// byte of an answer is sent once more, and a 401 in a mode whose credential a server
    /// issues is sent once more after a new session or token ([`Feed::resent`] says so).
    /// Connecting is bounded by [`super::connection::CONNECT_TIMEOUT`], writing the
    /// request and each wait for the head by `limits.stall`.
    pub async fn open_feed(
        &mut self,
        call: &Call<'_>,
        limits: FeedLimits,
    ) -> Result<Feed<'_>, Unanswered> {
        let started = Instant::now();
        let mut resent = false;
        let (status, reader) = loop {
            let opened = ensure_open(
                &mut self.connection,
                &self.endpoint,
                &mut self.openings,
                None,
            )
            .await;
            let connection = opened.map_err(|error| Unanswered {
                may_have_reached: resent,
                error,
                resent,
                started,
            })?;
            let reused = connection.completed > 0;
            let headers = (self.headers).current(&self.endpoint.headers, &self.endpoint.credential);
            match connection
                .send_for_feed((&self.endpoint, headers), call, &limits)
                .await
            {
                Ok((401, _)) if !resent && self.renew_credential().await.is_some() => {}
                Ok(head) => break head,
                Err(failed) => {
                    let closed_unanswered = reused
                        && !failed.answered
                        && matches!(
                            failed.error,
                            TransportError::Broken(_) | TransportError::Closed
                        );
                    if !(closed_unanswered && call.method == http1::Method::Get && !resent) {
                        self.connection = None;
                        return Err(Unanswered {
                            error: failed.error,
                            may_have_reached: true,
                            resent,
                            started,
                        });
                    }
                }
            }
            // The refused or lost attempt's connection is not used again.
            self.connection = None;
            resent = true;
        };
        let keep_alive = self.endpoint.keep_alive;
        let Some(connection) = self.connection.as_mut() else {
            return Err(Unanswered {
                error: TransportError::Closed,
                may_have_reached: true,
                resent,
                started,
            });
        };
        Ok(Feed {
            connection,
            reader,
            status,
            stall: limits.stall,
            keep_alive,
            resent,
            done: false,
            lines: Lines::new(limits.line),
        })
    }
}

impl Connection {
    /// Writes the request and reads the answer's head: its status, and the reader that
    /// takes the body on.
    async fn send_for_feed(
        &mut self,
        (endpoint, headers): (&Endpoint, &[u8]),
        call: &Call<'_>,
        limits: &FeedLimits,
    ) -> Result<(u16, ResponseReader), Failed> {
        self.idle = false;
        self.request.clear();
        let paths = (endpoint.node.base_path.as_str(), call.path);
        let body = (endpoint.body_type, call.body);
        http1::write_request(&mut self.request, call.method, paths, headers, body);
        let (stream, request) = (&mut self.stream, &self.request);
        let write = async move {
            stream.write_all(request).await?;
            stream.flush().await
        };
        let failed = |error, answered| Failed { error, answered };
        match tokio::time::timeout(limits.stall, write).await {
            Err(_) => return Err(failed(TransportError::Timeout, false)),
            Ok(Err(e)) => return Err(failed(TransportError::Broken(e), false)),
            Ok(Ok(())) => {}
        }
        let mut reader = ResponseReader::new(call.method, limits.total.unwrap_or(u64::MAX));
        let mut answered = false;
        loop {
            match reader.take_head(&mut self.received) {
                Ok(Some(status)) => return Ok((status, reader)),
                Ok(None) => {}
                Err(e) => return Err(unreadable(e)),
            }
            match self.read_within(limits.stall).await {
                Ok(0) if answered => {
                    let cut = io::Error::new(io::ErrorKind::UnexpectedEof, "a head cut short");
                    return Err(failed(TransportError::Broken(cut), true));
                }
                Ok(0) => return Err(failed(TransportError::Closed, false)),
                Ok(_) => answered = true,
                Err(FeedError::Reset(e)) => {
                    return Err(failed(TransportError::Broken(e), answered));
                }
                Err(_) => return Err(failed(TransportError::Timeout, answered)),
            }
        }
    }

    /// One read into the read buffer, of at most [`READ_SIZE`] more room: the bytes read
    /// (0 when the server closed), or a stall when none came within `stall`.
    async fn read_within(&mut self, stall: Duration) -> Result<usize, FeedError> {
        self.received.reserve(READ_SIZE);
        match tokio::time::timeout(stall, self.stream.read_buf(&mut self.received)).await {
            Err(_) => Err(FeedError::Stall),
            Ok(Err(e)) => Err(FeedError::Reset(e)),
            Ok(Ok(read)) => Ok(read),
        }
    }
}

impl Feed<'_> {
    /// The answer's status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the request was sent a second time (after a 401 and a new credential, or a
    /// GET after a close met on a reused connection).
    pub fn resent(&self) -> bool {
        self.resent
    }

    /// The next bytes of the body as they came (chunk framing taken off), `None` at its
    /// end. Each read waits at most the stall bound.
    pub async fn next_piece(&mut self) -> Result<Option<Bytes>, FeedError> {
        loop {
            if self.done {
                return Ok(None);
            }
            match self.reader.read_piece(&mut self.connection.received) {
                Err(e) if e.is_too_large() => return Err(FeedError::TooLong),
                Err(e) => return Err(FeedError::Bad(e)),
                Ok(Piece::Data(data)) => return Ok(Some(data)),
                Ok(Piece::End(response)) => {
                    self.ended(response.keep_alive);
                    return Ok(Some(response.body).filter(|b| !b.is_empty()));
                }
                Ok(Piece::More) => {}
            }
            if self.connection.read_within(self.stall).await? == 0 {
                // Only a body without a length or chunks ends with the connection.
                let Some(response) = self.reader.end(&mut self.connection.received) else {
                    return Err(FeedError::Reset(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection in the middle of its answer",
                    )));
                };
                self.ended(false);
                return Ok(Some(response.body).filter(|b| !b.is_empty()));
            }
        }
    }

    /// The next line of the body, without its `\n` or `\r\n` (an empty line too: a
    /// continuous feed's heartbeat), `None` at the body's end (an unfinished last line is
    /// dropped). A line past the line bound is [`FeedError::TooLong`], found as soon as
    /// it is past: at most the bound is held, however long the server goes on.
    pub async fn next_line(&mut self) -> Result<Option<&[u8]>, FeedError> {
        while !self.lines.cut().map_err(|TooLong| FeedError::TooLong)? {
            match self.next_piece().await? {
                Some(piece) => self.lines.feed(piece),
                None => return Ok(None),
            }
        }
        Ok(Some(self.lines.line()))
    }

    /// The rest of the body whole, refused past `most` bytes (an error's reason, or a
    /// longpoll answer).
    pub async fn read_to_end(&mut self, most: usize) -> Result<Bytes, FeedError> {
        let mut whole = BytesMut::new();
        while let Some(piece) = self.next_piece().await? {
            if whole.len() + piece.len() > most {
                return Err(FeedError::TooLong);
            }
            whole.extend_from_slice(&piece);
        }
        Ok(whole.freeze())
    }

    /// The answer is over: the connection may carry the next request if the server keeps
    /// it open and nothing unasked followed.
    fn ended(&mut self, keep_alive: bool) {
        self.done = true;
        let connection = &mut *self.connection;
        connection.completed += 1;
        connection.idle = keep_alive && self.keep_alive && connection.received.is_empty();
        connection.idle_since = Instant::now();
    }

    /// The bytes this feed holds while it waits: the read buffer's room, the request's,
    /// and the unfinished line's (what one idle feed costs beside its socket and task).
    pub fn held_bytes(&self) -> usize {
        self.connection.received.capacity()
            + self.connection.request.capacity()
            + self.lines.held_bytes()
            + std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::driver::auth::Credential;
    use crate::target::{Node, Scheme};

    /// What a test server does after reading a request's head.
    #[derive(Clone)]
    enum Step {
        Send(&'static [u8]),
        Pause(Duration),
        /// Sends this block again and again until the client hangs up, counting the bytes.
        Endless(&'static [u8]),
        /// Keeps the connection open, sending nothing.
        Hold,
        /// Closes the connection.
        Close,
    }

    /// A server on a free local port that answers each request on a connection with
    /// `script`; returns the endpoint, the count of
    /// accepted connections and the bytes `Endless` steps sent.
    async fn serve(script: Vec<Step>) -> (Arc<Endpoint>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let sent = Arc::new(AtomicUsize::new(0));
        let (counter, endless) = (accepted.clone(), sent.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(stream, script.clone(), endless.clone()));
            }
        });
        let node = Node {
            scheme: Scheme::Http,
            host: "127.0.0.1".to_string(),
            port,
            host_header: format!("127.0.0.1:{port}"),
            base_path: String::new(),
        };
        (Arc::new(Endpoint::plain(node)), accepted, sent)
    }

    async fn answer(mut stream: TcpStream, script: Vec<Step>, sent: Arc<AtomicUsize>) {
        while read_head(&mut stream).await {
            for step in &script {
                let written = match step {
                    Step::Send(bytes) => stream.write_all(bytes).await,
                    Step::Pause(pause) => {
                        tokio::time::sleep(*pause).await;
                        Ok(())
                    }
                    Step::Endless(block) => loop {
                        if stream.write_all(block).await.is_err() {
                            return;
                        }
                        sent.fetch_add(block.len(), Ordering::SeqCst);
                    },
                    Step::Hold => {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(())
                    }
                    Step::Close => return,
                };
                if written.is_err() {
                    return;
                }
            }
        }
    }

    /// Reads one request's head (the tests send no bodies); false when the client left.
    async fn read_head(stream: &mut TcpStream) -> bool {
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                return false;
            }
            seen.push(byte[0]);
        }
        true
    }

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const GET: Call<'static> = Call {
        method: http1::Method::Get,
        path: "/db/_changes?feed=continuous",
        body: None,
    };

    fn limits(line: usize, total: Option<u64>) -> FeedLimits {
        FeedLimits {
            stall: Duration::from_millis(300),
            line,
            total,
        }
    }

    /// Every line the feed gives until it ends or fails, and how it ended.
    async fn lines(feed: &mut Feed<'_>) -> (Vec<String>, Result<(), FeedError>) {
        let mut out = Vec::new();
        loop {
            match feed.next_line().await {
                Ok(Some(line)) => out.push(String::from_utf8_lossy(line).into_owned()),
                Ok(None) => return (out, Ok(())),
                Err(e) => return (out, Err(e)),
            }
        }
    }

    #[tokio::test]
    async fn lines_split_over_chunks_and_reads_come_whole_and_the_connection_is_kept() {
        let pause = Step::Pause(Duration::from_millis(20));
        let (endpoint, accepted, _) = serve(vec![
            Step::Send(CHUNKED),
            Step::Send(b"5;ext=1\r\n{\"a\":\r\n"),
            pause.clone(),
            Step::Send(b"4\r\n1}\n\n\r\n3\r\n{\"b"),
            pause.clone(),
            Step::Send(b"\r\n6\r\n\":2}\r\n\r\n0\r\nTrailer: x\r\n\r\n"),
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        for _ in 0..2 {
            let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
            assert_eq!((feed.status(), feed.resent()), (200, false));
            let (lines, end) = lines(&mut feed).await;
            assert_eq!(lines, ["{\"a\":1}", "", "{\"b\":2}"]);
            assert!(end.is_ok(), "{end:?}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "kept alive");
    }

    #[tokio::test]
    async fn a_body_by_length_or_until_close_comes_in_pieces() {
        for (head, closes) in [
            (&b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"[..], false),
            (&b"HTTP/1.1 200 OK\r\n\r\n"[..], true),
        ] {
            let mut script = vec![Step::Send(head), Step::Send(b"line1\nli")];
            script.extend([Step::Pause(Duration::from_millis(20)), Step::Send(b"ne2\n")]);
            // Without a length, the body ends when the server closes.
            script.push(if closes { Step::Close } else { Step::Hold });
            let (endpoint, _, _) = serve(script).await;
            let mut client = Client::new(endpoint, None);
            let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
            let (lines, end) = lines(&mut feed).await;
            assert_eq!(lines, ["line1", "line2"]);
            assert!(end.is_ok(), "{end:?}");
        }
    }

    #[tokio::test]
    async fn an_endless_line_is_refused_at_its_bound_not_at_its_end() {
        let (endpoint, _, sent) = serve(vec![
            Step::Send(b"HTTP/1.1 200 OK\r\n\r\n"),
            Step::Endless(&[b'x'; 4096]),
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        let mut feed = client
            .open_feed(&GET, limits(64 * 1024, None))
            .await
            .unwrap();
        let (lines, end) = lines(&mut feed).await;
        assert!(lines.is_empty());
        assert!(matches!(end, Err(FeedError::TooLong)), "{end:?}");
        drop(feed);
        client.disconnect();
        // What the server could push into socket buffers past the bound, and no more.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let sent = sent.load(Ordering::SeqCst);
        assert!(sent < 64 << 20, "{sent} bytes of one line were sent");
    }

    #[tokio::test]
    async fn a_body_past_its_total_is_refused_as_it_runs_past() {
        let (endpoint, _, _) = serve(vec![
            Step::Send(CHUNKED),
            Step::Send(b"8\r\n01234567\r\n8\r\n01234567\r\n"),
            Step::Hold,
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        let mut feed = client.open_feed(&GET, limits(100, Some(12))).await.unwrap();
        let end = feed.read_to_end(1000).await;
        assert!(matches!(end, Err(FeedError::TooLong)), "{end:?}");
        let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
        let end = feed.read_to_end(12).await;
        assert!(matches!(end, Err(FeedError::TooLong)), "{end:?}");
    }

    #[tokio::test]
    async fn silence_past_the_stall_bound_is_a_stall_after_what_came() {
        let (endpoint, _, _) = serve(vec![
            Step::Send(CHUNKED),
            Step::Send(b"3\r\nok\n\r\n"),
            Step::Hold,
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
        let (lines, end) = lines(&mut feed).await;
        assert_eq!(lines, ["ok"]);
        assert!(matches!(end, Err(FeedError::Stall)), "{end:?}");
    }

    #[tokio::test]
    async fn a_server_silent_before_its_head_is_a_timeout() {
        let (endpoint, _, _) = serve(vec![Step::Hold]).await;
        let mut client = Client::new(endpoint, None);
        let error = client
            .open_feed(&GET, limits(100, None))
            .await
            .err()
            .unwrap();
        assert!(matches!(error.error, TransportError::Timeout), "{error}");
    }

    #[tokio::test]
    async fn a_close_in_the_middle_of_a_chunk_is_a_reset() {
        let (endpoint, _, _) = serve(vec![
            Step::Send(CHUNKED),
            Step::Send(b"3\r\nok\n\r\n10\r\n{\"seq\":1,\"id"),
            Step::Close,
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
        let (lines, end) = lines(&mut feed).await;
        assert_eq!(lines, ["ok"]);
        assert!(matches!(end, Err(FeedError::Reset(_))), "{end:?}");
    }

    #[tokio::test]
    async fn garbage_chunk_sizes_are_a_bad_answer() {
        for garbage in [&b"zz\r\nok\n\r\n"[..], b"3\r\nok\nEXTRA\r\n", b"-1\r\n"] {
            let (endpoint, _, _) =
                serve(vec![Step::Send(CHUNKED), Step::Send(garbage), Step::Hold]).await;
            let mut client = Client::new(endpoint, None);
            let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
            let (_, end) = lines(&mut feed).await;
            assert!(matches!(end, Err(FeedError::Bad(_))), "{end:?}");
        }
    }

    #[tokio::test]
    async fn an_error_status_is_handed_over_with_its_reason() {
        let (endpoint, _, _) = serve(vec![Step::Send(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 24\r\n\r\n{\"error\":\"unauthorized\"}",
        )])
        .await;
        // Basic credentials are not renewed: the 401 is the answer.
        let endpoint = Arc::new(Endpoint::new(endpoint.node.clone(), Credential::none()));
        let mut client = Client::new(endpoint, None);
        let mut feed = client.open_feed(&GET, limits(100, None)).await.unwrap();
        assert_eq!((feed.status(), feed.resent()), (401, false));
        let reason = feed.read_to_end(100).await.unwrap();
        assert_eq!(&reason[..], b"{\"error\":\"unauthorized\"}");
    }

    #[tokio::test]
    async fn an_idle_feed_holds_a_few_kilobytes_after_a_long_line() {
        static LONG: [u8; 200_000] = [b'x'; 200_000];
        let (endpoint, _, _) = serve(vec![
            Step::Send(b"HTTP/1.1 200 OK\r\n\r\n"),
            Step::Send(&LONG),
            Step::Send(b"\n\n"),
            Step::Hold,
        ])
        .await;
        let mut client = Client::new(endpoint, None);
        let mut feed = client.open_feed(&GET, limits(1 << 20, None)).await.unwrap();
        assert_eq!(
            feed.next_line().await.unwrap().map(<[u8]>::len),
            Some(200_000)
        );
        assert_eq!(feed.next_line().await.unwrap().map(<[u8]>::len), Some(0));
        // Waiting for the next line: what is held is the read buffer's room.
        let waiting = tokio::time::timeout(Duration::from_millis(50), feed.next_line()).await;
        assert!(waiting.is_err());
        let held = feed.held_bytes();
        assert!(held < 16 * 1024, "an idle feed holds {held} bytes");
    }

    /// The resident set of this process, in bytes.
    fn resident_bytes() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("VmRSS:"));
        let kib = line.and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok());
        kib.unwrap_or(0) * 1024
    }

    /// What an idle continuous feed costs the client: the resident set's growth over
    /// 2,000 feeds, each in its own task waiting for its next line (the server's side of
    /// the sockets is in the same process: an upper bound). A measurement, run by hand:
    /// `cargo test --profile checked --lib idle_feeds_cost -- --ignored --nocapture`.
    #[tokio::test]
    #[ignore = "a measurement, run by hand"]
    // Its figure is for the person who runs it, not output of the tool.
    #[allow(clippy::print_stderr)]
    async fn idle_feeds_cost() {
        const FEEDS: usize = 2_000;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                // The request stays unread in the socket: the answer does not wait for it.
                let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n";
                let _ = stream.write_all(head).await;
                held.push(stream);
            }
        });
        let node = Node {
            scheme: Scheme::Http,
            host: "127.0.0.1".to_string(),
            port,
            host_header: format!("127.0.0.1:{port}"),
            base_path: String::new(),
        };
        let endpoint = Arc::new(Endpoint::plain(node));
        let limits = FeedLimits {
            stall: Duration::from_secs(600),
            line: 16 << 20,
            total: None,
        };
        let before = resident_bytes();
        let (ready, mut waiting) = tokio::sync::mpsc::channel(FEEDS);
        let mut tasks = Vec::new();
        for _ in 0..FEEDS {
            let (endpoint, ready) = (endpoint.clone(), ready.clone());
            tasks.push(tokio::spawn(async move {
                let mut client = Client::new(endpoint, None);
                let mut feed = client.open_feed(&GET, limits).await.unwrap();
                assert_eq!(feed.next_line().await.unwrap(), Some(&b"ok"[..]));
                ready.send(feed.held_bytes()).await.unwrap();
                let _ = feed.next_line().await;
            }));
        }
        let mut held = 0;
        for _ in 0..FEEDS {
            held += waiting.recv().await.unwrap();
        }
        let grown = resident_bytes().saturating_sub(before);
        eprintln!(
            "{FEEDS} idle feeds: buffers {} bytes each; resident set grew {} bytes per feed",
            held / FEEDS,
            grown / FEEDS as u64
        );
        tasks.iter().for_each(|task| task.abort());
        assert!(
            grown / (FEEDS as u64) < 30 * 1024,
            "the issue's budget per device"
        );
    }
}
