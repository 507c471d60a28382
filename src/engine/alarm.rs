//! Waiting for an operation's scheduled start, to tens of microseconds rather than
//! tokio's whole milliseconds (which rounded up: connections sent 1.3–1.5 ms after their
//! slots and the open model charged that to the server).
//!
//! By default one timer thread ([`super::timer`]) keeps every connection's deadline and
//! wakes the tasks. A timerfd per connection, which tokio watches like a socket, had a
//! lower lag p50 and cost less CPU, but with other processes busy on the machine its p99
//! reached 1–4 ms and operations started late at 10,000/s: tokio looks at its epoll only
//! between batches of tasks. The thread's p99 stayed near 0.1 ms (docs/PERFORMANCE.md,
//! section 5).
//!
//! `SOFABENCH_ALARM=timerfd` or `=tokio` picks the timerfd (Linux; the thread where there
//! is none) or tokio's timer instead, so that `make bench` can measure all three on one
//! build.

use std::time::Instant;

use super::timer;

/// A connection's alarm clock for the open model.
pub enum Alarm {
    #[cfg(target_os = "linux")]
    Fd(timerfd::TimerFd),
    Shared,
    Tokio,
}

impl Alarm {
    /// Must be called within the tokio runtime.
    pub fn new() -> Alarm {
        match std::env::var("SOFABENCH_ALARM").as_deref() {
            Ok("timerfd") => Alarm::timerfd(),
            Ok("tokio") => Alarm::Tokio,
            _ => Alarm::Shared,
        }
    }

    /// A timerfd of its own, where the system has one and a descriptor is left.
    fn timerfd() -> Alarm {
        #[cfg(target_os = "linux")]
        if let Ok(fd) = timerfd::TimerFd::new() {
            return Alarm::Fd(fd);
        }
        Alarm::Shared
    }

    /// Resolves at `at`, to within the system's wake-up latency.
    pub async fn sleep_until(&mut self, at: Instant) {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Fd(fd) => {
                if fd.sleep_until(at).await.is_err() {
                    // Arming failed (it never does with a valid descriptor): still wait.
                    timer::sleep_until(at).await;
                }
            }
            Alarm::Shared => timer::sleep_until(at).await,
            Alarm::Tokio => tokio::time::sleep_until(at.into()).await,
        }
    }
}

#[cfg(target_os = "linux")]
mod timerfd {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Instant;

    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    pub struct TimerFd {
        fd: AsyncFd<OwnedFd>,
    }

    impl TimerFd {
        pub fn new() -> io::Result<TimerFd> {
            // SAFETY: timerfd_create takes no pointers; it returns a new descriptor or -1.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a new descriptor that nothing else owns.
            let owned = unsafe { OwnedFd::from_raw_fd(raw) };
            // SAFETY: the AsyncFd owns the descriptor, which stays open until it is dropped.
            let fd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }
                .map_err(io::Error::from)?;
            Ok(TimerFd { fd })
        }

        /// Arms the timer for `at` and waits for it to expire. Instant is CLOCK_MONOTONIC
        /// on Linux, but its value cannot be read out: the timer is armed relative to now.
        pub async fn sleep_until(&mut self, at: Instant) -> io::Result<()> {
            let left = at.saturating_duration_since(Instant::now());
            // A zero value would disarm the timer rather than fire it at once.
            if left.as_nanos() < 1_000 {
                return Ok(());
            }
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                },
            };
            let raw = self.fd.get_ref().as_raw_fd();
            // Arming resets the expiration count, so an earlier expiry that was never read
            // (a wait given up when the run stopped) cannot end this wait early.
            // SAFETY: `raw` is our timerfd; `spec` outlives the call.
            if unsafe { libc::timerfd_settime(raw, 0, &spec, std::ptr::null_mut()) } < 0 {
                return Err(io::Error::last_os_error());
            }
            loop {
                let mut ready = self.fd.readable().await?;
                let mut expirations = [0u8; 8];
                // SAFETY: reads at most 8 bytes into a buffer of 8.
                let n = unsafe { libc::read(raw, expirations.as_mut_ptr().cast(), 8) };
                if n == 8 {
                    return Ok(());
                }
                // Not expired yet (EAGAIN): the readiness was left from before.
                ready.clear_ready();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_at_the_deadline_not_before_and_not_a_millisecond_late() {
        for alarm in [Alarm::Shared, Alarm::timerfd()] {
            within_a_fraction_of_a_millisecond(alarm).await;
        }
    }

    /// Never before the deadline, in any wait; within a fraction of a millisecond after
    /// it in the median wait of at least one of a few rounds: a machine busy with other
    /// builds (two cores here) can spoil one round, not every one.
    async fn within_a_fraction_of_a_millisecond(mut alarm: Alarm) {
        let mut medians = Vec::new();
        for _ in 0..5 {
            let mut lags = Vec::new();
            for _ in 0..20 {
                let at = Instant::now() + Duration::from_micros(1_500);
                alarm.sleep_until(at).await;
                let now = Instant::now();
                assert!(now >= at);
                lags.push(now - at);
            }
            lags.sort();
            medians.push(lags[10]);
            if lags[10] < Duration::from_micros(700) {
                return;
            }
        }
        panic!("the median lag of every round was 0.7 ms or more: {medians:?}");
    }
}
