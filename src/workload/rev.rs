//! Document revisions (`_rev`), kept compactly: the run remembers one per live document.

use std::fmt::Write as _;

/// A CouchDB revision such as `3-917fa2381192822767f010b95b45325b`.
///
/// CouchDB and PouchDB Server write the part after the dash as 32 hex digits; those are
/// stored as 16 bytes. Anything else a compatible server invents is kept as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rev {
    Hex { generation: u32, digest: [u8; 16] },
    Text(Box<str>),
}

impl Rev {
    /// Reads a revision; `None` when it does not start with `<generation>-`.
    pub fn parse(text: &str) -> Option<Rev> {
        let (generation, rest) = text.split_once('-')?;
        let generation: u32 = generation.parse().ok()?;
        if rest.len() == 32
            && let Some(digest) = parse_hex_16(rest)
        {
            return Some(Rev::Hex { generation, digest });
        }
        Some(Rev::Text(text.into()))
    }

    /// The revision's generation: 1 when created, one more with every update.
    pub fn generation(&self) -> u32 {
        match self {
            Rev::Hex { generation, .. } => *generation,
            Rev::Text(text) => text
                .split_once('-')
                .and_then(|(g, _)| g.parse().ok())
                .unwrap_or(1),
        }
    }

    /// The length of the revision's text form, bytes.
    pub fn text_len(&self) -> usize {
        match self {
            Rev::Hex { generation, .. } => generation.checked_ilog10().unwrap_or(0) as usize + 34,
            Rev::Text(text) => text.len(),
        }
    }

    /// Appends the revision's text form to `out`.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Rev::Hex { generation, digest } => {
                let _ = write!(out, "{generation}-");
                for byte in digest {
                    let _ = write!(out, "{byte:02x}");
                }
            }
            Rev::Text(text) => out.push_str(text),
        }
    }
}

fn parse_hex_16(text: &str) -> Option<[u8; 16]> {
    let mut digest = [0u8; 16];
    // Invalid digits are collected and checked once, so the loop has no branches: every
    // read and write parses a revision.
    let mut invalid = 0u8;
    for (byte, pair) in digest.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        let (high, low) = (HEX[pair[0] as usize], HEX[pair[1] as usize]);
        invalid |= high | low;
        *byte = high << 4 | (low & 0x0f);
    }
    (invalid & INVALID == 0).then_some(digest)
}

/// Marks a byte that is not a lowercase hex digit in [`HEX`].
const INVALID: u8 = 0x80;

/// Each byte's value as a lowercase hex digit, or [`INVALID`]. Lowercase only, so that
/// writing the digest back gives the same text.
const HEX: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let mut out = String::new();
        Rev::parse(text).unwrap().write_to(&mut out);
        out
    }

    #[test]
    fn hex_revisions_are_compact_and_round_trip() {
        let text = "12-917fa2381192822767f010b95b45325b";
        let rev = Rev::parse(text).unwrap();
        assert!(matches!(rev, Rev::Hex { generation: 12, .. }));
        assert_eq!(round_trip(text), text);
        assert_eq!(rev.text_len(), text.len());
        assert_eq!(Rev::parse(&text[1..]).unwrap().text_len(), text.len() - 1);
        assert!(std::mem::size_of::<Rev>() <= 24);
    }

    #[test]
    fn other_revisions_are_kept_as_text() {
        for text in ["1-ABCDEF", "2-917FA2381192822767F010B95B45325B", "3-x"] {
            let rev = Rev::parse(text).unwrap();
            assert!(matches!(rev, Rev::Text(_)), "{text}");
            assert_eq!(round_trip(text), text);
        }
        assert_eq!(Rev::parse("7-zz").unwrap().generation(), 7);
        assert!(Rev::parse("nodash").is_none());
        assert!(Rev::parse("x-abc").is_none());
    }
}
