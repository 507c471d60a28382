//! CouchDB session cookies: one `POST /_session` with the user name and password, and the
//! `AuthSession` cookie of its answer on every request after it. CouchDB checks a cookie
//! with an HMAC instead of hashing the password (PBKDF2) for every request.
//!
//! The cookie is good for `[chttpd_auth] timeout` seconds (600 by default); CouchDB 3 says
//! so in the cookie's `Max-Age` (`allow_persistent_cookies`, on by default). Without a
//! `Max-Age` (PouchDB Server), sofabench assumes CouchDB's default, and a server whose
//! sessions end sooner answers a 401, which renews the cookie too.

use std::sync::Arc;
use std::time::Duration;

use super::answer::{self, quote};
use super::credential::{Issued, LoginError};
use super::header::{check_token, push_line};
use super::secrets::Secrets;
use crate::driver::connection::Client;
use crate::driver::{Call, Method};
use crate::target::{Credentials, Node};

/// CouchDB's default session timeout, assumed when the cookie has no `Max-Age`.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(600);

/// Bounds on the lifetime a server announces: a cookie said to last no time would make
/// a login per request, one said to last years would never be renewed ahead of time.
const SHORTEST: Duration = Duration::from_secs(2);
const LONGEST: Duration = Duration::from_secs(24 * 3_600);

/// Logs one user in to one node.
pub struct SessionLogin {
    client: Client,
    /// `{"name": …, "password": …}`.
    body: Vec<u8>,
    node: String,
    secrets: Secrets,
}

impl SessionLogin {
    pub fn new(
        node: &Node,
        credentials: &Credentials,
        tls: Option<&Arc<rustls::ClientConfig>>,
        secrets: Secrets,
    ) -> SessionLogin {
        let body = serde_json::json!({
            "name": credentials.user,
            "password": credentials.password,
        });
        let endpoint = answer::endpoint(node, tls).keeping_session_cookie();
        SessionLogin {
            client: answer::client(endpoint),
            body: body.to_string().into_bytes(),
            node: node.to_string(),
            secrets,
        }
    }

    /// `POST /_session`, and the cookie of its answer.
    pub async fn log_in(&mut self) -> Result<Issued, LoginError> {
        let call = Call {
            method: Method::Post,
            path: "/_session",
            body: Some(&self.body),
        };
        let node = &self.node;
        let answer = self.client.send(&call).await.map_err(|e| LoginError {
            message: format!("cannot log in to {node} (POST /_session: {e})"),
            bad_input: false,
            unreachable: e.is_unreachable(),
        })?;
        match answer.status {
            200 => {}
            401 | 403 => {
                return Err(LoginError::refused(format!(
                    "{node} refused the login (POST /_session gave {}: {}); check the user name and password",
                    answer.status,
                    quote(&answer.body, &self.secrets)
                )));
            }
            status => {
                return Err(LoginError::server(format!(
                    "{node} answered the login with status {status} (POST /_session: {}); does it take session logins?",
                    quote(&answer.body, &self.secrets)
                )));
            }
        }
        let Some(set_cookie) = answer.session_cookie else {
            return Err(LoginError::server(format!(
                "{node} accepted the login but sent no AuthSession cookie; use --auth basic with this server"
            )));
        };
        let cookie = parse_set_cookie(&set_cookie).map_err(|why| {
            LoginError::server(format!(
                "{node} answered the login with a cookie sofabench cannot use: {why}"
            ))
        })?;
        let mut lines = Vec::new();
        push_line(
            &mut lines,
            "Cookie",
            &format!("AuthSession={}", cookie.value),
        );
        Ok(Issued {
            lines,
            secret: cookie.value,
            lifetime: cookie.lifetime,
        })
    }
}

/// A session cookie as `Set-Cookie` gives it.
#[derive(PartialEq)]
pub struct SessionCookie {
    pub value: String,
    pub lifetime: Duration,
}

impl std::fmt::Debug for SessionCookie {
    /// The lifetime, not the cookie: it is as good as the password while it lasts.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCookie")
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

/// The value and lifetime of `AuthSession=VALUE; Max-Age=N; …`; `Err` says what is wrong.
pub fn parse_set_cookie(text: &str) -> Result<SessionCookie, String> {
    let mut parts = text.split(';').map(str::trim);
    let value = parts
        .next()
        .and_then(|pair| pair.strip_prefix("AuthSession="))
        .unwrap_or_default()
        .trim_matches('"');
    if value.is_empty() {
        return Err("the AuthSession cookie is empty (a logout)".to_string());
    }
    check_token("the AuthSession cookie", value)?;
    if value
        .bytes()
        .any(|b| matches!(b, b';' | b',' | b'\\' | b'"'))
    {
        return Err("the AuthSession cookie holds a character a cookie cannot".to_string());
    }
    let max_age = parts.find_map(|attribute| {
        let (name, seconds) = attribute.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("max-age")
            .then(|| seconds.trim().parse::<i64>().ok())
            .flatten()
    });
    let lifetime = match max_age {
        Some(seconds) => {
            Duration::from_secs(seconds.max(0).unsigned_abs()).clamp(SHORTEST, LONGEST)
        }
        None => DEFAULT_LIFETIME,
    };
    Ok(SessionCookie {
        value: value.to_string(),
        lifetime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn couchdb_and_pouchdb_cookies_give_their_value_and_lifetime() {
        let couchdb = parse_set_cookie(
            "AuthSession=YWRtaW46NjU0MzIx; Version=1; Path=/; Max-Age=600; HttpOnly",
        )
        .unwrap();
        assert_eq!(couchdb.value, "YWRtaW46NjU0MzIx");
        assert_eq!(couchdb.lifetime, Duration::from_secs(600));
        let pouchdb = parse_set_cookie("AuthSession=YWRt-aW4_; Path=/; HttpOnly").unwrap();
        assert_eq!(pouchdb.lifetime, DEFAULT_LIFETIME);
    }

    #[test]
    fn lifetimes_are_bounded_and_bad_values_refused() {
        let lifetime = |age: &str| {
            parse_set_cookie(&format!("AuthSession=a; max-age={age}"))
                .unwrap()
                .lifetime
        };
        assert_eq!(lifetime("0"), SHORTEST);
        assert_eq!(lifetime("-5"), SHORTEST);
        assert_eq!(lifetime("99999999999999"), LONGEST);
        assert_eq!(lifetime("soon"), DEFAULT_LIFETIME);
        assert!(
            parse_set_cookie("AuthSession=; Max-Age=0")
                .unwrap_err()
                .contains("empty")
        );
        assert!(parse_set_cookie("AuthSession=a\u{7f}b").is_err());
        assert!(parse_set_cookie("AuthSession=a\\b").is_err());
    }
}
