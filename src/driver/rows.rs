//! Counting the rows of a query's answer without building a document tree: the elements
//! of the top-level `"rows":[…]` (views, `_all_docs`), `"docs":[…]` (`_find`) or
//! `"results":[…]` (`_changes`) array.
//!
//! The counter is fed the answer in pieces, as they arrive, and keeps a few bytes of
//! state whatever the answer holds: nesting is a number, a key is compared as it goes.
//! It reads JSON the server wrote; on anything else it gives a count or none, never
//! fails or grows.

/// The top-level keys whose array elements are rows.
const ROW_KEYS: [&[u8]; 3] = [b"rows", b"docs", b"results"];

/// The bytes that matter inside a row, outside its strings: a string's start and the
/// nesting. (A value's start matters only at the rows array's own depth.)
const NESTING: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table
};

/// A row counter over an answer fed to it in pieces.
#[derive(Clone, Debug, Default)]
pub struct RowCounter {
    /// Open objects and arrays around the byte being read.
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The key (a string at depth 1) being read or just read: how many of its bytes
    /// matched each row key so far, `None` for one that cannot match.
    key_match: [Option<usize>; 3],
    /// True between a row key's `:` and its value.
    row_key_colon: bool,
    /// Inside the rows array (at depth 2), and whether an element began in it.
    in_rows: bool,
    element_open: bool,
    rows: u64,
    /// A rows array was closed: the count is final.
    closed: bool,
}

impl RowCounter {
    pub fn new() -> RowCounter {
        RowCounter::default()
    }

    /// Reads the next piece of the answer. Most of an answer is the inside of its rows'
    /// strings, where only a quote or a backslash matters: those stretches are skipped
    /// with `memchr` (many bytes at a time), as are the bytes inside a row that neither
    /// open nor close anything; the rest goes byte by byte.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            if self.closed {
                // The count is final: nothing after the rows array changes it.
                return;
            }
            let rest = &bytes[at..];
            let skip = if self.in_string {
                if self.escaped || self.depth == 1 {
                    0
                } else {
                    memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len())
                }
            } else if self.depth >= 3 {
                rest.iter()
                    .position(|&b| NESTING[usize::from(b)])
                    .unwrap_or(rest.len())
            } else {
                0
            };
            at += skip;
            if let Some(&byte) = bytes.get(at) {
                self.step(byte);
                at += 1;
            }
        }
    }

    /// The rows of a complete rows array; `None` when the answer held none (not an
    /// answer of a query, or cut short).
    pub fn rows(&self) -> Option<u64> {
        self.closed.then_some(self.rows)
    }

    fn step(&mut self, byte: u8) {
        if self.in_string {
            self.string_byte(byte);
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                self.begin_element();
                if self.depth == 1 {
                    self.key_match = [Some(0); 3];
                }
            }
            b'{' | b'[' => {
                self.begin_element();
                let opens_rows = byte == b'[' && self.depth == 1 && self.row_key_colon;
                self.row_key_colon = false;
                self.depth = self.depth.saturating_add(1);
                if opens_rows && !self.closed {
                    self.in_rows = true;
                    self.element_open = false;
                    self.rows = 0;
                }
            }
            b'}' | b']' => {
                if self.in_rows && self.depth == 2 {
                    self.rows += u64::from(self.element_open);
                    self.in_rows = false;
                    self.closed = true;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' => {
                if self.in_rows && self.depth == 2 {
                    self.rows += u64::from(self.element_open);
                    self.element_open = false;
                }
            }
            b':' => {
                if self.depth == 1 {
                    self.row_key_colon = self
                        .key_match
                        .iter()
                        .zip(ROW_KEYS)
                        .any(|(matched, key)| *matched == Some(key.len()));
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                // A number, true, false or null.
                self.begin_element();
                if self.depth == 1 {
                    self.row_key_colon = false;
                }
            }
        }
    }

    /// A value starts: at depth 2 in the rows array, that is a row.
    fn begin_element(&mut self) {
        if self.in_rows && self.depth == 2 {
            self.element_open = true;
        }
    }

    fn string_byte(&mut self, byte: u8) {
        if self.escaped {
            self.escaped = false;
            self.key_match = [None; 3];
            return;
        }
        match byte {
            b'\\' => {
                self.escaped = true;
                self.key_match = [None; 3];
            }
            b'"' => self.in_string = false,
            _ if self.depth == 1 => {
                for (matched, key) in self.key_match.iter_mut().zip(ROW_KEYS) {
                    *matched = matched
                        .filter(|&n| key.get(n) == Some(&byte))
                        .map(|n| n + 1);
                }
            }
            _ => {}
        }
    }
}

