//! Durations as users write them: `30s`, `30m`, `30h` (as in the Aerospike benchmark's
//! `time`), `500ms`, `1.5s`; a bare number is seconds.

use std::time::{Duration, Instant};

/// The longest duration sofabench takes: ten years (87,600 h). Longer ones are
/// mistakes, and past about 292 years a deadline (`now + duration`) no longer fits the
/// clock, so they are refused where they are read.
pub const LONGEST: Duration = Duration::from_secs(10 * 365 * 24 * 3_600);

/// A duration as users write it, at most [`LONGEST`].
pub fn parse(text: &str) -> Result<Duration, String> {
    let duration = parse_any(text)?;
    if duration > LONGEST {
        return Err(format!(
            "{:?} is longer than 10 years (87600h), the longest duration sofabench takes; give a shorter one",
            text.trim()
        ));
    }
    Ok(duration)
}

/// `start + duration`, or the farthest moment the clock can hold when the sum would not
/// fit, so that no duration can make the engine panic (parse bounds them, but a
/// deadline must not depend on every caller having used it).
pub fn after(start: Instant, duration: Duration) -> Instant {
    start
        .checked_add(duration)
        .or_else(|| start.checked_add(LONGEST))
        .unwrap_or(start)
}

/// A length for people, to its largest two units: `2.5s`, `19.5s`, `2m 30s`, `7m`,
/// `1h 5m`, `3d 4h`; past ten years only `more than 10 years`.
pub fn words(duration: Duration) -> String {
    if duration > LONGEST {
        return "more than 10 years".to_string();
    }
    let tenths = (duration.as_millis() + 50) / 100;
    if tenths < 600 {
        return match tenths % 10 {
            0 => format!("{}s", tenths / 10),
            tenth => format!("{}.{tenth}s", tenths / 10),
        };
    }
    let seconds = (duration.as_millis() + 500) / 1_000;
    let (big, small, units) = if seconds < 3_600 {
        (seconds / 60, seconds % 60, ("m", "s"))
    } else {
        let minutes = (seconds + 30) / 60;
        if minutes < 24 * 60 {
            (minutes / 60, minutes % 60, ("h", "m"))
        } else {
            let hours = (minutes + 30) / 60;
            (hours / 24, hours % 24, ("d", "h"))
        }
    };
    match small {
        0 => format!("{big}{}", units.0),
        _ => format!("{big}{} {small}{}", units.0, units.1),
    }
}

fn parse_any(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; write e.g. 30s, 30m, 30h or 500ms"))?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1_000.0,
        "m" => value * 60.0,
        "h" => value * 3_600.0,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?}; use ms, s, m or h (e.g. 30s)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("{text:?} is not a duration; write e.g. 30s, 30m, 30h or 500ms"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_units() {
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("30h"), Ok(Duration::from_secs(108_000)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse("10x").unwrap_err().contains("unknown unit"));
        assert!(parse("fast").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn durations_past_ten_years_are_refused() {
        assert_eq!(parse("87600h"), Ok(LONGEST));
        let err = parse("2562047788015215h").unwrap_err();
        assert!(
            err.contains("\"2562047788015215h\"") && err.contains("10 years"),
            "{err}"
        );
        assert!(parse("87601h").is_err());
        assert!(parse("1e300").is_err());
    }

    #[test]
    fn lengths_read_in_their_two_largest_units() {
        let words = |ms: u64| words(Duration::from_millis(ms));
        assert_eq!(words(0), "0s");
        assert_eq!(words(2_500), "2.5s");
        assert_eq!(words(19_500), "19.5s");
        assert_eq!(words(59_960), "1m", "rounded up into the next unit");
        assert_eq!(words(150_000), "2m 30s");
        assert_eq!(words(420_000), "7m");
        assert_eq!(words(3_899_000), "1h 5m");
        assert_eq!(words(86_400_000 * 3 + 3_600_000 * 4), "3d 4h");
        assert_eq!(super::words(LONGEST), "3650d");
        assert_eq!(super::words(Duration::MAX), "more than 10 years");
    }

    #[test]
    fn a_deadline_never_overflows() {
        let now = Instant::now();
        assert_eq!(
            after(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert!(after(now, Duration::MAX) >= now);
    }
}
