//! The Mann–Whitney U test of two sets of repetitions, two-sided: whether one side's
//! values tend to be larger than the other's, from their ranks alone, so that no
//! distribution is assumed (latency percentiles over repetitions are not normal).
//!
//! Without ties and with at most [`MOST_EXACT`] values a side, the p-value comes from the
//! exact distribution of U (each arrangement of the ranks equally likely); with ties, or
//! more values, from the normal approximation with the tie correction and the continuity
//! correction. Both agree with scipy's `mannwhitneyu(a, b, method="exact")` and
//! `method="asymptotic"` respectively.
//!
//! With n values a side and no ties, the smallest two-sided p there can be is
//! 2 / C(2n, n): [`smallest_p`] and [`least_per_side`] say how many repetitions a
//! comparison needs before a change can pass a threshold at all.

use statrs::distribution::{ContinuousCDF, Normal};

use super::{LEAST_REPETITIONS, NoTest};

/// The most values a side for the exact distribution (C(100, 50) still fits an i128).
pub const MOST_EXACT: usize = 50;

/// How the p-value was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Exact,
    /// Normal approximation, tie- and continuity-corrected.
    Normal,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// U of A (scipy's `statistic`) and of B: U of A is the larger when A's values tend
    /// to be the larger.
    pub u_a: f64,
    pub u_b: f64,
    /// Two-sided.
    pub p: f64,
    pub method: Method,
}

/// The U test of `a` against `b`.
pub fn test(a: &[f64], b: &[f64]) -> Result<MannWhitney, NoTest> {
    let (na, nb) = (a.len(), b.len());
    if na < LEAST_REPETITIONS || nb < LEAST_REPETITIONS {
        return Err(NoTest::TooFew { a: na, b: nb });
    }
    if !a.iter().chain(b).all(|v| v.is_finite()) {
        return Err(NoTest::NotFinite);
    }
    let (rank_sum_a, ties) = ranks(a, b);
    let u_a = rank_sum_a - (na * (na + 1)) as f64 / 2.0;
    let u_b = (na * nb) as f64 - u_a;
    let big = u_a.max(u_b);
    let (p, method) = if ties.is_empty() && na.max(nb) <= MOST_EXACT {
        (exact_p(big as usize, na, nb), Method::Exact)
    } else {
        (normal_p(big, na, nb, &ties)?, Method::Normal)
    };
    Ok(MannWhitney {
        u_a,
        u_b,
        p: p.min(1.0),
        method,
    })
}

/// A's rank sum over both sides (tied values share their mean rank), and the size of
/// each group of ties.
fn ranks(a: &[f64], b: &[f64]) -> (f64, Vec<usize>) {
    let mut all: Vec<(f64, bool)> = a.iter().map(|v| (*v, true)).collect();
    all.extend(b.iter().map(|v| (*v, false)));
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut sum, mut ties, mut start) = (0.0, Vec::new(), 0);
    while start < all.len() {
        let end = start
            + all[start..]
                .iter()
                .take_while(|v| v.0 == all[start].0)
                .count();
        // Ranks start + 1 ..= end, their mean for each.
        let rank = (start + 1 + end) as f64 / 2.0;
        sum += rank * all[start..end].iter().filter(|v| v.1).count() as f64;
        if end - start > 1 {
            ties.push(end - start);
        }
        start = end;
    }
    (sum, ties)
}

/// Twice P(U ≥ u) under the exact distribution of U for sizes `m` and `n`.
fn exact_p(u: usize, m: usize, n: usize) -> f64 {
    let counts = arrangements(m, n);
    let total: i128 = counts.iter().sum();
    let upper: i128 = counts.iter().skip(u).sum();
    2.0 * upper as f64 / total as f64
}

/// How many arrangements of `m` and `n` values give each U = 0 ..= m·n: the
/// coefficients of the Gaussian binomial [m + n choose m], built as
/// ∏ᵢ (1 − q^(n+i)) / (1 − q^i), each step exact in integers.
fn arrangements(m: usize, n: usize) -> Vec<i128> {
    let mut poly = vec![0i128; m * n + 1];
    poly[0] = 1;
    for i in 1..=m {
        // Times (1 − q^(n+i)).
        for k in (n + i..poly.len()).rev() {
            poly[k] -= poly[k - n - i];
        }
        // Divided by (1 − q^i): a running sum with step i.
        for k in i..poly.len() {
            poly[k] += poly[k - i];
        }
    }
    poly
}

fn normal_p(u: f64, na: usize, nb: usize, ties: &[usize]) -> Result<f64, NoTest> {
    let (a, b, n) = (na as f64, nb as f64, (na + nb) as f64);
    let tie_term: f64 = ties.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
    let variance = a * b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        return Err(NoTest::NoSpread);
    }
    let z = (u - a * b / 2.0 - 0.5) / variance.sqrt();
    let normal = Normal::standard();
    Ok(2.0 * (1.0 - normal.cdf(z)).max(normal.cdf(-z)))
}

