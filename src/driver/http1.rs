//! HTTP/1.1 on the wire, without sockets: writing a request into a buffer, and taking a
//! response out of a read buffer however its bytes arrive (by Content-Length, chunked, or
//! until the server closes). The connection feeds it bytes; the tests feed it slices.
//!
//! Only what a CouchDB client needs: no pipelining, no upgrades, no request trailers.

use std::fmt;
use std::mem::MaybeUninit;

use bytes::{Buf, Bytes, BytesMut};
use httparse::Status;

use super::rows::RowCounter;

/// The most header lines a response (or its trailer) may have; more is a bad response.
pub const MAX_HEADERS: usize = 64;

/// The longest response head (or trailer) accepted: a server that sends more without
/// finishing it is not speaking HTTP to us.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The longest chunk-size line accepted (the size and its extensions).
const MAX_CHUNK_LINE: usize = 4 * 1024;

/// The most bytes of a `Retry-After` value kept: a delay or an HTTP date is far shorter.
const MAX_RETRY_AFTER: usize = 64;

/// The request methods sofabench sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    /// Not sent by the workloads; its answers have no body, which the framing knows.
    Head,
    Put,
    Post,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }

    /// Methods whose requests are meant to carry a body: an empty one is still announced
    /// with `Content-Length: 0`, which some servers require.
    fn has_request_body(self) -> bool {
        matches!(self, Method::Put | Method::Post)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The header lines every request to one node carries (each ending in CRLF), rendered once.
pub fn common_headers(host: &str, authorization: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"Host: ");
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(b"\r\nAccept: application/json\r\n");
    if let Some(value) = authorization {
        out.extend_from_slice(b"Authorization: ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// The type of every request body sofabench sends to a CouchDB node.
pub const JSON: &str = "application/json";

/// Appends one whole request to `out`: the request line for `base_path` + `path`, the
/// `headers` from [`common_headers`], the body's type (`body_type`, e.g. [`JSON`]) and
/// length, and the body.
pub fn write_request(
    out: &mut Vec<u8>,
    method: Method,
    (base_path, path): (&str, &str),
    headers: &[u8],
    (body_type, body): (&str, Option<&[u8]>),
) {
    let described = body.map(|body| (body_type, body.len() as u64));
    write_head(out, method, (base_path, path), headers, described);
    out.extend_from_slice(body.unwrap_or_default());
}

/// Appends a request's head to `out`, for a body of the given type and length (sent
/// after it, by the caller) or none.
pub fn write_head(
    out: &mut Vec<u8>,
    method: Method,
    (base_path, path): (&str, &str),
    headers: &[u8],
    body: Option<(&str, u64)>,
) {
    debug_assert!(
        !(base_path.bytes().chain(path.bytes())).any(|b| b <= b' '),
        "paths are built from percent-encoded segments"
    );
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(base_path.as_bytes());
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    out.extend_from_slice(headers);
    if let Some((body_type, _)) = body {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(body_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if body.is_some() || method.has_request_body() {
        let length = body.map_or(0, |(_, length)| length);
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa::Buffer::new().format(length).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A response that does not follow HTTP/1.1 or is larger than the reader accepts, and
/// what is wrong with it.
#[derive(Debug)]
pub struct BadResponse {
    what: String,
    too_large: bool,
    /// The final answer's status, when its head was read.
    status: Option<u16>,
}

impl BadResponse {
    /// True when the response (its head or its body) is past the limit, not malformed.
    pub fn is_too_large(&self) -> bool {
        self.too_large
    }

    /// The status of the answer refused, when its head was read: a refusal (4xx, 5xx)
    /// too long to read still says that nothing was applied.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    fn with_status(self, status: u16) -> BadResponse {
        BadResponse {
            status: Some(status),
            ..self
        }
    }
}

impl fmt::Display for BadResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.too_large {
            write!(f, "response too large: {}", self.what)
        } else {
            write!(f, "bad HTTP response: {}", self.what)
        }
    }
}

impl std::error::Error for BadResponse {}

fn bad(what: impl fmt::Display) -> BadResponse {
    BadResponse {
        what: what.to_string(),
        too_large: false,
        status: None,
    }
}

fn too_large(what: impl fmt::Display) -> BadResponse {
    BadResponse {
        what: what.to_string(),
        too_large: true,
        status: None,
    }
}

/// A whole response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: Bytes,
    /// The body's length: `body`'s, or for a counted answer all it had (`body` is then
    /// empty, or holds only its last chunk).
    pub body_length: u64,
    /// False when the connection cannot carry another request after this one.
    pub keep_alive: bool,
    /// A 429's `Retry-After` value as the server wrote it (cut to 64 bytes); read for no
    /// other status, so that other answers cost nothing more.
    pub retry_after: Option<Box<str>>,
    /// The value of the answer's `Set-Cookie: AuthSession=…`, when the reader was asked
    /// to keep it (a login's answer; see [`ResponseReader::keeping_session_cookie`]).
    pub session_cookie: Option<String>,
    /// The rows of a query's answer counted as it was read
    /// ([`ResponseReader::counting_rows`]); `None` when not asked, or when the body held
    /// no complete `rows` or `docs` array.
    pub rows: Option<u64>,
}

/// What [`ResponseReader::read_piece`] took from the buffer.
#[derive(Debug)]
pub enum Piece {
    /// More bytes are needed.
    More,
    /// The next bytes of the body.
    Data(Bytes),
    /// The answer is complete; its `body` holds the last bytes, if any.
    End(Response),
}

/// Takes one response out of the front of a read buffer, over as many reads as it takes.
pub struct ResponseReader {
    head_request: bool,
    /// The largest body accepted, in bytes: a longer one is refused as soon as its
    /// length is known (before it is read) or, without one, as soon as it is past.
    limit: u64,
    state: State,
    /// Whether the final answer's session cookie is kept.
    keep_session_cookie: bool,
    /// For an answer counted rather than kept: what was read and let go so far.
    counted: Option<Counted>,
}

/// What a counted answer's body held: its bytes, and (for a query's answer) its rows,
/// counted as the bytes go by.
#[derive(Debug, Default)]
struct Counted {
    bytes: u64,
    rows: Option<RowCounter>,
}

impl Counted {
    /// Reads the first `n` bytes of `buf` and lets them go.
    fn take(&mut self, buf: &mut BytesMut, n: usize) {
        if let Some(rows) = self.rows.as_mut() {
            rows.feed(&buf[..n]);
        }
        buf.advance(n);
        self.bytes += n as u64;
    }

    /// The rows of the whole answer, whose last piece is `last` (not let go).
    fn rows_with(&mut self, last: &[u8]) -> Option<u64> {
        let rows = self.rows.as_mut()?;
        rows.feed(last);
        rows.rows()
    }
}

enum State {
    Head,
    Body {
        status: u16,
        keep_alive: bool,
        framing: Framing,
        retry_after: Option<Box<str>>,
        session_cookie: Option<String>,
    },
}

/// Where the body ends.
#[derive(Debug)]
enum Framing {
    Length(u64),
    Chunked(Chunks),
    /// Neither a length nor chunks: the server closing the connection ends the body.
    UntilClose,
}

impl ResponseReader {
    /// A reader for the answer to a `method` request whose body may be `limit` bytes long.
    pub fn new(method: Method, limit: u64) -> ResponseReader {
        ResponseReader {
            head_request: method == Method::Head,
            limit,
            state: State::Head,
            keep_session_cookie: false,
            counted: None,
        }
    }

    /// The same reader, letting the body go as it comes and only counting it: memory
    /// stays bounded by what one read brings, whatever the body's length.
    pub fn counting(self) -> ResponseReader {
        ResponseReader {
            counted: Some(Counted::default()),
            ..self
        }
    }

    /// The same reader, counting the body and the rows of a query's answer in it (the
    /// elements of its `rows` or `docs` array) as it goes: the response's `rows`.
    pub fn counting_rows(self) -> ResponseReader {
        ResponseReader {
            counted: Some(Counted {
                bytes: 0,
                rows: Some(RowCounter::new()),
            }),
            ..self
        }
    }

    /// The same reader, keeping the answer's `Set-Cookie: AuthSession=…` value in the
    /// response when `keep` (only logins ask: no other answer pays for looking).
    pub fn keeping_session_cookie(self, keep: bool) -> ResponseReader {
        ResponseReader {
            keep_session_cookie: keep,
            ..self
        }
    }

    /// Whether the body is counted and let go rather than kept.
    pub fn is_counting(&self) -> bool {
        self.counted.is_some()
    }

    /// Whether the head of the final answer (not an interim 1xx one) is in.
    pub fn has_final_head(&self) -> bool {
        matches!(self.state, State::Body { .. })
    }

    /// Takes what it can from the front of `buf` (keeping what it has not used yet there):
    /// the response once its last byte is in, `None` while more bytes are needed.
    pub fn read(&mut self, buf: &mut BytesMut) -> Result<Option<Response>, BadResponse> {
        loop {
            match &mut self.state {
                State::Head => {
                    let Some(status) = self.read_head(buf)? else {
                        return Ok(None);
                    };
                    // An error's body is kept whole (within the same limit), for its
                    // reason: only a successful answer is counted and let go.
                    if !(100..300).contains(&status) {
                        self.counted = None;
                    }
                }
                State::Body {
                    status,
                    keep_alive,
                    framing,
                    retry_after,
                    session_cookie,
                } => {
                    let before = self.counted.as_ref().map_or(0, |c| c.bytes);
                    let body = match framing {
                        Framing::Length(length) => {
                            if let Some(counted) = self.counted.as_mut() {
                                let taken = (*length).min(buf.len() as u64);
                                counted.take(buf, taken as usize);
                                *length -= taken;
                            }
                            split_length(buf, *length)
                        }
                        Framing::Chunked(chunks) => {
                            let read = chunks
                                .read(buf, self.limit.saturating_sub(before))
                                .map_err(|e| e.with_status(*status))?;
                            if let (None, Some(counted)) = (&read, self.counted.as_mut()) {
                                counted.take(buf, chunks.let_go());
                            }
                            read
                        }
                        Framing::UntilClose if before + buf.len() as u64 > self.limit => {
                            return Err(too_large(format_args!(
                                "a body ended by closing runs past {} bytes",
                                self.limit
                            ))
                            .with_status(*status));
                        }
                        Framing::UntilClose => {
                            if let Some(counted) = self.counted.as_mut() {
                                counted.take(buf, buf.len());
                            }
                            None
                        }
                    };
                    let Some(body) = body else {
                        return Ok(None);
                    };
                    let (before, rows) = match self.counted.as_mut() {
                        Some(counted) => (counted.bytes, counted.rows_with(&body)),
                        None => (0, None),
                    };
                    return Ok(Some(Response {
                        status: *status,
                        body_length: before + body.len() as u64,
                        body,
                        rows,
                        keep_alive: *keep_alive,
                        retry_after: retry_after.take(),
                        session_cookie: session_cookie.take(),
                    }));
                }
            }
        }
    }

    /// Takes the head at the front of `buf` if it is all there: its status, `None` while
    /// more bytes are needed. An interim answer (100 Continue, 103 Early Hints) is taken
    /// and passed over; the final answer's head moves the reader on to the body.
    fn read_head(&mut self, buf: &mut BytesMut) -> Result<Option<u16>, BadResponse> {
        let reading = (self.head_request, self.keep_session_cookie);
        let Some((length, head)) = parse_head(buf, reading, self.limit)? else {
            return Ok(None);
        };
        buf.advance(length);
        if !(100..200).contains(&head.status) {
            self.state = State::Body {
                status: head.status,
                keep_alive: head.keep_alive,
                framing: head.framing,
                retry_after: head.retry_after,
                session_cookie: head.session_cookie,
            };
        }
        Ok(Some(head.status))
    }

    /// Takes the final answer's head from the front of `buf`, passing over interim ones:
    /// its status once it is in, `None` while more bytes are needed.
    pub fn take_head(&mut self, buf: &mut BytesMut) -> Result<Option<u16>, BadResponse> {
        loop {
            if let Some(status) = self.status() {
                return Ok(Some(status));
            }
            if self.read_head(buf)?.is_none() {
                return Ok(None);
            }
        }
    }

    /// The final answer's status, once its head is in.
    pub fn status(&self) -> Option<u16> {
        match &self.state {
            State::Body { status, .. } => Some(*status),
            State::Head => None,
        }
    }

    /// For an answer read as it comes (a feed): the next piece of the body at the front of
    /// `buf`, whatever the status. Each piece is split off the buffer, so the buffer keeps
    /// only bytes not decoded yet (a partial chunk-size line, a chunk's CRLF); once the
    /// caller drops a piece, reserving room takes its allocation back. The body's total
    /// is held to the reader's limit. At the end, the whole response, whose `body` is the
    /// last piece (often empty) and `body_length` the body's total.
    pub fn read_piece(&mut self, buf: &mut BytesMut) -> Result<Piece, BadResponse> {
        let taken = self.counted.get_or_insert_with(Counted::default).bytes;
        let State::Body {
            status, framing, ..
        } = &mut self.state
        else {
            return match self.read_head(buf)? {
                Some(_) => self.read_piece(buf),
                None => Ok(Piece::More),
            };
        };
        let status = *status;
        let data = match framing {
            Framing::Length(0) => return Ok(Piece::End(self.finish(Bytes::new()))),
            Framing::Length(left) => {
                let n = (*left).min(buf.len() as u64);
                *left -= n;
                buf.split_to(n as usize)
            }
            Framing::Chunked(chunks) => {
                let read = chunks.read(buf, self.limit.saturating_sub(taken));
                match read.map_err(|e| e.with_status(status))? {
                    Some(last) => return Ok(Piece::End(self.finish(last))),
                    None => buf.split_to(chunks.let_go()),
                }
            }
            Framing::UntilClose if taken + buf.len() as u64 > self.limit => {
                return Err(too_large(format_args!(
                    "a body ended by closing runs past {} bytes",
                    self.limit
                ))
                .with_status(status));
            }
            Framing::UntilClose => buf.split(),
        };
        if data.is_empty() {
            return Ok(Piece::More);
        }
        if let Some(counted) = self.counted.as_mut() {
            counted.bytes += data.len() as u64;
        }
        Ok(Piece::Data(data.freeze()))
    }

    /// The response whose body ends with `last`, for [`ResponseReader::read_piece`].
    fn finish(&mut self, last: Bytes) -> Response {
        let before = self.counted.take().map_or(0, |c| c.bytes);
        let (status, keep_alive, retry_after, session_cookie) = match &mut self.state {
            State::Body {
                status,
                keep_alive,
                retry_after,
                session_cookie,
                ..
            } => (
                *status,
                *keep_alive,
                retry_after.take(),
                session_cookie.take(),
            ),
            State::Head => (0, false, None, None),
        };
        Response {
            status,
            body_length: before + last.len() as u64,
            body: last,
            keep_alive,
            retry_after,
            session_cookie,
            rows: None,
        }
    }

    /// The server closed the connection after the bytes in `buf`: the response if closing
    /// ends it, `None` if the response was cut short.
    pub fn end(&mut self, buf: &mut BytesMut) -> Option<Response> {
        match &mut self.state {
            State::Body {
                status,
                framing: Framing::UntilClose,
                retry_after,
                session_cookie,
                ..
            } => {
                let (before, rows) = match self.counted.as_mut() {
                    Some(counted) => (counted.bytes, counted.rows_with(buf)),
                    None => (0, None),
                };
                Some(Response {
                    status: *status,
                    body_length: before + buf.len() as u64,
                    body: buf.split().freeze(),
                    rows,
                    keep_alive: false,
                    retry_after: retry_after.take(),
                    session_cookie: session_cookie.take(),
                })
            }
            _ => None,
        }
    }

    /// How many more bytes the response is known to need, so that the read buffer can
    /// make room for a large body at once rather than in many steps.
    pub fn bytes_expected(&self, buf: &BytesMut) -> u64 {
        match &self.state {
            State::Body {
                framing: Framing::Length(length),
                ..
            } => length.saturating_sub(buf.len() as u64),
            State::Body {
                framing: Framing::Chunked(chunks),
                ..
            } => chunks.bytes_expected(),
            _ => 0,
        }
    }
}

fn split_length(buf: &mut BytesMut, length: u64) -> Option<Bytes> {
    if length == 0 {
        // An empty body takes nothing from the buffer.
        return Some(Bytes::new());
    }
    let length = usize::try_from(length).ok()?;
    (buf.len() >= length).then(|| buf.split_to(length).freeze())
}

/// What a response's head says.
#[derive(Debug)]
struct Head {
    status: u16,
    keep_alive: bool,
    framing: Framing,
    retry_after: Option<Box<str>>,
    session_cookie: Option<String>,
}

/// The head at the front of `buf` and its length, `None` while it is incomplete.
/// A body announced longer than `limit` is refused. `head_request` when the request was a
/// HEAD (no body follows), `keep_session_cookie` to keep `Set-Cookie: AuthSession=…`.
fn parse_head(
    buf: &[u8],
    (head_request, keep_session_cookie): (bool, bool),
    limit: u64,
) -> Result<Option<(usize, Head)>, BadResponse> {
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buf,
        &mut headers,
    );
    let length = match parsed {
        Ok(Status::Complete(length)) => length,
        Ok(Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Err(too_large(format_args!(
                "no end of the head within {MAX_HEAD_BYTES} bytes"
            )));
        }
        Ok(Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(bad(format_args!("more than {MAX_HEADERS} header lines")));
        }
        Err(e) => return Err(bad(e)),
    };
    let (Some(status), Some(version)) = (response.code, response.version) else {
        return Err(bad("no status line"));
    };
    if status == 101 {
        return Err(bad("101 Switching Protocols, but no upgrade was asked for"));
    }
    let fields = Fields::of(response.headers, (status == 429, keep_session_cookie))?;
    let keep_alive = if version == 0 {
        fields.keep_alive && !fields.close
    } else {
        !fields.close
    };
    let no_body = head_request || matches!(status, 100..200 | 204 | 304);
    let framing = if no_body {
        Framing::Length(0)
    } else {
        fields.framing()?
    };
    if let Framing::Length(length) = framing
        && length > limit
    {
        return Err(too_large(format_args!(
            "Content-Length {length} is past the limit of {limit} bytes"
        ))
        .with_status(status));
    }
    let keep_alive = keep_alive && !matches!(framing, Framing::UntilClose);
    Ok(Some((
        length,
        Head {
            status,
            keep_alive,
            framing,
            retry_after: fields.retry_after,
            session_cookie: fields.session_cookie,
        },
    )))
}

/// The header fields that decide framing and keep-alive, and a 429's `Retry-After`.
#[derive(Default)]
struct Fields {
    content_length: Option<u64>,
    /// Whether there is a Transfer-Encoding, and whether its last coding is `chunked`.
    transfer_encoding: Option<bool>,
    close: bool,
    keep_alive: bool,
    /// The first `Retry-After` value, when asked for.
    retry_after: Option<Box<str>>,
    /// The value of `Set-Cookie: AuthSession=…` (its attributes included), when asked for.
    session_cookie: Option<String>,
}

/// How a session cookie's `Set-Cookie` value starts (CouchDB and PouchDB Server).
const SESSION_COOKIE: &[u8] = b"AuthSession=";

impl Fields {
    /// The fields of `headers`; `Retry-After` too when `want_retry_after`, and the session
    /// cookie when `keep_session_cookie`.
    fn of(
        headers: &[httparse::Header],
        (want_retry_after, keep_session_cookie): (bool, bool),
    ) -> Result<Fields, BadResponse> {
        let mut fields = Fields::default();
        for header in headers {
            let name = header.name;
            if keep_session_cookie
                && name.eq_ignore_ascii_case("set-cookie")
                && header.value.starts_with(SESSION_COOKIE)
            {
                fields.session_cookie = Some(String::from_utf8_lossy(header.value).into_owned());
            } else if name.eq_ignore_ascii_case("content-length") {
                let length = parse_length(header.value)?;
                if fields.content_length.is_some_and(|l| l != length) {
                    return Err(bad("two different Content-Length values"));
                }
                fields.content_length = Some(length);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                // Codings apply in order, over all Transfer-Encoding lines: the last counts.
                if let Some(last) = tokens(header.value).last() {
                    fields.transfer_encoding = Some(last.eq_ignore_ascii_case(b"chunked"));
                }
            } else if name.eq_ignore_ascii_case("connection") {
                for token in tokens(header.value) {
                    fields.close |= token.eq_ignore_ascii_case(b"close");
                    fields.keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            } else if want_retry_after
                && fields.retry_after.is_none()
                && name.eq_ignore_ascii_case("retry-after")
            {
                let value = header.value.trim_ascii();
                let kept = &value[..value.len().min(MAX_RETRY_AFTER)];
                fields.retry_after = Some(String::from_utf8_lossy(kept).into());
            }
        }
        Ok(fields)
    }

    /// RFC 9112 section 6.3, for a response with a body.
    fn framing(&self) -> Result<Framing, BadResponse> {
        match (self.transfer_encoding, self.content_length) {
            // Both is how responses get smuggled; RFC 9112 says to treat it as an error.
            (Some(_), Some(_)) => Err(bad("both Transfer-Encoding and Content-Length")),
            (Some(true), None) => Ok(Framing::Chunked(Chunks::default())),
            (Some(false), None) | (None, None) => Ok(Framing::UntilClose),
            (None, Some(length)) => Ok(Framing::Length(length)),
        }
    }
}

fn parse_length(value: &[u8]) -> Result<u64, BadResponse> {
    let digits = value.trim_ascii();
    if digits.len() > 19 && digits.iter().all(u8::is_ascii_digit) {
        return Err(too_large(format_args!(
            "Content-Length {} does not fit in 64 bits",
            String::from_utf8_lossy(digits)
        )));
    }
    let valid = !digits.is_empty() && digits.len() <= 19 && digits.iter().all(u8::is_ascii_digit);
    if !valid {
        return Err(bad(format_args!(
            "Content-Length {:?} is not a number",
            String::from_utf8_lossy(value)
        )));
    }
    Ok(digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// The comma-separated tokens of a header value, without surrounding blanks.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// Decodes a chunked body in place: the data of each chunk is moved down over the
/// chunk-size lines before it, so the body ends up at the front of the buffer, in the
/// allocation it was read into.
#[derive(Debug, Default)]
struct Chunks {
    step: ChunkStep,
    /// Body bytes decoded so far, at the front of the buffer.
    decoded: usize,
    /// Where the bytes not looked at yet start.
    raw: usize,
}

#[derive(Clone, Copy, Debug, Default)]
enum ChunkStep {
    /// A chunk-size line, with extensions.
    #[default]
    Size,
    /// This many bytes of a chunk's data.
    Data(u64),
    /// The CRLF after a chunk's data.
    DataEnd,
    /// The trailer fields after the last chunk, and the empty line that ends them.
    Trailer,
}

impl Chunks {
    /// The body once its end is in the buffer; it is then split off the buffer. A body
    /// past `limit` bytes is refused as soon as a chunk's size says it will be.
    fn read(&mut self, buf: &mut BytesMut, limit: u64) -> Result<Option<Bytes>, BadResponse> {
        let read = self.decode(buf, limit);
        if let Ok(None) = read
            && self.raw > self.decoded
        {
            // The chunk-size lines already decoded go: the buffer holds the body and what
            // is not decoded yet (a partial line), never all the framing of an endless
            // stream of small chunks.
            buf.copy_within(self.raw.., self.decoded);
            buf.truncate(buf.len() - (self.raw - self.decoded));
            self.raw = self.decoded;
        }
        read
    }

    fn decode(&mut self, buf: &mut BytesMut, limit: u64) -> Result<Option<Bytes>, BadResponse> {
        loop {
            let rest = &buf[self.raw..];
            match self.step {
                ChunkStep::Size => match httparse::parse_chunk_size(rest) {
                    Ok(Status::Complete((length, size))) => {
                        self.raw += length;
                        if size > limit.saturating_sub(self.decoded as u64) {
                            return Err(too_large(format_args!(
                                "a chunked body runs past the limit of {limit} bytes"
                            )));
                        }
                        self.step = match size {
                            0 => ChunkStep::Trailer,
                            size => ChunkStep::Data(size),
                        };
                    }
                    Ok(Status::Partial) if rest.len() > MAX_CHUNK_LINE => {
                        return Err(bad(format_args!(
                            "chunk-size line longer than {MAX_CHUNK_LINE} bytes"
                        )));
                    }
                    Ok(Status::Partial) => return Ok(None),
                    Err(e) => return Err(bad(e)),
                },
                ChunkStep::Data(left) => {
                    let available = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    if available == 0 {
                        return Ok(None);
                    }
                    buf.copy_within(self.raw..self.raw + available, self.decoded);
                    self.decoded += available;
                    self.raw += available;
                    self.step = match left - available as u64 {
                        0 => ChunkStep::DataEnd,
                        left => ChunkStep::Data(left),
                    };
                }
                ChunkStep::DataEnd => match rest {
                    [b'\r', b'\n', ..] => {
                        self.raw += 2;
                        self.step = ChunkStep::Size;
                    }
                    [] | [b'\r'] => return Ok(None),
                    _ => return Err(bad("chunk data longer than its size")),
                },
                ChunkStep::Trailer => {
                    let Some(length) = trailer_length(rest)? else {
                        return Ok(None);
                    };
                    let mut body = buf.split_to(self.raw + length);
                    body.truncate(self.decoded);
                    return Ok(Some(body.freeze()));
                }
            }
        }
    }

    /// Forgets the body decoded so far, for an answer that is counted, not kept: says
    /// how many bytes that was, for the caller to let go of them (the front of the
    /// buffer).
    fn let_go(&mut self) -> usize {
        let decoded = self.decoded;
        self.raw -= decoded;
        self.decoded = 0;
        decoded
    }

    fn bytes_expected(&self) -> u64 {
        match self.step {
            ChunkStep::Data(left) => left,
            _ => 0,
        }
    }
}

/// The length of the trailer section (fields and the empty line ending it), once it is
/// all there. The fields themselves are not used.
fn trailer_length(rest: &[u8]) -> Result<Option<usize>, BadResponse> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    match httparse::parse_headers(rest, &mut fields) {
        Ok(Status::Complete((length, _))) => Ok(Some(length)),
        Ok(Status::Partial) if rest.len() > MAX_HEAD_BYTES => Err(too_large(format_args!(
            "no end of the trailer within {MAX_HEAD_BYTES} bytes"
        ))),
        Ok(Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            Err(bad(format_args!("more than {MAX_HEADERS} trailer lines")))
        }
        Err(e) => Err(bad(format_args!("trailer: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, path: &str, body: Option<&[u8]>) -> String {
        let mut out = Vec::new();
        let headers = common_headers("db:5984", Some("Basic dTpw"));
        write_request(&mut out, method, ("/couch", path), &headers, (JSON, body));
        String::from_utf8(out).unwrap()
    }

    /// Feeds `wire` to a counting reader `step` bytes at a time, as reads would bring it;
    /// returns the answer and the most bytes the buffer ever held.
    fn counted(wire: &[u8], step: usize, limit: u64) -> (Result<Response, BadResponse>, usize) {
        let mut reader = ResponseReader::new(Method::Get, limit).counting();
        let mut buf = BytesMut::new();
        let mut most = 0;
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            most = most.max(buf.len());
            match reader.read(&mut buf) {
                Ok(Some(response)) => return (Ok(response), most),
                Ok(None) => {}
                Err(e) => return (Err(e), most),
            }
        }
        (Err(bad("the wire ended before the answer")), most)
    }

    #[test]
    fn a_counted_answer_is_let_go_as_it_comes_whatever_its_framing() {
        let body = vec![b'x'; 10_000];
        let mut by_length = b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n".to_vec();
        by_length.extend_from_slice(&body);
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for part in body.chunks(999) {
            chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            chunked.extend_from_slice(part);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        for wire in [&by_length, &chunked] {
            let (answer, most) = counted(wire, 500, 10_000);
            let answer = answer.unwrap();
            assert_eq!(answer.body_length, 10_000);
            assert!(answer.body.len() < 1000, "{}", answer.body.len());
            assert!(most < 1100, "the buffer held {most} bytes");
            // One byte less allowed: refused, at the head or as the body runs past.
            let (refused, _) = counted(wire, 500, 9_999);
            assert!(refused.unwrap_err().is_too_large());
        }
    }

    /// `body` framed by length, chunked in pieces of 7 bytes, and ended by closing.
    fn framings(status: &str, body: &[u8]) -> [Vec<u8>; 3] {
        let mut by_length = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        by_length.extend_from_slice(body);
        let mut chunked =
            format!("HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes();
        for part in body.chunks(7) {
            chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            chunked.extend_from_slice(part);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let mut closed = format!("HTTP/1.1 {status}\r\nConnection: close\r\n\r\n").into_bytes();
        closed.extend_from_slice(body);
        [by_length, chunked, closed]
    }

    /// The answer a rows-counting reader makes of `wire` read `step` bytes at a time,
    /// the connection closed after its last byte.
    fn rows_of(wire: &[u8], step: usize) -> Response {
        let mut reader = ResponseReader::new(Method::Get, 1 << 20).counting_rows();
        let mut buf = BytesMut::new();
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            if let Some(response) = reader.read(&mut buf).unwrap() {
                return response;
            }
        }
        reader.end(&mut buf).expect("a complete answer")
    }

    #[test]
    fn a_querys_rows_are_counted_as_its_answer_goes_by_whatever_its_framing() {
        let body = br#"{"total_rows":3,"offset":0,"rows":[{"id":"a","key":"]","value":{"x":[1,2]}},{"id":"b","key":"\"}","value":null},{"id":"c","key":3,"value":"rows"}]}"#;
        for wire in framings("200 OK", body) {
            for step in [1, 5, 64, 4096] {
                let answer = rows_of(&wire, step);
                assert_eq!(
                    answer.rows,
                    Some(3),
                    "step {step}: {}",
                    String::from_utf8_lossy(&wire)
                );
                assert_eq!(answer.body_length, body.len() as u64);
                assert!(answer.body.len() <= step.max(7), "let go as it came");
            }
        }
        // A cut or foreign answer has no count.
        let cut = &body[..body.len() - 3];
        for wire in framings("200 OK", cut) {
            assert_eq!(rows_of(&wire, 16).rows, None);
        }
    }

    #[test]
    fn a_counted_error_answer_is_kept_for_its_reason() {
        let body = br#"{"error":"not_found","reason":"missing"}"#;
        for wire in framings("404 Object Not Found", body) {
            let answer = rows_of(&wire, 9);
            assert_eq!((answer.status, answer.rows), (404, None));
            assert_eq!(&answer.body[..], &body[..]);
        }
    }

    #[test]
    fn a_head_for_a_generated_body_announces_its_length_and_type() {
        let mut out = Vec::new();
        let body = Some(("application/octet-stream", 1u64 << 30));
        write_head(&mut out, Method::Put, ("", "/db/d/blob?rev=1-a"), b"", body);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Content-Length: 1073741824\r\n"), "{text}");
        assert!(
            text.ends_with(
                "Content-Type: application/octet-stream\r\nContent-Length: 1073741824\r\n\r\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_body_carries_the_type_it_is_given() {
        let mut out = Vec::new();
        let form = "application/x-www-form-urlencoded";
        write_request(
            &mut out,
            Method::Post,
            ("", "/token"),
            b"",
            (form, Some(b"a=1")),
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
            "{text}"
        );
    }

    #[test]
    fn the_session_cookie_is_kept_only_when_asked_for() {
        let wire = "HTTP/1.1 200 OK\r\nSet-Cookie: other=1\r\nSet-Cookie: AuthSession=YWJj; Version=1; Path=/; Max-Age=600; HttpOnly\r\nContent-Length: 2\r\n\r\n{}";
        let read = |keep: bool| {
            let mut reader = ResponseReader::new(Method::Post, 100).keeping_session_cookie(keep);
            let mut buf = BytesMut::from(wire.as_bytes());
            reader.read(&mut buf).unwrap().unwrap()
        };
        assert_eq!(
            read(true).session_cookie.as_deref(),
            Some("AuthSession=YWJj; Version=1; Path=/; Max-Age=600; HttpOnly")
        );
        assert_eq!(read(false).session_cookie, None);
        // An interim answer's cookie is not the final answer's.
        let interim = format!(
            "HTTP/1.1 100 Continue\r\nSet-Cookie: AuthSession=old\r\n\r\n{}",
            wire.replace("AuthSession=YWJj", "AuthSession=new")
        );
        let mut reader = ResponseReader::new(Method::Post, 100).keeping_session_cookie(true);
        let mut buf = BytesMut::from(interim.as_bytes());
        let response = reader.read(&mut buf).unwrap().unwrap();
        assert!(
            response
                .session_cookie
                .unwrap()
                .starts_with("AuthSession=new;")
        );
    }

    #[test]
    fn requests_announce_bodies_only_where_they_belong() {
        assert_eq!(
            request(Method::Get, "/db/a", None),
            "GET /couch/db/a HTTP/1.1\r\nHost: db:5984\r\nAccept: application/json\r\nAuthorization: Basic dTpw\r\n\r\n"
        );
        assert_eq!(
            request(Method::Put, "/db", None),
            "PUT /couch/db HTTP/1.1\r\nHost: db:5984\r\nAccept: application/json\r\nAuthorization: Basic dTpw\r\nContent-Length: 0\r\n\r\n"
        );
        assert_eq!(
            request(Method::Post, "/db/_bulk_docs", Some(b"{\"docs\":[]}")),
            "POST /couch/db/_bulk_docs HTTP/1.1\r\nHost: db:5984\r\nAccept: application/json\r\nAuthorization: Basic dTpw\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"docs\":[]}"
        );
    }

    /// Feeds `wire` to a reader `step` bytes at a time, as reads would; returns the
    /// response and what was left in the buffer after it.
    fn feed(method: Method, wire: &[u8], step: usize) -> Result<(Response, BytesMut), BadResponse> {
        let mut reader = ResponseReader::new(method, u64::MAX);
        let mut buf = BytesMut::new();
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            if let Some(response) = reader.read(&mut buf)? {
                return Ok((response, buf));
            }
        }
        match reader.end(&mut buf) {
            Some(response) => Ok((response, buf)),
            None => Err(bad("cut short")),
        }
    }

    fn parse(wire: &str) -> Result<Response, BadResponse> {
        feed(Method::Get, wire.as_bytes(), wire.len()).map(|(response, _)| response)
    }

    fn error(wire: &str) -> String {
        parse(wire).expect_err("a bad response").to_string()
    }

    #[test]
    fn content_length_body_in_any_pieces_leaves_what_follows() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT";
        for step in 1..wire.len() {
            let (response, rest) = feed(Method::Get, wire, step).unwrap();
            assert_eq!((response.status, &response.body[..]), (200, &b"hello"[..]));
            assert!(response.keep_alive);
            // Whatever came with the last piece after the body stays in the buffer.
            assert!(b"NEXT".starts_with(&rest), "step {step}: {rest:?}");
        }
    }

    #[test]
    fn chunked_body_with_extensions_and_trailer_in_any_pieces() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
            5;name=value\r\nhello\r\n1 ; x\r\n,\r\nA\r\n0123456789\r\n\
            0;last\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\nNEXT";
        for step in 1..wire.len() {
            let (response, rest) = feed(Method::Get, wire, step).unwrap();
            assert_eq!(&response.body[..], b"hello,0123456789", "step {step}");
            assert!(response.keep_alive);
            assert!(b"NEXT".starts_with(&rest), "step {step}: {rest:?}");
        }
    }

    #[test]
    fn chunked_body_without_trailer_fields() {
        let response = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        assert!(response.unwrap().body.is_empty());
    }

    #[test]
    fn body_until_close_needs_the_end() {
        let wire = b"HTTP/1.1 200 OK\r\n\r\nall of it";
        let mut reader = ResponseReader::new(Method::Get, u64::MAX);
        let mut buf = BytesMut::from(&wire[..]);
        assert!(reader.read(&mut buf).unwrap().is_none());
        let response = reader.end(&mut buf).unwrap();
        assert_eq!(&response.body[..], b"all of it");
        assert!(!response.keep_alive);
        // A transfer coding other than chunked last is also delimited by closing.
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz";
        let (response, _) = feed(Method::Get, wire, 4).unwrap();
        assert_eq!(
            (&response.body[..], response.keep_alive),
            (&b"xyz"[..], false)
        );
    }

    #[test]
    fn cut_short_responses_are_not_complete() {
        for wire in [
            "HTTP/1.1 200 OK\r\nContent-Le",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhell",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        ] {
            assert!(parse(wire).is_err(), "{wire:?}");
        }
    }

    #[test]
    fn a_429_keeps_its_first_retry_after_cut_short_and_others_keep_none() {
        let response = parse(
            "HTTP/1.1 429 Too Many Requests\r\nretry-after:  5 \r\nRetry-After: 9\r\nContent-Length: 0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(response.retry_after.as_deref(), Some("5"));
        let long = format!(
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {}\r\n\r\n",
            "9".repeat(1000)
        );
        let response = parse(&long).unwrap();
        assert_eq!(response.retry_after.as_deref(), Some(&"9".repeat(64)[..]));
        let response =
            parse("HTTP/1.1 503 Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(response.unwrap().retry_after, None);
        let response = parse("HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(response.unwrap().retry_after, None);
    }

    #[test]
    fn interim_answers_come_before_the_real_one() {
        let response = parse(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
             HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
        )
        .unwrap();
        assert_eq!((response.status, &response.body[..]), (201, &b"ok"[..]));
    }

    #[test]
    fn some_answers_have_no_body_whatever_the_head_says() {
        for status in ["204 No Content", "304 Not Modified"] {
            let wire = format!("HTTP/1.1 {status}\r\nContent-Length: 7\r\n\r\nNEXT");
            let (response, rest) = feed(Method::Get, wire.as_bytes(), wire.len()).unwrap();
            assert!(response.body.is_empty());
            assert_eq!(
                &rest[..],
                b"NEXT",
                "{status}: nothing after the head is body"
            );
        }
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 250\r\n\r\n";
        let (response, _) = feed(Method::Head, wire, wire.len()).unwrap();
        assert_eq!((response.status, response.body.len()), (200, 0));
    }

    #[test]
    fn keep_alive_follows_version_and_connection_header() {
        let cases = [
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
            (
                "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
                false,
            ),
            (
                "HTTP/1.1 200 OK\r\nConnection: x, close\r\nContent-Length: 0\r\n\r\n",
                false,
            ),
            ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
            (
                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
                true,
            ),
        ];
        for (wire, keep_alive) in cases {
            assert_eq!(parse(wire).unwrap().keep_alive, keep_alive, "{wire:?}");
        }
    }

    #[test]
    fn bad_responses_are_errors_with_a_reason() {
        let cases = [
            ("HTTP/1.1 abc OK\r\n\r\n", "invalid response status"),
            ("hello there\r\n\r\n", "invalid HTTP version"),
            ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
                "both",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                "not a number",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "two",
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
                "invalid chunk size",
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
                "longer than its size",
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n",
                "trailer",
            ),
        ];
        for (wire, reason) in cases {
            let message = error(wire);
            assert!(message.contains(reason), "{wire:?}: {message}");
        }
    }

    #[test]
    fn header_lines_are_capped() {
        let many = |n: usize| {
            let lines: String = (0..n).map(|i| format!("X-{i}: y\r\n")).collect();
            format!("HTTP/1.1 200 OK\r\n{lines}Content-Length: 0\r\n\r\n")
        };
        assert!(parse(&many(MAX_HEADERS - 1)).is_ok());
        assert!(error(&many(MAX_HEADERS)).contains("more than 64 header lines"));
        let trailer: String = (0..=MAX_HEADERS).map(|i| format!("T-{i}: y\r\n")).collect();
        let wire =
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n{trailer}\r\n");
        assert!(error(&wire).contains("trailer lines"));
    }

    /// Feeds `wire` to a reader that accepts bodies of `limit` bytes; the error's text if
    /// it refuses the response as too large.
    fn refused(wire: &[u8], limit: u64) -> Option<String> {
        let mut reader = ResponseReader::new(Method::Get, limit);
        let mut buf = BytesMut::new();
        for piece in wire.chunks(7) {
            buf.extend_from_slice(piece);
            match reader.read(&mut buf) {
                Ok(Some(_)) => return None,
                Ok(None) => {}
                Err(e) if e.is_too_large() => return Some(e.to_string()),
                Err(e) => panic!("{e}"),
            }
        }
        None
    }

    #[test]
    fn bodies_past_the_limit_are_refused_before_they_are_read() {
        // A length past the limit: refused from the head alone, not one body byte needed.
        let message = refused(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", 10).unwrap();
        assert!(message.contains("Content-Length 11"), "{message}");
        assert!(
            refused(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
                10
            )
            .is_none()
        );
        let huge = b"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n";
        assert!(refused(huge, 64 << 20).is_some());
        let wider = b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n";
        assert!(refused(wider, u64::MAX).unwrap().contains("64 bits"));
        // A HEAD answer announces a length it does not send.
        let mut reader = ResponseReader::new(Method::Head, 10);
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"[..]);
        assert!(reader.read(&mut buf).unwrap().is_some());
    }

    #[test]
    fn chunked_bodies_past_the_limit_are_refused_by_their_total() {
        let chunked = |chunks: &[&str]| {
            let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for chunk in chunks {
                wire.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
            }
            wire.extend_from_slice(b"0\r\n\r\n");
            wire
        };
        assert!(refused(&chunked(&["01234", "56789"]), 10).is_none());
        assert!(refused(&chunked(&["01234", "56789", "x"]), 10).is_some());
        // One chunk announced past the limit is refused before its data comes.
        let message = refused(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n",
            1 << 20,
        );
        assert!(message.unwrap().contains("chunked body"));
    }

    #[test]
    fn endless_small_chunks_keep_only_the_body_in_the_buffer() {
        let mut reader = ResponseReader::new(Method::Get, 1 << 20);
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"[..]);
        let chunk = format!("1;{}\r\na\r\n", "e".repeat(1000)).into_bytes();
        for _ in 0..1000 {
            buf.extend_from_slice(&chunk);
            assert!(reader.read(&mut buf).unwrap().is_none());
        }
        // A megabyte of framing came; the buffer holds the 1000 body bytes.
        assert_eq!(buf.len(), 1000);
        buf.extend_from_slice(b"0\r\n\r\n");
        let body = reader.read(&mut buf).unwrap().unwrap().body;
        assert_eq!((body.len(), buf.len()), (1000, 0));
    }

    #[test]
    fn a_body_ended_by_closing_is_refused_past_the_limit() {
        let mut wire = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        wire.resize(wire.len() + 100, b'a');
        assert!(refused(&wire, 99).unwrap().contains("closing"));
        assert!(refused(&wire, 100).is_none());
    }

    #[test]
    fn endless_interim_answers_take_no_memory() {
        let mut reader = ResponseReader::new(Method::Get, 10);
        let mut buf = BytesMut::new();
        for _ in 0..10_000 {
            buf.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
            assert!(reader.read(&mut buf).unwrap().is_none());
            assert!(buf.is_empty() && !reader.has_final_head());
        }
        buf.extend_from_slice(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 2\r\n\r\n");
        assert!(reader.read(&mut buf).unwrap().is_none());
        assert!(reader.has_final_head());
    }

    #[test]
    fn endless_heads_and_chunk_lines_are_refused() {
        let mut reader = ResponseReader::new(Method::Get, u64::MAX);
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nX: "[..]);
        buf.resize(MAX_HEAD_BYTES + 10, b'a');
        assert!(reader.read(&mut buf).unwrap_err().is_too_large());
        let mut reader = ResponseReader::new(Method::Get, u64::MAX);
        let mut buf =
            BytesMut::from(&b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;"[..]);
        buf.resize(buf.len() + MAX_CHUNK_LINE + 10, b'a');
        assert!(reader.read(&mut buf).is_err());
    }
}
