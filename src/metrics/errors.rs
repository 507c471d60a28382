//! Failed operations, counted by what went wrong.

use std::fmt;

/// What made one operation (or, in a bulk insert, one document) fail.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The server answered with this non-success status (never 429: see
    /// [`Failure::of_status`]).
    Status(u16),
    /// The server answered 429 Too Many Requests: it turned the request away unapplied,
    /// limiting its rate (and with `--retry-429`, as often as the operation was allowed
    /// to be sent again).
    RateLimited,
    /// A bulk insert stored the batch but refused this document, with this error word.
    Document(String),
    /// The answer had a success status but not the expected content.
    BadAnswer,
    /// The request did not finish within `--timeout`.
    Timeout,
    /// The connection broke.
    Transport,
    /// The answer (its head or body) was past `--max-response-size`; its connection was
    /// closed without reading the rest.
    TooLarge,
    /// The server could not be reached: no connection could be made, or (under a rate)
    /// the operation fell due while the connection was waiting to reconnect.
    Unreachable,
    /// The run was interrupted (a second Ctrl-C, or the grace after the first ran out)
    /// while the request was in flight.
    Interrupted,
    /// The connection knew no live document to read, update or delete (an earlier
    /// create failed).
    NoDocument,
    /// The answer held a value the run would keep (a revision, an id the server gave)
    /// longer than `--max-kept-value`: the value was not kept.
    ValueTooLong,
    /// A row of a bulk answer for an id the request did not hold; counts rows.
    UnknownRow,
}

impl Failure {
    /// The failure of an answer with the non-success `status`: a 429 is a kind of its own,
    /// since a server that limits its rate is not failing.
    pub fn of_status(status: u16) -> Failure {
        match status {
            429 => Failure::RateLimited,
            status => Failure::Status(status),
        }
    }

    /// Whether this is the failure of one document in a bulk answer, not of a whole
    /// operation.
    pub fn is_document(&self) -> bool {
        matches!(self, Failure::Document(_))
    }

    /// Whether this counts documents (or a bulk answer's rows), not operations: a
    /// refused document, or a row for a document never sent.
    pub fn counts_documents(&self) -> bool {
        matches!(self, Failure::Document(_) | Failure::UnknownRow)
    }

    /// The failure of a document the server refused with the error `word`. The word is
    /// the server's to choose, so one that is not a short plain word (`conflict`,
    /// `forbidden`) becomes `other`: a server cannot fill a report with its own text.
    pub fn document(word: &str) -> Failure {
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if (1..=Self::WORD_LENGTH).contains(&word.len()) && word.chars().all(plain) {
            Failure::Document(word.to_string())
        } else {
            Failure::Document(OTHER_WORD.to_string())
        }
    }

    /// The longest error word kept as the server wrote it.
    pub const WORD_LENGTH: usize = 32;

    /// Distinct document error words kept apart in one table; the rest are counted
    /// together as `doc:other`, so no server can make the tables grow without end.
    pub const DOCUMENT_WORDS: usize = 16;
}

/// The word of the document failures counted together once there are too many words.
const OTHER_WORD: &str = "other";

/// `failure`, or `doc:other` when it is a document failure with a word not among
/// `known` and `known` already holds [`Failure::DOCUMENT_WORDS`] words.
fn within_words<'a>(failure: Failure, known: impl Iterator<Item = &'a Failure>) -> Failure {
    if !failure.is_document() {
        return failure;
    }
    let mut words = 0;
    for kind in known.filter(|kind| kind.is_document()) {
        if *kind == failure {
            return failure;
        }
        words += 1;
    }
    if words < Failure::DOCUMENT_WORDS {
        failure
    } else {
        Failure::Document(OTHER_WORD.to_string())
    }
}

