//! IBM Cloud IAM, Cloudant's way of logging in: an API key is exchanged for a bearer token
//! at a token endpoint (`POST` of the form `grant_type=urn:ibm:params:oauth:grant-type:apikey&
//! apikey=…`), which answers `{"access_token": …, "expires_in": …, "expiration": …}`. The
//! token goes on every request as `Authorization: Bearer …` and is fetched again ahead of
//! its expiry (an hour on IBM Cloud), or when a request meets a 401.
//!
//! The endpoint's answer is untrusted like any other: read up to a bound, and anything
//! but a token with a lifetime is one message naming the endpoint.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::answer::{self, quote};
use super::credential::{Issued, LoginError};
use super::header::{bearer, check_token};
use super::secrets::Secrets;
use crate::driver::connection::Client;
use crate::driver::{Call, Method};
use crate::target::Node;

/// IBM Cloud's token endpoint (`--iam-token-url`'s default).
pub const DEFAULT_TOKEN_URL: &str = "https://iam.cloud.ibm.com/identity/token";

const GRANT_TYPE: &str = "urn:ibm:params:oauth:grant-type:apikey";
const FORM: &str = "application/x-www-form-urlencoded";

/// Bounds on a token's announced lifetime (see the session cookie's).
const SHORTEST: Duration = Duration::from_secs(2);
const LONGEST: Duration = Duration::from_secs(24 * 3_600);

/// The token endpoint's node from `--iam-token-url`.
pub fn token_node(url: &str) -> Result<Node, String> {
    let (node, credentials) = crate::target::parse_node(url)
        .map_err(|e| e.replacen("--database_address", "--iam-token-url", 1))?;
    if credentials.is_some() {
        return Err(
            "--iam-token-url: put no credentials in the address; the API key comes from SOFABENCH_IAM_API_KEY"
                .to_string(),
        );
    }
    Ok(node)
}

/// Exchanges one API key for tokens at one endpoint.
pub struct IamExchange {
    client: Client,
    /// Below the endpoint's base path (the URL's path): nothing, or `/` for a bare host.
    path: &'static str,
    /// The form, with the API key in it.
    body: Vec<u8>,
    url: String,
    secrets: Secrets,
}

impl IamExchange {
    pub fn new(
        endpoint: &Node,
        api_key: &str,
        tls: Option<&Arc<rustls::ClientConfig>>,
        secrets: Secrets,
    ) -> IamExchange {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", GRANT_TYPE)
            .append_pair("apikey", api_key)
            .finish();
        IamExchange {
            client: answer::client(answer::endpoint(endpoint, tls).with_body_type(FORM)),
            path: if endpoint.base_path.is_empty() {
                "/"
            } else {
                ""
            },
            body: body.into_bytes(),
            url: endpoint.to_string(),
            secrets,
        }
    }

    /// One token, and how long it is good for.
    pub async fn fetch(&mut self) -> Result<Issued, LoginError> {
        let call = Call {
            method: Method::Post,
            path: self.path,
            body: Some(&self.body),
        };
        let url = &self.url;
        // Never `unreachable`: that is about a node, which failing over may stand in for;
        // no node works without the token.
        let answer = self.client.send(&call).await.map_err(|e| {
            LoginError::server(format!(
                "cannot get an IAM token from {url} ({e}); check --iam-token-url"
            ))
        })?;
        match answer.status {
            200 => {}
            400 | 401 | 403 => {
                return Err(LoginError::refused(format!(
                    "the IAM token endpoint {url} refused the API key (status {}: {}); check SOFABENCH_IAM_API_KEY",
                    answer.status,
                    self.why(&answer.body)
                )));
            }
            status => {
                return Err(LoginError::server(format!(
                    "the IAM token endpoint {url} answered status {status}: {}",
                    self.why(&answer.body)
                )));
            }
        }
        let (token, lifetime) = parse_token(&answer.body, SystemTime::now()).map_err(|why| {
            LoginError::server(format!(
                "the IAM token endpoint {url} answered 200 without a usable token: {why}; check --iam-token-url"
            ))
        })?;
        Ok(Issued {
            lines: bearer(&token),
            secret: token,
            lifetime,
        })
    }

    /// IAM's own words for a refusal (`errorMessage`), or the start of the answer.
    fn why(&self, body: &[u8]) -> String {
        let said = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v["errorMessage"].as_str().map(str::to_string));
        match said {
            Some(message) => quote(message.as_bytes(), &self.secrets),
            None => quote(body, &self.secrets),
        }
        .into_string()
    }
}

/// The token of a token endpoint's answer and its lifetime: `expires_in` seconds, or
/// `expiration` (Unix seconds) from `now`. `Err` says what is missing or wrong.
pub fn parse_token(body: &[u8], now: SystemTime) -> Result<(String, Duration), String> {
    let answer: Value = serde_json::from_slice(body).map_err(|e| {
        format!("the answer is not JSON ({e}); a token endpoint answers {{\"access_token\": …, \"expires_in\": …}}")
    })?;
    let token = answer["access_token"]
        .as_str()
        .ok_or("the answer has no access_token string")?;
    check_token("the access_token", token)?;
    let seconds = |v: &Value| v.as_f64().filter(|s| s.is_finite());
    let left = match (
        seconds(&answer["expires_in"]),
        seconds(&answer["expiration"]),
    ) {
        (Some(expires_in), _) => expires_in,
        (None, Some(expiration)) => {
            let now = now
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            expiration - now
        }
        (None, None) => return Err("the answer has neither expires_in nor expiration".to_string()),
    };
    if left <= 0.0 {
        return Err(format!(
            "the token expired already (it had {left:.0} s left)"
        ));
    }
    let lifetime = Duration::try_from_secs_f64(left).unwrap_or(LONGEST);
    Ok((token.to_string(), lifetime.clamp(SHORTEST, LONGEST)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(unix: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(unix)
    }

    #[test]
    fn a_token_lives_expires_in_or_until_its_expiration() {
        let ibm = br#"{"access_token":"eyJraWQ.eyJpYW0.c2ln","refresh_token":"not_used","token_type":"Bearer","expires_in":3600,"expiration":1700003600,"scope":"ibm openid"}"#;
        let (token, lifetime) = parse_token(ibm, at(1_700_000_000)).unwrap();
        assert_eq!(
            (token.as_str(), lifetime),
            ("eyJraWQ.eyJpYW0.c2ln", Duration::from_secs(3600))
        );
        let only_expiration = br#"{"access_token":"t","expiration":1700000600}"#;
        let (_, lifetime) = parse_token(only_expiration, at(1_700_000_000)).unwrap();
        assert_eq!(lifetime, Duration::from_secs(600));
        let huge = br#"{"access_token":"t","expires_in":1e300}"#;
        assert_eq!(parse_token(huge, at(0)).unwrap().1, LONGEST);
    }

    #[test]
    fn answers_without_a_usable_token_say_what_is_wrong() {
        let why = |body: &str| parse_token(body.as_bytes(), at(1_700_000_000)).unwrap_err();
        assert!(why("<html>busy</html>").contains("not JSON"));
        assert!(why(r#"{"expires_in":60}"#).contains("no access_token"));
        assert!(why(r#"{"access_token":"t"}"#).contains("neither expires_in nor expiration"));
        assert!(why(r#"{"access_token":"t","expiration":1600000000}"#).contains("expired already"));
        assert!(why(r#"{"access_token":"a\r\nX: y","expires_in":60}"#).contains("control"));
        assert!(why(r#"{"access_token":"","expires_in":60}"#).contains("empty"));
    }
}
