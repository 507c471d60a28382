//! Statistics over repetitions (`run --runs N`): how a figure spreads over them, and
//! Welch's t-test of whether two sets of repetitions differ by more than their noise.
//!
//! Welch's t-test compares two means without assuming the two sides vary alike, which
//! two runs on different builds or servers need not; it works from two repetitions per
//! side, where a rank test (Mann–Whitney U) cannot reach p < 0.05 before four per side.
//! The t distribution comes from `statrs`; the test's few lines of arithmetic are here.
//!
//! The distribution-free methods `compare` uses by default are in the submodules: the
//! median with its interval, the Mann–Whitney U test, and Holm's correction.

pub mod holm;
pub mod mann_whitney;
pub mod median;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// A figure over repetitions: their count, mean, sample standard deviation (over n − 1:
/// the repetitions are a sample of the runs that could have been made), and range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// `None` without values. The sd of one value is 0.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        Some(Summary {
            n,
            mean,
            sd: variance(values, mean).sqrt(),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The sample variance (over n − 1); 0 for fewer than two values.
fn variance(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64
}

/// The outcome of Welch's t-test of A against B, as scipy's `ttest_ind(a, b,
/// equal_var=False)` gives it: `t` is positive when A's mean is the larger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub t: f64,
    /// The Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided.
    pub p: f64,
}

/// Why no test could be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTest {
    /// A side has fewer than [`LEAST_REPETITIONS`] values: its noise is unknown.
    TooFew { a: usize, b: usize },
    /// Every repetition of both sides gave the same value (e.g. a percentile at the
    /// histogram's resolution): there is no noise to measure a change against.
    NoSpread,
    /// A value or the arithmetic left the finite numbers (a result edited by hand).
    NotFinite,
}

/// The fewest repetitions per side that Welch's t-test takes (one gives no variance).
pub const LEAST_REPETITIONS: usize = 2;

/// Welch's t-test of `a` against `b`, two-sided.
pub fn welch(a: &[f64], b: &[f64]) -> Result<Welch, NoTest> {
    if a.len() < LEAST_REPETITIONS || b.len() < LEAST_REPETITIONS {
        return Err(NoTest::TooFew {
            a: a.len(),
            b: b.len(),
        });
    }
    if !a.iter().chain(b).all(|v| v.is_finite()) {
        return Err(NoTest::NotFinite);
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mean_a, mean_b) = (a.iter().sum::<f64>() / na, b.iter().sum::<f64>() / nb);
    // Each mean's squared standard error.
    let (se_a, se_b) = (variance(a, mean_a) / na, variance(b, mean_b) / nb);
    let se = se_a + se_b;
    if se == 0.0 {
        return Err(NoTest::NoSpread);
    }
    let t = (mean_a - mean_b) / se.sqrt();
    let df = se * se / (se_a * se_a / (na - 1.0) + se_b * se_b / (nb - 1.0));
    if !t.is_finite() || !df.is_finite() || df <= 0.0 {
        return Err(NoTest::NotFinite);
    }
    let distribution = StudentsT::new(0.0, 1.0, df).map_err(|_| NoTest::NotFinite)?;
    // Twice the lower tail at -|t|: computed directly, so a tiny p keeps its digits.
    let p = (2.0 * distribution.cdf(-t.abs())).min(1.0);
    Ok(Welch { t, df, p })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0)
    }

    /// Two samples, and scipy's t, p and df for them.
    type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64);

    /// Reference values from scipy 1.17.1: `scipy.stats.ttest_ind(a, b, equal_var=False)`
    /// (statistic, pvalue, df).
    #[test]
    fn welch_agrees_with_scipy() {
        let cases: [Case; 6] = [
            (
                &[100.0, 110.0, 90.0],
                &[104.0, 106.0, 105.0],
                -0.8617274844321391,
                0.4781170857274663,
                2.0399960003999604,
            ),
            (
                &[1.0, 1.1, 1.2],
                &[2.0, 2.0, 2.1],
                -13.999999999999998,
                0.0005590795424597675,
                3.200000000000003,
            ),
            (
                &[1000.0, 1020.0, 990.0, 1010.0],
                &[1100.0, 1080.0, 1120.0],
                -7.1813249871753175,
                0.004308505128257384,
                3.2347188264058673,
            ),
            // One side without spread.
            (
                &[5.0, 5.0, 5.0],
                &[6.0, 7.0, 8.0],
                -3.464101615137755,
                0.07417990022744854,
                2.0,
            ),
            (
                &[12.5, 13.1],
                &[12.9, 13.4],
                -0.8962581595302712,
                0.4673275717740964,
                1.9370119729307658,
            ),
            (
                &[3.2, 3.9, 2.8, 3.5, 4.1, 3.3],
                &[4.5, 4.9, 5.3, 4.2, 4.8, 5.0, 4.7],
                -5.526620244442487,
                0.00034518426286152905,
                9.158972748187233,
            ),
        ];
        for (a, b, t, p, df) in cases {
            let test = welch(a, b).unwrap();
            assert!(close(test.t, t), "{a:?} {b:?}: t {} not {t}", test.t);
            assert!(close(test.df, df), "{a:?} {b:?}: df {} not {df}", test.df);
            assert!(
                (test.p - p).abs() <= 1e-9 * p.max(1e-3),
                "{a:?} {b:?}: p {} not {p}",
                test.p
            );
            // The other way round, the same p and the opposite t.
            let back = welch(b, a).unwrap();
            assert!(close(back.t, -t) && close(back.p, test.p));
        }
    }

    #[test]
    fn no_test_without_two_repetitions_a_side_or_any_spread() {
        assert_eq!(
            welch(&[1.0], &[2.0, 3.0]),
            Err(NoTest::TooFew { a: 1, b: 2 })
        );
        assert_eq!(welch(&[], &[]), Err(NoTest::TooFew { a: 0, b: 0 }));
        assert_eq!(welch(&[2.0, 2.0], &[3.0, 3.0]), Err(NoTest::NoSpread));
        assert_eq!(welch(&[2.0, 2.0], &[2.0, 2.0]), Err(NoTest::NoSpread));
        assert_eq!(welch(&[1.0, f64::NAN], &[1.0, 2.0]), Err(NoTest::NotFinite));
        assert_eq!(
            welch(&[f64::MAX, -f64::MAX], &[1.0, 2.0]),
            Err(NoTest::NotFinite)
        );
    }

    /// Reference values from numpy: `mean`, `std(ddof=1)`.
    #[test]
    fn summaries_use_the_sample_standard_deviation() {
        let s = Summary::of(&[3.2, 3.9, 2.8, 3.5, 4.1, 3.3]).unwrap();
        assert!(close(s.mean, 3.466666666666667));
        assert!(close(s.sd, 0.4760952285695233));
        assert_eq!((s.n, s.min, s.max), (6, 2.8, 4.1));
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.mean, one.sd, one.min, one.max), (7.0, 0.0, 7.0, 7.0));
        assert_eq!(Summary::of(&[]), None);
    }
}
