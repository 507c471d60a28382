//! The ways a run can prove who it is, by the names `--auth` takes.

use std::fmt;

/// How requests authenticate (`--auth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No credentials at all (admin party, or a public database).
    None,
    /// `Authorization: Basic` on every request: CouchDB hashes the password each time.
    Basic,
    /// One `POST /_session` per node; its `AuthSession` cookie on every request.
    Cookie,
    /// A JWT from `SOFABENCH_TOKEN` as `Authorization: Bearer` (CouchDB 3's
    /// `jwt_authentication_handler`).
    Jwt,
    /// `X-Auth-CouchDB-UserName`, `-Roles` and `-Token` (CouchDB's
    /// `proxy_authentication_handler`), as a trusted proxy in front of CouchDB sends them.
    Proxy,
    /// An IBM Cloud API key exchanged for bearer tokens at a token endpoint (Cloudant).
    Iam,
}

impl Mode {
    pub const ALL: [Mode; 6] = [
        Mode::None,
        Mode::Basic,
        Mode::Cookie,
        Mode::Jwt,
        Mode::Proxy,
        Mode::Iam,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Basic => "basic",
            Mode::Cookie => "cookie",
            Mode::Jwt => "jwt",
            Mode::Proxy => "proxy",
            Mode::Iam => "iam",
        }
    }

    /// `--auth`'s value, or a message listing the modes.
    pub fn parse(text: &str) -> Result<Mode, String> {
        let wanted = text.trim().to_ascii_lowercase();
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "{text:?} is not an auth mode; give one of {}",
                    names.join(", ")
                )
            })
    }

    /// What to check when the server answers 401 to this mode's requests.
    pub fn refused_hint(self) -> &'static str {
        match self {
            Mode::None => {
                "the server wants credentials: give them in the address, e.g. --database_address=http://USER:PASSWORD@HOST:PORT, or choose another --auth"
            }
            Mode::Basic | Mode::Cookie => {
                "check the user and password, e.g. --database_address=http://USER:PASSWORD@HOST:PORT"
            }
            Mode::Jwt => {
                "check SOFABENCH_TOKEN (its signature, its sub and exp claims) and that the server runs jwt_authentication_handler with the token's key"
            }
            Mode::Proxy => {
                "check --user, --proxy-roles and the proxy secret, and that the server runs proxy_authentication_handler"
            }
            Mode::Iam => {
                "check that the API key in SOFABENCH_IAM_API_KEY may use this Cloudant instance (IAM access policy)"
            }
        }
    }

    /// Whether the mode's credential is issued by a server and must be renewed: before it
    /// expires, and when a request meets a 401.
    pub fn renews(self) -> bool {
        matches!(self, Mode::Cookie | Mode::Iam)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_parses_back_from_its_name_in_any_case() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(&mode.name().to_uppercase()), Ok(mode));
        }
        let error = Mode::parse("oauth").unwrap_err();
        assert!(error.contains("basic, cookie, jwt, proxy, iam"), "{error}");
    }
}
