//! Who a fleet's devices log in as with `--device-users`: a user per own database, with
//! a password the run makes and never shows. Every client machine of a run must know
//! the same passwords without sending them anywhere, so each is derived (HMAC-SHA256)
//! from the run's own password and the user's name; a run without a password, on one
//! machine, derives them from a random key instead.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::Auth;
use crate::driver::Endpoint;
use crate::target::{Credentials, Target};

/// What the device users' passwords are derived from. No `Debug` of its bytes.
#[derive(Clone)]
pub struct DeviceKey(Vec<u8>);

impl DeviceKey {
    /// From the run's password when it has one (every machine of the run derives the
    /// same), else a random key of this process alone.
    pub fn new(password: Option<&str>) -> DeviceKey {
        match password.filter(|p| !p.is_empty()) {
            Some(password) => DeviceKey(password.as_bytes().to_vec()),
            None => DeviceKey(rand::random::<[u8; 32]>().to_vec()),
        }
    }

    /// `user`'s password: 43 characters of base64url (256 bits).
    fn password(&self, user: &str) -> String {
        // Any key length is valid for HMAC; the error cannot happen.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            return String::new();
        };
        mac.update(b"sofabench device user\0");
        mac.update(user.as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// The credentials `user` logs in with.
    pub fn credentials(&self, user: &str) -> Credentials {
        Credentials {
            user: user.to_string(),
            password: self.password(user),
        }
    }
}

impl fmt::Debug for DeviceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeviceKey(***)")
    }
}

/// The user a device of an own database logs in as: named after the database, so that
/// it is the run's own and found again by a later run on the same databases.
pub fn user_name(database: &str) -> String {
    let safe: String = database
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    format!("{safe}-device")
}

/// One own database's login: its user and an endpoint per node that sends the user's
/// Basic credentials (the password is among the endpoint's secrets, hidden in every
/// message).
pub struct DeviceLogin {
    pub user: String,
    /// The database's path below the node, e.g. `/bench-0003`.
    pub database_path: String,
    /// One per node of the target, in its order.
    pub endpoints: Vec<Arc<Endpoint>>,
}

/// The logins of every own database, in the order of [`Target::each`]: a device of own
/// database `i` logs in with `each[i]`.
#[derive(Default)]
pub struct DeviceLogins {
    pub each: Vec<DeviceLogin>,
}

impl DeviceLogins {
    /// The logins of `databases` (the run's own, each a target), their passwords from `key`.
    pub fn new(databases: &[Target], key: &DeviceKey, max_response: u64) -> DeviceLogins {
        let each = databases
            .iter()
            .map(|database| {
                let user = user_name(&database.database);
                let auth = Auth::basic(Some(key.credentials(&user)));
                DeviceLogin {
                    user,
                    database_path: database.database_path(),
                    endpoints: Endpoint::all(database, &auth, max_response),
                }
            })
            .collect();
        DeviceLogins { each }
    }
}

impl fmt::Debug for DeviceLogins {
    /// The users, never a password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let users: Vec<&str> = self.each.iter().map(|l| l.user.as_str()).collect();
        f.debug_struct("DeviceLogins")
            .field("users", &users)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_sharing_a_password_derive_the_same_and_users_differ() {
        let one = DeviceKey::new(Some("admin-pw"));
        let other = DeviceKey::new(Some("admin-pw"));
        let a = one.credentials("db-0000-device");
        assert_eq!(a.password, other.credentials("db-0000-device").password);
        assert_eq!(a.password.len(), 43);
        assert_ne!(a.password, one.credentials("db-0001-device").password);
        assert!(!a.password.contains("admin-pw"));
        let random = DeviceKey::new(None);
        assert_ne!(
            random.credentials("db-0000-device").password,
            DeviceKey::new(None).credentials("db-0000-device").password
        );
        assert_eq!(format!("{one:?}"), "DeviceKey(***)");
    }

    #[test]
    fn a_user_is_named_after_its_database() {
        assert_eq!(user_name("bench-0003"), "bench-0003-device");
        assert_eq!(user_name("a/b(c)"), "a-b-c--device");
    }

    #[test]
    fn logins_follow_the_databases_and_hide_the_password() {
        let mut target = Target::parse("http://127.0.0.1:5984", "db").unwrap();
        target.databases = crate::workload::databases::parse("2").unwrap();
        let key = DeviceKey::new(Some("pw"));
        let logins = DeviceLogins::new(&target.each(), &key, 1 << 20);
        let users: Vec<&str> = logins.each.iter().map(|l| l.user.as_str()).collect();
        assert_eq!(users, ["db-0000-device", "db-0001-device"]);
        assert_eq!(logins.each[1].database_path, "/db-0001");
        let shown = format!("{logins:?} {:?}", logins.each[0].endpoints[0]);
        let password = key.credentials("db-0000-device").password;
        assert!(!shown.contains(&password), "{shown}");
    }
}
