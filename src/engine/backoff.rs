//! Waits before trying again, spread at random so that many connections turned away at
//! the same moment do not all come back at the same moment.

use std::time::Duration;

/// Half of `backoff`, plus up to another half at random ("equal jitter"). `jitter` is the
/// random share, from 0 to 1; anything else counts as one half.
pub fn jittered(backoff: Duration, jitter: f64) -> Duration {
    let jitter = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.5
    };
    backoff.mul_f64(0.5 + 0.5 * jitter)
}

/// `first`, doubled `tries` times, at most `most`.
pub fn doubled(first: Duration, tries: u32, most: Duration) -> Duration {
    let factor = 1u32.checked_shl(tries).unwrap_or(u32::MAX);
    first.checked_mul(factor).map_or(most, |d| d.min(most))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_spreads_between_half_and_all() {
        let second = Duration::from_secs(1);
        assert_eq!(jittered(second, 0.0), second / 2);
        assert_eq!(jittered(second, 1.0), second);
        assert_eq!(jittered(second, 7.0), second);
        assert_eq!(jittered(second, f64::NAN), second.mul_f64(0.75));
    }

    #[test]
    fn doubling_stops_at_the_cap_without_overflow() {
        let (first, most) = (Duration::from_millis(250), Duration::from_secs(10));
        assert_eq!(doubled(first, 0, most), first);
        assert_eq!(doubled(first, 2, most), Duration::from_secs(1));
        assert_eq!(doubled(first, 6, most), most);
        assert_eq!(doubled(first, u32::MAX, most), most);
        assert_eq!(doubled(Duration::MAX, 1, most), most);
    }
}
