//! The target of a run: the CouchDB-API nodes, the credentials and the database name.
//!
//! Credentials may be given inside an address (`http://user:pass@host:5984`). They are
//! split off here, once, so that no address printed anywhere else can carry a password.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use url::Url;

/// How a node is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Http,
    /// HTTP/1.1 over TLS.
    Https,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// One node of the target: where to connect, and the text to show users for it.
#[derive(Clone, Debug)]
pub struct Node {
    pub scheme: Scheme,
    /// Host name or IP address, as given.
    pub host: String,
    pub port: u16,
    /// The value of the `Host` header.
    pub host_header: String,
    /// Path prefix under which the CouchDB API lives ("" for the root), without a trailing slash.
    pub base_path: String,
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme.as_str(),
            self.host_header,
            self.base_path
        )
    }
}

/// User name and password for HTTP basic authentication.
#[derive(Clone)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

impl crate::text::Redact for Credentials {
    /// The password, as given and with spaces as `+` (a form's encoding), and in base64
    /// alone and inside a Basic header, in both alphabets and without the padding (a
    /// prefix of the padded form, so both are found); its percent-, JSON- and
    /// HTML-escaped forms are decoded where found.
    fn secret_forms(&self, forms: &mut Vec<String>) {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
        if self.password.is_empty() {
            return;
        }
        forms.push(self.password.clone());
        if self.password.contains(' ') {
            forms.push(self.password.replace(' ', "+"));
        }
        let basic = format!("{}:{}", self.user, self.password);
        for alphabet in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            for raw in [&basic, &self.password] {
                let encoded = alphabet.encode(raw);
                if !forms.contains(&encoded) {
                    forms.push(encoded);
                }
            }
        }
    }
}

impl Credentials {
    /// The `Authorization` header value.
    pub fn basic_header(&self) -> String {
        let raw = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Credentials {{ user: {:?}, password: <hidden> }}",
            self.user
        )
    }
}

/// Everything a run needs to know about where it sends requests.
#[derive(Clone, Debug)]
pub struct Target {
    pub nodes: Vec<Node>,
    pub credentials: Option<Credentials>,
    pub database: String,
    /// The TLS client configuration, made by the run's setup when a node is `https://`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// False with --disable-keepalive: every request on a new connection.
    pub keep_alive: bool,
    /// CouchDB's shards (`q`) and copies (`n`) for a database the run creates.
    pub shards: Shards,
    /// `--db-partitioned`: the database is created with `partitioned=true`.
    pub partitioned: bool,
    /// `--databases`: how many databases the documents spread over, named after
    /// `database` (see [`crate::workload::databases`]).
    pub databases: crate::workload::Databases,
}

/// CouchDB's `q` (shards) and `n` (copies of each) asked for at a database's creation
/// (`--db-q`, `--db-n`); the server's defaults where not given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shards {
    pub q: Option<u32>,
    pub n: Option<u32>,
}

impl Shards {
    pub fn is_given(&self) -> bool {
        self.q.is_some() || self.n.is_some()
    }

    /// The query string of the creating `PUT`, with `partitioned=true` when asked:
    /// `?q=8&n=3&partitioned=true`, or nothing.
    pub fn creating_query(&self, partitioned: bool) -> String {
        let query = self.query();
        match (partitioned, query.is_empty()) {
            (false, _) => query,
            (true, true) => "?partitioned=true".to_string(),
            (true, false) => format!("{query}&partitioned=true"),
        }
    }

    /// The query string of the creating `PUT`: `?q=8&n=3`, or nothing.
    pub fn query(&self) -> String {
        let parts: Vec<String> = [("q", self.q), ("n", self.n)]
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| format!("{name}={v}")))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }

    /// `q=8, n=3` as the header and messages name them.
    pub fn describe(&self) -> String {
        self.query().trim_start_matches('?').replace('&', ", ")
    }
}

