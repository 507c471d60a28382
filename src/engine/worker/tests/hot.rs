//! Updates of hot documents: a 409 fetches the current revision and sends the update
//! again, every attempt counted; past the last attempt allowed the update fails.

use super::*;
use crate::driver::Method;
use crate::engine::transport::scripted::Reply;
use crate::metrics::hot::MOST_ATTEMPTS;
use crate::workload::HotDocuments;

use Operation::Update;

const CONFLICT: &str = r#"{"error":"conflict","reason":"Document update conflict."}"#;

fn written(generation: u32) -> String {
    format!(
        r#"{{"ok":true,"id":"p-hot-000000","rev":"{generation}-0123456789abcdef0123456789abcdef"}}"#
    )
}

fn document(generation: u32) -> String {
    format!(r#"{{"_id":"p-hot-000000","_rev":"{generation}-0123456789abcdef0123456789abcdef"}}"#)
}

/// A worker whose updates go to one hot document, which it knows at revision 1.
fn heated(server: ScriptedServer, clock: &VirtualClock) -> TestWorker {
    let mut worker = worker(server, clock, Settings::default());
    let mut hot = HotDocuments::named(&DocumentIds::new("p"), 1);
    hot.revs[0] = Some(rev(1));
    worker.heat(Some(Arc::new(hot)));
    worker
}

#[test]
fn a_409_fetches_the_current_revision_and_sends_the_update_again() {
    let clock = VirtualClock::new();
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(409, CONFLICT, 1),
        Reply::answer(200, &document(4), 1),
        Reply::answer(201, &written(5), 1),
        Reply::answer(201, &written(6), 1),
    ]);
    let mut worker = heated(server, &clock);
    let (metrics, abort) = run(&mut worker, work(only(Update, 2, 1)));
    assert_eq!(abort, None);
    let update = metrics.of(Update);
    assert_eq!((update.succeeded, update.failures.of_operations()), (2, 0));
    assert_eq!(update.statuses.sorted(), [(200, 1), (201, 2), (409, 1)]);
    let hot = &update.hot;
    assert_eq!(
        (hot.attempts, hot.conflicts, hot.fetches, hot.gave_up),
        (3, 1, 1, 0)
    );
    assert_eq!(&hot.by_attempts[..3], [1, 1, 0]);
    let received = &worker.client.received;
    let asked: Vec<(Method, &str)> = received
        .iter()
        .map(|r| (r.method, r.path.as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            (Method::Put, "/db/p-hot-000000"),
            (Method::Get, "/db/p-hot-000000"),
            (Method::Put, "/db/p-hot-000000"),
            (Method::Put, "/db/p-hot-000000")
        ]
    );
    // Each PUT carries the revision known then: the first, the fetched one, the written one.
    let body = |i: usize| String::from_utf8_lossy(&received[i].body).to_string();
    assert!(body(0).contains("\"_rev\":\"1-"), "{}", body(0));
    assert!(body(2).contains("\"_rev\":\"4-"), "{}", body(2));
    assert!(body(3).contains("\"_rev\":\"5-"), "{}", body(3));
    // The first update's time runs from its first PUT to its last answer: 3 ms.
    let step = worker.shared.recorder.step();
    let latency = &step[Update].latency;
    assert!(
        latency.equivalent(latency.max(), 3_000),
        "{}",
        latency.max()
    );
}

#[test]
fn an_update_that_meets_a_409_at_every_attempt_fails_as_one() {
    let clock = VirtualClock::new();
    let mut replies = Vec::new();
    for _ in 1..MOST_ATTEMPTS {
        replies.push(Reply::answer(409, CONFLICT, 1));
        replies.push(Reply::answer(200, &document(2), 1));
    }
    replies.push(Reply::answer(409, CONFLICT, 1));
    let server = ScriptedServer::new(&clock).then(replies);
    let mut worker = heated(server, &clock);
    let (metrics, _) = run(&mut worker, work(only(Update, 1, 1)));
    let update = metrics.of(Update);
    assert_eq!(update.succeeded, 0);
    assert_eq!(failures(&metrics, Update), [(Failure::of_status(409), 1)]);
    let hot = &update.hot;
    let most = MOST_ATTEMPTS as u64;
    assert_eq!(
        (hot.attempts, hot.conflicts, hot.fetches, hot.gave_up),
        (most, most, most - 1, 1)
    );
    assert_eq!(hot.by_attempts, [0; MOST_ATTEMPTS]);
    assert_eq!(worker.client.received.len(), 2 * MOST_ATTEMPTS - 1);
}

#[test]
fn a_hot_document_that_cannot_be_read_fails_its_update() {
    let clock = VirtualClock::new();
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(409, CONFLICT, 1),
        Reply::answer(404, r#"{"error":"not_found","reason":"deleted"}"#, 1),
    ]);
    let mut worker = heated(server, &clock);
    let (metrics, _) = run(&mut worker, work(only(Update, 1, 1)));
    let update = metrics.of(Update);
    assert_eq!(failures(&metrics, Update), [(Failure::of_status(404), 1)]);
    assert_eq!(
        (
            update.hot.conflicts,
            update.hot.fetches,
            update.hot.attempts
        ),
        (1, 1, 1)
    );
    assert_eq!(update.statuses.sorted(), [(404, 1), (409, 1)]);
}
