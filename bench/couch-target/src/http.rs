//! HTTP/1.1 as couch-target speaks it: request heads parsed in place, answers with a
//! `Content-Length` or (feeds) chunked, and the small text helpers the answers share.

use std::borrow::Cow;
use std::io::Write as _;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Method {
    Get,
    Head,
    Put,
    Post,
    Delete,
    Other,
}

/// A parsed request head; `target` is a range of the connection's input.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: Method,
    pub(crate) target: (usize, usize),
    pub(crate) head_len: usize,
    pub(crate) body_len: usize,
    pub(crate) keep_alive: bool,
}

#[derive(Debug)]
pub(crate) enum Head {
    Incomplete,
    Bad(u16),
    Complete(Request),
}

pub(crate) fn parse_head(input: &[u8]) -> Head {
    let Some(end) = find(input, b"\r\n\r\n") else {
        return Head::Incomplete;
    };
    let head = &input[..end];
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let Some(request_line) = lines.next() else {
        return Head::Bad(400);
    };
    let mut parts = request_line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Head::Bad(400);
    };
    let target_start = target.as_ptr() as usize - input.as_ptr() as usize;
    let method = match method {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"PUT" => Method::Put,
        b"POST" => Method::Post,
        b"DELETE" => Method::Delete,
        _ => Method::Other,
    };
    let mut keep_alive = version == b"HTTP/1.1";
    let mut body_len = 0;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Head::Bad(400);
        };
        let name = &line[..colon];
        let value = trim(&line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            match std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                Some(n) => body_len = n,
                None => return Head::Bad(400),
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                keep_alive = false;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Head::Bad(411);
        }
    }
    Head::Complete(Request {
        method,
        target: (target_start, target_start + target.len()),
        head_len: end + 4,
        body_len,
        keep_alive,
    })
}

pub(crate) fn trim(mut bytes: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = bytes {
        bytes = rest;
    }
    bytes
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        404 => "Object Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        412 => "Precondition Failed",
        411 => "Length Required",
        431 => "Request Header Fields Too Large",
        _ => "Unknown",
    }
}

pub(crate) fn head_only(out: &mut Vec<u8>, status: u16, length: usize, close: bool) {
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\nServer: couch-target\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n{}\r\n",
        reason(status),
        if close { "Connection: close\r\n" } else { "" }
    );
}

pub(crate) fn respond(out: &mut Vec<u8>, status: u16, body: &[u8], close: bool) {
    head_only(out, status, body.len(), close);
    out.extend_from_slice(body);
}

/// JSON-escapes what came in a URL.
pub(crate) fn escape(b: &mut Vec<u8>, text: &[u8]) {
    for &byte in text {
        match byte {
            b'"' => b.extend_from_slice(b"\\\""),
            b'\\' => b.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                let _ = write!(b, "\\u{byte:04x}");
            }
            _ => b.push(byte),
        }
    }
}

/// The head of a chunked answer (a feed whose length is not known when it starts).
pub(crate) fn chunked_head(out: &mut Vec<u8>, status: u16, close: bool) {
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\nServer: couch-target\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n{}\r\n",
        reason(status),
        if close { "Connection: close\r\n" } else { "" }
    );
}

/// Appends `data` as one chunk (nothing when it is empty: an empty chunk ends the body).
pub(crate) fn chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The chunk that ends a chunked body.
pub(crate) fn last_chunk(out: &mut Vec<u8>) {
    out.extend_from_slice(b"0\r\n\r\n");
}

/// The `name=value` pairs of a query string, percent-decoded (`+` is a space).
pub(crate) fn params(query: &[u8]) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split(|&b| b == b'&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = match pair.iter().position(|&b| b == b'=') {
                Some(at) => (&pair[..at], &pair[at + 1..]),
                None => (pair, &b""[..]),
            };
            (decode(name), decode(value))
        })
}

/// Percent-decodes a piece of a URL; a `%` not followed by two hex digits stays as it is.
pub(crate) fn decode(text: &[u8]) -> Cow<'_, str> {
    if !text.iter().any(|&b| b == b'%' || b == b'+') {
        return String::from_utf8_lossy(text);
    }
    let mut bytes = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            text[i],
            text.get(i + 1).and_then(|&b| hex(b)),
            text.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(high), Some(low)) => {
                bytes.push((high * 16 + low) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                bytes.push(b' ');
                i += 1;
            }
            (byte, _, _) => {
                bytes.push(byte);
                i += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\n"),
            Head::Incomplete
        ));
        let Head::Complete(r) = parse_head(b"GET / HTTP/1.0\r\n\r\n") else {
            panic!()
        };
        assert!(!r.keep_alive);
        let Head::Complete(r) = parse_head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n") else {
            panic!()
        };
        assert!(!r.keep_alive);
        assert!(matches!(
            parse_head(b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Head::Bad(411)
        ));
    }

    #[test]
    fn query_strings() {
        let pairs: Vec<(String, String)> =
            params(b"feed=longpoll&doc_ids=%5B%22a%20b%22%5D&x&y=1+2&z=%zz")
                .map(|(n, v)| (n.into_owned(), v.into_owned()))
                .collect();
        assert_eq!(pairs[0], ("feed".into(), "longpoll".into()));
        assert_eq!(pairs[1], ("doc_ids".into(), "[\"a b\"]".into()));
        assert_eq!(pairs[2], ("x".into(), "".into()));
        assert_eq!(pairs[3], ("y".into(), "1 2".into()));
        assert_eq!(pairs[4], ("z".into(), "%zz".into()));
    }
}
