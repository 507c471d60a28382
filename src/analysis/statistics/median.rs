//! The median of a figure over repetitions, with a distribution-free confidence interval
//! from order statistics (as benchstat gives it): the interval between the k-th smallest
//! and the k-th largest of n values holds the true median with probability
//! 1 − 2·P(Binomial(n, ½) ≤ k − 1), whatever the figure's distribution. 95 % needs at
//! least 6 values; with fewer, the widest interval (smallest to largest) is given with the
//! level it reaches (5 values: 93.75 %), and one value has none.

use statrs::distribution::{Binomial, DiscreteCDF};

/// The level asked of an interval.
pub const LEVEL: f64 = 0.95;

/// A median and, from two values on, its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Median {
    pub median: f64,
    pub interval: Option<Interval>,
}

/// `[low, high]` holds the true median with probability `level`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

/// The median of `values` (the mean of the two middle ones for an even count) with an
/// interval at `level`, or at the highest level the count reaches below it. `None`
/// without values or with one that is not finite.
pub fn median(values: &[f64], level: f64) -> Option<Median> {
    if values.is_empty() || !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0;
    let interval = (n >= 2).then(|| {
        let k = widest_k(n, level);
        Interval {
            low: sorted[k - 1],
            high: sorted[n - k],
            level: coverage(n, k),
        }
    });
    Some(Median { median, interval })
}

/// The probability that the k-th smallest and k-th largest of `n` values enclose the
/// true median.
pub fn coverage(n: usize, k: usize) -> f64 {
    let below = Binomial::new(0.5, n as u64).map_or(1.0, |b| b.cdf(k as u64 - 1));
    (1.0 - 2.0 * below).max(0.0)
}

/// The largest k (the narrowest interval) whose coverage still reaches `level`; 1 (the
/// whole range) when none does.
fn widest_k(n: usize, level: f64) -> usize {
    let mut k = 1;
    while k < n.div_ceil(2) && coverage(n, k + 1) >= level {
        k += 1;
    }
    k
}

/// The fewest values whose whole range reaches `level` (6 for 95 %).
pub fn least_for(level: f64) -> usize {
    (2..)
        .find(|&n| coverage(n, 1) >= level)
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12
    }

    /// Coverages from scipy 1.17.1: `1 - 2 * scipy.stats.binom.cdf(k - 1, n, 0.5)`, and
    /// the largest k whose coverage reaches 0.95.
    #[test]
    fn intervals_agree_with_the_binomial_from_scipy() {
        assert!(close(coverage(2, 1), 0.5));
        assert!(close(coverage(5, 1), 0.9375));
        assert!(close(coverage(6, 1), 0.96875));
        assert!(close(coverage(10, 2), 0.978515625));
        assert!(close(coverage(20, 6), 0.9586105346679688));
        assert_eq!(widest_k(6, LEVEL), 1);
        assert_eq!(widest_k(10, LEVEL), 2);
        assert_eq!(widest_k(20, LEVEL), 6);
        assert_eq!(least_for(LEVEL), 6);
    }

    /// numpy.median of the same values: 14.5.
    #[test]
    fn the_median_and_its_interval_come_from_the_sorted_values() {
        let values = [12.0, 15.0, 11.0, 19.0, 14.0, 13.0, 17.0, 16.0, 18.0, 10.0];
        let m = median(&values, LEVEL).unwrap();
        assert_eq!(m.median, 14.5);
        let i = m.interval.unwrap();
        // k = 2: the second smallest and the second largest.
        assert_eq!((i.low, i.high), (11.0, 18.0));
        assert!(close(i.level, 0.978515625));
    }

    #[test]
    fn fewer_than_six_values_give_the_level_they_reach() {
        let m = median(&[3.0, 1.0, 2.0, 5.0, 4.0], LEVEL).unwrap();
        assert_eq!(m.median, 3.0);
        let i = m.interval.unwrap();
        assert_eq!((i.low, i.high), (1.0, 5.0));
        assert!(close(i.level, 0.9375));
        assert_eq!(median(&[7.0], LEVEL).unwrap().interval, None);
        assert_eq!(median(&[], LEVEL), None);
        assert_eq!(median(&[1.0, f64::NAN], LEVEL), None);
    }
}
