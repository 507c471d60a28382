//! A connection's way back to a server it lost: retries with a capped, jittered backoff,
//! for as long as the user allows.
//!
//! A server restarted mid-run, or one node of a cluster killed, must show as an error
//! spike and a recovery, not as connections that stop for good. The bound keeps a
//! count-bounded phase against a dead server from waiting forever.

use std::time::{Duration, Instant};

/// The wait before the first retry; it doubles after every failed one.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait between two retries: a server that comes back is found within this.
const MOST_BACKOFF: Duration = Duration::from_secs(2);

/// Whether a connection is up, and when it may try again if it is not.
#[derive(Debug)]
pub struct Reconnect {
    /// How long a connection keeps trying before it gives up (`--reconnect-for`).
    limit: Duration,
    /// When the server was lost, while it is.
    lost_since: Option<Instant>,
    next_try: Instant,
    backoff: Duration,
    /// Retries that failed since the server was lost.
    pub failed_tries: u64,
}

/// What the state says to do now.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Try to connect now.
    Try,
    /// Not before this moment.
    WaitUntil(Instant),
    /// The limit has passed: stop trying; the duration is how long it tried.
    GiveUp(Duration),
}

impl Reconnect {
    pub fn new(limit: Duration) -> Reconnect {
        Reconnect {
            limit,
            lost_since: None,
            next_try: Instant::now(),
            backoff: FIRST_BACKOFF,
            failed_tries: 0,
        }
    }

    pub fn is_down(&self) -> bool {
        self.lost_since.is_some()
    }

    /// The server could not be reached at `now`: the first loss starts the clock, every
    /// later failed try waits longer, up to [`MOST_BACKOFF`], with jitter so that many
    /// connections do not knock at the same moment.
    pub fn failed(&mut self, now: Instant, jitter: f64) {
        if self.lost_since.is_none() {
            self.lost_since = Some(now);
            self.backoff = FIRST_BACKOFF;
        } else {
            self.failed_tries += 1;
            self.backoff = (self.backoff * 2).min(MOST_BACKOFF);
        }
        let wait = super::backoff::jittered(self.backoff, jitter);
        // The last try comes when the limit runs out, not a backoff after it.
        let last = self
            .lost_since
            .and_then(|since| since.checked_add(self.limit))
            .unwrap_or(now);
        self.next_try = now.checked_add(wait).unwrap_or(now).min(last.max(now));
    }

    /// The server answered again.
    pub fn reached(&mut self) {
        self.lost_since = None;
        self.failed_tries = 0;
    }

    pub fn next(&self, now: Instant) -> Next {
        let Some(since) = self.lost_since else {
            return Next::Try;
        };
        let down_for = now.saturating_duration_since(since);
        if down_for >= self.limit {
            Next::GiveUp(down_for)
        } else if now < self.next_try {
            Next::WaitUntil(self.next_try)
        } else {
            Next::Try
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_doubling_up_to_a_cap_then_gives_up() {
        let start = Instant::now();
        let mut state = Reconnect::new(Duration::from_secs(10));
        assert_eq!(state.next(start), Next::Try);
        state.failed(start, 1.0);
        assert!(state.is_down());
        assert_eq!(state.next(start), Next::WaitUntil(start + FIRST_BACKOFF));
        let mut now = start;
        let mut waits = Vec::new();
        for _ in 0..8 {
            let Next::WaitUntil(at) = state.next(now) else {
                panic!("should wait")
            };
            waits.push(at - now);
            now = at;
            assert_eq!(state.next(now), Next::Try);
            state.failed(now, 1.0);
        }
        assert_eq!(waits[1], FIRST_BACKOFF * 2);
        assert_eq!(*waits.last().unwrap(), MOST_BACKOFF);
        let late = start + Duration::from_secs(10);
        assert_eq!(state.next(late), Next::GiveUp(Duration::from_secs(10)));
        state.reached();
        assert_eq!(state.next(late), Next::Try);
        assert!(!state.is_down());
    }

    #[test]
    fn jitter_spreads_the_wait_between_half_and_all_of_the_backoff() {
        let now = Instant::now();
        let mut low = Reconnect::new(Duration::from_secs(1));
        low.failed(now, 0.0);
        assert_eq!(low.next(now), Next::WaitUntil(now + FIRST_BACKOFF / 2));
        let mut odd = Reconnect::new(Duration::from_secs(1));
        odd.failed(now, f64::NAN);
        assert!(matches!(odd.next(now), Next::WaitUntil(_)));
    }

    #[test]
    fn the_last_wait_ends_at_the_limit() {
        let start = Instant::now();
        let limit = Duration::from_millis(120);
        let mut state = Reconnect::new(limit);
        state.failed(start, 1.0);
        let mut now = start;
        while let Next::WaitUntil(at) = state.next(now) {
            assert!(at <= start + limit, "waits past the limit");
            now = at;
            state.failed(now, 1.0);
        }
        assert_eq!(state.next(now), Next::GiveUp(limit));
    }

    #[test]
    fn a_zero_limit_gives_up_at_the_first_loss() {
        let now = Instant::now();
        let mut state = Reconnect::new(Duration::ZERO);
        state.failed(now, 0.5);
        assert!(matches!(state.next(now), Next::GiveUp(_)));
    }
}
