//! How requests say who sends them (`--auth`): Basic authentication, CouchDB session
//! cookies, a JWT, proxy authentication headers, or IBM Cloud IAM tokens (Cloudant).
//!
//! Every node has a [`Credential`]: the header lines its connections send, shared by
//! them. The modes whose credential a server issues (cookie, iam) log in once per node
//! (iam once for all nodes, as the token is the account's), renew ahead of expiry and on a
//! 401, and count and time every login apart from the operations. The mode and what it
//! needs are chosen and checked once, here, from what the user gave; secrets stay inside
//! and never show in `Debug`, messages or results.

mod answer;
mod credential;
mod device;
mod header;
mod iam;
mod jwt;
mod mode;
mod proxy;
mod replication;
mod secrets;
mod session;

use std::fmt;
use std::sync::Arc;

pub use credential::{Credential, HeaderCopy, LoginError, RETRY_AFTER};
pub use device::{DeviceKey, DeviceLogin, DeviceLogins, user_name};
pub use iam::DEFAULT_TOKEN_URL;
pub use mode::Mode;
pub use proxy::ProxyUser;
pub use replication::ReplicationAuth;
pub use secrets::Secrets;

use super::connection::Endpoint;
use crate::metrics::LoginTally;
use crate::target::{Credentials, Node, Scheme, Target};
use credential::Source;

/// What the user gave for authenticating, before it is checked. No `Debug`: it holds the
/// secrets.
#[derive(Clone, Default)]
pub struct Given {
    /// `--auth`, if given.
    pub mode: Option<Mode>,
    /// From the address, or `--user` and `--password`.
    pub credentials: Option<Credentials>,
    /// `SOFABENCH_TOKEN`.
    pub token: Option<String>,
    /// `SOFABENCH_IAM_API_KEY`.
    pub api_key: Option<String>,
    /// `--iam-token-url`.
    pub iam_token_url: Option<String>,
    /// `--proxy-roles`.
    pub proxy_roles: Option<String>,
    /// `SOFABENCH_PROXY_SECRET` or `--proxy-secret-file`.
    pub proxy_secret: Option<String>,
}

/// The run's way of authenticating, checked, with the secrets it needs.
#[derive(Clone)]
pub struct Auth {
    pub mode: Mode,
    /// User and password (basic, cookie).
    credentials: Option<Credentials>,
    /// The JWT (jwt).
    token: Option<String>,
    proxy: Option<ProxyUser>,
    iam: Option<Iam>,
}

#[derive(Clone)]
struct Iam {
    api_key: String,
    endpoint: Node,
}

impl Auth {
    /// Anonymous requests.
    pub fn none() -> Auth {
        Auth {
            mode: Mode::None,
            credentials: None,
            token: None,
            proxy: None,
            iam: None,
        }
    }

    /// Basic authentication with `credentials`, or none without.
    pub fn basic(credentials: Option<Credentials>) -> Auth {
        Auth {
            mode: if credentials.is_some() {
                Mode::Basic
            } else {
                Mode::None
            },
            credentials,
            ..Auth::none()
        }
    }

    /// The mode the user asked for (by default basic with credentials, none without),
    /// checked to have what it needs; with warnings about what it leaves unused.
    pub fn choose(given: Given) -> Result<(Auth, Vec<String>), String> {
        let mode = given.mode.unwrap_or(if given.credentials.is_some() {
            Mode::Basic
        } else {
            Mode::None
        });
        let mut warnings = unused(mode, &given);
        let auth = match mode {
            Mode::None => Auth::none(),
            Mode::Basic | Mode::Cookie => Auth {
                mode,
                ..Auth::basic(Some(needs_credentials(mode, given.credentials)?))
            },
            Mode::Jwt => Auth {
                mode,
                token: Some(jwt(given.token)?),
                ..Auth::none()
            },
            Mode::Proxy => Auth {
                mode,
                proxy: Some(proxy(
                    given.credentials,
                    given.proxy_roles,
                    given.proxy_secret,
                )?),
                ..Auth::none()
            },
            Mode::Iam => Auth {
                mode,
                iam: Some(iam(given.api_key, given.iam_token_url)?),
                ..Auth::none()
            },
        };
        warnings.extend(short_secrets(&auth.secrets()));
        Ok((auth, warnings))
    }

