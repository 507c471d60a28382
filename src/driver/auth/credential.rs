//! A node's credential, shared by its connections: the header lines that say who the
//! requests come from and, for the modes whose credential a server issues (session
//! cookies, IAM tokens), getting a new one before it expires or when a request meets a 401.
//!
//! The request path pays one atomic load per request: each connection keeps its own copy
//! of the lines with the generation it was made from ([`HeaderCopy`]) and copies them
//! again only when the generation has moved. Renewing is single-flight: of the
//! connections that meet a 401 together, the first logs in and the others wait for it and
//! take its result; a login that failed is not tried again for [`RETRY_AFTER`].

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::iam::IamExchange;
use super::mode::Mode;
use super::secrets::Secrets;
use super::session::SessionLogin;
use crate::metrics::LoginTally;
use crate::text::Redact;

/// After a failed login, the next try waits this long: a thousand connections meeting
/// 401s from a server that refuses the login must not hammer it.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Issued values remembered for hiding them in messages (the current one and those
/// before it, which a server may still quote).
const REMEMBERED: usize = 8;

/// A generation no credential has: a copy made from it is always made again.
const STALE: u64 = u64::MAX;

/// What a login gave: the header lines, the secret in them, and how long it is good for.
pub struct Issued {
    pub lines: Vec<u8>,
    pub secret: String,
    pub lifetime: Duration,
}

/// Why a login failed, for the user.
#[derive(Clone, Debug)]
pub struct LoginError {
    pub message: String,
    /// The user must change something (a refused password or API key, a wrong address).
    pub bad_input: bool,
    /// The server could not be reached at all.
    pub unreachable: bool,
}

impl LoginError {
    pub fn server(message: String) -> LoginError {
        LoginError {
            message,
            bad_input: false,
            unreachable: false,
        }
    }

    pub fn refused(message: String) -> LoginError {
        LoginError {
            message,
            bad_input: true,
            unreachable: false,
        }
    }
}

impl fmt::Display for LoginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Where a renewing mode gets a new credential.
pub enum Source {
    Session(SessionLogin),
    Iam(IamExchange),
}

/// A login on its way. Boxed: a login sends a request through a client, from inside a
/// client's send that met a 401, and a future cannot hold a future of its own kind.
type Issuing<'a> = Pin<Box<dyn Future<Output = Result<Issued, LoginError>> + Send + 'a>>;

impl Source {
    fn issue(&mut self) -> Issuing<'_> {
        match self {
            Source::Session(login) => Box::pin(login.log_in()),
            Source::Iam(exchange) => Box::pin(exchange.fetch()),
        }
    }
}

/// A renewing credential's state, one renewal at a time.
struct Renewal {
    source: Source,
    /// When to get the next credential, ahead of the current one's expiry.
    renew_at: Option<Instant>,
    /// The last failure and when it happened, while no login has succeeded since.
    failure: Option<(Instant, LoginError)>,
    /// Whether the task that renews ahead of expiry runs.
    kept_fresh: bool,
}

/// The header lines a node's requests carry to say who sends them.
pub struct Credential {
    mode: Mode,
    /// Moves each time `lines` change.
    generation: AtomicU64,
    /// Each line ends in CRLF; empty for `none`, and for a renewing mode before its login.
    lines: Mutex<Arc<[u8]>>,
    renewal: Option<tokio::sync::Mutex<Renewal>>,
    logins: Mutex<LoginTally>,
    /// The run's secrets, and the values servers issued, for [`Credential::hide_in`].
    secrets: Secrets,
    issued: Mutex<VecDeque<String>>,
}

impl Credential {
    /// Lines that never change (none, basic, jwt, proxy).
    pub fn fixed(mode: Mode, lines: Vec<u8>, secrets: Secrets) -> Arc<Credential> {
        Arc::new(Credential::with(mode, lines, None, secrets))
    }

    /// No credentials: requests go anonymous.
    pub fn none() -> Arc<Credential> {
        Credential::fixed(Mode::None, Vec::new(), Secrets::default())
    }

