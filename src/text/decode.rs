//! One layer of decoding of a server's text, remembering where each decoded byte came
//! from: a secret is looked for in what the text says, and hidden where the text shows it.
//! Each layer undoes one kind of escape: a JSON string that quotes `%41` still means `%41`.

use std::ops::Range;

/// The kinds of escape a server's text may carry a secret in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escapes {
    /// JSON string escapes: `\"`, `\\`, `\n`, `\uXXXX` and the rest.
    Json,
    /// Percent-encoding, `%XX`, several of them for one UTF-8 character.
    Percent,
    /// HTML character references: `&quot;`, `&#NN;`, `&#xHH;` and the like.
    Html,
}

impl Escapes {
    pub const ALL: [Escapes; 3] = [Escapes::Json, Escapes::Percent, Escapes::Html];
}

/// A text with one kind of escape decoded, and for each of its bytes the bytes of the
/// source it came from.
pub struct Decoded {
    pub text: String,
    pub origin: Vec<Range<usize>>,
}

impl Decoded {
    /// The range of the source that the decoded bytes `range` came from.
    pub fn source_of(&self, range: Range<usize>) -> Range<usize> {
        self.origin[range.start].start..self.origin[range.end - 1].end
    }
}

/// `source` with its `escapes` decoded; `None` when it has none.
pub fn decode(source: &str, escapes: Escapes) -> Option<Decoded> {
    let mut decoded = Decoded {
        text: String::with_capacity(source.len()),
        origin: Vec::with_capacity(source.len()),
    };
    let mut changed = false;
    let mut at = 0;
    while at < source.len() {
        let rest = &source[at..];
        let (c, length) = match escape_at(rest, escapes) {
            Some(found) => {
                changed = true;
                found
            }
            None => {
                let c = rest.chars().next().expect("at is below the length");
                (c, c.len_utf8())
            }
        };
        for _ in 0..c.len_utf8() {
            decoded.origin.push(at..at + length);
        }
        decoded.text.push(c);
        at += length;
    }
    changed.then_some(decoded)
}

/// The character an escape of `escapes` at the start of `text` stands for, and the
/// escape's length.
fn escape_at(text: &str, escapes: Escapes) -> Option<(char, usize)> {
    match (text.as_bytes()[0], escapes) {
        (b'\\', Escapes::Json) => json_escape(text),
        (b'%', Escapes::Percent) => percent_escape(text),
        (b'&', Escapes::Html) => character_reference(text),
        _ => None,
    }
}

/// A JSON string escape: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX` (a
/// surrogate pair as one character).
fn json_escape(text: &str) -> Option<(char, usize)> {
    let simple = match *text.as_bytes().get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(text),
        _ => return None,
    };
    Some((simple, 2))
}

fn unicode_escape(text: &str) -> Option<(char, usize)> {
    let unit = hex(text.get(2..6)?)?;
    if (0xD800..0xDC00).contains(&unit) {
        let low = text
            .get(6..8)
            .filter(|u| *u == "\\u")
            .and_then(|_| hex(text.get(8..12)?))
            .filter(|low| (0xDC00..0xE000).contains(low));
        if let Some(low) = low {
            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            return Some((char::from_u32(code)?, 12));
        }
    }
    Some((char::from_u32(unit).unwrap_or('\u{FFFD}'), 6))
}

/// A percent-encoded character: one `%XX`, or the several that make one UTF-8 character.
/// Bytes that make no character are left as they are: `%aa` before an `a` is more likely
/// text than a broken escape.
fn percent_escape(text: &str) -> Option<(char, usize)> {
    let byte = |i: usize| -> Option<u8> {
        let triplet = text.get(i * 3..i * 3 + 3)?;
        let value = hex(triplet.strip_prefix('%')?)?;
        u8::try_from(value).ok()
    };
    let first = byte(0)?;
    let width = match first {
        0x00..=0x7F => return Some((char::from(first), 3)),
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let mut bytes = vec![first];
    for i in 1..width {
        bytes.push(byte(i).filter(|b| b & 0xC0 == 0x80)?);
    }
    let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
    Some((c, width * 3))
}

/// An HTML character reference: `&quot;`, `&amp;`, `&lt;`, `&gt;`, `&apos;`, `&#NN;`, `&#xHH;`.
fn character_reference(text: &str) -> Option<(char, usize)> {
    let end = text.bytes().take(12).position(|b| b == b';')?;
    let name = &text[1..end];
    let c = match name {
        "quot" => '"',
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "apos" => '\'',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(digits) => hex(digits)?,
                None => number.parse().ok().filter(|_| !number.is_empty())?,
            };
            char::from_u32(code).unwrap_or('\u{FFFD}')
        }
    };
    Some((c, end + 1))
}

/// The value of 1 to 6 hexadecimal digits.
fn hex(digits: &str) -> Option<u32> {
    let plain = !digits.is_empty() && digits.len() <= 6;
    if plain && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(digits, 16).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `source` with each kind of escape decoded in turn.
    fn text(source: &str) -> String {
        Escapes::ALL
            .iter()
            .fold(source.to_string(), |text, escapes| {
                decode(&text, *escapes).map(|d| d.text).unwrap_or(text)
            })
    }

    #[test]
    fn decodes_each_kind_of_escape() {
        assert_eq!(text(r#"Pa\"ss\\w\/d\n"#), "Pa\"ss\\w/d\n");
        assert_eq!(
            text(r"\u00e9t\u00C9 \ud83d\ude00 \ud83d"),
            "étÉ 😀 \u{FFFD}"
        );
        assert_eq!(text("a%20b%2fc%C3%A9%e2%82%ac"), "a b/cé€");
        assert_eq!(text("%ff%C3 %zz %4 %aa"), "%ff%C3 %zz %4 %aa");
        assert_eq!(
            text("&quot;x&amp;&#39;&#x41;&lt;&bogus; &"),
            "\"x&'A<&bogus; &"
        );
        assert!(decode("nothing to decode", Escapes::Json).is_none());
        let quoted_percent = decode(r#"\"%41\""#, Escapes::Json).unwrap();
        assert_eq!(quoted_percent.text, "\"%41\"");
    }

    #[test]
    fn every_decoded_byte_knows_its_source() {
        let source = r#"a\"é%C3%A9"#;
        let decoded = decode(source, Escapes::Json).unwrap();
        assert_eq!(decoded.text, "a\"é%C3%A9");
        assert_eq!(decoded.origin.len(), decoded.text.len());
        let quote = decoded.text.find('"').unwrap();
        assert_eq!(&source[decoded.source_of(quote..quote + 1)], "\\\"");
        let decoded = decode(source, Escapes::Percent).unwrap();
        assert_eq!(decoded.text, "a\\\"éé");
        let last = decoded.text.len();
        assert_eq!(&source[decoded.source_of(last - 2..last)], "%C3%A9");
    }
}
