//! The summary under a step's tables: the Aerospike benchmark's latency histogram in
//! power-of-two millisecond buckets and its histogram of status codes, how a rate was
//! met, and whether the client itself was the limit.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::Detail;
use super::numbers::{grouped, grouped_decimal};
use crate::cpu::{SATURATED, cores};
use crate::results::{PhaseResult, histogram};

/// Shares of values in `<=1`, `>1`, `>2`, `>4`, … ms buckets, up to the largest non-empty
/// one. The histogram holds microseconds.
pub fn power_of_two_buckets(histogram: &Histogram<u64>) -> Vec<(String, f64)> {
    let total = histogram.len();
    if total == 0 {
        return Vec::new();
    }
    let mut buckets = vec![("<=1".to_string(), histogram.count_between(0, 1_000))];
    let mut low_ms = 1u64;
    while histogram.max() > low_ms * 1_000 {
        let count = histogram.count_between(low_ms * 1_000 + 1, low_ms * 2_000);
        buckets.push((format!(">{low_ms}"), count));
        low_ms *= 2;
    }
    // count_between works on the histogram's bucket resolution: give the rounding to
    // the last bucket so the shares add up to 100%.
    let counted: u64 = buckets.iter().map(|(_, c)| c).sum();
    if let Some(last) = buckets.last_mut() {
        last.1 = (last.1 + total).saturating_sub(counted);
    }
    buckets
        .into_iter()
        .map(|(name, count)| (name, 100.0 * count as f64 / total as f64))
        .collect()
}

/// The Aerospike histogram, compact: the buckets from the first one any operation has a
/// value in up to the last, a row per operation, every row as wide as the header.
fn histogram_lines(phase: &PhaseResult, out: &mut String) {
    let rows: Vec<_> = phase
        .operations
        .iter()
        .filter_map(|op| {
            let h = histogram::decode(&op.response.histogram).ok()?;
            Some((op.operation.as_str(), power_of_two_buckets(&h)))
        })
        .filter(|(_, b)| !b.is_empty())
        .collect();
    let Some(widest) = rows.iter().map(|(_, b)| b.len()).max() else {
        return;
    };
    // Buckets below every operation's fastest value say nothing but 0.0%.
    let first = (0..widest)
        .find(|&i| {
            rows.iter()
                .any(|(_, b)| b.get(i).is_some_and(|(_, s)| *s > 0.0))
        })
        .unwrap_or(0);
    let w = super::name_width(phase);
    let _ = write!(out, "  {:<w$}", "histogram");
    for i in first..widest {
        let name = if i == 0 {
            "<=1".to_string()
        } else {
            format!(">{}", 1u64 << (i - 1))
        };
        let _ = write!(out, " {name:>7}");
    }
    out.push('\n');
    for (op, buckets) in rows {
        let _ = write!(out, "  {:<w$}", op);
        // A row's missing upper buckets are empty.
        let shares = buckets.iter().map(|(_, share)| *share);
        for share in shares
            .chain(std::iter::repeat(0.0))
            .take(widest)
            .skip(first)
        {
            let _ = write!(out, " {:>6.1}%", share);
        }
        out.push('\n');
    }
}

/// The Aerospike histogram of status codes, compact: one line for the phase, each
/// operation's HTTP statuses (or what went wrong) with how many times.
fn status_lines(phase: &PhaseResult, out: &mut String) {
    let mut operations = Vec::new();
    for op in &phase.operations {
        let mut parts: Vec<String> = op
            .statuses
            .iter()
            .map(|(status, n)| format!("{status} x{}", grouped(*n)))
            .collect();
        for failure in ["timeout", "transport", "unreachable", "interrupted"] {
            if let Some(n) = op.failures.get(failure) {
                parts.push(format!("{failure} x{}", grouped(*n)));
            }
        }
        if !parts.is_empty() {
            operations.push(format!("{} {}", op.operation, parts.join(", ")));
        }
    }
    if !operations.is_empty() {
        let _ = writeln!(out, "  statuses: {}", operations.join("; "));
    }
}

