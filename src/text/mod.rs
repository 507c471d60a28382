//! Text from outside made safe to show. A server's words (bodies, reasons, header values,
//! ids and names it reports) reach a message, a report or a file only as a [`Quoted`]: its
//! secrets hidden however the server encoded them, its control characters shown as
//! escapes, on one line, and bounded in length. Strings read back from files pass through
//! [`visible`] where they are kept, and every text sofabench prints passes through
//! [`printable`] at the end, so that nothing chosen outside acts on a terminal.

mod decode;
mod escape;
mod redact;
pub mod sink;

use std::fmt;

pub use escape::{printable, visible};
pub use redact::{HIDDEN, Redact, SHORT, hide};

/// What a server said, made safe to show: secrets hidden, control characters escaped, one
/// line, at most the length it was quoted to (plus an ellipsis when cut).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quoted(String);

impl Quoted {
    /// Bytes read past the quoted length before hiding secrets, so that a secret that
    /// starts before the cut is still recognised (encoded, it can be six times as long).
    const LOOKAHEAD: usize = 8 * 1024;

    /// How much of what a server said a quote of `most` characters reads: the rest
    /// need not be kept for it.
    pub fn window(most: usize) -> usize {
        most.saturating_mul(4).saturating_add(Self::LOOKAHEAD)
    }

    /// The start of `said` (a server's bytes), at most `most` characters of it, with the
    /// secrets of `secrets` hidden.
    pub fn new(said: &[u8], secrets: &(impl Redact + ?Sized), most: usize) -> Quoted {
        let start = String::from_utf8_lossy(&said[..said.len().min(Self::window(most))]);
        // Hidden before trimmed: a secret may start or end with a blank.
        let hidden = secrets.hide_in(&start);
        Quoted(visible(&cut(hidden.trim(), most)).into_owned())
    }

    /// [`Quoted::new`] of a text a server sent.
    pub fn of_text(said: &str, secrets: &(impl Redact + ?Sized), most: usize) -> Quoted {
        Quoted::new(said.as_bytes(), secrets, most)
    }

    /// The longest message a server's words are quoted into (the words themselves are
    /// quoted to fewer characters where they are read).
    pub const MESSAGE: usize = 1000;

    /// `message`, a sentence of sofabench's that quotes a server's words, made safe as a
    /// whole: whatever part of it came from the server, no secret or control character
    /// goes on.
    pub fn message(message: &str, secrets: &(impl Redact + ?Sized)) -> String {
        Quoted::of_text(message, secrets, Self::MESSAGE).into_string()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `text` cut to at most `most` characters, with an ellipsis when it was cut: what a
/// server sent is shown, never all of it.
pub fn cut(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Password(&'static str);

    impl Redact for Password {
        fn secret_forms(&self, forms: &mut Vec<String>) {
            forms.push(self.0.to_string());
        }
    }

    #[test]
    fn a_quote_hides_escapes_and_bounds() {
        let body = "{\"reason\":\"decoded=admin:Pa\\\"ssw0rd12\"}\r\n\u{1b}[2Jverdict: PASSED";
        let quoted = Quoted::new(body.as_bytes(), &Password("Pa\"ssw0rd12"), 300);
        assert_eq!(
            quoted.as_str(),
            "{\"reason\":\"decoded=admin:***\"}\\r\\n\\x1b[2Jverdict: PASSED"
        );
        let long = format!("{}{}", "x".repeat(500), "Pa\"ssw0rd12");
        let quoted = Quoted::of_text(&long, &(), 10);
        assert_eq!(quoted.as_str(), format!("{}…", "x".repeat(10)));
    }

    #[test]
    fn a_secret_across_the_cut_shows_no_part_of_itself() {
        let body = format!("{}Pa%22ssw0rd12", "x".repeat(8));
        let quoted = Quoted::of_text(&body, &Password("Pa\"ssw0rd12"), 12);
        assert_eq!(quoted.as_str(), "xxxxxxxx***");
    }
}