impl Target {
    /// Parses a comma-separated list of node addresses (credentials allowed in each, but
    /// they must agree) and the database name.
    pub fn parse(addresses: &str, database: &str) -> Result<Target, String> {
        let mut nodes = Vec::new();
        let mut credentials: Option<Credentials> = None;
        for address in addresses
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            let (node, node_credentials) = parse_node(address)?;
            if let Some(given) = node_credentials {
                if let Some(previous) = &credentials
                    && (previous.user != given.user || previous.password != given.password)
                {
                    return Err(format!(
                        "--database_address: the addresses carry different credentials ({} is one); give the same user and password to every node",
                        node
                    ));
                }
                credentials = Some(given);
            }
            nodes.push(node);
        }
        if nodes.is_empty() {
            return Err(
                "--database_address is empty; give the server's address, e.g. --database_address=http://127.0.0.1:5984"
                    .to_string(),
            );
        }
        validate_database_name(database)?;
        Ok(Target {
            nodes,
            credentials,
            database: database.to_string(),
            tls: None,
            keep_alive: true,
            shards: Shards::default(),
            partitioned: false,
            databases: crate::workload::Databases::default(),
        })
    }

    /// Whether any node is `https://`, so that the run needs a TLS configuration.
    pub fn uses_tls(&self) -> bool {
        self.nodes.iter().any(|node| node.scheme == Scheme::Https)
    }

    /// The URL path of the database, percent-encoded, relative to a node's base path.
    /// With `--databases` above 1 it names none of the run's databases: every use of a
    /// spread run goes through [`Target::each`].
    pub fn database_path(&self) -> String {
        format!("/{}", encode_path_segment(&self.database))
    }

    /// The run's databases, each as a target of its own: the run's database alone, or
    /// the `--databases` it spreads over.
    pub fn each(&self) -> Vec<Target> {
        self.databases
            .names(&self.database)
            .into_iter()
            .map(|database| Target {
                database,
                databases: crate::workload::Databases::default(),
                ..self.clone()
            })
            .collect()
    }

    /// The paths of [`Target::each`]'s databases, in order.
    pub fn database_paths(&self) -> Vec<String> {
        self.each().iter().map(Target::database_path).collect()
    }

    /// A description of the target that is safe to print: no password.
    pub fn describe(&self) -> String {
        let nodes: Vec<String> = self.nodes.iter().map(Node::to_string).collect();
        let user = match &self.credentials {
            Some(c) => format!(" as user {:?}", c.user),
            None => String::new(),
        };
        let names = self.databases.names(&self.database);
        let databases = match names.as_slice() {
            [first, .., last] => format!("{} databases {first:?} … {last:?}", names.len()),
            _ => format!("database {:?}", self.database),
        };
        format!("{databases} on {}{}", nodes.join(", "), user)
    }
}

