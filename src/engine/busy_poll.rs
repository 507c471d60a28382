//! `--busy-poll`: the client's threads keep polling for answers instead of sleeping.
//!
//! A client thread that sleeps while its requests are in flight has to be woken by the
//! server's write of the answer, and when the two run on different cores that wake-up is
//! paid for by the server, inside its send. Where the server is the bottleneck this
//! lowers what it serves: against nginx over TLS at 8 connections, sofabench slept about
//! once every 11 reads and nginx spent 10.9 µs per read, against 10.3 µs for wrk, which
//! is slower and so never sleeps (docs/PERFORMANCE.md, section 9).
//!
//! A task that does nothing but yield keeps its thread awake: each time it yields,
//! tokio's worker polls the I/O driver and the timers without blocking before it runs
//! the task again, so answers are picked up as they arrive and nobody pays for a wake-up.
//! The price is that every thread of the client is fully busy for the whole phase,
//! whatever the load, which is why it is a flag: on a machine the client shares with the
//! database it takes cores the database needs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::task::JoinHandle;

/// One polling task per worker thread of the runtime, until dropped.
pub struct BusyPoll {
    done: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
}

impl BusyPoll {
    /// Starts the polling tasks on the current runtime.
    pub fn start() -> BusyPoll {
        let threads = tokio::runtime::Handle::current().metrics().num_workers();
        let done = Arc::new(AtomicBool::new(false));
        let tasks = (0..threads)
            .map(|_| tokio::spawn(poll_until(done.clone())))
            .collect();
        BusyPoll { done, tasks }
    }
}

async fn poll_until(done: Arc<AtomicBool>) {
    while !done.load(Ordering::Relaxed) {
        tokio::task::yield_now().await;
    }
}

impl Drop for BusyPoll {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    /// How often the runtime's one worker thread went to sleep while a task on it waited
    /// 100 ms for a timer, with or without the poller.
    fn sleeps_while_waiting(poll: bool) -> u64 {
        let sleeps = Arc::new(AtomicU64::new(0));
        let counter = sleeps.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .on_thread_park(move || {
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .unwrap();
        runtime.block_on(async {
            let poller = poll.then(BusyPoll::start);
            let waiting = tokio::spawn(async move {
                let before = sleeps.load(Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                sleeps.load(Ordering::Relaxed) - before
            });
            let slept = waiting.await.unwrap();
            drop(poller);
            slept
        })
    }

    #[test]
    fn keeps_the_worker_awake_until_dropped() {
        assert_eq!(sleeps_while_waiting(true), 0);
        assert!(sleeps_while_waiting(false) >= 1);
    }
}
