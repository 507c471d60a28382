//! What a worker counts for each answer, lost answer and missing document.

use std::time::Duration;

use super::*;
use crate::driver::{ExchangeTiming, Method, TransportError};
use crate::engine::transport::scripted::Reply;

use Operation::{BulkInsert, Create, Delete, Read, Update};

#[test]
fn creates_count_operations_documents_bytes_and_server_time() {
    let clock = VirtualClock::new();
    let mut worker = worker_knowing(0, ScriptedServer::new(&clock), &clock);
    let (metrics, abort) = run(&mut worker, work(only(Create, 3, 0)));
    assert_eq!(abort, None);
    let create = metrics.of(Create);
    assert_eq!((create.succeeded, create.documents), (3, 3));
    let live = &taken_interval(&worker).operations[Create];
    assert_eq!((live.succeeded, live.documents), (3, 3));
    assert_eq!(create.statuses.sorted(), [(201, 3)]);
    assert_eq!(metrics.times.remote_ns[Create], 3 * 1_000_000);
    let received = &worker.client.received;
    let paths: Vec<&str> = received.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/db/p-0000000000", "/db/p-0000000001", "/db/p-0000000002"]
    );
    assert!(received.iter().all(|r| r.method == Method::Put));
    let sent: usize = received.iter().map(|r| r.body.len()).sum();
    assert_eq!(metrics.json_sent, sent as u64);
    assert!(metrics.json_received > 0);
    assert_eq!(worker.pool.len(), 3);
    // The client took no time of its own: all of it was the server's.
    assert_eq!(metrics.times.local_ns, 0);
    assert_eq!(clock.elapsed_ns(), 3 * 1_000_000);
}

/// One read, then one update, then one delete, each a share of its own whose order
/// believes the connection knows a document.
fn read_update_delete(worker: &mut TestWorker) -> Vec<(Operation, ConnectionMetrics)> {
    let mut ran = Vec::new();
    for operation in [Read, Update, Delete] {
        let (metrics, abort) = run(worker, work(only(operation, 1, 1)));
        assert_eq!(abort, None, "{operation:?}");
        ran.push((operation, metrics));
    }
    ran
}

