//! Durations as users write them: `30s`, `30m`, `30h` (as in the Aerospike benchmark's
//! `time`), `500ms`, `1.5s`; a bare number is seconds.

use std::time::Duration;

pub fn parse(text: &str) -> Result<Duration, String> {
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
}