fn rate_lines(phase: &PhaseResult, out: &mut String) {
    let Some(target) = phase.target_rate else {
        return;
    };
    let started: u64 = phase
        .operations
        .iter()
        .map(|o| o.succeeded + o.failed)
        .sum();
    let delivered = started as f64 / phase.wall_seconds.max(1e-9);
    let aimed = match phase.ramp {
        Some(ramp) => format!(
            "ramp from {}/s to {}/s (mean target {target:.1}/s)",
            grouped_decimal(ramp.from, 1),
            grouped_decimal(ramp.to, 1)
        ),
        None => format!("target {target:.1}/s"),
    };
    let _ = writeln!(
        out,
        "  rate: {aimed}, delivered {delivered:.1}/s; {} of {} operations started late",
        grouped(phase.late),
        grouped(started)
    );
    if let Some(lag) = &phase.send_lag {
        let _ = writeln!(
            out,
            "  send lag (scheduled to actual start, connection free at its slot): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, {} operations",
            lag.p50_ms,
            lag.p99_ms,
            lag.max_ms,
            grouped(lag.count)
        );
    }
    if phase.late > 0 {
        // Connections must keep up with a ramp's highest rate, not its mean.
        let highest = phase.ramp.map_or(target, |r| r.from.max(r.to));
        super::late_cause::lines(phase, highest, out);
    } else if delivered < target * 0.98 {
        // Every operation started on time: what is missing never started, or the phase
        // lasted past its schedule while its last answers came in.
        let why = if phase.aborted.is_empty() {
            "no operation started late, so the phase's last answers lengthened it (a short phase)"
        } else {
            "connections stopped early (below)"
        };
        let _ = writeln!(out, "  WARNING: delivered less than --rate {target}: {why}");
    }
}

/// The client's CPU share in its busiest interval that lasted long enough to judge and
/// whose share means something (not full by design under `--busy-poll`).
fn busiest_cpu(phase: &PhaseResult) -> f64 {
    phase
        .intervals
        .iter()
        .filter(|r| r.length_seconds > 0.5 && !r.polling)
        .map(|r| r.cpu)
        .fold(0.0, f64::max)
}

fn saturation_line(phase: &PhaseResult, out: &mut String) {
    let busiest = busiest_cpu(phase);
    if busiest >= SATURATED {
        let _ = writeln!(
            out,
            "  WARNING: the client used {:.0}% of its {} cores in its busiest interval: the figures may describe the client, not the database",
            busiest * 100.0,
            cores()
        );
    }
}

/// Mean successful operations per second of the intervals that end within `range` of
/// seconds from the phase's start.
fn throughput_within(phase: &PhaseResult, range: std::ops::Range<f64>) -> Option<f64> {
    let rows: Vec<_> = phase
        .intervals
        .iter()
        .filter(|r| range.contains(&r.elapsed_seconds) && r.length_seconds > 0.0)
        .collect();
    let seconds: f64 = rows.iter().map(|r| r.length_seconds).sum();
    let ops: u64 = rows
        .iter()
        .flat_map(|r| &r.operations)
        .map(|o| o.succeeded)
        .sum();
    (seconds > 0.0).then(|| ops as f64 / seconds)
}

