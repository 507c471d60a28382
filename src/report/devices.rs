//! The lines on a phase's fleet of devices: time to visible, each sync's time and
//! traffic against its budget, cold joins and catch-ups, conflicts, and whether every
//! device converged with the server (those that did not named, with their first
//! difference). Names and differences go out through the text sink, escaped.

use crate::report::changes::percentiles;
use crate::report::numbers::grouped;
use crate::results::devices::{ConvergenceResult, Counted, DevicesResult};
use crate::results::{Latency, PhaseResult};

/// The block; none for a phase without a fleet.
pub fn lines(phase: &PhaseResult) -> String {
    let Some(d) = &phase.devices else {
        return String::new();
    };
    let mut out = heading(d);
    out.push_str(&visible(d));
    out.push_str(&time_line(
        "push",
        &d.push,
        &format!(
            "{} pushes, {} with nothing to push (no request)",
            grouped(d.counts.pushes),
            grouped(d.counts.empty_pushes)
        ),
    ));
    out.push_str(&time_line(
        "pull",
        &d.pull,
        &format!(
            "{} pulls, {} changes read, {} revisions stored",
            grouped(d.counts.pulls),
            grouped(d.counts.changes_read),
            grouped(d.counts.pulled)
        ),
    ));
    if d.initial_sync.count > 0 {
        out.push_str(&time_line(
            "initial sync",
            &d.initial_sync,
            &format!(
                "{} cold devices, documents/s p50 {} min-max {}",
                grouped(d.initial_sync.count),
                grouped(d.initial_docs_per_second.p50),
                grouped(d.initial_docs_per_second.max)
            ),
        ));
    }
    if d.catch_up.count > 0 {
        out.push_str(&time_line(
            "catch-up after offline",
            &d.catch_up,
            &format!("{} returns", grouped(d.catch_up.count)),
        ));
    }
    out.push_str(&traffic(d));
    out.push_str(&writes(d));
    out.push_str(&troubles(d));
    out.push_str(&convergence(d));
    out
}

fn heading(d: &DevicesResult) -> String {
    let mut parts = vec![
        d.scope.clone(),
        d.profile.clone(),
        d.feed.clone(),
        d.sync.clone(),
    ];
    if d.cold_devices > 0 {
        parts.push(format!("{} joined cold", grouped(d.cold_devices)));
    }
    if d.offline_devices > 0 {
        parts.push(format!("{} went offline", grouped(d.offline_devices)));
    }
    let machines = if d.client_nodes > 1 && d.devices_run < d.devices {
        format!(
            "; this machine's {} of them (1 of {} client machines)",
            grouped(d.devices_run),
            d.client_nodes
        )
    } else {
        String::new()
    };
    format!(
        "  devices: {} ({}){machines}; at most {} online and {} feeds held at once\n",
        grouped(d.devices),
        parts.join(", "),
        grouped(d.most_online),
        grouped(d.most_feeds_open)
    )
}

fn time_line(what: &str, l: &Latency, tail: &str) -> String {
    format!("    {what}, ms: {}  ({tail})\n", percentiles(l))
}

fn visible(d: &DevicesResult) -> String {
    let v = &d.visible;
    let mut notes = vec![format!("{} writes tracked", grouped(v.tracked))];
    for (n, what) in [
        (v.early, "seen before their push's answer (as 0)"),
        (v.superseded, "superseded by a later write first"),
        (v.untracked, "untracked (the table was full)"),
    ] {
        if n > 0 {
            notes.push(format!("{} {what}", grouped(n)));
        }
    }
    if v.missing > 0 {
        notes.push(format!(
            "NEVER STORED {} (write, device) pairs",
            grouped(v.missing)
        ));
    }
    let sample = if d.client_nodes > 1 {
        ", between devices of one client machine"
    } else {
        ""
    };
    format!(
        "    time to visible (push answered → another device stored it{sample}), ms: {}  ({})\n",
        percentiles(&d.time_to_visible),
        notes.join(", ")
    )
}

fn counted(c: &Counted) -> String {
    format!(
        "p50 {}  p99 {}  max {}",
        grouped(c.p50),
        grouped(c.p99),
        grouped(c.max)
    )
}

fn traffic(d: &DevicesResult) -> String {
    let c = &d.counts;
    let over = if c.over_budget == 0 {
        "none over budget".to_string()
    } else {
        format!("OVER BUDGET {} cycles", grouped(c.over_budget))
    };
    let mut out = format!(
        "    requests per cycle: {}; bytes per cycle: {}; {over}; {} requests, {} checkpoint writes, {} held feed reads given up (going offline or at the end)\n",
        counted(&d.requests_per_cycle),
        counted(&d.bytes_per_cycle),
        grouped(c.requests),
        grouped(c.checkpoint_writes),
        grouped(c.feeds_given_up)
    );
    for sample in &d.over_budget_samples {
        out.push_str(&format!("      over budget: {sample}\n"));
    }
    out
}

