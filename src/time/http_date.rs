//! HTTP dates (RFC 9110 section 5.6.7), as a server writes them in `Retry-After`:
//! the preferred IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the two obsolete forms
//! a recipient must still accept, RFC 850's `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's
//! `Sun Nov  6 08:49:37 1994`. Anything else is not a date.

use super::rfc3339::{digits, unix_seconds};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Unix seconds of an HTTP date, or `None` if `text` is not one.
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim_matches([' ', '\t']);
    imf_fixdate(text)
        .or_else(|| rfc850(text))
        .or_else(|| asctime(text))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(text: &str) -> Option<i64> {
    let (name, rest) = text.split_once(", ")?;
    let [day, month, year, time, "GMT"] = fields::<5>(rest, ' ')? else {
        return None;
    };
    DAYS.contains(&name).then_some(())?;
    at(number(year, 4)?, month, number(day, 2)?, time)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`: a two-digit year is taken as 1970–2069.
fn rfc850(text: &str) -> Option<i64> {
    let (name, rest) = text.split_once(", ")?;
    let [date, time, "GMT"] = fields::<3>(rest, ' ')? else {
        return None;
    };
    let [day, month, year] = fields::<3>(date, '-')?;
    LONG_DAYS.contains(&name).then_some(())?;
    let year = number(year, 2)?;
    let year = if year < 70 { 2000 + year } else { 1900 + year };
    at(year, month, number(day, 2)?, time)
}

/// `Sun Nov  6 08:49:37 1994`: the day of the month is padded with a space.
fn asctime(text: &str) -> Option<i64> {
    let (name, rest) = text.split_once(' ')?;
    let (month, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let [day, time, year] = fields::<3>(rest, ' ')?;
    DAYS.contains(&name).then_some(())?;
    let day = match day.len() {
        1 => number(day, 1)?,
        _ => number(day, 2)?,
    };
    at(number(year, 4)?, month, day, time)
}

/// Exactly `N` parts of `text` between `separator`s.
fn fields<const N: usize>(text: &str, separator: char) -> Option<[&str; N]> {
    let mut parts = text.split(separator);
    let fields = std::array::from_fn(|_| parts.next().unwrap_or(""));
    (parts.next().is_none() && fields.iter().all(|f| !f.is_empty())).then_some(fields)
}

/// A number of exactly `width` ASCII digits.
fn number(text: &str, width: usize) -> Option<u32> {
    (text.len() == width).then(|| digits(text.as_bytes(), 0, width))?
}

/// Unix seconds of the date and `hh:mm:ss` time, when all are valid.
fn at(year: u32, month: &str, day: u32, time: &str) -> Option<i64> {
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    let [hour, minute, second] = fields::<3>(time, ':')?;
    let time = (number(hour, 2)?, number(minute, 2)?, number(second, 2)?);
    unix_seconds(year, month, day, time)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1994-11-06T08:49:37Z, the date RFC 9110's examples use.
    const EXAMPLE: i64 = 784_111_777;

    #[test]
    fn the_three_forms_of_the_same_moment() {
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT"), Some(EXAMPLE));
        assert_eq!(parse("Sunday, 06-Nov-94 08:49:37 GMT"), Some(EXAMPLE));
        assert_eq!(parse("Sun Nov  6 08:49:37 1994"), Some(EXAMPLE));
        assert_eq!(parse(" Sun, 06 Nov 1994 08:49:37 GMT\t"), Some(EXAMPLE));
        assert_eq!(
            parse("Thu, 29 Feb 2024 23:59:59 GMT"),
            Some(1_709_251_199),
            "a leap day"
        );
        assert_eq!(
            parse("Tuesday, 01-Jan-30 00:00:00 GMT"),
            Some(1_893_456_000),
            "two digits below 70 are this century's"
        );
        assert_eq!(
            parse("Sun Nov 16 08:49:37 1994"),
            Some(EXAMPLE + 10 * 86_400)
        );
    }

    #[test]
    fn anything_else_is_not_a_date() {
        for text in [
            "",
            "5",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49:37 GMT extra",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 2023 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37:00 GMT",
            "Sun, 06 Nov +994 08:49:37 GMT",
            "Funday, 06 Nov 1994 08:49:37 GMT",
            "Sun,06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994 GMT",
            "Sun Nov  6 08:49:37 94",
            "2026-01-01T00:00:00Z",
            "Sun, 06 Nov 1994 08:49:37 GMT\0",
            "Sun, ٠٦ Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }
}