/// The smallest two-sided p the exact test can give with `a` and `b` values a side:
/// 2 / C(a + b, a).
pub fn smallest_p(a: usize, b: usize) -> f64 {
    let mut ways = 1.0;
    for i in 1..=a.min(b) {
        ways = ways * (a + b + 1 - i) as f64 / i as f64;
    }
    (2.0 / ways).min(1.0)
}

/// The fewest repetitions a side with which the exact test can reach `p` or below.
pub fn least_per_side(p: f64) -> usize {
    (LEAST_REPETITIONS..)
        .find(|&n| smallest_p(n, n) <= p)
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case<'a> = (&'a [f64], &'a [f64], f64, f64);

    fn check(cases: &[Case], method: Method) {
        for (a, b, u, p) in cases {
            let test = test(a, b).unwrap();
            assert_eq!(test.method, method, "{a:?} {b:?}");
            assert!((test.u_a - u).abs() < 1e-9, "{a:?} {b:?}: U {}", test.u_a);
            assert!(
                (test.p - p).abs() <= 1e-9 * p.max(1e-3),
                "{a:?} {b:?}: p {} not {p}",
                test.p
            );
        }
    }

    /// Reference values from scipy 1.17.1: `mannwhitneyu(a, b,
    /// alternative="two-sided", method="exact")` (statistic, pvalue).
    #[test]
    fn the_exact_test_agrees_with_scipy() {
        let cases: [Case; 5] = [
            (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.0, 0.1),
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0],
                0.0,
                0.0021645021645021645,
            ),
            (
                &[3.2, 3.9, 2.8, 3.5, 4.1, 3.3],
                &[4.5, 4.9, 5.3, 4.2, 4.8, 5.0, 4.7],
                0.0,
                0.0011655011655011655,
            ),
            (
                &[10.0, 12.0, 15.0, 11.0, 14.0],
                &[13.0, 16.0, 9.0, 17.0, 18.0],
                7.0,
                0.30952380952380953,
            ),
            (&[100.0, 110.0, 90.0], &[104.0, 106.0, 105.0], 3.0, 0.7),
        ];
        check(&cases, Method::Exact);
    }

    /// Reference values from scipy 1.17.1: `mannwhitneyu(a, b,
    /// alternative="two-sided", method="asymptotic", use_continuity=True)`.
    #[test]
    fn ties_and_large_samples_use_the_corrected_normal_approximation() {
        let long_a: Vec<f64> = (1..=60).map(f64::from).collect();
        let long_b: Vec<f64> = long_a.iter().map(|v| v + 10.5).collect();
        let cases: [Case; 3] = [
            (
                &[1.0, 2.0, 2.0, 3.0],
                &[2.0, 4.0, 4.0, 5.0],
                2.0,
                0.10159149986165274,
            ),
            (
                &[5.0, 5.0, 6.0, 7.0, 7.0, 8.0],
                &[7.0, 8.0, 8.0, 9.0, 10.0, 10.0],
                3.0,
                0.01810094873944969,
            ),
            (&long_a, &long_b, 1225.0, 0.0025668879435241754),
        ];
        check(&cases, Method::Normal);
    }

    /// The largest exact case stays in integers: fifty a side wholly apart give
    /// 2 / C(100, 50) (C(100, 50) = 100891344545564193334812497256).
    #[test]
    fn fifty_a_side_are_exact_without_overflow() {
        let a: Vec<f64> = (1..=50).map(f64::from).collect();
        let b: Vec<f64> = (51..=100).map(f64::from).collect();
        let test = test(&a, &b).unwrap();
        assert_eq!(test.method, Method::Exact);
        let expected = 2.0 / 100_891_344_545_564_193_334_812_497_256.0;
        assert!((test.p - expected).abs() <= 1e-12 * expected);
        assert!((smallest_p(50, 50) - expected).abs() <= 1e-12 * expected);
    }

    #[test]
    fn the_smallest_p_sets_the_repetitions_needed() {
        // 2 / C(6, 3) = 0.1: three a side never reach 0.05.
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((smallest_p(6, 7) - 2.0 / 1716.0).abs() < 1e-15);
        // 2 / C(8, 4) = 0.029 ≤ 0.05; 2 / C(12, 6) = 0.0022 ≤ 0.05 / 12 = 0.0042 while
        // 2 / C(10, 5) = 0.0079 is not.
        assert_eq!(least_per_side(0.05), 4);
        assert_eq!(least_per_side(0.05 / 12.0), 6);
        assert_eq!(least_per_side(0.05 / 6.0), 5);
    }

    #[test]
    fn too_few_or_all_alike_give_no_test() {
        assert_eq!(
            test(&[1.0], &[2.0, 3.0]),
            Err(NoTest::TooFew { a: 1, b: 2 })
        );
        assert_eq!(test(&[2.0, 2.0], &[2.0, 2.0]), Err(NoTest::NoSpread));
        assert_eq!(test(&[1.0, f64::NAN], &[1.0, 2.0]), Err(NoTest::NotFinite));
        let same = test(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(same.p, 1.0);
    }
}
