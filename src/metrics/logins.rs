//! Logins: how often a run had to get a new session cookie or token, and how long that
//! took. They are outside every operation's times, so they are counted on their own.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::recorder::{new_histogram, record_micros};

/// Logins tried, failed, and the time each took (microseconds), since the tally was last
/// taken.
#[derive(Clone, Debug)]
pub struct LoginTally {
    pub count: u64,
    pub failed: u64,
    pub times: Histogram<u64>,
}

impl Default for LoginTally {
    fn default() -> LoginTally {
        LoginTally {
            count: 0,
            failed: 0,
            times: new_histogram(),
        }
    }
}

impl LoginTally {
    /// One login that took `took` and succeeded or not.
    pub fn record(&mut self, took: Duration, succeeded: bool) {
        self.count += 1;
        self.failed += u64::from(!succeeded);
        record_micros(&mut self.times, took.as_nanos() as u64);
    }

    /// Adds `other`'s logins (another node's, or another machine's).
    pub fn merge(&mut self, other: &LoginTally) {
        self.count = self.count.saturating_add(other.count);
        self.failed = self.failed.saturating_add(other.failed);
        // Both histograms auto-resize: adding cannot fail.
        let _ = self.times.add(&other.times);
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_add_up_with_their_times() {
        let mut a = LoginTally::default();
        a.record(Duration::from_millis(20), true);
        let mut b = LoginTally::default();
        b.record(Duration::from_millis(40), false);
        a.merge(&b);
        assert_eq!((a.count, a.failed, a.times.len()), (2, 1, 2));
        assert!(a.times.max() >= 39_000 && a.times.min() <= 20_100);
        assert!(LoginTally::default().is_empty());
    }
}
