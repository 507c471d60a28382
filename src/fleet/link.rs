//! A device's connection to the server: the driver's client, with one thing more. A
//! live device's pull holds a feed open (longpoll or continuous) on a connection of its
//! own while its writes and pushes go on on another; when the device goes offline or
//! the phase's writes stop, the held feed read is given up, its connection closed, and
//! the pull sees that read fail. Nothing else is ever cut short: only a feed read still
//! waiting for its answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::device::{Answer, DeviceHttp};
use crate::driver::{Call, Client, Method};
use crate::engine::stop::Signal;

/// What a held feed read given up fails with (the fleet knows it for its own, and does
/// not count it as a failure).
pub const INTERRUPTED: &str = "the held feed read was given up";

/// The client, and when to give up a held feed read.
pub struct Link {
    pub client: Client,
    /// Give up a waiting feed read at this moment, if set.
    pub until: Option<tokio::time::Instant>,
    /// And when the phase is told to stop.
    pub stop: Signal,
    /// Set when the last feed read was given up.
    pub interrupted: bool,
    /// When the last held feed read was answered: a live pull's time starts there.
    pub feed_answered: Option<std::time::Instant>,
    /// Live feed reads held at this moment, of all devices.
    pub feeds_open: Arc<AtomicU64>,
}

/// Whether a request is a feed read the server holds until a change comes.
fn is_waiting_feed(path: &str) -> bool {
    path.contains("/_changes?")
        && (path.contains("feed=longpoll") || path.contains("feed=continuous"))
}

impl Link {
    pub fn new(client: Client, stop: Signal, feeds_open: Arc<AtomicU64>) -> Link {
        Link {
            client,
            until: None,
            stop,
            interrupted: false,
            feed_answered: None,
            feeds_open,
        }
    }

    async fn held(&mut self, call: &Call<'_>) -> Result<Answer, String> {
        let until = self.until;
        let stop = self.stop.clone();
        let wait_until = async move {
            match until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        self.feeds_open.fetch_add(1, Ordering::Relaxed);
        let sent = tokio::select! {
            sent = self.client.send(call) => Some(sent),
            () = wait_until => None,
            () = stop.raised() => None,
        };
        self.feeds_open.fetch_sub(1, Ordering::Relaxed);
        self.feed_answered = Some(std::time::Instant::now());
        match sent {
            Some(Ok(exchange)) => Ok(Answer {
                status: exchange.status,
                body: exchange.body,
            }),
            Some(Err(unanswered)) => Err(unanswered.to_string()),
            None => {
                // The request may still be answered on that connection: never reuse it.
                self.client.disconnect();
                self.interrupted = true;
                Err(INTERRUPTED.to_string())
            }
        }
    }
}

impl DeviceHttp for Link {
    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Answer, String> {
        let call = Call { method, path, body };
        if is_waiting_feed(path) {
            return self.held(&call).await;
        }
        match self.client.send(&call).await {
            Ok(exchange) => Ok(Answer {
                status: exchange.status,
                body: exchange.body,
            }),
            Err(unanswered) => Err(unanswered.to_string()),
        }
    }

    fn quote(&self, said: &[u8]) -> String {
        DeviceHttp::quote(&self.client, said)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_held_feed_reads_are_waiting_feeds() {
        assert!(is_waiting_feed("/db/_changes?feed=longpoll&since=3"));
        assert!(is_waiting_feed(
            "/db/_changes?style=all_docs&feed=continuous&heartbeat=1000"
        ));
        assert!(!is_waiting_feed("/db/_changes?feed=normal&since=3"));
        assert!(!is_waiting_feed("/db/_changes?since=3"));
        assert!(!is_waiting_feed("/db/_bulk_get?revs=true"));
        // A document id that merely contains the words is not a feed.
        assert!(!is_waiting_feed("/db/feed=longpoll"));
    }
}
