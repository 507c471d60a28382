//! Numbers as Iron Cushion prints them: thousands separated by commas.

/// `1234567` → `1,234,567`.
pub fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `10003.0304` with 3 decimals → `10,003.030`. Non-finite values print as `n/a`.
pub fn grouped_decimal(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let text = format!("{:.*}", decimals, value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let sign = if value < 0.0 && text.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        "-"
    } else {
        ""
    };
    let whole = grouped(whole.parse().unwrap_or(0));
    if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(374240177), "374,240,177");
        assert_eq!(grouped_decimal(10003.0304, 3), "10,003.030");
        assert_eq!(grouped_decimal(0.0004, 3), "0.000");
        assert_eq!(grouped_decimal(-1234.5, 1), "-1,234.5");
        assert_eq!(grouped_decimal(f64::NAN, 3), "n/a");
    }
}
