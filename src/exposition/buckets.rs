//! Latencies as a Prometheus histogram: counts at fixed bounds, made from the run's
//! HdrHistograms one interval at a time.
//!
//! A histogram rather than a summary: buckets add up over any time window
//! (`rate(…[5m])`) and over every node of a run (`sum by (le)`), and
//! `histogram_quantile` then estimates any percentile; a summary's quantiles can be
//! neither added nor taken over another window. The price is that the estimate is only
//! as fine as the bounds (1, 2 and 5 per decade, from 100 µs to 60 s): the exact
//! percentiles are in the report and the result file, and the last interval's p50 and
//! p99 are exported as they are (see `render`).

use hdrhistogram::Histogram;

/// The buckets' upper bounds, microseconds.
pub const BOUNDS_MICROS: [u64; 19] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 30_000_000, 60_000_000,
];

/// Observations counted per bucket since the start, with their count and sum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    /// Observations at most each bound and above the one before; the last entry holds
    /// those above every bound.
    within: [u64; BOUNDS_MICROS.len() + 1],
    count: u64,
    /// Of every observation's value, microseconds.
    sum_micros: u64,
}

impl Buckets {
    /// Adds the observations of `histogram` (microseconds). Each recorded value stands
    /// for its range of equivalent values, taken at its middle as HdrHistogram's own
    /// mean does: the buckets are exact to the histogram's three significant digits.
    pub fn add(&mut self, histogram: &Histogram<u64>) {
        for recorded in histogram.iter_recorded() {
            let value = histogram.median_equivalent(recorded.value_iterated_to());
            let n = recorded.count_at_value();
            let bucket = BOUNDS_MICROS.partition_point(|bound| *bound < value);
            self.within[bucket] = self.within[bucket].saturating_add(n);
            self.count = self.count.saturating_add(n);
            self.sum_micros = self.sum_micros.saturating_add(value.saturating_mul(n));
        }
    }

    /// Observations within each bound (not above the bound before), in the order of
    /// [`BOUNDS_MICROS`].
    pub fn per_bound(&self) -> &[u64] {
        &self.within[..BOUNDS_MICROS.len()]
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum_micros(&self) -> u64 {
        self.sum_micros
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::recorder::new_histogram;

    #[test]
    fn values_fall_in_the_first_bucket_whose_bound_they_do_not_pass() {
        let mut histogram = new_histogram();
        for micros in [50, 100, 101, 999, 1_000, 45_000, 90_000_000] {
            histogram.record(micros).unwrap();
        }
        let mut buckets = Buckets::default();
        buckets.add(&histogram);
        buckets.add(&histogram);
        let per_bound = buckets.per_bound();
        assert_eq!(per_bound[0], 4, "50 and 100 µs, twice");
        assert_eq!(per_bound[1], 2, "101 µs");
        assert_eq!(per_bound[3], 4, "999 and 1,000 µs");
        assert_eq!(per_bound[8], 2, "45 ms in the 50 ms bucket");
        assert_eq!(
            per_bound.iter().sum::<u64>(),
            12,
            "90 s is above every bound"
        );
        assert_eq!(buckets.count(), 14);
        let exact: u64 = 2 * (50 + 100 + 101 + 999 + 1_000 + 45_000 + 90_000_000);
        let sum = buckets.sum_micros();
        assert!(
            sum.abs_diff(exact) * 1_000 <= exact,
            "{sum} against {exact}"
        );
    }
}