#[test]
fn a_read_an_update_and_a_delete_keep_the_revision_current() {
    let clock = VirtualClock::new();
    let mut worker = worker_knowing(1, ScriptedServer::new(&clock), &clock);
    for (operation, metrics) in read_update_delete(&mut worker) {
        assert_eq!(metrics.of(operation).succeeded, 1, "{operation:?}");
    }
    let received = &worker.client.received;
    assert_eq!(received[0].method, Method::Get);
    let update = String::from_utf8_lossy(&received[1].body);
    assert!(update.contains(r#""_rev":"1-0123"#), "{update}");
    // The update's answer gave generation 2, which the delete names.
    assert_eq!(received[2].method, Method::Delete);
    assert!(
        received[2]
            .path
            .ends_with("?rev=2-0123456789abcdef0123456789abcdef")
    );
    assert!(worker.pool.is_empty());
}

#[test]
fn an_error_status_is_counted_under_its_status_with_a_sample() {
    let clock = VirtualClock::new();
    let missing = r#"{"error":"not_found","reason":"deleted"}"#;
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(404, missing, 1),
        Reply::answer(409, r#"{"error":"conflict"}"#, 1),
    ]);
    let mut worker = worker_knowing(1, server, &clock);
    let (read, _) = run(&mut worker, work(only(Read, 1, 1)));
    let (update, _) = run(&mut worker, work(only(Update, 1, 1)));
    assert_eq!(failures(&read, Read), [(Failure::Status(404), 1)]);
    assert_eq!(read.of(Read).statuses.sorted(), [(404, 1)]);
    assert_eq!(read.of(Read).succeeded, 0);
    let samples = read.of(Read).samples.sorted();
    assert_eq!(samples, [(Failure::Status(404), vec![missing.to_string()])]);
    assert_eq!(failures(&update, Update), [(Failure::Status(409), 1)]);
    // A refused update changed nothing: the document is still there to use.
    assert_eq!(worker.pool.len(), 1);
}

#[test]
fn a_lost_write_has_an_unknown_outcome_and_a_lost_read_does_not() {
    let clock = VirtualClock::new();
    let timeout = Reply::Lost {
        error: TransportError::Timeout,
        may_have_reached: true,
        resent: false,
        took: Duration::from_millis(30),
    };
    let server = ScriptedServer::new(&clock).then([Reply::broken(), timeout, Reply::broken()]);
    let mut worker = worker_knowing(2, server, &clock);
    let (read, _) = run(&mut worker, work(only(Read, 1, 2)));
    let before_update = clock.elapsed_ns();
    let (update, _) = run(&mut worker, work(only(Update, 1, 2)));
    let update_took = clock.elapsed_ns() - before_update;
    let (create, _) = run(&mut worker, work(only(Create, 1, 2)));
    assert_eq!(failures(&read, Read), [(Failure::Transport, 1)]);
    assert_eq!(read.of(Read).unknown, 0);
    assert_eq!(failures(&update, Update), [(Failure::Timeout, 1)]);
    assert_eq!(update.of(Update).unknown, 1);
    assert_eq!(failures(&create, Create), [(Failure::Transport, 1)]);
    assert_eq!(create.of(Create).unknown, 1);
    // The updated document's revision is unknown now: set aside; nothing was created.
    assert_eq!(worker.pool.len(), 1);
    // A lost exchange's time is no local processing: the update waited 30 ms for nothing.
    assert_eq!(update.times.local_ns, 0);
    assert_eq!(update_took, 30_000_000);
}

#[test]
fn resent_requests_are_counted_whether_answered_or_not() {
    let clock = VirtualClock::new();
    let answered = Reply::Answer {
        status: 200,
        body: r#"{"_id":"p-0000000000","_rev":"1-0123456789abcdef0123456789abcdef"}"#.into(),
        timing: ExchangeTiming::default(),
        resent: true,
        retry_after: None,
    };
    let lost = Reply::Lost {
        error: TransportError::Closed,
        may_have_reached: true,
        resent: true,
        took: Duration::ZERO,
    };
    let server = ScriptedServer::new(&clock).then([answered, lost]);
    let mut worker = worker_knowing(1, server, &clock);
    let (metrics, _) = run(&mut worker, work(only(Read, 3, 1)));
    let read = metrics.of(Read);
    assert_eq!((read.succeeded, read.resends), (2, 2));
    assert_eq!(failures(&metrics, Read), [(Failure::Transport, 1)]);
}

#[test]
fn bulk_insert_rows_are_paired_with_their_documents_by_id() {
    let clock = VirtualClock::new();
    let rows = r#"[{"ok":true,"id":"p-0000000003","rev":"1-0123456789abcdef0123456789abcdef"},
        {"id":"p-0000000001","error":"conflict","reason":"Document update conflict."},
        {"ok":true,"id":"p-0000000000","rev":"1-0123456789abcdef0123456789abcdef"},
        {"ok":true,"id":"p-0000000099","rev":"1-0123456789abcdef0123456789abcdef"}]"#;
    let server = ScriptedServer::new(&clock).then([Reply::answer(201, rows, 5)]);
    let mut worker = worker_knowing(0, server, &clock);
    let mut bulk = work(only(BulkInsert, 1, 0).with_batch(4));
    bulk.batch_size = 4;
    let (metrics, abort) = run(&mut worker, bulk);
    assert_eq!(abort, None);
    let counted = metrics.of(BulkInsert);
    assert_eq!((counted.succeeded, counted.documents), (1, 2));
    // Document 1 refused, document 2 without a row: both failed; the stranger row is a
    // failure of its own, among the documents that failed.
    assert_eq!(counted.documents_failed, 3);
    let unmatched = Failure::Document("bad_answer".to_string());
    let conflict = Failure::Document("conflict".to_string());
    let stranger = Failure::UnknownRow;
    assert_eq!(
        failures(&metrics, BulkInsert),
        [
            (unmatched.clone(), 1),
            (conflict.clone(), 1),
            (stranger.clone(), 1)
        ]
    );
    assert_eq!(counted.failures.of_operations(), 0);
    // The live figures count the same documents as the connection.
    let interval = taken_interval(&worker);
    let live = &interval.operations[BulkInsert];
    assert_eq!((live.succeeded, live.documents), (1, 2));
    assert_eq!(
        live.failures.sorted(),
        [(unmatched, 1), (conflict, 1), (stranger, 1)]
    );
    let mut stored: Vec<u64> = worker.pool.iter().map(|d| d.number).collect();
    stored.sort_unstable();
    assert_eq!(stored, [0, 3]);
}

