//! The live line printed once per interval, in the spirit of the Aerospike benchmark's
//! `read(tps=… timeouts=… errors=…)` lines.

use std::fmt::Write as _;

use crate::engine::monitor::SATURATED;
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
    if row.late > 0 {
        let target = target_rate.map_or(String::new(), |r| format!(" of {r:.0}/s"));
        // With the CPU saturated, more connections would only make it worse.
        let fix = if row.cpu >= SATURATED {
            "lower --rate"
        } else {
            "add connections"
        };
        let _ = write!(
            out,
            " BEHIND: {} started late, the client cannot keep up with --rate{target}; {fix}",
            row.late
        );
    }
    if row.cpu >= SATURATED {
        out.push_str(" SATURATED: the client uses all its CPU, figures describe the client");
    }
    out
}
