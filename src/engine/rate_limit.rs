//! Answers of 429 Too Many Requests. A server that limits its request rate (Cloudant does,
//! by request class) turns a request away without applying it and says in `Retry-After`
//! when to come back. With `--retry-429` a connection waits that long and sends the
//! operation again; this module decides how long.
//!
//! The header is the server's word, and untrusted: a wait past [`MOST_WAIT`] is cut to
//! it, and a value that is neither a delay nor an HTTP date, or lies more than
//! [`ABSURD`] away, counts as no header. Without one the wait is a backoff that doubles
//! with each retry of the operation, with jitter, up to [`MOST_BACKOFF`].

use std::time::{Duration, SystemTime};

use super::backoff;

/// `--retry-429[=MAX]`: send an operation turned away with a 429 again, at most `most`
/// times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry429 {
    pub most: u32,
}

impl Retry429 {
    /// Retries per operation when the flag gives no number.
    pub const DEFAULT_MOST: u32 = 10;
    /// The most retries per operation a user may ask for: each may wait up to
    /// [`MOST_WAIT`], so more would hold one operation for most of a day.
    pub const LIMIT: u32 = 1_000;

    /// Whether an operation already sent again `retries` times may be sent once more.
    pub fn allows(&self, retries: u32) -> bool {
        retries < self.most
    }
}

/// The longest wait a `Retry-After` is followed for; a longer one is cut to it, so that a
/// server cannot park a run (the phase's end and Ctrl-C cut any wait too).
pub const MOST_WAIT: Duration = Duration::from_secs(60);

/// A `Retry-After` further away than this is not a rate limit but a mistake (or a
/// server that means "never"): it counts as no header.
pub const ABSURD: Duration = Duration::from_secs(24 * 3_600);

/// The backoff before the first retry without a usable `Retry-After`, doubled for each
/// later retry of the same operation.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest backoff.
pub const MOST_BACKOFF: Duration = Duration::from_secs(10);

/// What a `Retry-After` value says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// Delta-seconds: come back after this long.
    After(Duration),
    /// An HTTP date: come back then (Unix seconds).
    At(i64),
    /// Neither.
    Unreadable,
}

impl RetryAfter {
    pub fn parse(value: &str) -> RetryAfter {
        let value = value.trim_matches([' ', '\t']);
        let is_delay = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
        if is_delay {
            // Too many digits for 64 bits is past any sensible delay: absurd, not unreadable.
            let seconds = value.parse().unwrap_or(u64::MAX);
            return RetryAfter::After(Duration::from_secs(seconds));
        }
        match crate::time::http_date::parse(value) {
            Some(at) => RetryAfter::At(at),
            None => RetryAfter::Unreadable,
        }
    }

    /// How long from `now` it asks to wait: a date in the past asks for none. `None`
    /// when it is unreadable.
    fn delay(self, now: SystemTime) -> Option<Duration> {
        match self {
            RetryAfter::After(delay) => Some(delay),
            RetryAfter::At(at) => {
                let now = now
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
                let at = Duration::from_secs(u64::try_from(at).unwrap_or(0));
                Some(at.saturating_sub(now))
            }
            RetryAfter::Unreadable => None,
        }
    }
}

/// How sofabench took what the server asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Waited as asked.
    AsAsked,
    /// Asked for longer than [`MOST_WAIT`]: waited that.
    Capped,
    /// No `Retry-After`: a backoff.
    NoHeader,
    /// Neither a delay nor an HTTP date: a backoff.
    Unreadable,
    /// More than [`ABSURD`] away: a backoff.
    Absurd,
}

/// The wait before an operation turned away with a 429 goes out again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    pub length: Duration,
    pub reading: Reading,
}

/// The wait after a 429 whose `Retry-After` was `retry_after`, for an operation sent
/// again `retries` times before, at wall-clock time `now`; `jitter` (0 to 1) spreads a
/// backoff.
pub fn wait(retry_after: Option<&str>, retries: u32, now: SystemTime, jitter: f64) -> Wait {
    let asked = retry_after.map(|v| RetryAfter::parse(v).delay(now));
    let reading = match asked {
        None => Reading::NoHeader,
        Some(None) => Reading::Unreadable,
        Some(Some(delay)) if delay > ABSURD => Reading::Absurd,
        Some(Some(delay)) if delay > MOST_WAIT => Reading::Capped,
        Some(Some(_)) => Reading::AsAsked,
    };
    let length = match (reading, asked) {
        (Reading::AsAsked, Some(Some(delay))) => delay,
        (Reading::Capped, _) => MOST_WAIT,
        _ => backoff::jittered(
            backoff::doubled(FIRST_BACKOFF, retries, MOST_BACKOFF),
            jitter,
        ),
    };
    Wait { length, reading }
}

