//! A phase's rate under the open model: constant, or a linear ramp from one rate to
//! another over the phase's duration; and the schedule it makes, the moment each of the
//! phase's operations is meant to start.
//!
//! The schedule integrates the rate: operation `n` (counting from 0) is due when the
//! operations due so far, the integral of the rate from the phase's start, reach `n`. A
//! ramp therefore quickens the pace with every operation, never in steps per interval,
//! and latency keeps counting from each operation's intended start (as wrk2 does), so a
//! server that falls behind during the ramp shows in the percentiles.

use std::fmt;
use std::time::{Duration, Instant};

/// Operations per second of all connections together (a bulk request counts one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    /// At the phase's start.
    pub from: f64,
    /// At the end of the phase's duration; equal to `from` for a constant rate.
    pub to: f64,
}

impl Rate {
    pub fn constant(rate: f64) -> Rate {
        Rate {
            from: rate,
            to: rate,
        }
    }

    pub fn ramp(from: f64, to: f64) -> Rate {
        Rate { from, to }
    }

    pub fn is_ramp(&self) -> bool {
        self.from != self.to
    }

    /// The highest rate the phase reaches.
    pub fn peak(&self) -> f64 {
        self.from.max(self.to)
    }

    /// This rate divided among `parts` (a node's share of the run's rate).
    pub fn share(&self, parts: u64) -> Rate {
        let parts = parts.max(1) as f64;
        Rate::ramp(self.from / parts, self.to / parts)
    }

    /// `500` (a constant rate) or `100..1000` (a ramp from 100 to 1000 operations per
    /// second), as `--rate` and scenario files take it. Ranges are checked by
    /// [`super::limits::rate`].
    pub fn parse(text: &str) -> Result<Rate, String> {
        let number = |part: &str| {
            part.trim().parse::<f64>().map_err(|_| {
                format!(
                    "{text:?} is not a rate; give operations per second, e.g. 500, or a ramp FROM..TO, e.g. 100..1000"
                )
            })
        };
        match text.split_once("..") {
            Some((from, to)) => Ok(Rate::ramp(number(from)?, number(to)?)),
            None => Ok(Rate::constant(number(text)?)),
        }
    }
}

/// `500`, or `100..1000` for a ramp: what the user types.
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ramp() {
            write!(f, "{}..{}", self.from, self.to)
        } else {
            write!(f, "{}", self.from)
        }
    }
}

/// A result's `config` keeps a constant rate as the number it always was, a ramp as
/// `{"from": …, "to": …}`.
impl serde::Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if !self.is_ramp() {
            return serializer.serialize_f64(self.from);
        }
        let mut ramp = serializer.serialize_struct("Rate", 2)?;
        ramp.serialize_field("from", &self.from)?;
        ramp.serialize_field("to", &self.to)?;
        ramp.end()
    }
}

/// A rate laid over time from a phase's start: when each operation is due.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    rate: Rate,
    /// How long the ramp lasts, seconds; after it the rate stays at `to`. A ramp of no
    /// length is at `to` from the start.
    ramp_seconds: f64,
}

