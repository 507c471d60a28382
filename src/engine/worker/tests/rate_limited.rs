//! What a worker does with 429 Too Many Requests: without `--retry-429` a failure of its
//! own kind, never sent again; with it, the operation goes out again after the wait the
//! server asked for (capped), or a backoff, each retry and wait counted.

use super::*;
use crate::engine::rate_limit::{FIRST_BACKOFF, MOST_WAIT};
use crate::engine::transport::scripted::Reply;
use crate::metrics::IntervalMetrics;

use Operation::{BulkInsert, Read};

const SECOND_NS: u64 = 1_000_000_000;

/// Settings that send an operation again after a 429 at most `most` times.
fn retrying(most: u32) -> Settings {
    Settings {
        retry_429: Some(Retry429 { most }),
        ..Settings::default()
    }
}

/// A worker that knows one document, talking to a server that first gives `replies`.
fn reader(clock: &VirtualClock, settings: Settings, replies: Vec<Reply>) -> TestWorker {
    let server = ScriptedServer::new(clock).then(replies);
    let mut worker = worker(server, clock, settings);
    worker.pool.add(0, rev(1));
    worker
}

fn too_many(retry_after: &str) -> Reply {
    Reply::too_many(Some(retry_after), 1)
}

/// The examples kept of `failure` for `operation`.
fn samples(metrics: &ConnectionMetrics, operation: Operation, failure: Failure) -> Vec<String> {
    let sorted = metrics.of(operation).samples.sorted();
    let kept = sorted.into_iter().find(|(f, _)| *f == failure);
    kept.map(|(_, texts)| texts).unwrap_or_default()
}

/// When each request reached the server, whole milliseconds after the clock began.
fn sent_ms(worker: &TestWorker) -> Vec<u64> {
    let sent = worker.client.received_at_ms();
    sent.iter().map(|ms| ms.round() as u64).collect()
}

/// Whether the largest value of a histogram (microseconds) is `ms` milliseconds, at the
/// histogram's precision.
fn max_is(histogram: &hdrhistogram::Histogram<u64>, ms: u64) -> bool {
    histogram.equivalent(histogram.max(), ms * 1_000)
}