/// What a 429 said, for the examples a report shows: the `Retry-After` and, when the
/// operation was sent again, how it was read.
pub fn describe(retry_after: Option<&str>, reading: Option<Reading>) -> String {
    let header = match retry_after {
        Some(value) => format!("Retry-After: {value}"),
        None => "no Retry-After".to_string(),
    };
    let how = match reading {
        None | Some(Reading::AsAsked) => return header,
        Some(Reading::Capped) => {
            let most = MOST_WAIT.as_secs();
            return format!("{header} (past {most} s: waited {most} s, then sent again)");
        }
        Some(Reading::NoHeader) => "backed off, then sent again",
        Some(Reading::Unreadable) => {
            "neither seconds nor an HTTP date: backed off, then sent again"
        }
        Some(Reading::Absurd) => "more than a day away: backed off, then sent again",
    };
    format!("{header} ({how})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-01T00:00:00Z.
    fn new_year() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
    }

    fn wait_for(value: Option<&str>) -> Wait {
        wait(value, 0, new_year(), 1.0)
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn delays_and_dates_are_honoured_up_to_the_cap() {
        assert_eq!(wait_for(Some("5")).length, secs(5));
        assert_eq!(wait_for(Some(" 0 ")).length, secs(0));
        assert_eq!(wait_for(Some("5")).reading, Reading::AsAsked);
        let in_three = "Thu, 01 Jan 2026 00:00:03 GMT";
        assert_eq!(wait_for(Some(in_three)).length, secs(3));
        let past = "Wed, 31 Dec 2025 23:00:00 GMT";
        assert_eq!(wait_for(Some(past)).length, secs(0));
        let capped = wait_for(Some("3600"));
        assert_eq!(
            (capped.length, capped.reading),
            (MOST_WAIT, Reading::Capped)
        );
        let in_an_hour = wait_for(Some("Thu, 01 Jan 2026 01:00:00 GMT"));
        assert_eq!(in_an_hour.length, MOST_WAIT);
    }

    #[test]
    fn garbage_absurd_and_missing_headers_back_off() {
        for (value, reading) in [
            (Some("soon"), Reading::Unreadable),
            (Some("-5"), Reading::Unreadable),
            (Some("1.5"), Reading::Unreadable),
            (Some(""), Reading::Unreadable),
            (Some("99999999999999999999999"), Reading::Absurd),
            (Some("86401"), Reading::Absurd),
            (Some("Fri, 01 Jan 2027 00:00:00 GMT"), Reading::Absurd),
            (None, Reading::NoHeader),
        ] {
            let waited = wait_for(value);
            assert_eq!(waited.reading, reading, "{value:?}");
            assert_eq!(waited.length, FIRST_BACKOFF, "{value:?}");
        }
    }

    #[test]
    fn the_backoff_doubles_per_retry_with_jitter_up_to_its_cap() {
        let at = |retries, jitter| wait(None, retries, new_year(), jitter).length;
        assert_eq!(at(1, 1.0), FIRST_BACKOFF * 2);
        assert_eq!(at(1, 0.0), FIRST_BACKOFF);
        assert_eq!(at(30, 1.0), MOST_BACKOFF);
        assert_eq!(at(30, 0.0), MOST_BACKOFF / 2);
    }

    #[test]
    fn a_retry_budget_allows_that_many() {
        let budget = Retry429 { most: 2 };
        assert!(budget.allows(0) && budget.allows(1) && !budget.allows(2));
    }

    #[test]
    fn examples_name_the_header_and_how_it_was_read() {
        assert_eq!(describe(Some("5"), None), "Retry-After: 5");
        assert_eq!(
            describe(Some("5"), Some(Reading::AsAsked)),
            "Retry-After: 5"
        );
        assert_eq!(describe(None, None), "no Retry-After");
        assert!(describe(Some("3600"), Some(Reading::Capped)).contains("waited 60 s"));
    }
}
