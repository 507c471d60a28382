//! Keeping secrets out of everything sofabench shows: servers quote requests back in their
//! errors, and no message, report or result file may carry a password, a token, an API
//! key or a session cookie.

use crate::target::{Credentials, encode_path_segment};

/// The run's secrets that never change (a password, a JWT, an API key, a proxy secret and
/// its token); the ones servers issue are kept by each credential.
#[derive(Clone, Default)]
pub struct Secrets {
    password: Option<Credentials>,
    others: Vec<String>,
}

impl Secrets {
    pub fn new(password: Option<Credentials>, others: Vec<String>) -> Secrets {
        Secrets {
            password,
            others: others.into_iter().filter(|s| !s.is_empty()).collect(),
        }
    }

    /// `text` with every secret replaced by `***`.
    pub fn hide_in(&self, text: &str) -> String {
        let text = match &self.password {
            Some(credentials) => credentials.hide_in(text),
            None => text.to_string(),
        };
        hide_all(text, &self.others)
    }
}

/// `text` with each of `secrets`, as given and percent-encoded, replaced by `***`.
pub fn hide_all(mut text: String, secrets: &[String]) -> String {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        for form in [secret.clone(), encode_path_segment(secret)] {
            if text.contains(&form) {
                text = text.replace(&form, "***");
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_tokens_are_hidden_in_every_form() {
        let secrets = Secrets::new(
            Some(Credentials {
                user: "admin".to_string(),
                password: "pw 1".to_string(),
            }),
            vec!["api/key".to_string(), String::new()],
        );
        let shown = secrets.hide_in("pw 1, pw%201, api/key, api%2Fkey, admin");
        assert_eq!(shown, "***, ***, ***, ***, admin");
    }
}