impl Failure {
    /// The failure a result file names `name` (as [`Display`](fmt::Display) writes it).
    pub fn named(name: &str) -> Option<Failure> {
        Some(match name {
            "bad_answer" => Failure::BadAnswer,
            "timeout" => Failure::Timeout,
            "transport" => Failure::Transport,
            "too_large" => Failure::TooLarge,
            "unreachable" => Failure::Unreachable,
            "interrupted" => Failure::Interrupted,
            "no_document" => Failure::NoDocument,
            "value_too_long" => Failure::ValueTooLong,
            "unknown_row" => Failure::UnknownRow,
            "rate_limited" => Failure::RateLimited,
            _ => match name.strip_prefix("doc:") {
                Some(word) => Failure::document(word),
                // Files written before the kind existed name a 429 by its status.
                None => Failure::of_status(name.parse().ok()?),
            },
        })
    }
}

/// A failure kind named `name` as the reports show it to people: a 429's status stands
/// beside its name (`rate_limited (429)`), which a result file keeps plain.
pub fn label(name: &str) -> String {
    if Failure::named(name) == Some(Failure::RateLimited) {
        format!("{} (429)", Failure::RateLimited)
    } else {
        name.to_string()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Status(code) => write!(f, "{code}"),
            Failure::Document(word) => write!(f, "doc:{word}"),
            Failure::BadAnswer => f.write_str("bad_answer"),
            Failure::Timeout => f.write_str("timeout"),
            Failure::Transport => f.write_str("transport"),
            Failure::TooLarge => f.write_str("too_large"),
            Failure::Unreachable => f.write_str("unreachable"),
            Failure::Interrupted => f.write_str("interrupted"),
            Failure::NoDocument => f.write_str("no_document"),
            Failure::ValueTooLong => f.write_str("value_too_long"),
            Failure::UnknownRow => f.write_str("unknown_row"),
            Failure::RateLimited => f.write_str("rate_limited"),
        }
    }
}

/// Counts of failures by kind; tiny, since a healthy run has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailureCounts {
    counts: Vec<(Failure, u64)>,
}

impl FailureCounts {
    pub fn add(&mut self, failure: Failure, n: u64) {
        if n == 0 {
            return;
        }
        let failure = within_words(failure, self.counts.iter().map(|(f, _)| f));
        match self.counts.iter_mut().find(|(f, _)| *f == failure) {
            Some((_, count)) => *count = count.saturating_add(n),
            None => self.counts.push((failure, n)),
        }
    }

    pub fn merge(&mut self, other: &FailureCounts) {
        for (failure, n) in &other.counts {
            self.add(failure.clone(), *n);
        }
    }

    pub fn total(&self) -> u64 {
        self.counts
            .iter()
            .fold(0, |sum, (_, n)| sum.saturating_add(*n))
    }

    /// Failures of whole operations: all but those of single documents in a bulk answer,
    /// which count documents, not requests.
    pub fn of_operations(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(f, _)| !f.counts_documents())
            .fold(0, |sum, (_, n)| sum.saturating_add(*n))
    }

    /// The counts in the order the kinds were first met.
    pub fn iter(&self) -> impl Iterator<Item = (&Failure, u64)> {
        self.counts.iter().map(|(f, n)| (f, *n))
    }

    /// Forgets every count, keeping the memory for the next ones.
    pub fn clear(&mut self) {
        self.counts.clear();
    }

    /// The counts, most frequent first.
    pub fn sorted(&self) -> Vec<(Failure, u64)> {
        let mut sorted = self.counts.clone();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        sorted
    }
}

/// A few examples per failure kind of what the server said, so that a user sees why
/// (a 400's reason, a 500's error) without putting a proxy in between.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailureSamples {
    samples: Vec<(Failure, Vec<String>)>,
}

impl FailureSamples {
    /// Examples kept per failure kind.
    pub const PER_KIND: usize = 3;
    /// Characters kept of one example.
    pub const LENGTH: usize = 300;

    /// Whether another example of `failure` would be kept: lets a caller skip building it.
    pub fn wants(&self, failure: &Failure) -> bool {
        self.samples
            .iter()
            .find(|(f, _)| f == failure)
            .is_none_or(|(_, kept)| kept.len() < Self::PER_KIND)
    }

