//! RFC 3339 timestamps: recognising them (in JSON templates) and writing them (in
//! generated documents and result files).
//!
//! A string is a timestamp when it matches RFC 3339's `date-time` exactly:
//! `YYYY-MM-DD`, `T` (or `t`), `hh:mm:ss`, optional fraction `.d+`, then `Z` (or `z`) or
//! an offset `+hh:mm`/`-hh:mm`, with valid month, day (leap years included), hour,
//! minute, second (60 allowed for leap seconds) and offset. Written timestamps are UTC,
//! whole seconds, as `YYYY-MM-DDThh:mm:ssZ`.

/// Length of a written timestamp.
pub const LEN: usize = 20;

/// A Unix time in seconds as an RFC 3339 UTC timestamp (`2026-11-22T05:40:00Z`).
pub fn format(seconds: i64) -> String {
    let mut out = Vec::with_capacity(LEN);
    write(&mut out, seconds);
    String::from_utf8_lossy(&out).into_owned()
}

/// Unix seconds of an RFC 3339 `date-time`, or `None` if `s` is not one.
/// Leap second 60 counts as the next second.
pub fn parse(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < LEN {
        return None;
    }
    let year = digits(b, 0, 4)?;
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    let hour = digits(b, 11, 2)?;
    let minute = digits(b, 14, 2)?;
    let second = digits(b, 17, 2)?;
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let local = unix_seconds(year, month, day, (hour, minute, second))?;
    let mut rest = &b[19..];
    if let [b'.', tail @ ..] = rest {
        let fraction = tail.iter().take_while(|c| c.is_ascii_digit()).count();
        if fraction == 0 {
            return None;
        }
        rest = &tail[fraction..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(&[*h1, *h2], 0, 2)?;
            let minutes = digits(&[*m1, *m2], 0, 2)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = i64::from(hours * 60 + minutes) * 60;
            if *sign == b'+' { offset } else { -offset }
        }
        _ => return None,
    };
    Some(local - offset)
}

/// Unix seconds of a UTC date and time of day, or `None` unless each part is in its range
/// (leap years included; second 60, a leap second, counts as the next second).
pub(super) fn unix_seconds(
    year: u32,
    month: u32,
    day: u32,
    (hour, minute, second): (u32, u32, u32),
) -> Option<i64> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    Some(days * 86_400 + i64::from(hour * 3600 + minute * 60 + second))
}

/// Writes Unix time `secs` (0000-01-01 to 9999-12-31) as `YYYY-MM-DDThh:mm:ssZ`.
pub fn write(out: &mut Vec<u8>, secs: i64) {
    let days = secs.div_euclid(86_400);
    let in_day = secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    let mut buf = *b"0000-00-00T00:00:00Z";
    put(&mut buf[0..4], year as u32);
    put(&mut buf[5..7], month);
    put(&mut buf[8..10], day);
    put(&mut buf[11..13], in_day / 3600);
    put(&mut buf[14..16], in_day / 60 % 60);
    put(&mut buf[17..19], in_day % 60);
    out.extend_from_slice(&buf);
}

/// Writes `value` as decimal digits filling `slot` (zero padded).
fn put(slot: &mut [u8], mut value: u32) {
    for b in slot.iter_mut().rev() {
        *b = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The `count` ASCII digits at `b[at..]` as a number.
pub(super) fn digits(b: &[u8], at: usize, count: usize) -> Option<u32> {
    b.get(at..at + count)?.iter().try_fold(0u32, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Date of a day count since 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2000-01-01T00:00:00Z and 2030-01-01T00:00:00Z, the range templates generate.
    const START: i64 = 946_684_800;
    const END: i64 = 1_893_456_000;

    fn text(secs: i64) -> String {
        let mut out = Vec::new();
        write(&mut out, secs);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn known_values() {
        assert_eq!(parse("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse("2000-01-01T00:00:00Z"), Some(START));
        assert_eq!(parse("2030-01-01T00:00:00Z"), Some(END));
        assert_eq!(parse("2013-07-01T12:00:00Z"), Some(1_372_680_000));
        assert_eq!(parse("2013-07-01T14:00:00+02:00"), Some(1_372_680_000));
        assert_eq!(
            parse("2013-07-01t11:30:00.123456-00:30"),
            Some(1_372_680_000)
        );
        assert_eq!(parse("2016-12-31T23:59:60Z"), Some(1_483_228_800));
        assert_eq!(parse("2024-02-29T00:00:00z"), Some(1_709_164_800));
        assert_eq!(text(0), "1970-01-01T00:00:00Z");
        assert_eq!(text(START), "2000-01-01T00:00:00Z");
        assert_eq!(text(END - 1), "2029-12-31T23:59:59Z");
        assert_eq!(text(1_372_680_000), "2013-07-01T12:00:00Z");
        assert_eq!(text(1_709_164_800 + 86_399), "2024-02-29T23:59:59Z");
    }

    #[test]
    fn rejects_non_timestamps() {
        for s in [
            "",
            "hello",
            "2013-07-01",
            "2013-07-01T12:00:00",
            "2013-07-01 12:00:00Z",
            "2013-07-01T12:00Z",
            "2013-13-01T12:00:00Z",
            "2013-00-01T12:00:00Z",
            "2013-02-29T12:00:00Z",
            "1900-02-29T12:00:00Z",
            "2013-04-31T12:00:00Z",
            "2013-07-00T12:00:00Z",
            "2013-07-01T24:00:00Z",
            "2013-07-01T12:60:00Z",
            "2013-07-01T12:00:61Z",
            "2013-07-01T12:00:00.Z",
            "2013-07-01T12:00:00+2:00",
            "2013-07-01T12:00:00+24:00",
            "2013-07-01T12:00:00+02:60",
            "2013-07-01T12:00:00+0200",
            "2013-07-01T12:00:00Zx",
            " 2013-07-01T12:00:00Z",
            "+013-07-01T12:00:00Z",
            "2013-07-01T12:00:00Ż",
        ] {
            assert_eq!(parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn every_day_in_range_round_trips() {
        let mut secs = START - 86_400;
        while secs <= END + 86_400 {
            let t = text(secs + 45_296);
            assert_eq!(parse(&t), Some(secs + 45_296), "{t}");
            secs += 86_400;
        }
    }
}
