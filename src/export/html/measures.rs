//! What the charts draw of an interval or a phase, from the result's counts and
//! histograms: rates per second of the interval's own length, failures by kind, and
//! percentiles of several operations' histograms together.

use hdrhistogram::Histogram;

use crate::results::{IntervalOperation, IntervalResult, Latency, histogram, per_second};

/// Failures of one interval (of one operation or of all), by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Failures {
    pub timeouts: u64,
    /// Failures that were 429s.
    pub rate_limited: u64,
    /// Every other failure: error statuses, broken connections, bad answers.
    pub other: u64,
    /// 429s after which the operation was sent again (not failures).
    pub retried_429: u64,
}

impl Failures {
    /// The kinds, as the charts name them, with their counts.
    pub fn kinds(&self) -> [(&'static str, u64); 4] {
        [
            ("timeout", self.timeouts),
            ("429, failed", self.rate_limited),
            ("other failure", self.other),
            ("429, sent again", self.retried_429),
        ]
    }

    pub fn of(op: &IntervalOperation) -> Failures {
        Failures {
            timeouts: op.timeouts,
            rate_limited: op.rate_limited,
            other: op
                .failed
                .saturating_sub(op.timeouts)
                .saturating_sub(op.rate_limited),
            retried_429: op.retried_429,
        }
    }

    pub fn add(&mut self, other: Failures) {
        self.timeouts = self.timeouts.saturating_add(other.timeouts);
        self.rate_limited = self.rate_limited.saturating_add(other.rate_limited);
        self.other = self.other.saturating_add(other.other);
        self.retried_429 = self.retried_429.saturating_add(other.retried_429);
    }
}

/// `count` per second of the interval.
pub fn rate(count: u64, interval: &IntervalResult) -> Option<f64> {
    Some(per_second(count, interval.length_seconds))
}

/// Successful operations of every kind in the interval.
pub fn succeeded(interval: &IntervalResult) -> u64 {
    interval.operations.iter().map(|o| o.succeeded).sum()
}

/// Failures of every kind of operation in the interval.
pub fn failures(interval: &IntervalResult) -> Failures {
    let mut all = Failures::default();
    for op in &interval.operations {
        all.add(Failures::of(op));
    }
    all
}

/// Documents the interval's bulk inserts stored; `None` when the result did not keep
/// them (written before sofabench did).
pub fn bulk_documents(interval: &IntervalResult) -> Option<u64> {
    interval
        .operations
        .iter()
        .filter(|o| o.operation == "bulk_insert")
        .try_fold(0u64, |sum, o| Some(sum.saturating_add(o.documents?)))
}

/// The histograms added into one; unreadable ones (a damaged file) are left out.
pub fn combined<'a>(encoded: impl IntoIterator<Item = &'a str>) -> Histogram<u64> {
    let mut all = crate::metrics::recorder::new_histogram();
    for text in encoded {
        if let Ok(h) = histogram::decode(text) {
            let _ = all.add(&h);
        }
    }
    all
}

/// The response times of the interval's successful operations of every kind.
pub fn interval_histogram(interval: &IntervalResult) -> Histogram<u64> {
    combined(
        interval
            .operations
            .iter()
            .filter(|o| o.succeeded > 0)
            .map(|o| o.histogram.as_str()),
    )
}

/// The latencies of several operations together.
pub fn latency_histogram<'a>(latencies: impl IntoIterator<Item = &'a Latency>) -> Histogram<u64> {
    combined(
        latencies
            .into_iter()
            .filter(|l| l.count > 0)
            .map(|l| l.histogram.as_str()),
    )
}

/// The value at quantile `q` in milliseconds, when the histogram holds enough values for
/// it to be more than its largest: at least 1/(1-q) (2 for p50, 100 for p99, 1,000 for
/// p99.9). With fewer, the "p99.9" of 8 values is only their maximum.
pub fn supported_ms(h: &Histogram<u64>, q: f64) -> Option<f64> {
    let needed = 1.0 / (1.0 - q);
    (h.len() as f64 >= needed - 1e-9).then(|| h.value_at_quantile(q) as f64 / 1_000.0)
}

/// The value at quantile `q` in milliseconds, however few values there are; `None` when
/// there are none.
pub fn quantile_ms(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram_of(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = crate::metrics::recorder::new_histogram();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn a_percentile_needs_enough_values_to_be_more_than_the_maximum() {
        // Values a histogram of 3 significant digits keeps exactly.
        let eight = histogram_of((1..=8).map(|k| k * 100));
        assert_eq!(supported_ms(&eight, 0.5), Some(0.4));
        assert_eq!(supported_ms(&eight, 0.99), None);
        let hundred = histogram_of((1..=100).map(|k| k * 10));
        assert_eq!(supported_ms(&hundred, 0.99), Some(0.99));
        assert_eq!(supported_ms(&hundred, 0.999), None);
        assert_eq!(quantile_ms(&eight, 0.99), Some(0.8));
        assert_eq!(quantile_ms(&histogram_of([]), 0.5), None);
    }

    #[test]
    fn failures_split_by_kind_and_damaged_histograms_are_left_out() {
        let op = IntervalOperation {
            operation: "read".into(),
            succeeded: 1,
            failed: 7,
            timeouts: 2,
            rate_limited: 3,
            retried_429: 4,
            documents: None,
            bytes_sent: None,
            bytes_received: None,
            throughput: 1.0,
            p50_ms: 1.0,
            p99_ms: 1.0,
            histogram: "not a histogram".into(),
        };
        let f = Failures::of(&op);
        assert_eq!(
            (f.timeouts, f.rate_limited, f.other, f.retried_429),
            (2, 3, 2, 4)
        );
        let good = histogram::encode(&histogram_of([5_000]));
        let both = combined([good.as_str(), "HISTFAAAbad"]);
        assert_eq!(both.len(), 1);
    }
}
