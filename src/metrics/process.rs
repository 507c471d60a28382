//! Counts of the whole process that no phase owns, for the live metrics endpoint: the
//! connections open to the target's nodes now, and the logins since the start. They change
//! only when a connection opens or closes and when a login ends, never per request, so one
//! shared counter each costs the measured run nothing.

use std::sync::atomic::{AtomicU64, Ordering};

static OPEN_CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static LOGINS: AtomicU64 = AtomicU64::new(0);
static FAILED_LOGINS: AtomicU64 = AtomicU64::new(0);

/// Held by an open connection: counts it among the open ones until it is dropped.
#[derive(Debug)]
pub struct OpenConnection(());

impl OpenConnection {
    pub fn count() -> OpenConnection {
        OPEN_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        OpenConnection(())
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        OPEN_CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Connections open now: the measuring ones, and the setup's and logins' while they last.
pub fn open_connections() -> u64 {
    OPEN_CONNECTIONS.load(Ordering::Relaxed)
}

/// A login ended, successfully or not.
pub fn logged_in(succeeded: bool) {
    LOGINS.fetch_add(1, Ordering::Relaxed);
    FAILED_LOGINS.fetch_add(u64::from(!succeeded), Ordering::Relaxed);
}

/// Logins tried since the process started, and how many of them failed.
pub fn logins() -> (u64, u64) {
    // Failures first: one that ends in between shows among the tried, not the failed.
    let failed = FAILED_LOGINS.load(Ordering::Relaxed);
    (LOGINS.load(Ordering::Relaxed), failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_login_counts_among_the_tried_and_the_failed() {
        // Other tests of this process log in too, but counts only ever grow.
        let (tried, failed) = logins();
        logged_in(false);
        logged_in(true);
        let (tried_now, failed_now) = logins();
        assert!(tried_now >= tried + 2, "{tried} then {tried_now}");
        assert!(failed_now > failed, "{failed} then {failed_now}");
    }
}