#[test]
fn without_the_flag_a_429_fails_as_rate_limited_and_is_never_sent_again() {
    let clock = VirtualClock::new();
    let mut worker = reader(&clock, Settings::default(), vec![too_many("5")]);
    let (metrics, abort) = run(&mut worker, work(only(Read, 3, 1)));
    assert_eq!(abort, None);
    assert_eq!(sent_ms(&worker), [0, 1, 2]);
    assert_eq!(failures(&metrics, Read), [(Failure::RateLimited, 1)]);
    let read = metrics.of(Read);
    assert_eq!(read.statuses.sorted(), [(200, 2), (429, 1)]);
    assert_eq!((read.retried_429, read.retry_429_wait_ns), (0, 0));
    let said = samples(&metrics, Read, Failure::RateLimited);
    assert_eq!(said.len(), 1);
    assert!(
        said[0].starts_with(r#"Retry-After: 5 · {"error":"too_many_requests""#),
        "{said:?}"
    );
}

#[test]
fn a_retry_after_in_seconds_is_waited_for_and_counted() {
    let clock = VirtualClock::new();
    let replies = vec![too_many("2"), too_many("1")];
    let mut worker = reader(&clock, retrying(10), replies);
    let (metrics, abort) = run(&mut worker, work(only(Read, 1, 1)));
    assert_eq!(abort, None);
    // Each answer takes 1 ms; then the wait the server asked for.
    assert_eq!(sent_ms(&worker), [0, 2_001, 3_002]);
    let read = metrics.of(Read);
    assert_eq!((read.succeeded, read.retried_429), (1, 2));
    assert_eq!(read.retry_429_wait_ns, 3 * SECOND_NS);
    assert_eq!(read.statuses.sorted(), [(200, 1), (429, 2)]);
    assert!(read.failures.sorted().is_empty());
    // The server's time is each exchange's; the waits are no one's processing.
    assert_eq!(metrics.times.remote_ns[Read], 3_000_000);
    assert_eq!(metrics.times.local_ns, 0);
    // The operation's latency runs from its first attempt: the waits are in it.
    let step = worker.shared.recorder.step();
    assert!(max_is(&step[Read].latency, 3_003));
    assert!(max_is(&step[Read].response, 3_003));
    let mut interval = IntervalMetrics::default();
    worker.shared.recorder.take_interval(&mut interval);
    assert_eq!(interval.operations[Read].retried_429, 2);
    assert_eq!(worker.shared.recorder.in_flight(), 0);
    assert_eq!(worker.shared.recorder.waiting_after_429(), 0);
    let said = samples(&metrics, Read, Failure::RateLimited);
    assert!(
        said.iter().any(|s| s.starts_with("Retry-After: 2 · ")),
        "{said:?}"
    );
}

#[test]
fn an_http_date_is_waited_for_on_the_wall_clock() {
    // The virtual wall clock starts at 2026-01-01T00:00:00Z; the 429 comes 1 ms later.
    let clock = VirtualClock::new();
    let replies = vec![too_many("Thu, 01 Jan 2026 00:00:04 GMT")];
    let mut worker = reader(&clock, retrying(10), replies);
    let (metrics, _) = run(&mut worker, work(only(Read, 1, 1)));
    assert_eq!(sent_ms(&worker), [0, 4_000]);
    assert_eq!(metrics.of(Read).retry_429_wait_ns, 3_999_000_000);
}

#[test]
fn a_wait_longer_than_a_minute_is_cut_to_one() {
    let clock = VirtualClock::new();
    let mut worker = reader(&clock, retrying(10), vec![too_many("3600")]);
    let (metrics, _) = run(&mut worker, work(only(Read, 1, 1)));
    let most = MOST_WAIT.as_millis() as u64;
    assert_eq!(sent_ms(&worker), [0, most + 1]);
    assert_eq!(metrics.of(Read).succeeded, 1);
    let said = samples(&metrics, Read, Failure::RateLimited);
    assert!(
        said[0].starts_with("Retry-After: 3600 (past 60 s: waited 60 s, then sent again) · "),
        "{said:?}"
    );
}

#[test]
fn garbage_absurd_or_no_retry_after_backs_off_doubling_with_jitter() {
    let clock = VirtualClock::new();
    let replies = vec![
        too_many("soon"),
        Reply::too_many(None, 1),
        too_many("86401"),
        too_many("Fri, 01 Jan 2027 00:00:00 GMT"),
    ];
    let mut worker = reader(&clock, retrying(10), replies);
    let (metrics, _) = run(&mut worker, work(only(Read, 1, 1)));
    let sent = worker.client.received_at_ms();
    assert_eq!(sent.len(), 5, "{sent:?}");
    let first = FIRST_BACKOFF.as_millis() as f64;
    for (retry, pair) in sent.windows(2).enumerate() {
        // The answer's 1 ms, then between half and all of the doubled backoff.
        let backoff = first * f64::from(1 << retry);
        let waited = pair[1] - pair[0] - 1.0;
        assert!(
            (backoff / 2.0..=backoff).contains(&waited),
            "retry {retry}: waited {waited} ms of a {backoff} ms backoff"
        );
    }
    assert_eq!(metrics.of(Read).retried_429, 4);
    let said = samples(&metrics, Read, Failure::RateLimited).join("\n");
    for words in [
        r#"Retry-After: soon (neither seconds nor an HTTP date: backed off"#,
        "no Retry-After (backed off, then sent again)",
        "Retry-After: 86401 (more than a day away: backed off",
    ] {
        assert!(said.contains(words), "{words}: {said}");
    }
}

#[test]
fn past_its_allowance_a_429_fails_timed_from_the_first_attempt() {
    let clock = VirtualClock::new();
    let replies = vec![too_many("1"), too_many("1"), too_many("1")];
    let mut worker = reader(&clock, retrying(2), replies);
    let (metrics, _) = run(&mut worker, work(only(Read, 1, 1)));
    assert_eq!(sent_ms(&worker), [0, 1_001, 2_002]);
    let read = metrics.of(Read);
    assert_eq!((read.succeeded, read.retried_429), (0, 2));
    assert_eq!(failures(&metrics, Read), [(Failure::RateLimited, 1)]);
    assert_eq!(read.statuses.sorted(), [(429, 3)]);
    let step = worker.shared.recorder.step();
    assert!(max_is(&step[Read].failed, 2_003));
    assert!(step[Read].latency.is_empty());
}

#[test]
fn under_a_rate_the_wait_counts_in_the_response_time() {
    let clock = VirtualClock::new();
    let mut worker = reader(&clock, retrying(10), vec![too_many("1")]);
    let mut share = work(only(Read, 2, 1));
    share.pacing = open(clock.at_ms(0), 100);
    let (metrics, _) = run(&mut worker, share);
    // The second read was due at 100 ms; the connection was still waiting then.
    assert_eq!(sent_ms(&worker), [0, 1_001, 1_002]);
    let step = worker.shared.recorder.step();
    let response = &step[Read].response;
    let recorded: Vec<u64> = response
        .iter_recorded()
        .map(|v| v.value_iterated_to())
        .collect();
    assert_eq!(recorded.len(), 2);
    assert!(response.equivalent(recorded[0], 903_000), "{recorded:?}");
    assert!(response.equivalent(recorded[1], 1_002_000), "{recorded:?}");
    assert_eq!(metrics.late, 1);
}

#[test]
fn the_phase_end_cuts_a_wait_and_the_operation_fails_as_interrupted() {
    let clock = VirtualClock::new();
    let mut worker = reader(&clock, retrying(10), vec![too_many("5")]);
    let mut share = work(only(Read, 3, 1));
    share.deadline = Some(clock.at_ms(500));
    let (metrics, abort) = run(&mut worker, share);
    assert_eq!(abort, None, "the phase's end is no reason to report");
    assert_eq!(worker.client.received.len(), 1);
    assert_eq!(
        clock.elapsed_ns(),
        500_000_000,
        "no wait past the phase's end"
    );
    let read = metrics.of(Read);
    assert_eq!(failures(&metrics, Read), [(Failure::Interrupted, 1)]);
    assert_eq!((read.retried_429, read.retry_429_wait_ns), (0, 499_000_000));
    assert_eq!((read.not_run, read.unknown), (0, 0));
    let said = samples(&metrics, Read, Failure::Interrupted);
    assert!(
        said[0].contains("(Retry-After: 5): the phase ended"),
        "{said:?}"
    );
    assert_eq!(worker.shared.recorder.in_flight(), 0);
    assert_eq!(worker.shared.recorder.waiting_after_429(), 0);
}

#[test]
fn a_stop_cuts_a_wait_at_once() {
    let clock = VirtualClock::new();
    let settings = retrying(10);
    let stopping = Reply::Stopping(Box::new(too_many("5")), settings.stop.clone());
    let mut worker = reader(&clock, settings, vec![stopping]);
    let (metrics, _) = run(&mut worker, work(only(Read, 3, 1)));
    assert_eq!(worker.client.received.len(), 1);
    assert_eq!(clock.elapsed_ns(), 1_000_000, "the 5 s were not waited");
    assert_eq!(failures(&metrics, Read), [(Failure::Interrupted, 1)]);
    let said = samples(&metrics, Read, Failure::Interrupted);
    assert!(said[0].ends_with("the run was stopped"), "{said:?}");
    assert_eq!(worker.shared.recorder.in_flight(), 0);
    assert_eq!(worker.shared.recorder.waiting_after_429(), 0);
}

#[test]
fn a_bulk_insert_turned_away_is_sent_again_whole_or_fails_whole() {
    for (settings, sent, stored) in [(retrying(10), 2, 3), (Settings::default(), 1, 0)] {
        let clock = VirtualClock::new();
        let server = ScriptedServer::new(&clock).then([too_many("1")]);
        let mut worker = worker(server, &clock, settings);
        let mut bulk = work(only(BulkInsert, 1, 0).with_batch(3));
        bulk.batch_size = 3;
        let (metrics, _) = run(&mut worker, bulk);
        let received = &worker.client.received;
        assert_eq!(received.len(), sent);
        assert!(received.iter().all(|r| r.body == received[0].body));
        let counted = metrics.of(BulkInsert);
        assert_eq!(counted.documents, stored);
        assert_eq!(counted.documents_failed, 3 - stored);
        assert_eq!(counted.retried_429, sent as u64 - 1);
    }
}