/// What the phase's background action did, and the throughput before, during and after.
pub fn action(phase: &PhaseResult) -> String {
    let Some(a) = &phase.action else {
        return String::new();
    };
    let mut out = String::new();
    let (Some(start), finish) = (a.started_seconds, a.finished_seconds) else {
        let _ = match (&a.error, &a.note) {
            (None, Some(note)) => writeln!(out, "  action {}: {note}", a.kind),
            (error, _) => writeln!(
                out,
                "  action {}: did not start ({})",
                a.kind,
                error.clone().unwrap_or_default()
            ),
        };
        return out;
    };
    let end = finish.unwrap_or(phase.wall_seconds);
    let _ = match finish {
        Some(_) => writeln!(
            out,
            "  action {}: started at {start:.2} s, took {:.2} s",
            a.kind,
            end - start
        ),
        None => writeln!(
            out,
            "  action {}: started at {start:.2} s, end unknown",
            a.kind
        ),
    };
    if let Some(error) = &a.error {
        let _ = writeln!(out, "  action {} failed: {error}", a.kind);
    }
    if let Some(note) = &a.note {
        let _ = writeln!(out, "  action {}: {note}", a.kind);
    }
    if a.kind == "compact" {
        match (a.size_before, a.size_after, &a.size_field) {
            (Some(before), None, Some(field)) => {
                let _ = writeln!(
                    out,
                    "  database file size: {} bytes before ({field}); after: unknown",
                    grouped(before)
                );
            }
            (Some(before), Some(after), Some(field)) => {
                let _ = writeln!(
                    out,
                    "  database file size: {} bytes before, {} bytes after ({field})",
                    grouped(before),
                    grouped(after)
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  database file size: the server reports neither sizes.file (CouchDB) nor disk_size (PouchDB Server)"
                );
            }
        }
    }
    let show = |t: Option<f64>| t.map_or("-".to_string(), |v| format!("{v:.1}/s"));
    let _ = writeln!(
        out,
        "  throughput before {}, during {}, after {}",
        show(throughput_within(phase, 0.0..start)),
        show(throughput_within(phase, start..end + 0.5)),
        show(throughput_within(phase, end + 0.5..f64::MAX)),
    );
    out
}

/// The summary of one phase: the histograms, how a rate was met, whether the client was
/// the limit, and with [`Detail::Verbose`] the database's size on disk.
pub fn summary(phase: &PhaseResult, detail: Detail) -> String {
    let mut out = String::new();
    histogram_lines(phase, &mut out);
    status_lines(phase, &mut out);
    rate_lines(phase, &mut out);
    super::ramp::lines(phase, &mut out);
    saturation_line(phase, &mut out);
    if detail == Detail::Verbose {
        super::disk::lines(phase, &mut out);
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;

    fn op(
        name: &str,
        response_us: &[u64],
        statuses: &[(&str, u64)],
    ) -> crate::results::OperationResult {
        let mut h = crate::metrics::recorder::new_histogram();
        for v in response_us {
            h.record(*v).unwrap();
        }
        crate::results::OperationResult {
            operation: name.to_string(),
            response: crate::results::build::latency(&h),
            statuses: statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
            ..crate::results::OperationResult::unmeasured()
        }
    }

    #[test]
    fn the_histograms_are_compact() {
        let phase = PhaseResult::of_operations(
            "crud",
            1.0,
            vec![
                op("read", &[10_000, 20_000], &[("200", 2)]),
                op("update", &[5_000], &[("201", 1), ("409", 3)]),
            ],
        );
        let mut out = String::new();
        histogram_lines(&phase, &mut out);
        status_lines(&phase, &mut out);
        // No operation took 4 ms or less: those buckets are left out.
        assert_eq!(
            out,
            "  histogram         >4      >8     >16\n\
             \x20 read            0.0%   50.0%   50.0%\n\
             \x20 update        100.0%    0.0%    0.0%\n\
             \x20 statuses: read 200 x2; update 201 x1, 409 x3\n"
        );
    }

    #[test]
    fn buckets_are_powers_of_two_milliseconds() {
        let mut h = crate::metrics::recorder::new_histogram();
        for micros in [500, 800, 1_500, 3_000, 3_500, 7_000, 30_000, 30_000] {
            h.record(micros).unwrap();
        }
        let buckets = power_of_two_buckets(&h);
        let names: Vec<&str> = buckets.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["<=1", ">1", ">2", ">4", ">8", ">16"]);
        let shares: Vec<f64> = buckets.iter().map(|(_, s)| *s).collect();
        assert_eq!(shares, [25.0, 12.5, 25.0, 12.5, 0.0, 25.0]);
    }
}
