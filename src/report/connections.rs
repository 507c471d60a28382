//! The lines on setting up connections: how many were opened, how many replaced one, and
//! what the TCP connect and the TLS handshake took, so a user sees what TLS costs and
//! whether keep-alive holds.

use crate::report::numbers::grouped;
use crate::results::{ConnectionSetupResult, Latency, PhaseResult};

/// Two lines at most; none when the phase opened no connection (they were all opened by
/// an earlier phase and kept).
pub fn lines(phase: &PhaseResult) -> String {
    let Some(setup) = &phase.connection_setup else {
        return String::new();
    };
    let mut out = format!(
        "  connections: {} opened, {}\n",
        grouped(setup.opened),
        reconnects(setup, phase.connections)
    );
    out.push_str(&format!("    {}\n", times("TCP connect", &setup.connect)));
    if let Some(handshake) = &setup.handshake {
        out.push_str(&format!("    {}\n", times("TLS handshake", handshake)));
    }
    out
}

fn reconnects(setup: &ConnectionSetupResult, connections: u64) -> String {
    match setup.reconnects {
        0 => "no reconnects".to_string(),
        n => format!(
            "{} of them reconnects ({:.1} per connection)",
            grouped(n),
            n as f64 / connections.max(1) as f64
        ),
    }
}

pub(super) fn times(what: &str, latency: &Latency) -> String {
    format!(
        "{what}: mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        latency.mean_ms, latency.p50_ms, latency.p99_ms, latency.max_ms
    )
}
