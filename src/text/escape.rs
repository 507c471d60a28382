//! Control characters shown, not obeyed: no byte a server or a file chose may set a
//! terminal's title, clear its screen, move its cursor or forge a line.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` on one line with every control character shown as an escape (`\n`, `\r`, `\t`,
/// `\x1b`, `\u{9b}`), and the invisible characters that reorder or hide text too.
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, needs_escape)
}

/// `text` as sofabench's own reports are made: its line breaks and tabs kept, every other
/// control character shown as an escape. The last guard where text meets a terminal or a
/// text file.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c != '\n' && c != '\t' && needs_escape(c))
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !escape(c) {
            out.push(c);
            continue;
        }
        let _ = match c {
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            '\t' => out.write_str("\\t"),
            c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
            c => write!(out, "\\u{{{:x}}}", c as u32),
        };
    }
    Cow::Owned(out)
}

/// C0 and C1 controls and DEL, and the format characters that hide or reorder text
/// (zero-width ones, bidirectional overrides and isolates, the byte-order mark).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{061C}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let forged = "500\u{1b}]0;pwned\u{7}\r\u{1b}[2Jverdict: PASSED\n\u{9b}31m\u{202e}x";
        let shown = visible(forged);
        assert_eq!(
            shown,
            "500\\x1b]0;pwned\\x07\\r\\x1b[2Jverdict: PASSED\\n\\u{9b}31m\\u{202e}x"
        );
        assert!(!shown.chars().any(needs_escape));
        assert!(matches!(visible("plain é text"), Cow::Borrowed(_)));
    }

    #[test]
    fn printable_keeps_the_lines_and_tabs_of_a_report() {
        assert_eq!(printable("a\tb\nc\u{1b}[2J\r\n"), "a\tb\nc\\x1b[2J\\r\n");
    }
}
