//! Stopping a run from outside: Ctrl-C, SIGTERM, or a test.
//!
//! Three signals: *stop* ends sending (each connection finishes the request it has in
//! flight), *abandon* gives up on requests still in flight after a grace period, and
//! *given_up* (a second Ctrl-C) skips what the user asked for at the end, `--cleanup`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

/// A one-way switch that connections check between operations and can wait on.
#[derive(Clone, Debug)]
pub struct Signal {
    flag: Arc<AtomicBool>,
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Signal {
    fn default() -> Signal {
        Signal {
            flag: Arc::new(AtomicBool::new(false)),
            sender: Arc::new(watch::channel(false).0),
        }
    }
}

impl Signal {
    pub fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
        self.sender.send_replace(true);
    }

    pub fn is_raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Resolves once the signal is raised. The future owns what it waits on, so a
    /// connection can keep one for all its requests instead of subscribing for each.
    pub fn raised(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.sender.subscribe();
        async move {
            let _ = receiver.wait_for(|raised| *raised).await;
        }
    }
}

/// The three signals of a run.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    pub stop: Signal,
    pub abandon: Signal,
    pub given_up: Signal,
}
