//! Holm's correction for testing many rows at once: the smallest of m p-values must pass
//! α/m, the next α/(m − 1), and so on, stopping at the first that fails. Given as adjusted
//! p-values (as statsmodels' `multipletests(method="holm")` gives them), each compared
//! with α itself.

/// The Holm-adjusted p-values, in the order given: the i-th smallest p times (m − i + 1),
/// never below an adjusted p smaller than it, at most 1.
pub fn adjusted(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The p-value the smallest of `m` must reach for Holm to pass anything at `alpha`.
pub fn first_threshold(alpha: f64, m: usize) -> f64 {
    alpha / m.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from statsmodels 0.15.0:
    /// `multipletests(p, method="holm")[1]`.
    #[test]
    fn adjusted_p_values_agree_with_statsmodels() {
        let cases: [(&[f64], &[f64]); 2] = [
            (
                &[0.01, 0.04, 0.03, 0.005, 0.2],
                &[0.04, 0.09, 0.09, 0.025, 0.2],
            ),
            (&[0.001, 0.02, 0.02, 0.5], &[0.004, 0.06, 0.06, 0.5]),
        ];
        for (p, expected) in cases {
            let got = adjusted(p);
            for (g, e) in got.iter().zip(expected) {
                assert!((g - e).abs() < 1e-12, "{p:?}: {got:?} not {expected:?}");
            }
        }
        assert_eq!(adjusted(&[0.6, 0.7]), [1.0, 1.0]);
        assert!(adjusted(&[]).is_empty());
        assert_eq!(first_threshold(0.05, 5), 0.01);
    }
}
