//! Failed operations, counted by what went wrong.

use std::fmt;

/// What made one operation (or, in a bulk insert, one document) fail.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The server answered with this non-success status.
    Status(u16),
    /// A bulk insert stored the batch but refused this document, with this error word.
    Document(String),
    /// The answer had a success status but not the expected content.
    BadAnswer,
    /// The request did not finish within `--timeout`.
    Timeout,
    /// The connection broke or could not be made.
    Transport,
    /// The connection knew no live document to read, update or delete (an earlier
    /// create failed).
    NoDocument,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Status(code) => write!(f, "{code}"),
            Failure::Document(word) => write!(f, "doc:{word}"),
            Failure::BadAnswer => f.write_str("bad_answer"),
            Failure::Timeout => f.write_str("timeout"),
            Failure::Transport => f.write_str("transport"),
            Failure::NoDocument => f.write_str("no_document"),
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
        match self.counts.iter_mut().find(|(f, _)| *f == failure) {
            Some((_, count)) => *count += n,
            None => self.counts.push((failure, n)),
        }
    }

    pub fn merge(&mut self, other: &FailureCounts) {
        for (failure, n) in &other.counts {
            self.add(failure.clone(), *n);
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// The counts, most frequent first.
    pub fn sorted(&self) -> Vec<(Failure, u64)> {
        let mut sorted = self.counts.clone();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        sorted
    }
}