    /// The user the requests come as, if the mode names one (never a password).
    pub fn user(&self) -> Option<&str> {
        match (&self.credentials, &self.proxy) {
            (Some(c), _) => Some(&c.user),
            (None, Some(p)) => Some(&p.user),
            _ => None,
        }
    }

    /// When the JWT expires, in jwt mode, for the run's header.
    pub fn token_expiry(&self) -> Option<String> {
        let token = self.token.as_deref()?;
        Some(jwt::describe(jwt::expiry(token), unix_now()))
    }

    /// The token endpoint's address, in iam mode.
    pub fn iam_token_url(&self) -> Option<String> {
        self.iam.as_ref().map(|i| i.endpoint.to_string())
    }

    /// The roles proxy authentication claims, in proxy mode.
    pub fn proxy_roles(&self) -> Option<&str> {
        self.proxy.as_ref().map(|p| p.roles.as_str())
    }

    /// Every secret of the run, to hide in what sofabench shows.
    pub fn secrets(&self) -> Secrets {
        let mut others: Vec<String> = self.token.iter().cloned().collect();
        if let Some(proxy) = &self.proxy {
            others.extend(proxy.secret.iter().cloned());
            others.extend(proxy.token());
        }
        others.extend(self.iam.iter().map(|i| i.api_key.clone()));
        Secrets::new(self.credentials.clone(), others)
    }

    /// One credential per node of `target`, in order: its own for session cookies, one
    /// shared by all nodes otherwise. Logins go over the target's TLS settings.
    pub fn credentials_for(&self, target: &Target) -> Vec<Arc<Credential>> {
        let secrets = self.secrets();
        let tls = target.tls.as_ref();
        if let (Mode::Cookie, Some(credentials)) = (self.mode, &self.credentials) {
            return target
                .nodes
                .iter()
                .map(|node| {
                    let login = session::SessionLogin::new(node, credentials, tls, secrets.clone());
                    Credential::renewing(Mode::Cookie, Source::Session(login), secrets.clone())
                })
                .collect();
        }
        let shared = match &self.iam {
            Some(iam) => {
                let exchange =
                    iam::IamExchange::new(&iam.endpoint, &iam.api_key, tls, secrets.clone());
                Credential::renewing(Mode::Iam, Source::Iam(exchange), secrets)
            }
            None => Credential::fixed(self.mode, self.fixed_lines(), secrets),
        };
        vec![shared; target.nodes.len()]
    }

    /// Whether logging in needs TLS even if no node is `https://` (an IAM token endpoint).
    pub fn needs_tls(&self) -> bool {
        self.iam
            .as_ref()
            .is_some_and(|iam| iam.endpoint.scheme == Scheme::Https)
    }

    /// The lines of the modes whose lines never change.
    fn fixed_lines(&self) -> Vec<u8> {
        let mut lines = Vec::new();
        if let Some(credentials) = &self.credentials {
            header::push_line(&mut lines, "Authorization", &credentials.basic_header());
        }
        if let Some(token) = &self.token {
            lines.extend(header::bearer(token));
        }
        if let Some(proxy) = &self.proxy {
            lines.extend(proxy.lines());
        }
        lines
    }

    /// What the server's replicator presents at the run's database, in this mode.
    pub fn replication(&self) -> Option<ReplicationAuth> {
        match self.mode {
            Mode::None => None,
            Mode::Basic | Mode::Cookie => self.credentials.clone().map(ReplicationAuth::Basic),
            Mode::Jwt => self.token.as_ref().map(|t| {
                ReplicationAuth::Headers(vec![("Authorization".to_string(), format!("Bearer {t}"))])
            }),
            Mode::Proxy => self.proxy.as_ref().map(|p| {
                let headers = p.headers().into_iter().map(|(n, v)| (n.to_string(), v));
                ReplicationAuth::Headers(headers.collect())
            }),
            Mode::Iam => self.iam.as_ref().map(|i| ReplicationAuth::Iam {
                api_key: i.api_key.clone(),
            }),
        }
    }
}

impl fmt::Debug for Auth {
    /// The mode and the user, never a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("mode", &self.mode)
            .field("user", &self.user())
            .finish_non_exhaustive()
    }
}

fn needs_credentials(mode: Mode, credentials: Option<Credentials>) -> Result<Credentials, String> {
    credentials.ok_or_else(|| {
        format!(
            "--auth {mode} needs a user name and password: put them in the address (--database_address=http://USER:PASSWORD@HOST:PORT) or in SOFABENCH_USER and SOFABENCH_PASSWORD"
        )
    })
}

