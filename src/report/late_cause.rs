//! Why operations started late under `--rate`, from what each interval measured: the
//! server not answering at all, the server limiting its rate (429s whose wait held the
//! connections), the client's CPU at its limit, the machine's CPU taken by other
//! processes, or too few connections for the rate at the latency the server gave.
//! Each late start is put down to the first of these its interval shows, so a stalled
//! server is never reported as the client's fault. Under `--busy-poll` the client keeps
//! its cores full by design, so neither CPU cause can be told and neither is given.

use std::fmt::Write as _;

use super::numbers::grouped;
use crate::metrics::late::{LateCauses, Signals};
use crate::results::{IntervalResult, PhaseResult, histogram};

/// A stretch of intervals in which operations were in flight and none was answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// Seconds from the phase's start.
    pub from: f64,
    pub to: f64,
    /// How long the server stalled within it (less than `to - from` when the stall
    /// lies within merged intervals).
    pub seconds: f64,
    /// Operations in flight at its end.
    pub in_flight: u64,
}

/// Late starts put down to each cause.
#[derive(Debug, Default, PartialEq)]
struct Blame {
    causes: LateCauses,
    /// The machine's and the client's CPU share in the busiest interval put down to other
    /// processes.
    machine_busiest: (f64, f64),
}

/// Answers in the interval, as the live lines count them: a 429 is an answer, though its
/// operation goes out again.
fn answered(row: &IntervalResult) -> u64 {
    row.operations
        .iter()
        .map(|o| o.succeeded + o.failed + o.retried_429)
        .sum()
}

/// Whether the server turned requests away with 429 in the interval, or connections were
/// waiting after one at its end.
fn met_429s(row: &IntervalResult) -> bool {
    row.waiting_after_429 > 0
        || row
            .operations
            .iter()
            .any(|o| o.rate_limited + o.retried_429 > 0)
}

/// How long each interval was stalled: as the run measured it, or in results written
/// before, all of it when it began with operations in flight and ended with none
/// answered.
fn stalled_rows(phase: &PhaseResult) -> Vec<f64> {
    let mut before = 0;
    phase
        .intervals
        .iter()
        .map(|row| {
            let stalled = crate::metrics::interval::stalled(before, answered(row));
            before = row.in_flight;
            row.stalled_seconds
                .unwrap_or(if stalled { row.length_seconds } else { 0.0 })
        })
        .collect()
}

/// The phase's stalls, each a run of stalled intervals.
pub fn stalls(phase: &PhaseResult) -> Vec<Stall> {
    let mut found: Vec<Stall> = Vec::new();
    let mut open = false;
    for (row, seconds) in phase.intervals.iter().zip(stalled_rows(phase)) {
        if seconds <= 0.0 {
            open = false;
            continue;
        }
        let from = (row.elapsed_seconds - row.length_seconds).max(0.0);
        match found.last_mut() {
            Some(last) if open => {
                last.to = row.elapsed_seconds;
                last.seconds += seconds;
                last.in_flight = row.in_flight;
            }
            _ => found.push(Stall {
                from,
                to: row.elapsed_seconds,
                seconds,
                in_flight: row.in_flight,
            }),
        }
        open = true;
    }
    found
}

fn blame(phase: &PhaseResult) -> Blame {
    let mut blame = Blame::default();
    let mut catching_up = false;
    for (row, stalled) in phase.intervals.iter().zip(stalled_rows(phase)) {
        // Operations due during a stall start late once it ends: in the next interval, or
        // the one after when the stall ended near an interval's end.
        catching_up = stalled > 0.0 || (catching_up && row.late > 0);
        let signals = Signals {
            catching_up,
            met_429s: met_429s(row),
            cpu: row.cpu,
            machine_cpu: row.machine_cpu,
            polling: row.polling,
        };
        // What the run put down live interval by live interval, else (results written
        // before) what this interval shows.
        let causes = row
            .late_causes
            .unwrap_or_else(|| LateCauses::of(row.late, &signals));
        if causes.other_processes > 0
            && let Some(machine) = row.machine_cpu
            && machine > blame.machine_busiest.0
        {
            blame.machine_busiest = (machine, row.cpu);
        }
        blame.causes.add(&causes);
    }
    blame
}

