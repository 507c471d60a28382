//! The live line printed once per interval, in the spirit of the Aerospike benchmark's
//! `read(tps=… timeouts=… errors=…)` lines.

use std::fmt::Write as _;

use crate::cpu::SATURATED;
use crate::metrics::IntervalRow;
use crate::workload::Operation;

fn ms(microseconds: u64) -> f64 {
    microseconds as f64 / 1_000.0
}

/// Whether an interval is too short to give as a rate: shorter than half the one asked
/// for (`--interval`), as the last one of a phase is when the phase's end cuts it. Five
/// operations in 0.1 s shown as 50/s made every phase end in a spike.
pub fn is_partial(length: f64, interval: f64) -> bool {
    length < interval / 2.0
}

/// `  12.0s  read(1520/s p50=5.20 p99=9.10ms err=0 to=0) update(…) cpu=41%`; an operation
/// that met 429s adds `429=` (failed as rate limited) and `retried=` (sent again). A
/// partial interval (see [`is_partial`]) gives its length and counts instead of rates:
/// `  12.1s  last 0.12s: read(182 ok p50=…`.
pub fn line(row: &IntervalRow, target_rate: Option<f64>, partial: bool) -> String {
    let mut out = format!("{:>7.1}s ", row.elapsed);
    if partial {
        let _ = write!(out, " last {:.2}s:", row.length);
    }
    let mut total = 0u64;
    for op in Operation::ALL {
        let m = row.of(op);
        if !m.saw_anything() {
            continue;
        }
        total += m.succeeded + m.failed;
        let done = if partial {
            format!("{} ok", m.succeeded)
        } else {
            format!("{:.0}/s", m.succeeded as f64 / row.length)
        };
        let (p50, p99) = (ms(m.p50_us), ms(m.p99_us));
        let _ = write!(
            out,
            " {}({done} p50={:.2} p99={:.2}ms err={} to={}",
            op.name(),
            p50,
            p99,
            m.failed.saturating_sub(m.timeouts + m.rate_limited),
            m.timeouts
        );
        if m.rate_limited + m.retried_429 > 0 {
            let _ = write!(out, " 429={} retried={}", m.rate_limited, m.retried_429);
        }
        out.push(')');
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
    if row.cpu >= SATURATED && !row.polling {
        out.push_str(" SATURATED: the client uses all its CPU, figures describe the client");
    }
    out
}

/// Why operations started late in this interval, as `late_cause` decides for the report.
fn behind(row: &IntervalRow) -> &'static str {
    let met_429s = row.waiting_after_429 > 0
        || Operation::ALL.into_iter().any(|op| {
            let m = row.of(op);
            m.rate_limited + m.retried_429 > 0
        });
    if row.stalled || row.after_stall {
        "the server stalled, not the client"
    } else if met_429s {
        "the server limits its rate (429), not the client"
    } else if row.cpu >= SATURATED && !row.polling {
        // With the CPU saturated, more connections would only make it worse.
        "the client's CPU is saturated; lower --rate"
    } else if row.machine_cpu.is_some_and(|m| m >= SATURATED) && !row.polling {
        "other processes keep the machine's CPU busy"
    } else {
        "every connection was waiting for an answer; add connections"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Failure, IntervalMetrics};

    #[test]
    fn a_429_shows_apart_from_other_errors() {
        let mut interval = IntervalMetrics::default();
        interval.succeeded(Operation::Read, 2_000_000);
        interval.failed(Operation::Read, &Failure::RateLimited);
        interval.failed(Operation::Read, &Failure::Timeout);
        interval.failed(Operation::Read, &Failure::Status(500));
        interval.retried_429(Operation::Read);
        interval.retried_429(Operation::Update);
        interval.succeeded(Operation::Create, 1_000_000);
        interval.late = 3;
        let text = line(&interval.row(2.0, 1.0, 0.1), None, false);
        assert!(
            text.ends_with(
                "BEHIND: 3 started late: the server limits its rate (429), not the client"
            ),
            "{text}"
        );
        assert!(
            text.contains(" read(1/s p50=2.00 p99=2.00ms err=1 to=1 429=1 retried=1)"),
            "{text}"
        );
        // Only sent again, none ended: the kind still shows, so the wait is seen.
        assert!(
            text.contains(" update(0/s p50=0.00 p99=0.00ms err=0 to=0 429=0 retried=1)"),
            "{text}"
        );
        assert!(
            text.contains(" create(1/s p50=1.00 p99=1.00ms err=0 to=0) "),
            "{text}"
        );
    }

    #[test]
    fn a_partial_interval_gives_counts_not_rates() {
        let mut interval = IntervalMetrics::default();
        for _ in 0..5 {
            interval.succeeded(Operation::Read, 2_000_000);
        }
        interval.failed(Operation::Read, &Failure::Timeout);
        assert!(!is_partial(0.6, 1.0) && is_partial(0.4, 1.0));
        let text = line(&interval.row(30.1, 0.1, 0.1), None, true);
        assert!(
            text.starts_with("   30.1s  last 0.10s: read(5 ok p50=2.00 p99=2.00ms err=0 to=1) "),
            "{text}"
        );
        let whole = line(&interval.row(30.0, 1.0, 0.1), None, false);
        assert!(whole.starts_with("   30.0s  read(5/s p50="), "{whole}");
    }

    #[test]
    fn a_polling_client_is_not_called_saturated() {
        let mut interval = IntervalMetrics::default();
        interval.succeeded(Operation::Read, 2_000_000);
        interval.late = 2;
        let mut row = interval.row(1.0, 1.0, 1.0);
        row.machine_cpu = Some(1.0);
        let sleeping = line(&row, Some(10.0), false);
        assert!(sleeping.contains(" SATURATED"), "{sleeping}");
        assert!(
            sleeping.contains("the client's CPU is saturated"),
            "{sleeping}"
        );
        row.polling = true;
        let polling = line(&row, Some(10.0), false);
        assert!(!polling.contains("SATURATED"), "{polling}");
        assert!(
            polling.ends_with("every connection was waiting for an answer; add connections"),
            "{polling}"
        );
    }
}
