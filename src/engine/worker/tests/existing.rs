//! Operations on existing data: a 404 that says the document is missing is a miss, not a
//! failure; writes fetch the current revision first or go blind, and a 409 is a conflict.

use super::*;
use crate::driver::Method;
use crate::engine::transport::scripted::Reply;
use crate::workload::{Existing, ExistingKeys, ExistingWrites, IdScheme};

use Operation::{Delete, Read, Update};

const MISSING: &str = r#"{"error":"not_found","reason":"missing"}"#;
const NO_DATABASE: &str = r#"{"error":"not_found","reason":"Database does not exist."}"#;
const CONFLICT: &str = r#"{"error":"conflict","reason":"Document update conflict."}"#;

fn document(generation: u32) -> String {
    format!(r#"{{"_id":"p-0000000007","_rev":"{generation}-0123456789abcdef0123456789abcdef"}}"#)
}

fn written(generation: u32) -> String {
    format!(
        r#"{{"ok":true,"id":"p-0000000007","rev":"{generation}-0123456789abcdef0123456789abcdef"}}"#
    )
}

/// A worker whose reads, updates and deletes target document 7 of prefix `p`.
fn aimed(server: ScriptedServer, clock: &VirtualClock, writes: ExistingWrites) -> TestWorker {
    let mut worker = worker(server, clock, Settings::default());
    worker.aim_at_existing(Some(Arc::new(Existing {
        keys: ExistingKeys::Range {
            low: 7,
            high: 8,
            scheme: IdScheme::Sequential,
        },
        writes,
    })));
    worker
}

fn existing_order(operation: Operation, n: u64) -> OperationOrder {
    only(operation, n, 0).with_targets(crate::workload::Targets::Existing)
}

fn asked(worker: &TestWorker) -> Vec<(Method, String)> {
    worker
        .client
        .received
        .iter()
        .map(|r| (r.method, r.path.clone()))
        .collect()
}

#[test]
fn reads_hit_or_miss_and_a_missing_database_fails() {
    let clock = VirtualClock::new();
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(200, &document(3), 1),
        Reply::answer(404, MISSING, 1),
        Reply::answer(404, NO_DATABASE, 1),
    ]);
    let mut worker = aimed(server, &clock, ExistingWrites::Fetch);
    let (metrics, abort) = run(&mut worker, work(existing_order(Read, 3)));
    assert_eq!(abort, None);
    let read = metrics.of(Read);
    assert_eq!((read.succeeded, read.failures.of_operations()), (2, 1));
    assert_eq!(read.existing.misses, 1);
    assert_eq!(read.statuses.sorted(), [(200, 1), (404, 2)]);
    assert_eq!(
        asked(&worker)[0],
        (Method::Get, "/db/p-0000000007".to_string())
    );
}

#[test]
fn a_fetching_update_reads_the_revision_then_writes_over_it() {
    let clock = VirtualClock::new();
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(200, &document(3), 1),
        Reply::answer(201, &written(4), 1),
        // The second: another writer got there between the fetch and the write.
        Reply::answer(200, &document(4), 1),
        Reply::answer(409, CONFLICT, 1),
        // The third: the document is gone.
        Reply::answer(404, MISSING, 1),
    ]);
    let mut worker = aimed(server, &clock, ExistingWrites::Fetch);
    let (metrics, abort) = run(&mut worker, work(existing_order(Update, 3)));
    assert_eq!(abort, None);
    let update = metrics.of(Update);
    assert_eq!((update.succeeded, update.failures.of_operations()), (3, 0));
    let existing = &update.existing;
    assert_eq!(
        (existing.fetches, existing.conflicts, existing.misses),
        (3, 1, 1)
    );
    assert_eq!(
        update.statuses.sorted(),
        [(200, 2), (201, 1), (404, 1), (409, 1)]
    );
    let received = &worker.client.received;
    assert_eq!(received[1].method, Method::Put);
    let body = String::from_utf8_lossy(&received[1].body);
    assert!(body.contains("\"_rev\":\"3-"), "{body}");
    // The first update's time runs from its fetch to its write's answer: 2 ms.
    let step = worker.shared.recorder.step();
    let latency = &step[Update].latency;
    assert!(
        latency.equivalent(latency.max(), 2_000),
        "{}",
        latency.max()
    );
}

#[test]
fn blind_writes_carry_no_revision_and_count_conflicts_and_misses() {
    let clock = VirtualClock::new();
    let server = ScriptedServer::new(&clock).then([
        Reply::answer(409, CONFLICT, 1),
        Reply::answer(201, &written(1), 1),
        Reply::answer(409, CONFLICT, 1),
        Reply::answer(404, MISSING, 1),
        Reply::answer(500, r#"{"error":"unknown"}"#, 1),
    ]);
    let mut worker = aimed(server, &clock, ExistingWrites::Blind);
    let (metrics, abort) = run(&mut worker, work(existing_order(Update, 2)));
    assert_eq!(abort, None);
    let update = metrics.of(Update);
    assert_eq!(update.succeeded, 2);
    assert_eq!(
        (
            update.existing.conflicts,
            update.existing.misses,
            update.existing.fetches
        ),
        (1, 1, 0)
    );
    let (metrics, abort) = run(&mut worker, work(existing_order(Delete, 3)));
    assert_eq!(abort, None);
    let delete = metrics.of(Delete);
    assert_eq!((delete.succeeded, delete.failures.of_operations()), (2, 1));
    assert_eq!((delete.existing.conflicts, delete.existing.misses), (1, 1));
    let asked = asked(&worker);
    assert!(
        asked.iter().all(|(_, path)| path == "/db/p-0000000007"),
        "{asked:?}"
    );
    assert!(!String::from_utf8_lossy(&worker.client.received[0].body).contains("_rev"));
}
