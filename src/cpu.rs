//! The client's own CPU: the cores it may use, the time it has used, and the share of
//! them above which the client, not the server, may be what limits the figures. The
//! engine measures with these and the report judges with them.

use std::sync::OnceLock;
use std::time::Duration;

/// `--threads`: the runtime threads the run was given, when set (once, before the
/// runtime starts). Process-wide because the process runs one runtime, and every CPU
/// share the engine measures and the report judges is of these threads' cores.
static THREADS: OnceLock<usize> = OnceLock::new();

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

/// The cores of this machine the process may run on.
pub fn machine_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Gives the run `threads` runtime threads; the first call counts.
pub fn set_threads(threads: usize) {
    let _ = THREADS.set(threads);
}

/// Cores the client may use: its runtime threads (`--threads`), one per core by default.
pub fn cores() -> f64 {
    THREADS.get().copied().unwrap_or_else(machine_cores) as f64
}

/// Above this share of its cores, the client itself may be what limits the figures.
pub const SATURATED: f64 = 0.9;
