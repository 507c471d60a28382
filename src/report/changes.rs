//! The lines on a phase's `_changes` consumers: change latency, what was seen and what
//! was not, and why the consumers reconnected.

use crate::report::numbers::grouped;
use crate::results::{ChangesResult, Latency, PhaseResult};

/// The block; none for a phase without consumers.
pub fn lines(phase: &PhaseResult) -> String {
    let Some(changes) = &phase.changes else {
        return String::new();
    };
    let mut out = heading(changes);
    let l = &changes.latency;
    out.push_str(&format!(
        "    change latency (answer → feed), ms: {}  ({} sightings)\n",
        percentiles(l),
        grouped(l.count)
    ));
    out.push_str(&seen(changes));
    out.push_str(&troubles(changes));
    let lag = changes
        .intervals
        .iter()
        .map(|i| i.lag_seconds)
        .fold(0.0, f64::max);
    // A phase shorter than an interval has none.
    if let Some(open) = changes.intervals.iter().map(|i| i.open_feeds).max() {
        out.push_str(&format!(
            "    intervals: lag at most {lag:.3} s, feed connections open at most {open}\n"
        ));
    }
    out
}

/// `p50 1.00  p90 …  max 9.00`: a latency's percentiles in milliseconds, as the change
/// and replication lag lines give them.
pub fn percentiles(l: &Latency) -> String {
    format!(
        "p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}",
        l.p50_ms, l.p90_ms, l.p99_ms, l.p999_ms, l.max_ms
    )
}

fn heading(changes: &ChangesResult) -> String {
    let mut extras = Vec::new();
    if changes.include_docs {
        extras.push("include_docs".to_string());
    }
    if let Some(selector) = &changes.selector {
        extras.push(format!("selector {selector}"));
    }
    let extras = if extras.is_empty() {
        String::new()
    } else {
        format!(", {}", extras.join(", "))
    };
    let over = match (changes.databases, changes.databases_unfollowed) {
        (0 | 1, 0) => String::new(),
        (n, 0) => format!(" over {n} databases (consumer i follows database i mod N)"),
        (n, more) => format!(
            " over {n} databases (consumer i follows database i mod N; {more} more not followed, their writes not tracked)"
        ),
    };
    let sample = super::changes::sampled(changes.client_nodes);
    format!(
        "  changes feed: {} {} consumer{}{over}, heartbeat {} ms{extras}{sample}\n",
        changes.consumers,
        changes.feed,
        if changes.consumers == 1 { "" } else { "s" },
        changes.heartbeat_ms
    )
}

/// With several client machines: whose writes the feeds tracked.
pub fn sampled(client_nodes: u64) -> String {
    if client_nodes <= 1 {
        return String::new();
    }
    format!(
        "; this machine's writes only, a sample (1 of {client_nodes} client machines: the others' are among those matching no tracked write)"
    )
}

pub fn seen(changes: &ChangesResult) -> String {
    let missing = if changes.missing_writes == 0 {
        "none missing".to_string()
    } else {
        format!(
            "MISSING {} writes ({} sightings) {:.1} s after the operations",
            grouped(changes.missing_writes),
            grouped(changes.missing_sightings),
            changes.waited_seconds
        )
    };
    let untracked = match changes.writes_untracked {
        0 => String::new(),
        n => format!(", {} untracked (the table was full)", grouped(n)),
    };
    format!(
        "    writes: {} tracked{untracked}; {missing}; {} seen before their answer (as 0), {} only through a later revision; changes received {}, {} matching no tracked write\n",
        grouped(changes.writes_tracked),
        grouped(changes.early),
        grouped(changes.superseded),
        grouped(changes.changes),
        grouped(changes.unmatched)
    )
}

pub fn troubles(changes: &ChangesResult) -> String {
    let t = &changes.troubles;
    if t.reconnects == 0 {
        return "    reconnects: none\n".to_string();
    }
    let causes: Vec<String> = [
        (t.stalls, "stalls (no heartbeat)"),
        (t.resets, "resets"),
        (t.bad_answers, "bad answers"),
        (t.too_long, "lines or answers too long"),
        (t.error_statuses, "error statuses"),
        (t.connect_failures, "connection failures"),
        (t.ended, "feeds ended by the server"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", grouped(n)))
    .collect();
    format!(
        "    reconnects: {} ({})\n",
        grouped(t.reconnects),
        causes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::changes::with_intervals;

    #[test]
    fn the_heading_says_which_databases_the_consumers_followed() {
        let mut changes = with_intervals(Vec::new());
        assert_eq!(
            heading(&changes),
            "  changes feed: 2 continuous consumers, heartbeat 1000 ms\n"
        );
        changes.databases = 2;
        assert!(heading(&changes).contains("consumers over 2 databases (consumer i follows"));
        changes.client_nodes = 3;
        assert!(
            heading(&changes)
                .contains("; this machine's writes only, a sample (1 of 3 client machines")
        );
        changes.databases_unfollowed = 98;
        assert!(
            heading(&changes).contains("98 more not followed, their writes not tracked)"),
            "{}",
            heading(&changes)
        );
    }
}
