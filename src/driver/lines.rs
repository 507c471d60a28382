//! Cutting an endless body into lines, holding at most one line's bytes.
//!
//! A continuous feed is one answer that never ends: it comes a piece at a time, and only
//! the unfinished line at a piece's end is copied and kept. A line longer than the bound
//! is an answer the reader gives up on (a server that sends bytes without newlines would
//! otherwise grow the buffer for ever).

use bytes::Bytes;

/// A line grew past the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong;

/// A buffer for an unfinished line that grew past this is let go once its line is handed
/// out: an idle feed does not keep the room its longest line took.
const LINE_KEEP: usize = 4 * 1024;

/// Where the line ready to be read is.
#[derive(Clone, Copy, Debug)]
enum Ready {
    None,
    /// Within the current piece.
    InPiece(usize, usize),
    /// In `partial`: it began in an earlier piece.
    Partial,
}

/// The lines of a body given piece by piece.
#[derive(Debug)]
pub struct Lines {
    piece: Bytes,
    /// Where the part of `piece` not cut yet starts.
    at: usize,
    /// A line begun in an earlier piece.
    partial: Vec<u8>,
    ready: Ready,
    limit: usize,
}

impl Lines {
    /// Lines of at most `limit` bytes (without their newline).
    pub fn new(limit: usize) -> Lines {
        Lines {
            piece: Bytes::new(),
            at: 0,
            partial: Vec::new(),
            ready: Ready::None,
            limit,
        }
    }

    /// Takes the body's next piece; [`Lines::cut`] had said there is no line left.
    pub fn feed(&mut self, piece: Bytes) {
        self.piece = piece;
        self.at = 0;
    }

    /// Makes the next line ready for [`Lines::line`]: true if the pieces given so far
    /// finish one (empty lines too: they are heartbeats), false when the next piece is
    /// needed (the piece is let go then, its unfinished line copied). A line past the
    /// bound is refused as soon as it is past, and forgotten.
    pub fn cut(&mut self) -> Result<bool, TooLong> {
        if let Ready::Partial = self.ready {
            self.partial.clear();
            if self.partial.capacity() > LINE_KEEP {
                self.partial = Vec::new();
            }
        }
        self.ready = Ready::None;
        let rest = &self.piece[self.at..];
        let Some(end) = memchr::memchr(b'\n', rest) else {
            // One byte of room past the bound for a `\r` whose `\n` is still to come.
            if self.partial.len() + rest.len() > self.limit.saturating_add(1) {
                return self.refuse();
            }
            self.partial.extend_from_slice(rest);
            // Let go, so that the connection's read buffer takes its allocation back.
            self.feed(Bytes::new());
            return Ok(false);
        };
        let (start, end) = (self.at, self.at + end);
        self.at = end + 1;
        if self.partial.is_empty() {
            self.ready = Ready::InPiece(start, end);
        } else {
            self.partial.extend_from_slice(&self.piece[start..end]);
            self.ready = Ready::Partial;
        }
        if self.line().len() > self.limit {
            return self.refuse();
        }
        Ok(true)
    }

    fn refuse(&mut self) -> Result<bool, TooLong> {
        self.ready = Ready::None;
        self.partial = Vec::new();
        self.feed(Bytes::new());
        Err(TooLong)
    }

    /// The line [`Lines::cut`] made ready, without its `\n` or `\r\n`; empty if none is.
    pub fn line(&self) -> &[u8] {
        let line = match self.ready {
            Ready::None => &[][..],
            Ready::InPiece(start, end) => &self.piece[start..end],
            Ready::Partial => &self.partial[..],
        };
        line.strip_suffix(b"\r").unwrap_or(line)
    }

    /// The room held for an unfinished line.
    pub fn held_bytes(&self) -> usize {
        self.partial.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]], limit: usize) -> (Vec<String>, Result<(), TooLong>) {
        let mut lines = Lines::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            lines.feed(Bytes::copy_from_slice(chunk));
            loop {
                match lines.cut() {
                    Ok(true) => out.push(String::from_utf8_lossy(lines.line()).into_owned()),
                    Ok(false) => break,
                    Err(e) => return (out, Err(e)),
                }
            }
        }
        (out, Ok(()))
    }

    #[test]
    fn lines_across_chunks_come_whole_and_heartbeats_come_empty() {
        let (lines, result) = lines_of(&[b"{\"a\"", b":1}\n\n{\"b\":2}\r", b"\n{\"c\""], 100);
        assert_eq!(result, Ok(()));
        assert_eq!(lines, ["{\"a\":1}", "", "{\"b\":2}"]);
    }

    #[test]
    fn a_line_split_over_many_pieces_comes_whole() {
        let (lines, result) = lines_of(&[b"ab", b"", b"cd", b"e", b"f\nx"], 100);
        assert_eq!(result, Ok(()));
        assert_eq!(lines, ["abcdef"]);
    }

    #[test]
    fn a_line_over_the_bound_stops_and_is_forgotten() {
        let (lines, result) = lines_of(&[b"ok\n", b"0123456789", b"0123"], 12);
        assert_eq!(lines, ["ok"]);
        assert_eq!(result, Err(TooLong));
        let (_, whole_in_one_chunk) = lines_of(&[b"0123456789abcdef\n"], 12);
        assert_eq!(whole_in_one_chunk, Err(TooLong));
        let (_, finished_later) = lines_of(&[b"0123456789", b"abc\n"], 12);
        assert_eq!(finished_later, Err(TooLong));
    }

    #[test]
    fn a_line_of_exactly_the_bound_passes_with_or_without_its_cr() {
        let (lines, result) = lines_of(&[b"012345", b"6789ab\n"], 12);
        assert_eq!((lines.len(), result), (1, Ok(())));
        let (lines, result) = lines_of(&[b"0123456789ab\r", b"\n"], 12);
        assert_eq!((lines, result), (vec!["0123456789ab".to_string()], Ok(())));
    }

    #[test]
    fn a_long_line_handed_out_leaves_no_large_buffer_behind() {
        let long = vec![b'x'; 100_000];
        let mut lines = Lines::new(1 << 20);
        lines.feed(Bytes::copy_from_slice(&long));
        assert_eq!(lines.cut(), Ok(false));
        lines.feed(Bytes::from_static(b"\n"));
        assert_eq!(lines.cut(), Ok(true));
        assert_eq!(lines.line().len(), 100_000);
        assert_eq!(lines.cut(), Ok(false));
        assert!(lines.held_bytes() <= LINE_KEEP, "{}", lines.held_bytes());
    }
}
