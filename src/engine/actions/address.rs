//! Where the server itself finds the databases of a replication. CouchDB's replicator is
//! a client of both the source and the target URL, so both must be addresses the *server*
//! can reach (behind a proxy or in a cluster that is not the client's address) and both
//! must carry credentials, in the run's auth mode. Passwords are kept apart from every URL
//! that is shown.

use url::Url;

use crate::driver::auth::{Auth, ReplicationAuth};
use crate::target::{Credentials, Target, encode_path_segment, percent_decode, redact};

/// The base address the server uses to reach the run's database's node, and the
/// credentials it must present there.
#[derive(Clone, Debug)]
pub struct ReplicationAddress {
    /// `scheme://host[:port][/base]`, without credentials or a trailing slash.
    base: String,
    auth: Option<ReplicationAuth>,
}

impl ReplicationAddress {
    /// The default: the first `--database_address` node, with the run's credentials in
    /// the run's mode.
    pub fn from_target(target: &Target, auth: &Auth) -> ReplicationAddress {
        ReplicationAddress {
            base: target.nodes[0].to_string(),
            auth: auth.replication(),
        }
    }

    /// `--replication-address URL`; a user and password in it win over the run's mode.
    pub fn parse(text: &str, auth: &Auth) -> Result<ReplicationAddress, String> {
        let fail = |why: String| {
            format!(
                "--replication-address {:?}: {why}; give the base address the server uses to reach its database, e.g. --replication-address http://couchdb-0.couchdb:5984",
                redact(text)
            )
        };
        let (base, credentials) = split_url(text).map_err(fail)?;
        Ok(ReplicationAddress {
            base,
            auth: credentials
                .map(ReplicationAuth::Basic)
                .or_else(|| auth.replication()),
        })
    }

    /// The address as the result file and the report show it: no credentials.
    pub fn describe(&self) -> &str {
        &self.base
    }

    /// What the server's replicator presents at this address.
    pub fn auth(&self) -> Option<&ReplicationAuth> {
        self.auth.as_ref()
    }

    /// The URL of database `name` under this address, without credentials.
    pub fn database_url(&self, name: &str) -> String {
        format!("{}/{}", self.base, encode_path_segment(name))
    }

    /// True when `url` (without credentials) is on the same server as this address, so
    /// the run's credentials may go with it; never sent to another host.
    pub fn same_server(&self, url: &str) -> bool {
        let authority = |u: &str| {
            Url::parse(u).ok().map(|u| {
                (
                    u.scheme().to_string(),
                    u.host_str().unwrap_or_default().to_string(),
                    u.port_or_known_default(),
                )
            })
        };
        authority(url).is_some_and(|a| Some(a) == authority(&self.base))
    }
}

/// Splits `http[s]://[user:password@]host[:port][/path]` into the URL without credentials
/// (and without a trailing slash) and the credentials.
pub fn split_url(text: &str) -> Result<(String, Option<Credentials>), String> {
    let mut url = Url::parse(text.trim()).map_err(|e| format!("not an address ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme {:?} is not http or https",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("no host".to_string());
    }
    let credentials = (!url.username().is_empty()).then(|| Credentials {
        user: percent_decode(url.username()),
        password: percent_decode(url.password().unwrap_or("")),
    });
    // Both calls only fail for URLs that cannot have credentials, checked above.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    Ok((url.as_str().trim_end_matches('/').to_string(), credentials))
}

/// Puts credentials into a URL's userinfo, percent-encoded (PouchDB Server decodes them).
pub fn with_userinfo(url: &str, credentials: &Credentials) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!(
            "{scheme}://{}:{}@{rest}",
            encode_path_segment(&credentials.user),
            encode_path_segment(&credentials.password)
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Redact;

    fn target(address: &str) -> Target {
        Target::parse(address, "db").unwrap()
    }

    fn basic(target: &Target) -> Auth {
        Auth::basic(target.credentials.clone())
    }

    fn credentials(address: &ReplicationAddress) -> &Credentials {
        match address.auth() {
            Some(ReplicationAuth::Basic(c)) => c,
            other => panic!("basic credentials expected, not {other:?}"),
        }
    }

    #[test]
    fn the_default_is_the_first_node_with_the_run_credentials() {
        let t = target("http://u:pw@a:5984/couch,http://b:5984");
        let a = ReplicationAddress::from_target(&t, &basic(&t));
        assert_eq!(a.describe(), "http://a:5984/couch");
        assert_eq!(credentials(&a).password, "pw");
        assert_eq!(a.database_url("x/y"), "http://a:5984/couch/x%2Fy");
    }

    #[test]
    fn a_given_address_keeps_its_own_credentials_and_never_shows_them() {
        let t = target("http://u:pw@127.0.0.1:5984");
        let a =
            ReplicationAddress::parse("https://r:s%40cret@couch-0.svc:6984/", &basic(&t)).unwrap();
        assert_eq!(a.describe(), "https://couch-0.svc:6984");
        assert_eq!(credentials(&a).user, "r");
        assert_eq!(credentials(&a).password, "s@cret");
        let b = ReplicationAddress::parse("http://couch-0.svc:5984", &basic(&t)).unwrap();
        assert_eq!(credentials(&b).user, "u");
    }

    #[test]
    fn bad_addresses_name_the_flag_without_the_password() {
        let e = ReplicationAddress::parse("ftp://u:topsecret@h", &Auth::none()).unwrap_err();
        assert!(
            e.contains("--replication-address") && e.contains("ftp"),
            "{e}"
        );
        assert!(!e.contains("topsecret"), "{e}");
        let e = ReplicationAddress::parse("couch:5984", &Auth::none()).unwrap_err();
        assert!(e.contains("--replication-address"), "{e}");
    }

    #[test]
    fn same_server_compares_scheme_host_and_port() {
        let a = ReplicationAddress::from_target(&target("http://a:5984"), &Auth::none());
        assert!(a.same_server("http://a:5984/other"));
        assert!(!a.same_server("http://a:5985/other"));
        assert!(!a.same_server("http://evil:5984/other"));
        assert!(!a.same_server("https://a:5984/other"));
    }

    #[test]
    fn userinfo_is_percent_encoded() {
        let c = Credentials {
            user: "ad min".to_string(),
            password: "p@ss:w/rd".to_string(),
        };
        assert_eq!(
            with_userinfo("http://h:1/db", &c),
            "http://ad%20min:p%40ss%3Aw%2Frd@h:1/db"
        );
    }

    #[test]
    fn scrub_hides_every_form_of_the_password() {
        let c = Credentials {
            user: "admin".to_string(),
            password: "p@ss word".to_string(),
        };
        let basic = c.basic_header();
        let text = format!(
            "could not open http://admin:p%40ss%20word@h/db with {basic}, p@ss word, p%40ss+word"
        );
        let clean = ReplicationAuth::Basic(c.clone()).hide_in(&text);
        assert!(
            !clean.contains("p@ss") && !clean.contains("p%40ss"),
            "{clean}"
        );
        assert!(
            !clean.contains(basic.trim_start_matches("Basic ")),
            "{clean}"
        );
    }
}