    /// Keeps `text` (cut to [`Self::LENGTH`] characters, control characters escaped: a
    /// result file read back is as untrusted as a server) as an example of `failure`,
    /// unless there are enough, or the same text is kept already. What a run keeps comes
    /// as a [`Quoted`](crate::text::Quoted), its secrets hidden.
    pub fn add(&mut self, failure: &Failure, text: &str) {
        if !self.wants(failure) {
            return;
        }
        let failure = &within_words(failure.clone(), self.samples.iter().map(|(f, _)| f));
        if !self.wants(failure) {
            return;
        }
        let text = crate::text::visible(&crate::text::cut(text.trim(), Self::LENGTH)).into_owned();
        match self.samples.iter_mut().find(|(f, _)| f == failure) {
            Some((_, kept)) if kept.contains(&text) => {}
            Some((_, kept)) => kept.push(text),
            None => self.samples.push((failure.clone(), vec![text])),
        }
    }

    pub fn merge(&mut self, other: &FailureSamples) {
        for (failure, texts) in &other.samples {
            for text in texts {
                self.add(failure, text);
            }
        }
    }

    /// The examples, by failure kind.
    pub fn sorted(&self) -> Vec<(Failure, Vec<String>)> {
        let mut sorted = self.samples.clone();
        sorted.sort();
        sorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        let kinds = [
            Failure::Status(413),
            Failure::Document("conflict".to_string()),
            Failure::BadAnswer,
            Failure::Timeout,
            Failure::Transport,
            Failure::TooLarge,
            Failure::Unreachable,
            Failure::Interrupted,
            Failure::NoDocument,
            Failure::RateLimited,
            Failure::ValueTooLong,
            Failure::UnknownRow,
        ];
        for kind in kinds {
            assert_eq!(
                Failure::named(&kind.to_string()),
                Some(kind.clone()),
                "{kind}"
            );
        }
        assert_eq!(Failure::TooLarge.to_string(), "too_large");
        assert_eq!(Failure::of_status(429).to_string(), "rate_limited");
        assert_eq!(Failure::named("429"), Some(Failure::RateLimited));
        assert_eq!(Failure::of_status(503), Failure::Status(503));
    }

    #[test]
    fn a_server_cannot_grow_the_document_words_without_end() {
        assert_eq!(Failure::document("conflict").to_string(), "doc:conflict");
        assert_eq!(Failure::document(&"x".repeat(33)).to_string(), "doc:other");
        assert_eq!(Failure::document("no spaces").to_string(), "doc:other");
        assert_eq!(Failure::document("").to_string(), "doc:other");
        let mut counts = FailureCounts::default();
        let mut samples = FailureSamples::default();
        for i in 0..1000 {
            let word = Failure::document(&format!("w{i}"));
            counts.add(word.clone(), 1);
            samples.add(&word, "text");
        }
        counts.add(Failure::document("w3"), 1);
        counts.add(Failure::Status(500), 1);
        assert_eq!(counts.iter().count(), Failure::DOCUMENT_WORDS + 2);
        assert_eq!(counts.total(), 1002);
        let other = Failure::document("other");
        let of = |f: &Failure| counts.iter().find(|(k, _)| *k == f).map(|(_, n)| n);
        assert_eq!(of(&other), Some(1000 - 16));
        assert_eq!(of(&Failure::document("w3")), Some(2));
        assert_eq!(samples.sorted().len(), Failure::DOCUMENT_WORDS + 1);
    }

    #[test]
    fn samples_are_few_short_and_distinct() {
        let mut samples = FailureSamples::default();
        let bad = Failure::Status(400);
        for _ in 0..2 {
            samples.add(
                &bad,
                r#"{"error":"bad_request","reason":"invalid UTF-8 JSON"}"#,
            );
        }
        samples.add(&bad, &"x".repeat(10_000));
        samples.add(&bad, &String::from_utf8_lossy(b"\xff\xfe not text"));
        samples.add(&bad, "a fourth one is not kept");
        let sorted = samples.sorted();
        assert_eq!(sorted.len(), 1);
        let kept = &sorted[0].1;
        assert_eq!(kept.len(), FailureSamples::PER_KIND);
        assert!(kept[0].contains("invalid UTF-8 JSON"));
        assert_eq!(kept[1].chars().count(), FailureSamples::LENGTH + 1);
        let mut merged = FailureSamples::default();
        merged.add(&Failure::Timeout, "t");
        merged.merge(&samples);
        assert_eq!(merged.sorted().len(), 2);
    }
}