/// Seconds since the Unix epoch; a clock set before 1970 reads as 0.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn jwt(token: Option<String>) -> Result<String, String> {
    let token = token.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).ok_or(
        "--auth jwt needs the token in the SOFABENCH_TOKEN environment variable (it is sent as Authorization: Bearer TOKEN, which CouchDB's jwt_authentication_handler checks)",
    )?;
    header::check_token("SOFABENCH_TOKEN", &token)?;
    jwt::check_not_expired("SOFABENCH_TOKEN", jwt::expiry(&token), unix_now())?;
    Ok(token)
}

fn proxy(
    credentials: Option<Credentials>,
    roles: Option<String>,
    secret: Option<String>,
) -> Result<ProxyUser, String> {
    let user = credentials.map(|c| c.user).ok_or(
        "--auth proxy needs the user name the proxy vouches for: give --user NAME (or SOFABENCH_USER)",
    )?;
    let roles: Vec<&str> = roles
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    let proxy = ProxyUser {
        user,
        roles: roles.join(","),
        secret: secret
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
    };
    proxy.check()?;
    Ok(proxy)
}

fn iam(api_key: Option<String>, url: Option<String>) -> Result<Iam, String> {
    let api_key = api_key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).ok_or(
        "--auth iam needs an IBM Cloud API key in the SOFABENCH_IAM_API_KEY environment variable (IBM Cloud console: Manage > Access (IAM) > API keys)",
    )?;
    header::check_value("SOFABENCH_IAM_API_KEY", &api_key)?;
    let endpoint = iam::token_node(url.as_deref().unwrap_or(DEFAULT_TOKEN_URL))?;
    Ok(Iam { api_key, endpoint })
}

/// What the user gave that `mode` does not use, each a warning.
fn unused(mode: Mode, given: &Given) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut warn = |what: &str, used_by: &str| {
        warnings.push(format!(
            "{what} does nothing with --auth {mode}; it is for {used_by}"
        ));
    };
    if given
        .credentials
        .as_ref()
        .is_some_and(|c| !c.password.is_empty())
        && matches!(mode, Mode::Jwt | Mode::Proxy | Mode::Iam)
    {
        warn("the password", "--auth basic and cookie");
    }
    if given.iam_token_url.is_some() && mode != Mode::Iam {
        warn("--iam-token-url", "--auth iam");
    }
    if (given.proxy_roles.is_some() || given.proxy_secret.is_some()) && mode != Mode::Proxy {
        warn("a proxy role or secret", "--auth proxy");
    }
    warnings
}

/// Logs every node's credential in (one shared by several nodes once), in node order;
/// each node's address with the login's outcome.
pub async fn start(endpoints: &[Arc<Endpoint>]) -> Vec<(String, Result<(), LoginError>)> {
    let mut outcomes = Vec::new();
    for endpoint in endpoints {
        let outcome = endpoint.credential.start().await;
        outcomes.push((endpoint.node.to_string(), outcome));
    }
    outcomes
}

/// A warning for each kind of secret too short to be hidden everywhere a server may echo it.
fn short_secrets(secrets: &Secrets) -> Vec<String> {
    secrets
        .short_ones()
        .into_iter()
        .map(|which| {
            format!(
                "{which} is shorter than {} characters: in what servers send back it is hidden only where it stands as a word of its own (hiding every such string would mangle ordinary words); a longer one is safer",
                crate::text::SHORT
            )
        })
        .collect()
}

/// The secrets of every one of `credentials` (one shared by several nodes once), to hide
/// in what servers send back.
pub struct AllSecrets<'a>(pub Vec<&'a Arc<Credential>>);

impl<'a> AllSecrets<'a> {
    pub fn of(credentials: impl IntoIterator<Item = &'a Arc<Credential>>) -> AllSecrets<'a> {
        let mut seen: Vec<&Arc<Credential>> = Vec::new();
        for credential in credentials {
            if !seen.iter().any(|c| Arc::ptr_eq(c, credential)) {
                seen.push(credential);
            }
        }
        AllSecrets(seen)
    }
}

impl crate::text::Redact for AllSecrets<'_> {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        for credential in &self.0 {
            credential.secret_forms(forms);
        }
    }
}

