//! Setting up connections: how many were opened, how many of those replaced one that was
//! lost or retired, and what the TCP connect and the TLS handshake took.
//!
//! Kept apart from the operations' latencies: a request's service time starts once its
//! connection is open, so what opening costs (a TLS handshake is a few round trips and
//! the server's key exchange) shows here, and whether keep-alive holds shows in the
//! reconnects.

use hdrhistogram::Histogram;

use super::recorder::{new_histogram, record_micros};

/// The connections opened in a step.
#[derive(Clone, Debug)]
pub struct SetupTally {
    /// Connections opened, first ones and reconnects.
    pub opened: u64,
    /// Of those, the ones opened by a connection that had one before: after the server
    /// closed it, a failure, an idle retirement, or every request with
    /// `--disable-keepalive`.
    pub reconnects: u64,
    /// TCP connect times, microseconds.
    pub connect: Histogram<u64>,
    /// TLS handshake times, microseconds; empty over plain http.
    pub handshake: Histogram<u64>,
}

impl Default for SetupTally {
    fn default() -> SetupTally {
        SetupTally {
            opened: 0,
            reconnects: 0,
            connect: new_histogram(),
            handshake: new_histogram(),
        }
    }
}

impl SetupTally {
    /// One connection opened; `reconnect` when its client had one before.
    pub fn record(&mut self, connect_ns: u64, handshake_ns: Option<u64>, reconnect: bool) {
        self.opened = self.opened.saturating_add(1);
        self.reconnects = self.reconnects.saturating_add(u64::from(reconnect));
        record_micros(&mut self.connect, connect_ns);
        if let Some(handshake) = handshake_ns {
            record_micros(&mut self.handshake, handshake);
        }
    }

    pub fn merge(&mut self, other: &SetupTally) {
        self.opened = self.opened.saturating_add(other.opened);
        self.reconnects = self.reconnects.saturating_add(other.reconnects);
        let _ = self.connect.add(&other.connect);
        let _ = self.handshake.add(&other.handshake);
    }

    pub fn clear(&mut self) {
        self.opened = 0;
        self.reconnects = 0;
        self.connect.reset();
        self.handshake.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings_add_up_and_handshakes_only_over_tls() {
        let mut a = SetupTally::default();
        a.record(300_000, None, false);
        a.record(500_000, Some(2_000_000), true);
        let mut b = SetupTally::default();
        b.record(100_000, Some(1_000_000), false);
        a.merge(&b);
        assert_eq!((a.opened, a.reconnects), (3, 1));
        assert_eq!((a.connect.len(), a.handshake.len()), (3, 2));
        assert_eq!(a.handshake.max(), a.handshake.highest_equivalent(2_000));
        a.clear();
        assert_eq!((a.opened, a.connect.len()), (0, 0));
    }
}
