//! The client's own CPU: the cores it may use, the time it has used, and the share of
//! them above which the client, not the server, may be what limits the figures. The
//! engine measures with these and the report judges with them.

use std::time::Duration;

/// CPU time this process has used, user plus system.
pub fn process_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes into the struct we own; RUSAGE_SELF is always valid.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Cores the client may use.
pub fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// Above this share of its cores, the client itself may be what limits the figures.
pub const SATURATED: f64 = 0.9;
