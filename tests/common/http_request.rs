//! Reading one HTTP/1.1 request (with a `Content-Length` body) off a socket, for the
//! test-only servers.

use std::io::BufRead;

/// A request as the test servers need it.
pub struct Request {
    /// `GET /db/doc HTTP/1.1`, with its line end.
    pub line: String,
    /// The header lines, as sent.
    pub headers: String,
    pub body: Vec<u8>,
}

/// The next request, or `None` when the client closed the connection or sent no whole one.
pub fn read(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut length = 0usize;
    let mut headers = String::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return None;
        }
        if header == "\r\n" {
            break;
        }
        headers.push_str(&header);
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        line,
        headers,
        body,
    })
}
