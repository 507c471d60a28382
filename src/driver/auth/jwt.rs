//! What sofabench can know of a JWT it is given: when it expires. It holds no signing
//! key, so it can never renew one; what it can do is refuse a token that has expired
//! before the run starts and say in the header when the given one will.

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};

/// The longest payload read: a token is a header line, and no claim set needs more.
const MOST_PAYLOAD: usize = 16 * 1024;

/// The token's `exp` claim, in Unix seconds, when it has a readable one.
pub fn expiry(token: &str) -> Option<i64> {
    let payload = token.split('.').nth(1)?;
    if payload.len() > MOST_PAYLOAD {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .or_else(|_| URL_SAFE.decode(payload))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let exp = &claims["exp"];
    // NumericDate may carry a fraction (RFC 7519 §2); whole seconds are enough here.
    exp.as_i64()
        .or_else(|| exp.as_f64().filter(|s| s.is_finite()).map(|s| s as i64))
}

/// Refuses a token that expired at or before `now` (Unix seconds), naming the variable.
pub fn check_not_expired(variable: &str, expiry: Option<i64>, now: i64) -> Result<(), String> {
    match expiry {
        Some(exp) if exp <= now => Err(format!(
            "{variable} expired at {} (its exp claim): sofabench cannot renew a JWT, as it holds no signing key; give a token whose exp is after the run's end",
            crate::time::rfc3339::format(exp)
        )),
        _ => Ok(()),
    }
}

/// When the token expires, for the run's header: `expires at … (in 59m)`.
pub fn describe(expiry: Option<i64>, now: i64) -> String {
    match expiry {
        None => "no exp claim".to_string(),
        Some(exp) => {
            let left = exp.saturating_sub(now).max(0);
            let (hours, minutes) = (left / 3_600, left % 3_600 / 60);
            format!(
                "expires at {} (in {hours}h{minutes:02}m), not renewable",
                crate::time::rfc3339::format(exp),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(claims: &str) -> String {
        let part = |s: &str| URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", part(r#"{"alg":"HS256"}"#), part(claims))
    }

    #[test]
    fn the_exp_claim_is_read_when_there_is_one() {
        assert_eq!(
            expiry(&token(r#"{"sub":"a","exp":1700000000}"#)),
            Some(1_700_000_000)
        );
        assert_eq!(
            expiry(&token(r#"{"exp":1700000000.5}"#)),
            Some(1_700_000_000)
        );
        assert_eq!(expiry(&token(r#"{"sub":"a"}"#)), None);
        assert_eq!(expiry(&token(r#"{"exp":"soon"}"#)), None);
        assert_eq!(expiry(&token(r#"{"exp":1e400}"#)), None);
        assert_eq!(expiry("opaque"), None);
        assert_eq!(expiry("a.!!!.c"), None);
        assert_eq!(
            expiry(&format!("a.{}.c", "A".repeat(MOST_PAYLOAD + 1))),
            None
        );
    }

    #[test]
    fn an_expired_token_is_refused_and_a_live_one_described() {
        let error = check_not_expired("SOFABENCH_TOKEN", Some(100), 100).unwrap_err();
        assert!(
            error.starts_with("SOFABENCH_TOKEN expired at 1970-01-01T00:01:40Z"),
            "{error}"
        );
        assert!(check_not_expired("SOFABENCH_TOKEN", Some(101), 100).is_ok());
        assert!(check_not_expired("SOFABENCH_TOKEN", None, 100).is_ok());
        let line = describe(Some(100 + 3_600), 100);
        assert!(
            line.starts_with("expires at 1970-01-01T01:01:40Z (in 1h00m)"),
            "{line}"
        );
        assert_eq!(describe(None, 0), "no exp claim");
    }
}
