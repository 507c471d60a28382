//! What logins share: the client they go through, and how their answers are quoted.

use std::sync::Arc;
use std::time::Duration;

use super::secrets::Secrets;
use crate::driver::connection::{Client, Endpoint};
use crate::target::Node;

/// A login that takes longer than this has failed: it holds up every connection that
/// met a 401 meanwhile.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest login answer read: a session's or a token's answer is a few hundred bytes.
pub const LOGIN_ANSWER_LIMIT: u64 = 64 * 1024;

/// The longest part of an answer a message quotes.
const QUOTE: usize = 300;

/// A client of its own for logins to `node`, apart from the connections that measure.
pub fn client(endpoint: Endpoint) -> Client {
    Client::new(
        Arc::new(endpoint.with_max_response(LOGIN_ANSWER_LIMIT)),
        Some(LOGIN_TIMEOUT),
    )
}

/// An endpoint to `node` for a login, without credentials, over TLS with `tls` if the
/// node is `https://`.
pub fn endpoint(node: &Node, tls: Option<&Arc<rustls::ClientConfig>>) -> Endpoint {
    Endpoint::plain(node.clone()).with_tls(tls)
}

/// The start of an answer's body for a message, secrets hidden.
pub fn quote(body: &[u8], secrets: &Secrets) -> crate::text::Quoted {
    crate::text::Quoted::new(body, secrets, QUOTE)
}
