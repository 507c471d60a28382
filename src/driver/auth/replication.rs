//! The credentials a replication hands the server: CouchDB's replicator is a client of the
//! run's database too, and logs in there in the run's mode, in the form CouchDB 3 (and
//! Cloudant) take in a `_replicate` or `_replicator` document's endpoint object.

use std::fmt;

use crate::target::Credentials;
use crate::text::Redact;

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

impl Redact for ReplicationAuth {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        match self {
            ReplicationAuth::Basic(credentials) => credentials.secret_forms(forms),
            ReplicationAuth::Iam { api_key } => forms.push(api_key.clone()),
            ReplicationAuth::Headers(headers) => {
                forms.extend(headers.iter().map(|(_, value)| value.clone()))
            }
        }
    }
}