#[test]
fn a_lost_bulk_insert_leaves_its_documents_unknown_and_a_refused_one_failed() {
    let clock = VirtualClock::new();
    let refused = Reply::answer(500, r#"{"error":"internal"}"#, 1);
    let server = ScriptedServer::new(&clock).then([Reply::broken(), refused]);
    let mut worker = worker_knowing(0, server, &clock);
    let mut bulk = work(only(BulkInsert, 2, 0).with_batch(3));
    bulk.batch_size = 3;
    let (metrics, _) = run(&mut worker, bulk);
    let counted = metrics.of(BulkInsert);
    assert_eq!((counted.unknown, counted.documents_failed), (3, 3));
    assert_eq!(
        failures(&metrics, BulkInsert),
        [(Failure::Status(500), 1), (Failure::Transport, 1)]
    );
    let interval = taken_interval(&worker);
    let live = &interval.operations[BulkInsert];
    assert_eq!((live.failed, live.documents), (2, 0));
    assert_eq!(
        live.failures.sorted(),
        [(Failure::Status(500), 1), (Failure::Transport, 1)]
    );
}

/// What the worker's recorder holds for the live figures of the interval.
fn taken_interval(worker: &TestWorker) -> crate::metrics::IntervalMetrics {
    let mut interval = crate::metrics::IntervalMetrics::default();
    worker.shared.recorder.take_interval(&mut interval);
    interval
}

#[test]
fn a_read_update_or_delete_without_a_document_is_counted_and_not_sent() {
    let clock = VirtualClock::new();
    // The connection holds no document, whatever its orders believe.
    let mut worker = worker_knowing(0, ScriptedServer::new(&clock), &clock);
    for (operation, metrics) in read_update_delete(&mut worker) {
        assert_eq!(failures(&metrics, operation), [(Failure::NoDocument, 1)]);
    }
    assert!(worker.client.received.is_empty());
}

#[test]
fn an_interrupted_request_is_counted_and_ends_the_connections_share() {
    let clock = VirtualClock::new();
    let settings = Settings::default();
    let interrupt = Reply::Interrupt(settings.stop.clone());
    let server = ScriptedServer::new(&clock).then([Reply::answer(201, "{}", 1), interrupt]);
    let mut worker = worker(server, &clock, settings);
    let (metrics, abort) = run(&mut worker, work(only(Create, 5, 0)));
    let abort = abort.expect("an interrupted connection says why it stopped");
    assert!(abort.contains("gave up a request in flight"), "{abort}");
    // The first answer was no write's answer: a bad answer, then the interrupted one.
    let expected = [(Failure::BadAnswer, 1), (Failure::Interrupted, 1)];
    assert_eq!(failures(&metrics, Create), expected);
    assert_eq!(metrics.of(Create).unknown, 1);
    assert_eq!(worker.client.received.len(), 2);
    // Stopped by the user: the three never sent are not counted as not run.
    assert_eq!(metrics.of(Create).not_run, 0);
}