    /// A credential `source` issues; anonymous until [`Credential::start`] or a renewal.
    pub fn renewing(mode: Mode, source: Source, secrets: Secrets) -> Arc<Credential> {
        let renewal = Renewal {
            source,
            renew_at: None,
            failure: None,
            kept_fresh: false,
        };
        let credential = Credential::with(mode, Vec::new(), Some(renewal), secrets);
        Arc::new(credential)
    }

    fn with(mode: Mode, lines: Vec<u8>, renewal: Option<Renewal>, secrets: Secrets) -> Credential {
        Credential {
            mode,
            generation: AtomicU64::new(0),
            lines: Mutex::new(Arc::from(lines)),
            renewal: renewal.map(tokio::sync::Mutex::new),
            logins: Mutex::new(LoginTally::default()),
            secrets,
            issued: Mutex::new(VecDeque::new()),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether a 401 can be answered by getting a new credential.
    pub fn renews(&self) -> bool {
        self.renewal.is_some()
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The first login (none for modes that do not renew), and from then on renewals ahead
    /// of expiry. A credential that several nodes share logs in once.
    pub async fn start(self: &Arc<Self>) -> Result<(), LoginError> {
        let Some(renewal) = &self.renewal else {
            return Ok(());
        };
        let mut renewal = renewal.lock().await;
        if self.generation() > 0 {
            return Ok(());
        }
        self.log_in(&mut renewal).await
    }

    /// Gets a new credential, unless a newer one than generation `seen` (the one a request
    /// met a 401 with) is there already. `Err` when the login failed, now or less than
    /// [`RETRY_AFTER`] ago.
    pub async fn renew(self: &Arc<Self>, seen: u64) -> Result<(), LoginError> {
        let Some(renewal) = &self.renewal else {
            return Err(LoginError::refused(format!(
                "--auth {} has nothing to renew",
                self.mode
            )));
        };
        let mut renewal = renewal.lock().await;
        if self.generation() != seen {
            return Ok(());
        }
        if let Some((at, failure)) = &renewal.failure
            && at.elapsed() < RETRY_AFTER
        {
            return Err(failure.clone());
        }
        self.log_in(&mut renewal).await
    }

    /// One login, counted and timed, and the new lines installed if it succeeded.
    async fn log_in(self: &Arc<Self>, renewal: &mut Renewal) -> Result<(), LoginError> {
        let started = Instant::now();
        let outcome = renewal.source.issue().await;
        let now = Instant::now();
        lock(&self.logins).record(now - started, outcome.is_ok());
        crate::metrics::process::logged_in(outcome.is_ok());
        match outcome {
            Ok(issued) => {
                renewal.failure = None;
                renewal.renew_at = Some(crate::time::duration::after(
                    now,
                    renew_after(issued.lifetime),
                ));
                self.install(issued);
                if !renewal.kept_fresh {
                    renewal.kept_fresh = true;
                    keep_fresh(Arc::downgrade(self));
                }
                Ok(())
            }
            Err(failure) => {
                renewal.failure = Some((now, failure.clone()));
                // The task that renews ahead of expiry tries again after a pause.
                renewal.renew_at = Some(now + RETRY_AFTER);
                Err(failure)
            }
        }
    }

    fn install(&self, issued: Issued) {
        {
            let mut remembered = lock(&self.issued);
            if remembered.len() == REMEMBERED {
                remembered.pop_front();
            }
            remembered.push_back(issued.secret);
        }
        let mut lines = lock(&self.lines);
        *lines = Arc::from(issued.lines);
        // Under the lock: a connection that sees the new generation then finds these lines.
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// When the next renewal ahead of expiry is due, if one is; `None` for fixed lines.
    async fn due(&self) -> Option<Instant> {
        self.renewal.as_ref()?.lock().await.renew_at
    }

    /// The logins since the last call (all of them for the first), counted and timed.
    pub fn take_logins(&self) -> LoginTally {
        std::mem::take(&mut *lock(&self.logins))
    }
}

impl Redact for Credential {
    /// The run's secrets, and every value a server issued (cookies, tokens).
    fn secret_forms(&self, forms: &mut Vec<String>) {
        self.secrets.secret_forms(forms);
        forms.extend(lock(&self.issued).iter().cloned());
    }
}

impl fmt::Debug for Credential {
    /// Without the lines: they hold the secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// A poisoned lock only means another thread panicked holding it; the data is plain.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// When to renew a credential good for `lifetime`: at four fifths of it less a second
/// (servers count a cookie's age in whole seconds), and never within the first second.
pub fn renew_after(lifetime: Duration) -> Duration {
    lifetime
        .mul_f64(0.8)
        .saturating_sub(Duration::from_secs(1))
        .max(Duration::from_secs(1))
}

/// Renews the credential ahead of its expiry for as long as it is in use: the task holds
/// it only while it renews, and ends once the run has let it go.
fn keep_fresh(credential: Weak<Credential>) {
    tokio::spawn(async move {
        loop {
            let due = match credential.upgrade() {
                Some(credential) => credential.due().await,
                None => return,
            };
            let Some(due) = due else { return };
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
                continue;
            }
            let Some(credential) = credential.upgrade() else {
                return;
            };
            let seen = credential.generation();
            // A failure is counted, and tried again by this task or by the next 401.
            let _ = credential.renew(seen).await;
        }
    });
}

/// A connection's copy of its node's header lines: the fixed ones (Host, Accept) and the
/// credential's, made again only when the credential's generation has moved.
pub struct HeaderCopy {
    bytes: Vec<u8>,
    generation: u64,
}

impl Default for HeaderCopy {
    fn default() -> HeaderCopy {
        HeaderCopy {
            bytes: Vec::new(),
            generation: STALE,
        }
    }
}

impl HeaderCopy {
    /// The lines to send: `fixed`, then `credential`'s current ones.
    #[inline]
    pub fn current(&mut self, fixed: &[u8], credential: &Credential) -> &[u8] {
        let generation = credential.generation();
        if generation != self.generation {
            self.copy(fixed, credential, generation);
        }
        &self.bytes
    }

    #[cold]
    fn copy(&mut self, fixed: &[u8], credential: &Credential, generation: u64) {
        let lines = lock(&credential.lines).clone();
        self.bytes.clear();
        self.bytes.extend_from_slice(fixed);
        self.bytes.extend_from_slice(&lines);
        self.generation = generation;
    }

    /// The generation the copy was made from: the one a 401 was met with.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes the next [`HeaderCopy::current`] copy again (the connection moved to
    /// another node).
    pub fn forget(&mut self) {
        self.generation = STALE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_comes_at_four_fifths_of_the_lifetime_less_a_second() {
        assert_eq!(
            renew_after(Duration::from_secs(600)),
            Duration::from_secs(479)
        );
        assert_eq!(renew_after(Duration::from_secs(2)), Duration::from_secs(1));
        assert_eq!(renew_after(Duration::ZERO), Duration::from_secs(1));
    }

    #[test]
    fn a_copy_is_made_again_only_when_the_lines_change() {
        let credential = Credential::fixed(
            Mode::Jwt,
            b"Authorization: Bearer a\r\n".to_vec(),
            Secrets::default(),
        );
        let mut copy = HeaderCopy::default();
        assert_eq!(
            copy.current(b"Host: h\r\n", &credential),
            b"Host: h\r\nAuthorization: Bearer a\r\n"
        );
        let made = copy.current(b"Host: h\r\n", &credential).as_ptr();
        credential.install(Issued {
            lines: b"Authorization: Bearer b\r\n".to_vec(),
            secret: "b".to_string(),
            lifetime: Duration::from_secs(60),
        });
        assert_eq!(
            copy.current(b"Host: h\r\n", &credential),
            b"Host: h\r\nAuthorization: Bearer b\r\n"
        );
        assert_eq!(copy.current(b"Host: h\r\n", &credential).as_ptr(), made);
        assert_eq!(credential.hide_in("token b"), "token ***");
    }
}