impl Schedule {
    /// `rate` from a phase's start, ramping over `ramp` (the phase's duration).
    pub fn new(rate: Rate, ramp: Option<Duration>) -> Schedule {
        let ramp_seconds = if rate.is_ramp() {
            ramp.map_or(0.0, |d| d.as_secs_f64())
        } else {
            0.0
        };
        Schedule { rate, ramp_seconds }
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    fn ramps(&self) -> bool {
        self.rate.is_ramp() && self.ramp_seconds > 0.0
    }

    /// The rate `seconds` after the start.
    pub fn rate_at(&self, seconds: f64) -> f64 {
        if !self.ramps() || seconds >= self.ramp_seconds {
            return self.rate.to;
        }
        let seconds = seconds.max(0.0);
        self.rate.from + (self.rate.to - self.rate.from) * seconds / self.ramp_seconds
    }

    /// Operations due in the first `seconds` after the start: the rate's integral.
    pub fn due_by(&self, seconds: f64) -> f64 {
        if seconds.is_nan() || seconds <= 0.0 {
            return 0.0;
        }
        if !self.ramps() {
            return self.rate.to * seconds;
        }
        let (from, to, length) = (self.rate.from, self.rate.to, self.ramp_seconds);
        let ramping = seconds.min(length);
        let during = from * ramping + (to - from) * ramping * ramping / (2.0 * length);
        during + to * (seconds - ramping)
    }

    /// Seconds from the start at which operation `n` (counting from 0) is due, or `None`
    /// when it never is (the rate has fallen to 0 before it).
    pub fn start_of(&self, n: u64) -> Option<f64> {
        if n == 0 {
            return Some(0.0);
        }
        let n = n as f64;
        let seconds = if self.ramps() {
            self.ramp_start_of(n)?
        } else {
            n / self.rate.to
        };
        (seconds.is_finite() && seconds >= 0.0).then_some(seconds)
    }

    /// Solves `due_by(t) = n` for `t` on a ramp: within it, `from·t + s·t²/2 = n` with
    /// slope `s`, whose root is written `2n / (from + √(from² + 2sn))` so that it stays
    /// exact as the slope nears 0 and holds for ramps down as well as up.
    fn ramp_start_of(&self, n: f64) -> Option<f64> {
        let (from, to, length) = (self.rate.from, self.rate.to, self.ramp_seconds);
        let during = (from + to) * length / 2.0;
        if n > during {
            // Past the ramp's end, at `to` from then on (never, when that is 0).
            return (to > 0.0).then(|| length + (n - during) / to);
        }
        let slope = (to - from) / length;
        // Below 0 only by rounding: n ≤ during keeps it at to² or more.
        let discriminant = (from * from + 2.0 * slope * n).max(0.0);
        let denominator = from + discriminant.sqrt();
        (denominator > 0.0).then(|| (2.0 * n / denominator).min(length))
    }

    /// The moment operation `n` is due, for a phase that started at `start`; `None` (`n`
    /// never due, or too far off for the clock) is the farthest moment the clock holds,
    /// which no phase's deadline reaches.
    pub fn at(&self, start: Instant, n: Option<u64>) -> Instant {
        let offset = n
            .and_then(|n| self.start_of(n))
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .unwrap_or(crate::time::duration::LONGEST);
        crate::time::duration::after(start, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(from: f64, to: f64, seconds: f64) -> Schedule {
        Schedule::new(Rate::ramp(from, to), Some(Duration::from_secs_f64(seconds)))
    }

    /// `start_of` inverts `due_by`: operation n is due exactly when n are due.
    fn assert_inverse(schedule: &Schedule, n: u64) {
        let t = schedule.start_of(n).unwrap();
        let due = schedule.due_by(t);
        assert!(
            (due - n as f64).abs() <= 1e-6 * (n as f64).max(1.0),
            "{schedule:?}: operation {n} at {t} s, when {due} are due"
        );
    }

    #[test]
    fn a_constant_rate_spaces_operations_evenly() {
        let schedule = Schedule::new(Rate::constant(200.0), Some(Duration::from_secs(9)));
        assert_eq!(schedule.start_of(0), Some(0.0));
        assert_eq!(schedule.start_of(1), Some(0.005));
        assert_eq!(schedule.start_of(200), Some(1.0));
        assert_eq!(schedule.due_by(2.5), 500.0);
        assert_eq!(schedule.rate_at(3.0), 200.0);
    }

    #[test]
    fn a_ramp_from_equal_rates_is_the_constant_schedule() {
        let flat = ramp(50.0, 50.0, 10.0);
        let constant = Schedule::new(Rate::constant(50.0), None);
        for n in [0, 1, 7, 499, 500, 501, 10_000] {
            assert_eq!(flat.start_of(n), constant.start_of(n), "{n}");
        }
        assert!(!Rate::ramp(50.0, 50.0).is_ramp());
    }

    #[test]
    fn a_ramp_up_integrates_the_rate() {
        // From 100/s to 300/s over 10 s: 2,000 operations, the n-th at the root of
        // 100 t + 10 t² = n.
        let up = ramp(100.0, 300.0, 10.0);
        assert_eq!(up.due_by(10.0), 2_000.0);
        assert_eq!(up.due_by(5.0), 750.0);
        assert!((up.start_of(750).unwrap() - 5.0).abs() < 1e-9);
        assert!((up.start_of(2_000).unwrap() - 10.0).abs() < 1e-9);
        // 100 t + 10 t² = 1 at t = (-100 + √10040) / 20.
        let first = (-100.0 + 10_040f64.sqrt()) / 20.0;
        assert!((up.start_of(1).unwrap() - first).abs() < 1e-12);
        assert_eq!(up.rate_at(2.5), 150.0);
        // The gaps shrink as the rate rises: 1/100 s at the start, 1/300 s at the end.
        let gap = |n: u64| up.start_of(n + 1).unwrap() - up.start_of(n).unwrap();
        assert!((gap(0) - 0.01).abs() < 1e-4, "{}", gap(0));
        assert!((gap(1_998) - 1.0 / 300.0).abs() < 1e-5, "{}", gap(1_998));
        for n in (0..2_000).step_by(7) {
            assert!(gap(n + 1) < gap(n), "{n}");
            assert_inverse(&up, n);
        }
        // Past the ramp, at its end rate.
        assert!((up.start_of(2_300).unwrap() - 11.0).abs() < 1e-9);
        assert_eq!(up.due_by(12.0), 2_600.0);
    }

    #[test]
    fn a_ramp_down_slows_and_ends_where_the_rate_reaches_zero() {
        let down = ramp(400.0, 0.0, 4.0);
        assert_eq!(down.due_by(4.0), 800.0);
        assert_eq!(down.due_by(100.0), 800.0);
        for n in (0..=800).step_by(9) {
            assert_inverse(&down, n);
        }
        assert!((down.start_of(800).unwrap() - 4.0).abs() < 1e-6);
        assert_eq!(down.start_of(801), None, "never due: the rate is 0 by then");
        let gap = |n: u64| down.start_of(n + 1).unwrap() - down.start_of(n).unwrap();
        assert!(gap(700) > gap(100));
    }

    #[test]
    fn a_ramp_from_zero_starts_at_once_and_then_quickens() {
        let from_zero = ramp(0.0, 1_000.0, 2.0);
        assert_eq!(from_zero.start_of(0), Some(0.0));
        // 250 t² = n.
        assert!((from_zero.start_of(1).unwrap() - (1.0f64 / 250.0).sqrt()).abs() < 1e-12);
        assert!((from_zero.start_of(1_000).unwrap() - 2.0).abs() < 1e-9);
        for n in (0..1_000).step_by(13) {
            assert_inverse(&from_zero, n);
        }
    }

    #[test]
    fn very_short_ramps_and_huge_rates_neither_panic_nor_lose_their_order() {
        let instant = Schedule::new(Rate::ramp(10.0, 1_000.0), Some(Duration::ZERO));
        assert_eq!(instant.start_of(1000), Some(1.0), "at once at the end rate");
        let blink = ramp(0.0, 10_000_000.0, 1e-6);
        assert_eq!(blink.due_by(1e-6), 5.0);
        let mut last = 0.0;
        for n in 0..100 {
            let t = blink.start_of(n).unwrap();
            assert!(t >= last, "{n}");
            last = t;
        }
        let huge = ramp(10_000_000.0, 1.0, 3_600.0 * 24.0 * 365.0);
        for n in [1, 1_000_000_000, 1_000_000_000_000, u64::MAX] {
            let t = huge.start_of(n);
            assert!(t.is_none_or(|t| t.is_finite() && t >= 0.0), "{n}: {t:?}");
        }
        let start = Instant::now();
        assert!(huge.at(start, Some(u64::MAX)) >= start);
        assert!(huge.at(start, None) > start + Duration::from_secs(3_600));
        assert_eq!(ramp(0.0, 0.0, 5.0).start_of(1), None);
        assert_eq!(ramp(0.0, 0.0, 5.0).due_by(f64::NAN), 0.0);
    }

    #[test]
    fn rates_read_and_show_as_typed() {
        assert_eq!(Rate::parse("500"), Ok(Rate::constant(500.0)));
        assert_eq!(Rate::parse("100..1000"), Ok(Rate::ramp(100.0, 1000.0)));
        assert_eq!(Rate::parse(" 0 .. 2.5 "), Ok(Rate::ramp(0.0, 2.5)));
        for bad in ["", "fast", "1..", "..5", "1..2..3"] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Rate::ramp(100.0, 1000.0).to_string(), "100..1000");
        assert_eq!(Rate::constant(2.5).to_string(), "2.5");
        assert_eq!(
            serde_json::to_value(Rate::ramp(1.0, 2.0)).unwrap(),
            serde_json::json!({"from": 1.0, "to": 2.0})
        );
        assert_eq!(serde_json::to_value(Rate::constant(7.0)).unwrap(), 7.0);
        assert_eq!(Rate::ramp(100.0, 300.0).share(2), Rate::ramp(50.0, 150.0));
    }
}