/// The logins of every node's credential since they were last taken, added up.
pub fn take_logins<'a>(credentials: impl IntoIterator<Item = &'a Arc<Credential>>) -> LoginTally {
    let mut seen: Vec<&Arc<Credential>> = Vec::new();
    let mut total = LoginTally::default();
    for credential in credentials {
        if seen.iter().any(|c| Arc::ptr_eq(c, credential)) {
            continue;
        }
        seen.push(credential);
        total.merge(&credential.take_logins());
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Redact;

    fn given(mode: Mode) -> Given {
        Given {
            mode: Some(mode),
            ..Given::default()
        }
    }

    fn admin() -> Option<Credentials> {
        Some(Credentials {
            user: "admin".to_string(),
            password: "pw".to_string(),
        })
    }

    #[test]
    fn the_default_is_basic_with_credentials_and_none_without() {
        let (auth, _) = Auth::choose(Given::default()).unwrap();
        assert_eq!(auth.mode, Mode::None);
        let (auth, _) = Auth::choose(Given {
            credentials: admin(),
            ..Given::default()
        })
        .unwrap();
        assert_eq!(auth.mode, Mode::Basic);
        let lines = String::from_utf8(auth.fixed_lines()).unwrap();
        assert_eq!(lines, "Authorization: Basic YWRtaW46cHc=\r\n");
    }

    #[test]
    fn each_mode_names_what_it_lacks() {
        let why = |g: Given| Auth::choose(g).err().unwrap_or_default();
        assert!(why(given(Mode::Cookie)).contains("SOFABENCH_PASSWORD"));
        assert!(why(given(Mode::Jwt)).contains("SOFABENCH_TOKEN"));
        assert!(why(given(Mode::Proxy)).contains("--user"));
        assert!(why(given(Mode::Iam)).contains("SOFABENCH_IAM_API_KEY"));
        let bad_url = Given {
            api_key: Some("k".to_string()),
            iam_token_url: Some("ftp://x".to_string()),
            ..given(Mode::Iam)
        };
        assert!(why(bad_url).starts_with("--iam-token-url"));
        let injected = Given {
            token: Some("a\nb".to_string()),
            ..given(Mode::Jwt)
        };
        assert!(why(injected).contains("SOFABENCH_TOKEN holds a control character"));
    }

    #[test]
    fn unused_inputs_are_warned_of_and_secrets_never_debug_printed() {
        let (auth, warnings) = Auth::choose(Given {
            credentials: admin(),
            token: Some("tok.en.sig".to_string()),
            iam_token_url: Some("http://127.0.0.1:1/token".to_string()),
            ..given(Mode::Jwt)
        })
        .unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let shown = format!("{auth:?} {:?}", auth.replication());
        assert!(
            !shown.contains("tok.en.sig") && !shown.contains("pw"),
            "{shown}"
        );
        assert_eq!(auth.secrets().hide_in("Bearer tok.en.sig"), "Bearer ***");
    }

    #[test]
    fn replications_carry_the_mode_s_credentials_where_couchdb_takes_them() {
        let (proxy, _) = Auth::choose(Given {
            credentials: admin(),
            proxy_roles: Some(" _admin , readers,".to_string()),
            proxy_secret: Some("s3\n".to_string()),
            ..given(Mode::Proxy)
        })
        .unwrap();
        assert_eq!(proxy.proxy_roles(), Some("_admin,readers"));
        let Some(ReplicationAuth::Headers(headers)) = proxy.replication() else {
            panic!("headers expected")
        };
        assert_eq!(headers.len(), 3);
        assert_eq!(headers[2].1, proxy::token("s3", "admin"));
        let (cookie, _) = Auth::choose(Given {
            credentials: admin(),
            ..given(Mode::Cookie)
        })
        .unwrap();
        assert!(matches!(
            cookie.replication(),
            Some(ReplicationAuth::Basic(_))
        ));
        assert!(Auth::none().replication().is_none());
    }

    #[test]
    fn sessions_are_per_node_and_other_credentials_shared() {
        let target = Target::parse("http://a:1,http://b:2", "db").unwrap();
        let (cookie, _) = Auth::choose(Given {
            credentials: admin(),
            ..given(Mode::Cookie)
        })
        .unwrap();
        let per_node = cookie.credentials_for(&target);
        assert!(!Arc::ptr_eq(&per_node[0], &per_node[1]));
        let shared = Auth::basic(admin()).credentials_for(&target);
        assert!(Arc::ptr_eq(&shared[0], &shared[1]));
    }
}
