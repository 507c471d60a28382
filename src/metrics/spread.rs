//! Iron Cushion's `{min, max, median, sd}` of a quantity over connections.

/// How a quantity is spread over connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    pub median: f64,
    /// Population standard deviation (every connection is measured, none sampled).
    pub sd: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let variance = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        Spread {
            min: sorted[0],
            max: sorted[n - 1],
            median,
            sd: variance.sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_known_values() {
        let s = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.min, s.max, s.median, s.sd), (2.0, 9.0, 4.5, 2.0));
        assert_eq!(Spread::of(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(Spread::of(&[]), Spread::default());
    }
}