pub(crate) fn parse_node(address: &str) -> Result<(Node, Option<Credentials>), String> {
    let url = Url::parse(address).map_err(|e| {
        format!(
            "--database_address: {:?} is not an address ({e}); write it as http://HOST:PORT, e.g. http://127.0.0.1:5984",
            redact(address)
        )
    })?;
    let scheme = match url.scheme() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => {
            return Err(format!(
                "--database_address: the scheme {other:?} is not supported; write the address as http://HOST:PORT or https://HOST:PORT"
            ));
        }
    };
    let host = match url.host_str() {
        Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']').to_string(),
        _ => {
            return Err(format!(
                "--database_address: {:?} has no host; write it as http://HOST:PORT",
                redact(address)
            ));
        }
    };
    if scheme == Scheme::Https {
        // Checked now, so that every https:// node can be verified once connected.
        rustls::pki_types::ServerName::try_from(host.as_str()).map_err(|e| {
            format!(
                "--database_address: {host:?} cannot be checked against a TLS certificate ({e}); give the server's DNS name or IP address"
            )
        })?;
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let host_header = match url.port() {
        Some(p) => format!("{}:{}", url.host_str().unwrap_or_default(), p),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let credentials = if url.username().is_empty() {
        None
    } else {
        Some(Credentials {
            user: percent_decode(url.username()),
            password: percent_decode(url.password().unwrap_or("")),
        })
    };
    let base_path = url.path().trim_end_matches('/').to_string();
    Ok((
        Node {
            scheme,
            host,
            port,
            host_header,
            base_path,
        },
        credentials,
    ))
}

/// Replaces the password in an address with `***`, for messages about addresses that
/// could not even be parsed.
pub fn redact(address: &str) -> String {
    match (address.find("://"), address.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &address[scheme_end + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!(
                "{}{}:***{}",
                &address[..scheme_end + 3],
                user,
                &address[at..]
            )
        }
        _ => address.to_string(),
    }
}

pub(crate) fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// Percent-encodes a database name for use as one URL path segment (CouchDB allows `/`,
/// `+`, `$`, `(`, `)` in names, which must be encoded).
pub fn encode_path_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// CouchDB refuses database names longer than this.
const LONGEST_NAME: usize = 238;

/// A name (the last of `--databases`, the longest) within CouchDB's length.
pub fn check_name_length(name: &str) -> Result<(), String> {
    if name.len() <= LONGEST_NAME {
        return Ok(());
    }
    Err(format!(
        "database name {name:?} is {} characters, over CouchDB's {LONGEST_NAME}; give a shorter --database_name",
        name.len()
    ))
}

/// CouchDB's rule for database names: `^[a-z][a-z0-9_$()+/-]*$`.
fn validate_database_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_$()+/-".contains(c));
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(format!(
            "--database_name {name:?} is not a valid CouchDB database name; it must start with a lowercase letter and use only a-z, 0-9 and _$()+/-"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Redact;

    /// A server that quotes the credentials back in base64 (the Basic header's value, or
    /// the password alone, padded or not, standard or URL-safe alphabet) shows no part of
    /// them.
    #[test]
    fn a_password_in_base64_is_hidden_padded_or_not() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let credentials = Credentials {
            user: "admin".to_string(),
            password: "p@ssZebra99?>".to_string(),
        };
        let basic = STANDARD.encode("admin:p@ssZebra99?>");
        let shown = [
            basic.clone(),
            basic.trim_end_matches('=').to_string(),
            URL_SAFE_NO_PAD.encode("admin:p@ssZebra99?>"),
            STANDARD.encode("p@ssZebra99?>"),
            URL_SAFE_NO_PAD.encode("p@ssZebra99?>"),
        ];
        for form in shown {
            let text = format!("{{\"reason\":\"auth={form}\"}}");
            let hidden = credentials.hide_in(&text);
            assert!(
                hidden.starts_with("{\"reason\":\"auth=***"),
                "{form}: {hidden}"
            );
            assert!(
                hidden.len() < "{\"reason\":\"auth=***==\"}".len() + 1,
                "{form}: {hidden}"
            );
        }
    }

    #[test]
    fn shards_make_the_creating_query() {
        let both = Shards {
            q: Some(8),
            n: Some(3),
        };
        assert_eq!(both.query(), "?q=8&n=3");
        assert_eq!(both.describe(), "q=8, n=3");
        let n = Shards {
            q: None,
            n: Some(2),
        };
        assert_eq!((n.query().as_str(), n.is_given()), ("?n=2", true));
        let none = Shards::default();
        assert_eq!((none.query().as_str(), none.is_given()), ("", false));
        assert_eq!(none.creating_query(true), "?partitioned=true");
        assert_eq!(both.creating_query(true), "?q=8&n=3&partitioned=true");
        assert_eq!(both.creating_query(false), "?q=8&n=3");
    }

    #[test]
    fn credentials_are_split_off_and_never_printed() {
        let t = Target::parse("http://admin:s%40cret@127.0.0.1:5984", "db").unwrap();
        let c = t.credentials.as_ref().unwrap();
        assert_eq!(c.user, "admin");
        assert_eq!(c.password, "s@cret");
        let shown = format!("{} {:?}", t.describe(), t);
        assert!(
            !shown.contains("s@cret") && !shown.contains("s%40cret"),
            "{shown}"
        );
    }

    #[test]
    fn several_nodes_and_base_path() {
        let t = Target::parse("http://a:5984, http://b:6984/couch/", "db").unwrap();
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(t.nodes[1].host, "b");
        assert_eq!(t.nodes[1].port, 6984);
        assert_eq!(t.nodes[1].base_path, "/couch");
        assert_eq!(t.nodes[0].host_header, "a:5984");
    }

    #[test]
    fn bad_addresses_and_names_are_explained() {
        assert!(
            Target::parse("localhost:5984", "db")
                .unwrap_err()
                .contains("http://")
        );
        assert!(
            Target::parse("ftp://x", "db")
                .unwrap_err()
                .contains("https://")
        );
        assert!(Target::parse("", "db").unwrap_err().contains("empty"));
        assert!(
            Target::parse("http://x:1", "Bad")
                .unwrap_err()
                .contains("lowercase")
        );
        let err = Target::parse("http://u:pw@", "db").unwrap_err();
        assert!(!err.contains("pw"), "{err}");
    }

    #[test]
    fn database_path_is_encoded() {
        let t = Target::parse("http://x:1", "a/b+c").unwrap();
        assert_eq!(t.database_path(), "/a%2Fb%2Bc");
    }
}