/// Service times of all the phase's successful operations, milliseconds.
struct ServiceTime {
    mean: f64,
    p99: f64,
    max: f64,
}

fn service_time(phase: &PhaseResult) -> Option<ServiceTime> {
    let mut all = crate::metrics::recorder::new_histogram();
    for op in &phase.operations {
        let _ = all.add(histogram::decode(&op.latency.histogram).ok()?);
    }
    (!all.is_empty()).then(|| ServiceTime {
        mean: all.mean() / 1_000.0,
        p99: all.value_at_quantile(0.99) as f64 / 1_000.0,
        max: all.max() as f64 / 1_000.0,
    })
}

/// The warning lines for a phase whose operations started late, one per cause seen.
pub fn lines(phase: &PhaseResult, target: f64, out: &mut String) {
    let blame = blame(phase);
    let causes = &blame.causes;
    if causes.stall > 0 {
        let when: Vec<String> = stalls(phase)
            .iter()
            .map(|s| {
                format!(
                    "from {:.1} s to {:.1} s ({:.1} s or more, {} in flight)",
                    s.from,
                    s.to,
                    s.seconds,
                    grouped(s.in_flight)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  WARNING: {} operations started late because the server stopped answering {}: the server stalled, not the client",
            grouped(causes.stall),
            when.join(", ")
        );
    }
    if causes.rate_limited > 0 {
        let _ = writeln!(
            out,
            "  WARNING: {} operations started late while the server turned requests away with 429 (rate limited; with --retry-429 their connections waited as it asked): the server limits the rate, not the client; lower --rate below its limit",
            grouped(causes.rate_limited)
        );
    }
    if causes.client_cpu > 0 {
        let _ = writeln!(
            out,
            "  WARNING: {} operations started late while the client's CPU was saturated: lower --rate or spread the load over more machines (--node-count)",
            grouped(causes.client_cpu)
        );
    }
    if causes.other_processes > 0 {
        let _ = writeln!(
            out,
            "  WARNING: {} operations started late while other processes kept the machine's CPU busy (up to {:.0}% of all its cores, the client {:.0}% of its own; a server on the same machine?): run the client on a machine of its own",
            grouped(causes.other_processes),
            blame.machine_busiest.0 * 100.0,
            blame.machine_busiest.1 * 100.0,
        );
    }
    if causes.connections > 0 {
        let _ = writeln!(
            out,
            "  WARNING: {} operations started late because every connection was still waiting for an answer when they were due: {}",
            grouped(causes.connections),
            connections_advice(phase, target)
        );
    }
}

/// How many connections the rate needs at the measured service time (Little's law:
/// operations in flight = rate × time each takes).
fn connections_advice(phase: &PhaseResult, target: f64) -> String {
    let Some(service) = service_time(phase) else {
        return "add connections (--num_connections) or lower --rate".to_string();
    };
    let needed = |ms: f64| (target * ms / 1_000.0).ceil().max(1.0) as u64;
    let have = phase.connections;
    if needed(service.p99) > have {
        return format!(
            "too few connections for --rate {target} at the measured service time (mean {:.2} ms, p99 {:.2} ms): rate × p99 = {} connections, this run had {}; use --num_connections {} or more, or lower --rate",
            service.mean,
            service.p99,
            grouped(needed(service.p99)),
            grouped(have),
            grouped(needed(service.p99)),
        );
    }
    // Enough connections for nearly every answer: a few slow ones held theirs up.
    let slot = have as f64 / target * 1_000.0;
    format!(
        "a few answers took longer than a connection's {slot:.2} ms between operations (service time p99 {:.2} ms, max {:.2} ms): the server's slowest answers held the next operations back; more connections (--num_connections) give each more room",
        service.p99, service.max,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::IntervalOperation;

    fn row(elapsed: f64, answered: u64, in_flight: u64, late: u64, cpu: f64) -> IntervalResult {
        IntervalResult {
            late_causes: None,
            stalled_seconds: None,
            end_ms: 0,
            elapsed_seconds: elapsed,
            length_seconds: 1.0,
            cpu,
            late,
            operations: vec![IntervalOperation {
                operation: "read".to_string(),
                succeeded: answered,
                failed: 0,
                timeouts: 0,
                rate_limited: 0,
                retried_429: 0,
                documents: None,
                bytes_sent: None,
                bytes_received: None,
                throughput: answered as f64,
                p50_ms: 0.0,
                p99_ms: 0.0,
                histogram: String::new(),
            }],
            machine_cpu: Some(cpu),
            in_flight,
            waiting_after_429: 0,
            polling: false,
            target_rate: None,
            disk: None,
            server: Vec::new(),
        }
    }

    fn phase(intervals: Vec<IntervalResult>) -> PhaseResult {
        let json = serde_json::json!({
            "name": "crud", "started_at_ms": 0, "wall_seconds": 6.0, "connections": 4,
            "target_rate": 200.0, "late": 0, "operations": [],
            "iron_cushion": {"timeTaken": 6.0, "totalJsonBytesSent": 0,
                "totalJsonBytesReceived": 0,
                "localProcessing": {"min":0.0,"max":0.0,"median":0.0,"sd":0.0},
                "sendData": {"min":0.0,"max":0.0,"median":0.0,"sd":0.0},
                "remoteProcessing": {},
                "receiveData": {"min":0.0,"max":0.0,"median":0.0,"sd":0.0}, "rates": {}},
            "intervals": [], "aborted": []
        });
        let mut phase: PhaseResult = serde_json::from_value(json).unwrap();
        phase.intervals = intervals;
        phase
    }

    #[test]
    fn late_starts_after_a_stall_blame_the_server() {
        let p = phase(vec![
            row(1.0, 200, 1, 0, 0.02),
            row(2.0, 0, 4, 0, 0.01),
            row(3.0, 0, 4, 0, 0.01),
            row(4.0, 150, 1, 400, 0.02),
            row(5.0, 200, 1, 3, 0.02),
        ]);
        assert_eq!(
            stalls(&p),
            [Stall {
                from: 1.0,
                to: 3.0,
                seconds: 2.0,
                in_flight: 4
            }]
        );
        let blame = blame(&p);
        assert_eq!((blame.causes.stall, blame.causes.connections), (403, 0));
        let mut later = p.clone();
        later.intervals.push(row(6.0, 200, 1, 0, 0.02));
        later.intervals.push(row(7.0, 200, 1, 2, 0.02));
        assert_eq!(super::blame(&later).causes.connections, 2);
        let mut out = String::new();
        lines(&p, 200.0, &mut out);
        assert!(out.contains("from 1.0 s to 3.0 s"), "{out}");
        assert!(out.contains("the server stalled"), "{out}");
    }

    #[test]
    fn late_starts_while_the_server_limits_its_rate_blame_the_limit() {
        let mut limited = row(2.0, 0, 0, 9, 0.02);
        limited.operations[0].retried_429 = 4;
        // A 429 is an answer: no stall, though nothing ended.
        // Nothing but waiting in the interval after: still the limit's doing.
        let mut waiting = row(3.0, 0, 0, 5, 0.02);
        waiting.waiting_after_429 = 4;
        let p = phase(vec![row(1.0, 100, 4, 0, 0.02), limited, waiting]);
        assert_eq!(stalls(&p), []);
        let blame = blame(&p);
        assert_eq!(
            (blame.causes.rate_limited, blame.causes.connections),
            (14, 0)
        );
        let mut out = String::new();
        lines(&p, 200.0, &mut out);
        assert!(
            out.contains(
                "14 operations started late while the server turned requests away with 429"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_busy_client_or_machine_is_named() {
        let mut busy_machine = row(2.0, 100, 1, 7, 0.3);
        busy_machine.machine_cpu = Some(0.97);
        let p = phase(vec![row(1.0, 100, 1, 5, 0.95), busy_machine]);
        let blame = blame(&p);
        assert_eq!(
            (
                blame.causes.client_cpu,
                blame.causes.other_processes,
                blame.causes.stall
            ),
            (5, 7, 0)
        );
    }
}