fn writes(d: &DevicesResult) -> String {
    let c = &d.counts;
    let refused = match c.writes_refused {
        0 => String::new(),
        n => format!(", {} refused by the device", grouped(n)),
    };
    format!(
        "    writes: {} ({} of shared documents{refused}); conflicts: {} made by pushes (seen on this machine), {} documents in conflict after pulls, {} held by the server at the end\n",
        grouped(c.writes),
        grouped(c.shared_edits),
        grouped(c.conflicts_created),
        grouped(c.conflicts_seen),
        grouped(d.convergence.server_conflicts)
    )
}

fn troubles(d: &DevicesResult) -> String {
    let c = &d.counts;
    let mut out = String::new();
    if c.resynced_no_log + c.resynced_no_common_session > 0 {
        out.push_str(&format!(
            "    started again from 0: {} (a replication log was gone), {} (the logs shared no session)\n",
            grouped(c.resynced_no_log),
            grouped(c.resynced_no_common_session)
        ));
    }
    if c.failed_pushes + c.failed_pulls + d.warm_up_behind > 0 {
        out.push_str(&format!(
            "    FAILED: {} pushes, {} pulls; {} devices started the phase behind\n",
            grouped(c.failed_pushes),
            grouped(c.failed_pulls),
            grouped(d.warm_up_behind)
        ));
    }
    if c.push_refused + c.pull_failures > 0 {
        out.push_str(&format!(
            "    REFUSED: {} revisions by the server in pushes (left unpushed, counted again at each push that offers them); {} revisions pulls could not use\n",
            grouped(c.push_refused),
            grouped(c.pull_failures)
        ));
    }
    for sample in &d.failure_samples {
        out.push_str(&format!("      failed: {sample}\n"));
    }
    out
}

fn convergence(d: &DevicesResult) -> String {
    let c: &ConvergenceResult = &d.convergence;
    let unfinished = match d.last_sync_unfinished {
        0 => String::new(),
        n => format!(", {} NOT DONE in time", grouped(n)),
    };
    let mut out = format!(
        "    last sync: {:.1} s{unfinished}; converged: {} of {} devices (the server held {} documents, {} conflicts in their scopes)\n",
        d.last_sync_seconds,
        grouped(c.converged),
        grouped(c.checked),
        grouped(c.server_documents),
        grouped(c.server_conflicts)
    );
    if let Some(error) = &c.error {
        out.push_str(&format!("      the server could not be read: {error}\n"));
    }
    for device in &c.diverged {
        out.push_str(&format!(
            "      NOT CONVERGED {}: {}\n",
            crate::text::cut(&device.device, 80),
            crate::text::cut(&device.difference, 300)
        ));
    }
    let unnamed = (c.checked - c.converged.min(c.checked)).saturating_sub(c.diverged.len() as u64);
    if unnamed > 0 {
        out.push_str(&format!(
            "      … and {} more not converged\n",
            grouped(unnamed)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::devices::DivergedDevice;

    fn phase_with(devices: Option<DevicesResult>) -> PhaseResult {
        let mut phase = PhaseResult::of_operations("fleet", 1.0, Vec::new());
        phase.devices = devices;
        phase
    }

    fn result() -> DevicesResult {
        let json = serde_json::json!({
            "devices": 4, "devices_run": 4, "cold_devices": 1, "offline_devices": 0,
            "client_nodes": 1, "scope": "doc-ids", "profile": "pouchdb", "feed": "longpoll",
            "sync": "live", "most_online": 4, "most_feeds_open": 3,
            "warm_up_seconds": 0.5, "warm_up_behind": 0,
            "last_sync_seconds": 1.5, "last_sync_unfinished": 1,
            "counts": { "writes": 9, "over_budget": 2, "conflicts_created": 1 },
            "visible": { "tracked": 9, "missing": 2 },
            "convergence": { "checked": 4, "converged": 1, "server_documents": 7,
                             "server_conflicts": 1 },
            "intervals": [],
        });
        let empty = crate::results::build::latency(&crate::metrics::recorder::new_histogram());
        let mut value = json;
        for name in [
            "time_to_visible",
            "push",
            "pull",
            "initial_sync",
            "catch_up",
        ] {
            value[name] = serde_json::to_value(&empty).unwrap();
        }
        for name in [
            "initial_docs_per_second",
            "requests_per_cycle",
            "bytes_per_cycle",
        ] {
            value[name] = serde_json::json!({ "count": 0, "mean": 0.0, "p50": 0, "p90": 0,
                "p99": 0, "max": 0, "histogram": empty.histogram });
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_phase_without_a_fleet_has_no_block() {
        assert_eq!(lines(&phase_with(None)), "");
    }

    #[test]
    fn what_went_wrong_is_said_and_devices_not_converged_are_named() {
        let mut devices = result();
        devices.convergence.diverged = vec![DivergedDevice {
            device: "n0-d2".into(),
            difference: "lacks \"x\"".into(),
        }];
        let text = lines(&phase_with(Some(devices)));
        for said in [
            "devices: 4 (doc-ids, pouchdb, longpoll, live, 1 joined cold)",
            "NEVER STORED 2",
            "OVER BUDGET 2 cycles",
            "1 NOT DONE in time",
            "converged: 1 of 4 devices",
            "NOT CONVERGED n0-d2: lacks \"x\"",
            "… and 2 more not converged",
            "conflicts: 1 made by pushes",
        ] {
            assert!(text.contains(said), "{said:?} missing from\n{text}");
        }
    }
}
