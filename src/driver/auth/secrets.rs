//! Keeping secrets out of everything sofabench shows: servers quote requests back in their
//! errors, and no message, report or result file may carry a password, a token, an API
//! key or a session cookie.

use crate::target::Credentials;
use crate::text::Redact;

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

    /// The secrets shorter than [`crate::text::SHORT`] characters, named for a warning:
    /// they are hidden only where they stand as a word of their own.
    pub fn short_ones(&self) -> Vec<&'static str> {
        let short = |s: &str| s.chars().count() < crate::text::SHORT;
        let mut named = Vec::new();
        if self
            .password
            .as_ref()
            .is_some_and(|c| !c.password.is_empty() && short(&c.password))
        {
            named.push("the password");
        }
        if self.others.iter().any(|s| short(s)) {
            named.push("a token or key");
        }
        named
    }
}

impl Redact for Secrets {
    fn secret_forms(&self, forms: &mut Vec<String>) {
        if let Some(password) = &self.password {
            password.secret_forms(forms);
        }
        forms.extend(self.others.iter().cloned());
    }
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
        let shown = secrets.hide_in("pw 1, pw%201, pw+1, api/key, api%2Fkey, admin");
        assert_eq!(shown, "***, ***, ***, ***, ***, admin");
    }
}
