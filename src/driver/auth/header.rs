//! Header lines carrying credentials, and the check that keeps a value from breaking out
//! of its line: a token, a user name or a server's cookie with a CR or LF in it would add
//! header lines (or whole requests) of its own.

/// The longest credential value sofabench sends in a header (IAM tokens are 1–2 KB).
pub const MAX_VALUE: usize = 16 * 1024;

/// `Ok` when `value` can stand in a header line: not empty, at most [`MAX_VALUE`] bytes,
/// no control characters; `what` names it for the message.
pub fn check_value(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if value.len() > MAX_VALUE {
        return Err(format!(
            "{what} is {} bytes long, more than the {MAX_VALUE} a header takes here",
            value.len()
        ));
    }
    if value.bytes().any(|b| b.is_ascii_control()) {
        return Err(format!(
            "{what} holds a control character (a line break?), which cannot go in a header"
        ));
    }
    Ok(())
}

/// `Ok` when `value` is one token of visible ASCII without blanks, as bearer tokens and
/// cookie values are.
pub fn check_token(what: &str, value: &str) -> Result<(), String> {
    check_value(what, value)?;
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "{what} holds a blank or a character outside visible ASCII, which a token cannot hold"
        ));
    }
    Ok(())
}

/// Appends `Name: value\r\n` to `out`.
pub fn push_line(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The line of a bearer token (JWT, IAM).
pub fn bearer(token: &str) -> Vec<u8> {
    let mut out = Vec::new();
    push_line(&mut out, "Authorization", &format!("Bearer {token}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_would_break_a_header_line_are_refused() {
        assert!(check_value("the token", "abc.def").is_ok());
        assert!(check_value("the token", "").unwrap_err().contains("empty"));
        let injected = check_value("the token", "abc\r\nX-Admin: yes").unwrap_err();
        assert!(injected.contains("the token holds a control"), "{injected}");
        assert!(check_value("x", &"a".repeat(MAX_VALUE + 1)).is_err());
        assert!(check_token("the cookie", "a b").is_err());
        assert!(check_token("the cookie", "YWRtaW46NjU=").is_ok());
    }

    #[test]
    fn a_bearer_line_is_one_whole_header_line() {
        assert_eq!(bearer("t0k"), b"Authorization: Bearer t0k\r\n");
    }
}
