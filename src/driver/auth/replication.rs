//! The credentials a replication hands the server: CouchDB's replicator is a client of the
//! run's database too, and logs in there in the run's mode, in the form CouchDB 3 (and
//! Cloudant) take in a `_replicate` or `_replicator` document's endpoint object.

use std::fmt;

use super::secrets::hide_all;
use crate::target::Credentials;

/// How the server's replicator proves who it is at one end of a replication.
#[derive(Clone)]
pub enum ReplicationAuth {
    /// `"auth": {"basic": {"username", "password"}}` (basic and cookie: CouchDB's
    /// replicator logs in with a session of its own).
    Basic(Credentials),
    /// `"auth": {"iam": {"api_key"}}` (Cloudant).
    Iam { api_key: String },
    /// `"headers": {…}` sent as they are (a JWT, proxy authentication).
    Headers(Vec<(String, String)>),
}

impl fmt::Debug for ReplicationAuth {
    /// The form and the user, never a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplicationAuth::Basic(credentials) => write!(f, "Basic({credentials:?})"),
            ReplicationAuth::Iam { .. } => f.write_str("Iam { api_key: <hidden> }"),
            ReplicationAuth::Headers(headers) => {
                let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
                write!(f, "Headers({names:?}, values hidden)")
            }
        }
    }
}

impl ReplicationAuth {
    /// `text` with these credentials' secrets hidden.
    pub fn hide_in(&self, text: &str) -> String {
        match self {
            ReplicationAuth::Basic(credentials) => credentials.hide_in(text),
            ReplicationAuth::Iam { api_key } => {
                hide_all(text.to_string(), std::slice::from_ref(api_key))
            }
            ReplicationAuth::Headers(headers) => {
                let values: Vec<String> = headers.iter().map(|(_, v)| v.clone()).collect();
                hide_all(text.to_string(), &values)
            }
        }
    }
}
