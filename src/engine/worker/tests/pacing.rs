//! When a worker sends: on schedule under a rate, back to back without one, and nothing
//! past the deadline.

use super::*;
use crate::engine::transport::scripted::Reply;

use Operation::Read;

/// A worker that knows one document and reads it `n` times under `pacing`, its server
/// answering after `waits_ms` (then after `default_ms`), the share ending at `deadline_ms`.
struct Reads {
    n: u64,
    pacing: fn(&VirtualClock) -> Pacing,
    waits_ms: Vec<u64>,
    default_ms: u64,
    deadline_ms: Option<u64>,
    late_threshold_ms: u64,
}

impl Default for Reads {
    fn default() -> Reads {
        Reads {
            n: 6,
            pacing: |_| Pacing::Closed,
            waits_ms: Vec::new(),
            default_ms: 1,
            deadline_ms: None,
            late_threshold_ms: 5,
        }
    }
}

/// What a run of reads did.
struct Ran {
    /// When each request went out, ms after the clock began.
    sent: Vec<f64>,
    metrics: ConnectionMetrics,
    recorder: Arc<Recorder>,
    /// How long the share took on the virtual clock.
    elapsed_ns: u64,
}

impl Reads {
    fn run(self) -> Ran {
        let clock = VirtualClock::new();
        let replies = self.waits_ms.iter().map(|&ms| read_answer(ms));
        let mut server = ScriptedServer::new(&clock).then(replies);
        server.default_wait_ms = self.default_ms;
        let settings = Settings {
            late_threshold: Duration::from_millis(self.late_threshold_ms),
            ..Settings::default()
        };
        let mut worker = worker(server, &clock, settings);
        worker.pool.add(0, rev(1));
        let mut share = work(only(Read, self.n, 1));
        share.pacing = (self.pacing)(&clock);
        share.deadline = self.deadline_ms.map(|ms| clock.at_ms(ms));
        let (metrics, abort) = run(&mut worker, share);
        assert_eq!(abort, None);
        Ran {
            sent: worker.client.received_at_ms(),
            metrics,
            recorder: worker.shared.recorder.clone(),
            elapsed_ns: clock.elapsed_ns(),
        }
    }
}

fn read_answer(wait_ms: u64) -> Reply {
    let body = r#"{"_id":"p-0000000000","_rev":"1-0123456789abcdef0123456789abcdef"}"#;
    Reply::answer(200, body, wait_ms)
}

#[test]
fn under_a_rate_the_kth_operation_is_sent_at_first_plus_k_periods() {
    let Ran { sent, metrics, .. } = Reads {
        pacing: |clock| open(clock.at_ms(3), 10),
        ..Reads::default()
    }
    .run();
    assert_eq!(sent, [3.0, 13.0, 23.0, 33.0, 43.0, 53.0]);
    assert_eq!(metrics.late, 0);
    assert_eq!(metrics.of(Read).succeeded, 6);
}

/// From 0 to 1,000 operations per second over one second, for the second of two
/// connections: it takes the phase's operations 1, 3, 5, …
fn ramp_for_the_second_of_two(clock: &VirtualClock) -> Pacing {
    Pacing::Open {
        start: clock.start(),
        schedule: Schedule::new(Rate::ramp(0.0, 1_000.0), Some(Duration::from_secs(1))),
        stride: 2,
        offset: 1,
    }
}

#[test]
fn under_a_ramp_each_operation_is_sent_when_the_ramps_integral_reaches_it() {
    let Ran { sent, metrics, .. } = Reads {
        pacing: ramp_for_the_second_of_two,
        deadline_ms: Some(140),
        ..Reads::default()
    }
    .run();
    // 500 t² operations are due by t: the phase's operation n at √(n / 500) s.
    let due_ms = |n: f64| (n / 500.0).sqrt() * 1_000.0;
    let expected: Vec<f64> = [1.0, 3.0, 5.0, 7.0, 9.0].map(due_ms).to_vec();
    assert_eq!(
        sent.len(),
        expected.len(),
        "{sent:?}: none past the deadline"
    );
    for (sent, expected) in sent.iter().zip(&expected) {
        assert!(
            (sent - expected).abs() < 0.001,
            "{sent} ms, due at {expected} ms"
        );
    }
    assert_eq!(metrics.late, 0);
    assert_eq!(metrics.of(Read).succeeded, 5);
}

#[test]
fn operations_that_start_later_than_the_threshold_are_late() {
    // The first answer takes 35 ms: the next three go out as soon as the connection is
    // free, 25, 16 and 7 ms after their slots, and the fifth is on time again.
    for (threshold_ms, late) in [(5, 3), (10, 2), (30, 0)] {
        let Ran { sent, metrics, .. } = Reads {
            n: 7,
            pacing: |clock| open(clock.start(), 10),
            waits_ms: vec![35],
            late_threshold_ms: threshold_ms,
            ..Reads::default()
        }
        .run();
        assert_eq!(sent, [0.0, 35.0, 36.0, 37.0, 40.0, 50.0, 60.0]);
        assert_eq!(metrics.late, late, "threshold {threshold_ms} ms");
    }
}

#[test]
fn without_a_rate_operations_go_back_to_back() {
    let Ran {
        sent,
        metrics,
        elapsed_ns,
        ..
    } = Reads {
        n: 4,
        waits_ms: vec![5, 1, 3],
        ..Reads::default()
    }
    .run();
    assert_eq!(sent, [0.0, 5.0, 6.0, 9.0]);
    assert_eq!(metrics.late, 0);
    assert_eq!(elapsed_ns, 10_000_000);
}

#[test]
fn nothing_is_sent_past_the_deadline() {
    let closed = Reads {
        n: 100,
        default_ms: 10,
        deadline_ms: Some(45),
        ..Reads::default()
    };
    let paced = Reads {
        n: 100,
        pacing: |clock| open(clock.start(), 10),
        deadline_ms: Some(45),
        ..Reads::default()
    };
    for reads in [closed, paced] {
        let Ran { sent, metrics, .. } = reads.run();
        assert_eq!(sent, [0.0, 10.0, 20.0, 30.0, 40.0]);
        // A deadline is the user's bound: what it cut off is not counted as not run.
        assert_eq!(metrics.of(Read).not_run, 0);
    }
}

#[test]
fn operations_that_fell_due_before_the_deadline_are_not_sent_after_it() {
    let Ran { sent, metrics, .. } = Reads {
        n: 100,
        pacing: |clock| open(clock.start(), 10),
        waits_ms: vec![100],
        deadline_ms: Some(45),
        ..Reads::default()
    }
    .run();
    assert_eq!(sent, [0.0]);
    assert_eq!(metrics.late, 0);
}

#[test]
fn under_a_rate_response_time_counts_from_the_slot_and_send_lag_only_when_free() {
    let Ran { recorder, .. } = Reads {
        n: 7,
        pacing: |clock| open(clock.start(), 10),
        waits_ms: vec![35],
        ..Reads::default()
    }
    .run();
    let reads = &recorder.step()[Read];
    // Served in 35 ms, then 1 ms each; but the three behind the slow answer waited for
    // it: 26, 17 and 8 ms from their slots.
    let slow = |h: &hdrhistogram::Histogram<u64>| h.count_between(5_000, 100_000);
    assert_eq!((reads.latency.len(), slow(&reads.latency)), (7, 1));
    assert_eq!((reads.response.len(), slow(&reads.response)), (7, 4));
    // Send lag is the client's own: only the last three found the connection free at
    // their slot, and went out on it.
    let lag = recorder.send_lag();
    assert_eq!((lag.len(), lag.max()), (3, 1));
}
