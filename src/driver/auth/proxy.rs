//! Proxy authentication: the headers a trusted proxy in front of CouchDB sends on behalf of
//! a user it has authenticated itself (CouchDB's `proxy_authentication_handler`).
//!
//! With `[chttpd_auth] proxy_use_secret = true`, CouchDB takes the user only with
//! `X-Auth-CouchDB-Token`: the HMAC of the user name keyed with `[chttpd_auth] secret`, in
//! lowercase hex. CouchDB 3.5 accepts it computed with any of `[chttpd_auth]
//! hash_algorithms` (by default `sha256, sha`); sofabench uses the first, SHA-256.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::header::{check_value, push_line};

pub const USER_HEADER: &str = "X-Auth-CouchDB-UserName";
pub const ROLES_HEADER: &str = "X-Auth-CouchDB-Roles";
pub const TOKEN_HEADER: &str = "X-Auth-CouchDB-Token";

/// Who the proxy says the requests come from, and the secret it shares with CouchDB.
#[derive(Clone)]
pub struct ProxyUser {
    pub user: String,
    /// Comma-separated, as the header carries them; may be empty.
    pub roles: String,
    /// `None` when the server does not ask for a token (`proxy_use_secret = false`).
    pub secret: Option<String>,
}

impl ProxyUser {
    /// Checks that every value can stand in a header line.
    pub fn check(&self) -> Result<(), String> {
        check_value("the proxy user name (--user)", &self.user)?;
        if !self.roles.is_empty() {
            check_value("--proxy-roles", &self.roles)?;
        }
        if let Some(secret) = &self.secret {
            check_value("the proxy secret", secret)?;
        }
        Ok(())
    }

    /// `X-Auth-CouchDB-Token`'s value, if there is a secret.
    pub fn token(&self) -> Option<String> {
        self.secret.as_deref().map(|s| token(s, &self.user))
    }

    /// The three header lines (the roles and the token only when there are some).
    pub fn lines(&self) -> Vec<u8> {
        let mut out = Vec::new();
        push_line(&mut out, USER_HEADER, &self.user);
        if !self.roles.is_empty() {
            push_line(&mut out, ROLES_HEADER, &self.roles);
        }
        if let Some(token) = self.token() {
            push_line(&mut out, TOKEN_HEADER, &token);
        }
        out
    }

    /// The headers as name and value, for a replication document's `headers`.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![(USER_HEADER, self.user.clone())];
        if !self.roles.is_empty() {
            out.push((ROLES_HEADER, self.roles.clone()));
        }
        out.extend(self.token().map(|t| (TOKEN_HEADER, t)));
        out
    }
}

/// HMAC-SHA256 of `user` keyed with `secret`, in lowercase hex (as `couch_util:to_hex`).
pub fn token(secret: &str, user: &str) -> String {
    // An HMAC takes a key of any length: this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(user.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_hmac_sha256_in_lowercase_hex() {
        // The well-known HMAC-SHA256 example (key "key", the quick brown fox).
        assert_eq!(
            token("key", "The quick brown fox jumps over the lazy dog"),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
    }

    #[test]
    fn lines_carry_roles_and_token_only_when_given() {
        let mut user = ProxyUser {
            user: "bench".to_string(),
            roles: String::new(),
            secret: None,
        };
        assert_eq!(user.lines(), b"X-Auth-CouchDB-UserName: bench\r\n");
        user.roles = "_admin,writers".to_string();
        user.secret = Some("key".to_string());
        let text = String::from_utf8(user.lines()).unwrap();
        assert_eq!(
            text,
            format!(
                "X-Auth-CouchDB-UserName: bench\r\nX-Auth-CouchDB-Roles: _admin,writers\r\nX-Auth-CouchDB-Token: {}\r\n",
                token("key", "bench")
            )
        );
        assert_eq!(user.headers().len(), 3);
        user.user = "bench\r\nX-Evil: 1".to_string();
        assert!(user.check().is_err());
    }
}
