//! Cutting an endless answer into lines, holding at most one line's bytes.
//!
//! A continuous feed is one answer that never ends: it is read a chunk at a time, and
//! only the unfinished line at a chunk's end is kept. A line longer than the bound is
//! an answer the consumer gives up on (a server that sends bytes without newlines would
//! otherwise grow the buffer for ever).

/// A line grew past the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong;

/// The unfinished line between chunks.
#[derive(Debug)]
pub struct Lines {
    partial: Vec<u8>,
    limit: usize,
}

impl Lines {
    /// Lines of at most `limit` bytes (without their newline).
    pub fn new(limit: usize) -> Lines {
        Lines {
            partial: Vec::new(),
            limit,
        }
    }

    /// Hands every line `chunk` finishes to `each` (without `\n` or `\r\n`; empty lines
    /// too: they are heartbeats). Stops at the first line over the bound, and forgets
    /// what it held, so the next answer starts clean.
    pub fn push(&mut self, chunk: &[u8], mut each: impl FnMut(&[u8])) -> Result<(), TooLong> {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (piece, after) = (&rest[..end], &rest[end + 1..]);
            rest = after;
            if self.partial.is_empty() {
                each(self.checked(piece)?);
            } else {
                self.partial.extend_from_slice(piece);
                let line = std::mem::take(&mut self.partial);
                each(self.checked(&line)?);
                // The allocation is kept for the next unfinished line.
                self.partial = line;
                self.partial.clear();
            }
        }
        if self.partial.len() + rest.len() > self.limit {
            self.clear();
            return Err(TooLong);
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    fn checked<'a>(&mut self, line: &'a [u8]) -> Result<&'a [u8], TooLong> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.limit {
            self.clear();
            return Err(TooLong);
        }
        Ok(line)
    }

    /// Forgets the unfinished line (the answer it belonged to is gone).
    pub fn clear(&mut self) {
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]], limit: usize) -> (Vec<String>, Result<(), TooLong>) {
        let mut lines = Lines::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            let pushed = lines.push(chunk, |l| out.push(String::from_utf8_lossy(l).into_owned()));
            if pushed.is_err() {
                return (out, pushed);
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
    fn a_line_over_the_bound_stops_and_is_forgotten() {
        let (lines, result) = lines_of(&[b"ok\n", b"0123456789", b"0123"], 12);
        assert_eq!(lines, ["ok"]);
        assert_eq!(result, Err(TooLong));
        let (_, whole_in_one_chunk) = lines_of(&[b"0123456789abcdef\n"], 12);
        assert_eq!(whole_in_one_chunk, Err(TooLong));
    }

    #[test]
    fn a_line_of_exactly_the_bound_passes() {
        let (lines, result) = lines_of(&[b"012345", b"6789ab\n"], 12);
        assert_eq!((lines.len(), result), (1, Ok(())));
    }
}
