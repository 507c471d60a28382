//! Hiding secrets in what a server sends back, however the server encoded them: the text
//! is decoded, one kind of escape at a time and up to [`LAYERS`] deep (JSON inside JSON,
//! a percent-encoded form quoted in JSON), each secret is looked for in every decoding,
//! and hidden where the text shows it. Matching after decoding, rather than listing encodings, covers quotes,
//! backslashes, `%` and non-ASCII characters alike.

use std::ops::Range;

use super::decode::{Escapes, decode};

/// What a hidden secret is replaced by.
pub const HIDDEN: &str = "***";

/// Layers of escapes looked through.
const LAYERS: usize = 3;

/// Secrets shorter than this (in characters) are hidden only where they stand as a word of
/// their own: hiding every `admin` or `1234` would mangle ordinary text. The run warns of
/// such a secret at its start.
pub const SHORT: usize = 6;

/// Something that holds secrets: it names every form of them that is not an encoding of
/// another (the secret itself; a Basic header's base64, which no decoding undoes).
pub trait Redact {
    fn secret_forms(&self, forms: &mut Vec<String>);

    /// `text` with every one of these secrets hidden.
    fn hide_in(&self, text: &str) -> String {
        let mut forms = Vec::new();
        self.secret_forms(&mut forms);
        hide(text, &forms)
    }
}

/// No secrets at all.
impl Redact for () {
    fn secret_forms(&self, _: &mut Vec<String>) {}
}

impl<T: Redact> Redact for [T] {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        for each in self {
            each.secret_forms(forms);
        }
    }
}

/// The secrets of both.
impl<A: Redact, B: Redact> Redact for (A, B) {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        self.0.secret_forms(forms);
        self.1.secret_forms(forms);
    }
}

impl<T: Redact + ?Sized> Redact for &T {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        (**self).secret_forms(forms);
    }
}

impl<T: Redact + ?Sized> Redact for std::sync::Arc<T> {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        (**self).secret_forms(forms);
    }
}

/// `text` with each of `secrets` replaced by [`HIDDEN`] wherever the text shows it, as
/// it is or encoded.
pub fn hide(text: &str, secrets: &[String]) -> String {
    let secrets: Vec<&str> = secrets
        .iter()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .collect();
    if secrets.is_empty() {
        return text.to_string();
    }
    replace(text, shown_at(text, &secrets, LAYERS))
}

/// Where `text` shows any of `secrets`, itself or after up to `layers` decodings.
fn shown_at(text: &str, secrets: &[&str], layers: usize) -> Vec<Range<usize>> {
    let mut found: Vec<Range<usize>> = secrets
        .iter()
        .flat_map(|secret| occurrences(text, secret))
        .collect();
    if layers == 0 {
        return found;
    }
    for escapes in Escapes::ALL {
        if let Some(decoded) = decode(text, escapes) {
            let inner = shown_at(&decoded.text, secrets, layers - 1);
            found.extend(inner.into_iter().map(|r| decoded.source_of(r)));
        }
    }
    found
}

/// Where `secret` stands in `text`; a short one only as a word of its own.
fn occurrences<'a>(text: &'a str, secret: &'a str) -> impl Iterator<Item = Range<usize>> + 'a {
    let short = secret.chars().count() < SHORT;
    text.match_indices(secret)
        .map(|(at, s)| at..at + s.len())
        .filter(move |r| !short || stands_alone(text, r))
}

fn stands_alone(text: &str, range: &Range<usize>) -> bool {
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    ![before, after]
        .into_iter()
        .flatten()
        .any(char::is_alphanumeric)
}

/// `text` with each of `ranges` (overlapping or not) replaced by [`HIDDEN`].
fn replace(text: &str, mut ranges: Vec<Range<usize>>) -> String {
    if ranges.is_empty() {
        return text.to_string();
    }
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for range in ranges {
        if range.start >= copied {
            out.push_str(&text[copied..range.start]);
            out.push_str(HIDDEN);
            copied = range.end;
        } else if range.end > copied {
            copied = range.end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(text: &str, secret: &str) -> String {
        hide(text, &[secret.to_string()])
    }

    #[test]
    fn a_secret_is_hidden_in_every_encoding_a_server_may_use() {
        let secret = "Pa\"ss%41w:rd@é\\1";
        // A JSON string's content, without its quotes.
        let json = |s: &str| {
            serde_json::to_string(s)
                .unwrap()
                .trim_matches('"')
                .to_string()
        };
        let forms = [
            secret.to_string(),
            json(secret),
            crate::target::encode_path_segment(secret),
            json(&crate::target::encode_path_segment(secret)),
            json(&json(secret)),
            r"Pa\u0022ss\u002541w:rd\u0040\u00e9\\1".to_string(),
            "Pa&quot;ss%41w:rd@&#233;\\1".to_string(),
        ];
        for form in forms {
            let text = format!("{{\"reason\":\"decoded=admin:{form} refused\"}}");
            let shown = hidden(&text, secret);
            assert!(shown.contains("decoded=admin:***"), "{form}: {shown}");
            assert!(!shown.contains("Pa"), "{form}: {shown}");
            assert!(!shown.contains("ss"), "{form}: {shown}");
            assert!(shown.ends_with(" refused\"}"), "{form}: {shown}");
        }
    }

    #[test]
    fn the_rest_of_the_text_stays_as_it_was() {
        let text = r#"{"error":"unauthorized","reason":"Name or password is incorrect.\n"}"#;
        assert_eq!(hidden(text, "sekrit-pw"), text);
        assert_eq!(
            hidden("a sekrit-pw b sekrit-pw", "sekrit-pw"),
            "a *** b ***"
        );
    }

    #[test]
    fn a_short_secret_is_hidden_only_where_it_stands_alone() {
        assert_eq!(hidden("pw=abc; xabcx", "abc"), "pw=***; xabcx");
        assert_eq!(hidden(r#""abc\"""#, "abc\""), r#""***""#);
    }

    #[test]
    fn overlapping_finds_hide_once() {
        let secrets = ["secret-one".to_string(), "one-two-three".to_string()];
        assert_eq!(hide("x secret-one-two-three y", &secrets), "x *** y");
    }
}
