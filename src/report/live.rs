//! The live line printed once per interval, in the spirit of the Aerospike benchmark's
//! `read(tps=… timeouts=… errors=…)` lines.

use std::fmt::Write as _;

use crate::cpu::SATURATED;
use crate::metrics::IntervalRow;
use crate::workload::Operation;

fn ms(microseconds: u64) -> f64 {
    microseconds as f64 / 1_000.0
}

/// `  12.0s  read 1,520/s p50 5.20 p99 9.10ms err 0 to 0 | update … | cpu 41%`
pub fn line(row: &IntervalRow, target_rate: Option<f64>) -> String {
    let mut out = format!("{:>7.1}s ", row.elapsed);
    let mut total = 0u64;
    for op in Operation::ALL {
        let m = row.of(op);
        if m.succeeded + m.failed == 0 {
            continue;
        }
        total += m.succeeded + m.failed;
        let rate = m.succeeded as f64 / row.length;
        let (p50, p99) = (ms(m.p50_us), ms(m.p99_us));
        let _ = write!(
            out,
            " {}({:.0}/s p50={:.2} p99={:.2}ms err={} to={})",
            op.name(),
            rate,
            p50,
            p99,
            m.failed - m.timeouts,
            m.timeouts
        );
    }
    if total == 0 {
        out.push_str(" (no operation finished)");
    }
    let _ = write!(out, " cpu={:.0}%", row.cpu * 100.0);
    if row.stalled {
        let _ = write!(
            out,
            " STALLED: no answer while operations were in flight ({} still are)",
            row.in_flight
        );
    }
    if row.late > 0 {
        let target = target_rate.map_or(String::new(), |r| format!(" of {r:.0}/s"));
        let _ = write!(
            out,
            " BEHIND: {} started late{target}: {}",
            row.late,
            behind(row)
        );
    }
    if row.cpu >= SATURATED {
        out.push_str(" SATURATED: the client uses all its CPU, figures describe the client");
    }
    out
}

/// Why operations started late in this interval, as `late_cause` decides for the report.
fn behind(row: &IntervalRow) -> &'static str {
    if row.stalled || row.after_stall {
        "the server stalled, not the client"
    } else if row.cpu >= SATURATED {
        // With the CPU saturated, more connections would only make it worse.
        "the client's CPU is saturated; lower --rate"
    } else if row.machine_cpu.is_some_and(|m| m >= SATURATED) {
        "other processes keep the machine's CPU busy"
    } else {
        "every connection was waiting for an answer; add connections"
    }
}
