//! A connection whose server goes away: it waits for it without a rate, fails what falls
//! due under one, and gives up after `--reconnect-for`.

use super::*;

use Operation::{Create, Read};

/// A worker whose server refuses connections until `back_ms`, trying for `limit_s`.
fn cut_off(clock: &VirtualClock, back_ms: u64, limit_s: u64) -> TestWorker {
    let server = ScriptedServer::new(clock).down_until(clock.at_ms(back_ms));
    let settings = Settings {
        reconnect_for: Duration::from_secs(limit_s),
        ..Settings::default()
    };
    worker(server, clock, settings)
}

#[test]
fn without_a_rate_operations_wait_for_the_server_to_come_back() {
    let clock = VirtualClock::new();
    let mut worker = cut_off(&clock, 1_000, 60);
    let (metrics, abort) = run(&mut worker, work(only(Create, 3, 0)));
    assert_eq!(abort, None);
    assert_eq!(metrics.of(Create).succeeded, 3);
    assert_eq!(failures(&metrics, Create), []);
    // Retries back off, up to 2 s apart: the first try after the server is back succeeds.
    let sent = worker.client.received_at_ms();
    assert!(sent[0] >= 1_000.0 && sent[0] <= 3_000.0, "{sent:?}");
    assert!(worker.client.opens >= 3, "{} tries", worker.client.opens);
}

#[test]
fn without_a_rate_a_connection_gives_up_after_reconnect_for() {
    let clock = VirtualClock::new();
    let mut worker = cut_off(&clock, 1_000_000, 3);
    let (metrics, abort) = run(&mut worker, work(only(Create, 3, 0)));
    let abort = abort.expect("a connection that gave up says so");
    assert!(abort.contains("gave up reconnecting"), "{abort}");
    // It tried until the limit, not a backoff past it, and sent nothing.
    assert_eq!(clock.elapsed_ns(), 3_000_000_000);
    assert!(worker.client.received.is_empty());
    assert_eq!(metrics.of(Create).not_run, 3);
    assert_eq!(failures(&metrics, Create), []);
}

#[test]
fn under_a_rate_operations_due_while_the_server_is_away_fail_as_unreachable() {
    let clock = VirtualClock::new();
    let mut worker = cut_off(&clock, 1_000, 60);
    worker.pool.add(0, rev(1));
    let mut share = work(only(Read, 30, 1));
    share.pacing = open(clock.start(), 100);
    let (metrics, abort) = run(&mut worker, share);
    assert_eq!(abort, None);
    let unreachable = metrics.of(Read).failures.total();
    assert_eq!(
        failures(&metrics, Read),
        [(Failure::Unreachable, unreachable)]
    );
    // The ten due before the server came back failed, and at most a longest backoff more.
    assert!((10..=30).contains(&unreachable), "{unreachable}");
    assert_eq!(metrics.of(Read).succeeded, 30 - unreachable);
    // The schedule went on meanwhile: whatever was sent went at its slot.
    let sent = worker.client.received_at_ms();
    assert_eq!(sent.len() as u64, 30 - unreachable);
    assert!(
        sent.iter().all(|&ms| ms >= 1_000.0 && ms % 100.0 == 0.0),
        "{sent:?}"
    );
    assert_eq!(metrics.late, 0);
    assert_eq!(clock.elapsed_ns(), 2_901_000_000);
}
