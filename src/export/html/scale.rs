//! Which y scale a latency chart is drawn on, and the range its caption states. On a
//! linear axis a phase of 500 ms bulk inserts flattens the 2 ms reads beside it into the
//! axis; past a tenfold spread the chart is drawn on a log scale instead.

/// Past this ratio of the largest value drawn to the smallest, a chart is logarithmic.
pub const LOG_SPREAD: f64 = 10.0;

/// The smallest and the largest of the positive values drawn; `None` without any (a log
/// axis has no place for 0, and an empty chart has no range).
pub fn range<'a>(columns: impl IntoIterator<Item = &'a [Option<f64>]>) -> Option<(f64, f64)> {
    columns
        .into_iter()
        .flatten()
        .flatten()
        .filter(|v| v.is_finite() && **v > 0.0)
        .fold(None, |range, &v| match range {
            None => Some((v, v)),
            Some((low, high)) => Some((f64::min(low, v), f64::max(high, v))),
        })
}

/// Whether values in `range` span more than [`LOG_SPREAD`] times.
pub fn is_log(range: Option<(f64, f64)>) -> bool {
    range.is_some_and(|(low, high)| high > low * LOG_SPREAD)
}

/// Milliseconds with three significant digits, grouped: `0.412`, `27.5`, `1,072`.
pub fn ms(value: f64) -> String {
    let decimals = match value {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        v if v >= 1.0 => 2,
        _ => 3,
    };
    crate::report::numbers::grouped_decimal(value, decimals)
}

/// The caption's words for a latency chart's range and scale: `from 2.05 to 618 ms, log
/// scale`; empty when nothing is drawn.
pub fn latency_range(range: Option<(f64, f64)>) -> String {
    let Some((low, high)) = range else {
        return String::new();
    };
    let scale = if is_log(range) {
        "log scale (the values span more than tenfold)"
    } else {
        "linear scale"
    };
    format!("from {} to {} ms, {scale}", ms(low), ms(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenfold_spread_across_series_makes_the_scale_logarithmic() {
        let reads = [None, Some(2.0), Some(3.5)];
        let bulk = [None, Some(500.0), Some(0.0)];
        let both = range([&reads[..], &bulk[..]]);
        // 0 has no place on a log axis: 2 is the smallest drawn.
        assert_eq!(both, Some((2.0, 500.0)));
        assert!(is_log(both));
        let alone = range([&reads[..]]);
        assert!(!is_log(alone));
        assert!(!is_log(range([&[None][..]])));
        assert_eq!(
            latency_range(both),
            "from 2.00 to 500 ms, log scale (the values span more than tenfold)"
        );
        assert_eq!(latency_range(alone), "from 2.00 to 3.50 ms, linear scale");
        assert_eq!(latency_range(None), "");
        assert_eq!(ms(1071.6), "1,072");
        assert_eq!(ms(0.4123), "0.412");
    }
}