/// The rows of a whole answer.
pub fn count(answer: &[u8]) -> Option<u64> {
    let mut counter = RowCounter::new();
    counter.feed(answer);
    counter.rows()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_view_find_and_all_docs_rows() {
        let view = br#"{"total_rows":3,"offset":0,"rows":[
            {"id":"a","key":1,"value":{"x":[1,2]}},
            {"id":"b","key":"x,]}","value":null}
        ]}"#;
        assert_eq!(count(view), Some(2));
        let find = br#"{"docs":[{"_id":"a","n":"rows"},{"_id":"b"},{"_id":"c"}],"bookmark":"g1"}"#;
        assert_eq!(count(find), Some(3));
        assert_eq!(count(br#"{"rows":[]}"#), Some(0));
        assert_eq!(count(br#"{"rows":[{"key":null,"value":42}]}"#), Some(1));
        assert_eq!(count(br#"{"rows":[1, 2 ,3]}"#), Some(3));
        let changes = br#"{"results":[{"seq":"1-g","id":"a","changes":[{"rev":"1-x"}]},
            {"seq":"2-g","id":"b","changes":[{"rev":"1-y"}],"deleted":true}],
            "last_seq":"2-g","pending":0}"#;
        assert_eq!(count(changes), Some(2));
        assert_eq!(count(br#"{"results":[],"last_seq":0}"#), Some(0));
    }

    #[test]
    fn keys_that_only_look_like_rows_are_not_rows() {
        assert_eq!(count(br#"{"rowsx":[1,2],"a":{"rows":[1]}}"#), None);
        assert_eq!(count(br#"{"ro\"ws":[1,2]}"#), None);
        assert_eq!(count(br#"{"x":"rows","rows":[1]}"#), Some(1));
        assert_eq!(count(br#"{"rows":"[1,2]"}"#), None);
    }

    #[test]
    fn an_answer_cut_short_has_no_count() {
        assert_eq!(count(br#"{"rows":[{"a":1},{"#), None);
        assert_eq!(count(b""), None);
    }

    /// The count of `answer` read one byte at a time, none skipped.
    fn stepped(answer: &[u8]) -> Option<u64> {
        let mut counter = RowCounter::new();
        for &byte in answer {
            if !counter.closed {
                counter.step(byte);
            }
        }
        counter.rows()
    }

    proptest::proptest! {
        /// Skipping through strings and rows changes no count, whatever the answer and
        /// wherever it is cut into pieces.
        #[test]
        fn skipping_counts_what_stepping_counts(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "rows", "docs", "\"rows\"",
                    "\"docs\":[", "{\"rows\":[", "1", "null", "abc", "\\\"",
                ]),
                0..60,
            ),
            cut in 0usize..400,
        ) {
            let answer = parts.concat().into_bytes();
            let cut = cut.min(answer.len());
            let mut counter = RowCounter::new();
            counter.feed(&answer[..cut]);
            counter.feed(&answer[cut..]);
            proptest::prop_assert_eq!(counter.rows(), stepped(&answer));
        }
    }

    #[test]
    fn pieces_give_the_count_of_the_whole() {
        let answer = br#"{"total_rows":2,"rows":[{"id":"a\"]","key":1},{"id":"b","key":2}]}"#;
        for cut in 0..answer.len() {
            let mut counter = RowCounter::new();
            counter.feed(&answer[..cut]);
            counter.feed(&answer[cut..]);
            assert_eq!(counter.rows(), Some(2), "cut at {cut}");
        }
    }
}
