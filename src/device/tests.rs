//! The protocol against a scripted server: each request is checked against what the
//! script expects next, and answered as it says.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::*;
use crate::driver::Method;

/// One expected request and its answer.
struct Step {
    method: Method,
    /// What the path starts with.
    path: String,
    status: u16,
    answer: String,
}

#[derive(Default)]
struct Script {
    steps: VecDeque<Step>,
    /// Every request seen: method, path, body.
    seen: Vec<(Method, String, Option<Value>)>,
}

impl Script {
    fn expect(&mut self, method: Method, path: &str, status: u16, answer: Value) -> &mut Script {
        self.steps.push_back(Step {
            method,
            path: path.to_string(),
            status,
            answer: answer.to_string(),
        });
        self
    }

    fn body(&self, index: usize) -> &Value {
        self.seen[index].2.as_ref().unwrap()
    }

    fn done(&self) {
        assert!(
            self.steps.is_empty(),
            "requests not made: {}",
            self.steps.len()
        );
    }
}

impl DeviceHttp for Script {
    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Answer, String> {
        let body = body.map(|b| serde_json::from_slice(b).expect("bodies are JSON"));
        self.seen.push((method, path.to_string(), body));
        let step = self
            .steps
            .pop_front()
            .unwrap_or_else(|| panic!("unexpected request {method:?} {path}"));
        assert_eq!(step.method, method, "{path}");
        assert!(path.starts_with(&step.path), "{path} is not {}", step.path);
        if step.status == 0 {
            return Err("connection refused".into());
        }
        Ok(Answer {
            status: step.status,
            body: Bytes::from(step.answer),
        })
    }

    fn quote(&self, said: &[u8]) -> String {
        String::from_utf8_lossy(said).into_owned()
    }
}

fn device(profile: Profile) -> Device {
    Device::new(
        DeviceSpec {
            name: "dev-1".into(),
            scope: Scope::Database { path: "/db".into() },
            profile,
            doc_bytes: 200,
        },
        3,
    )
}

fn text(rev: &Rev) -> String {
    fetch::rev_text(rev)
}

fn hash(rev: &Rev) -> String {
    text(rev).split_once('-').unwrap().1.to_string()
}

#[tokio::test]
async fn a_push_with_nothing_unpushed_sends_nothing() {
    let mut script = Script::default();
    let cycle = device(Profile::pouchdb()).push(&mut script).await.unwrap();
    assert_eq!(
        (cycle.requests, cycle.bytes_sent, cycle.checkpoint_writes),
        (0, 0, 0)
    );
    assert!(script.seen.is_empty());
}

#[tokio::test]
async fn a_push_offers_writes_with_history_and_logs() {
    let mut dev = device(Profile::pouchdb());
    let a1 = dev.create("a").unwrap();
    let a2 = dev.edit("a").unwrap();
    let b1 = dev.create("b").unwrap();
    let push_id = dev.replication_ids().1.to_string();
    let log = format!("/db/_local/{push_id}");
    let mut script = Script::default();
    script
        .expect(Method::Get, &log, 404, json!({"error": "not_found"}))
        .expect(
            Method::Post,
            "/db/_revs_diff",
            200,
            json!({"a": {"missing": [text(&a2)]}, "b": {"missing": [text(&b1)]}}),
        )
        .expect(Method::Post, "/db/_bulk_docs", 201, json!([]))
        .expect(
            Method::Put,
            &log,
            201,
            json!({"ok": true, "id": format!("_local/{push_id}"), "rev": "0-1"}),
        );
    let cycle = dev.push(&mut script).await.unwrap();
    script.done();
    assert_eq!(script.seen.len(), 4);
    assert_eq!(cycle.requests, 4);
    assert_eq!(
        (
            cycle.missing,
            cycle.written,
            cycle.failures,
            cycle.checkpoint_writes
        ),
        (2, 2, 0, 1)
    );
    assert_eq!(
        cycle.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoLog
        }
    );
    assert_eq!(dev.unpushed(), 0);
    assert_eq!(script.body(1), &json!({"a": [text(&a2)], "b": [text(&b1)]}));
    let docs = script.body(2);
    assert_eq!(docs["new_edits"], false);
    assert_eq!(docs["docs"][0]["_id"], "a");
    assert_eq!(docs["docs"][0]["_rev"], text(&a2));
    assert_eq!(
        docs["docs"][0]["_revisions"],
        json!({"start": 2, "ids": [hash(&a2), hash(&a1)]})
    );
    assert!(
        docs["docs"][0].to_string().len() >= 190,
        "padded to doc_bytes"
    );
    let written = script.body(3);
    assert_eq!(written["_id"], format!("_local/{push_id}"));
    assert!(written.get("_rev").is_none(), "a new log has no _rev");
    assert_eq!(written["last_seq"], 3);
    assert_eq!(written["history"][0]["session_id"], written["session_id"]);
    assert_eq!(cycle.landed.len(), 2);

    // The next push goes on in the session: no log read, the log written with its _rev.
    let a3 = dev.delete("a").unwrap();
    let mut script = Script::default();
    script
        .expect(
            Method::Post,
            "/db/_revs_diff",
            200,
            json!({"a": {"missing": [text(&a3)]}}),
        )
        .expect(Method::Post, "/db/_bulk_docs", 201, json!([]))
        .expect(Method::Put, &log, 201, json!({"ok": true, "rev": "0-2"}));
    let cycle = dev.push(&mut script).await.unwrap();
    script.done();
    assert_eq!(cycle.started_from, StartedFrom::Continuing);
    let deleted = &script.body(1)["docs"][0];
    assert_eq!(deleted["_deleted"], true);
    assert_eq!(deleted["_revisions"]["ids"], json!([hash(&a3), hash(&a2)]));
    assert_eq!(script.body(2)["_rev"], "0-1");
    assert_eq!(script.body(2)["last_seq"], 4);
}

#[tokio::test]
async fn push_errors_are_failures_and_stay_unpushed() {
    let mut dev = device(Profile::pouchdb());
    let a = dev.create("a").unwrap();
    let b = dev.create("b").unwrap();
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(
            Method::Post,
            "/db/_revs_diff",
            200,
            json!({"a": {"missing": [text(&a)]}, "b": {"missing": [text(&b)]}}),
        )
        .expect(
            Method::Post,
            "/db/_bulk_docs",
            201,
            json!([{"id": "b", "rev": text(&b), "error": "forbidden", "reason": "no"}]),
        )
        .expect(
            Method::Put,
            "/db/_local/",
            201,
            json!({"ok": true, "rev": "0-1"}),
        );
    let cycle = dev.push(&mut script).await.unwrap();
    script.done();
    assert_eq!((cycle.written, cycle.failures), (1, 1));
    assert_eq!(cycle.landed, vec![("a".into(), a)]);
    assert_eq!(dev.unpushed(), 1);
}

#[tokio::test]
async fn a_push_the_server_already_holds_writes_nothing() {
    let mut dev = device(Profile::pouchdb());
    dev.create("a").unwrap();
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(Method::Post, "/db/_revs_diff", 200, json!({}))
        .expect(
            Method::Put,
            "/db/_local/",
            201,
            json!({"ok": true, "rev": "0-1"}),
        );
    let cycle = dev.push(&mut script).await.unwrap();
    script.done();
    assert_eq!((cycle.missing, cycle.written), (0, 0));
    assert_eq!(dev.unpushed(), 0);
}

fn feed(rows: Value, last: u64) -> Value {
    json!({"results": rows, "last_seq": last, "pending": 0})
}

fn ok_doc(id: &str, rev: &str, ids: &[&str]) -> Value {
    let generation: u64 = rev.split_once('-').unwrap().0.parse().unwrap();
    json!({"ok": {"_id": id, "_rev": rev, "x": 1, "_revisions": {"start": generation, "ids": ids}}})
}

#[tokio::test]
async fn a_pull_fetches_what_is_missing_then_reads_only_the_feed() {
    let mut dev = device(Profile::pouchdb());
    let pull_id = dev.replication_ids().0.to_string();
    let log = format!("/db/_local/{pull_id}");
    let a2 = format!("2-{}", "a".repeat(32));
    let b1 = format!("1-{}", "b".repeat(32));
    let b1c = format!("1-{}", "c".repeat(32));
    let mut script = Script::default();
    script
        .expect(Method::Get, &log, 404, json!({}))
        .expect(
            Method::Get,
            "/db/_changes?style=all_docs&since=0&limit=100",
            200,
            feed(
                json!([{"seq": 2, "id": "a", "changes": [{"rev": a2}]},
                       {"seq": 3, "id": "b", "changes": [{"rev": b1}, {"rev": b1c}]}]),
                3,
            ),
        )
        .expect(
            Method::Post,
            "/db/_bulk_get?revs=true&latest=true",
            200,
            json!({"results": [
                {"id": "a", "docs": [ok_doc("a", &a2, &["a".repeat(32).as_str(), "00"])]},
                {"id": "b", "docs": [ok_doc("b", &b1, &["b".repeat(32).as_str()])]},
                {"id": "b", "docs": [ok_doc("b", &b1c, &["c".repeat(32).as_str()])]}
            ]}),
        )
        .expect(Method::Put, &log, 201, json!({"ok": true, "rev": "0-1"}));
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    assert_eq!(cycle.requests, 4);
    assert_eq!(
        (
            cycle.changes_read,
            cycle.missing,
            cycle.written,
            cycle.failures
        ),
        (2, 3, 3, 0)
    );
    assert_eq!((cycle.conflicts_seen, cycle.checkpoint_writes), (1, 1));
    assert_eq!(script.body(2)["docs"].as_array().unwrap().len(), 3);
    assert_eq!(script.body(3)["last_seq"], 3);
    let b = dev.document("b").unwrap();
    assert_eq!(text(b.winner), b1c);
    assert_eq!(b.conflicts.len(), 1);
    assert_eq!(dev.unpushed(), 0, "pulled revisions are not pushed back");

    // Nothing new: one feed read, nothing else.
    let mut script = Script::default();
    script.expect(
        Method::Get,
        "/db/_changes?style=all_docs&since=3&limit=100&feed=longpoll",
        200,
        feed(json!([]), 3),
    );
    let cycle = dev.pull(&mut script, true).await.unwrap();
    script.done();
    assert_eq!((cycle.requests, cycle.checkpoint_writes), (1, 0));
    assert_eq!(cycle.started_from, StartedFrom::Continuing);
}

/// A pull split around its feed read (as a live device holds it): asking it sends nothing
/// once the session stands, the device writes meanwhile, and the answer is counted as the
/// pull's one request; a read that got no answer ends the session.
#[tokio::test]
async fn a_split_pull_sends_only_its_feed_read_and_the_device_writes_meanwhile() {
    let mut dev = device(Profile::pouchdb());
    let log = format!("/db/_local/{}", dev.replication_ids().0);
    let mut script = Script::default();
    script.expect(Method::Get, &log, 404, json!({})).expect(
        Method::Get,
        "/db/_changes?style=all_docs&since=0&limit=100",
        200,
        feed(json!([]), 0),
    );
    dev.pull(&mut script, false).await.unwrap();
    script.done();

    let mut nothing = Script::default();
    let ask = dev.feed_ask(&mut nothing, true).await.unwrap();
    assert!(nothing.seen.is_empty(), "{:?}", nothing.seen);
    assert_eq!(ask.requests_before(), 0);
    assert!(
        ask.request
            .path
            .starts_with("/db/_changes?style=all_docs&since=0&limit=100&feed=longpoll"),
        "{}",
        ask.request.path
    );
    // A local write while the server holds the read.
    assert!(dev.create("mine").is_some());
    let answer = Answer {
        status: 200,
        body: Bytes::from(feed(json!([]), 0).to_string()),
    };
    let cycle = dev
        .pull_answer(&mut nothing, ask, Ok(answer))
        .await
        .unwrap();
    assert!(nothing.seen.is_empty(), "{:?}", nothing.seen);
    assert_eq!(cycle.requests, 1);
    assert_eq!(dev.unpushed(), 1);

    let ask = dev.feed_ask(&mut nothing, true).await.unwrap();
    let failed = dev
        .pull_answer(&mut nothing, ask, Err("connection reset".to_string()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            failed,
            SyncError::Transport {
                step: error::Step::Feed,
                ..
            }
        ),
        "{failed}"
    );
    let mut again = Script::default();
    again.expect(Method::Get, &log, 404, json!({}));
    let ask = dev.feed_ask(&mut again, true).await.unwrap();
    again.done();
    assert_eq!(ask.requests_before(), 1, "the session begins again");
}

#[tokio::test]
async fn full_batches_are_read_on_and_a_refused_bulk_get_falls_back_to_open_revs() {
    let profile = Profile {
        batch_size: 1,
        ..Profile::pouchdb()
    };
    let mut dev = device(profile);
    let a1 = format!("1-{}", "a".repeat(32));
    let b1 = format!("1-{}", "b".repeat(32));
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(
            Method::Get,
            "/db/_changes?style=all_docs&since=0&limit=1",
            200,
            feed(json!([{"seq": 1, "id": "a", "changes": [{"rev": a1}]}]), 1),
        )
        .expect(
            Method::Post,
            "/db/_bulk_get",
            404,
            json!({"error": "not_found"}),
        )
        .expect(
            Method::Get,
            "/db/a?revs=true&latest=true&open_revs=",
            200,
            json!([ok_doc("a", &a1, &["a".repeat(32).as_str()])]),
        )
        .expect(
            Method::Put,
            "/db/_local/",
            201,
            json!({"ok": true, "rev": "0-1"}),
        )
        .expect(
            Method::Get,
            "/db/_changes?style=all_docs&since=1&limit=1",
            200,
            feed(json!([{"seq": 2, "id": "b", "changes": [{"rev": b1}]}]), 2),
        )
        .expect(
            Method::Get,
            "/db/b?revs=true&latest=true&open_revs=",
            200,
            json!([ok_doc("b", &b1, &["b".repeat(32).as_str()])]),
        )
        .expect(
            Method::Put,
            "/db/_local/",
            201,
            json!({"ok": true, "rev": "0-2"}),
        )
        .expect(
            Method::Get,
            "/db/_changes?style=all_docs&since=2&limit=1",
            200,
            feed(json!([]), 2),
        );
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    assert_eq!((cycle.written, cycle.checkpoint_writes), (2, 2));
    assert_eq!(script.body(7)["_rev"], "0-1");
    assert_eq!(dev.documents().count(), 2);
}

#[tokio::test]
async fn revisions_that_do_not_come_are_failures_and_the_position_stays() {
    let mut dev = device(Profile::pouchdb());
    let a1 = format!("1-{}", "a".repeat(32));
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(Method::Get, "/db/_changes", 200, feed(json!([{"seq": 5, "id": "a", "changes": [{"rev": a1}]}]), 5))
        .expect(Method::Post, "/db/_bulk_get", 200, json!({"results": [{"id": "a", "docs": [{"error": {"id": "a", "rev": a1, "error": "not_found"}}]}]}));
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    assert_eq!(
        (cycle.failures, cycle.written, cycle.checkpoint_writes),
        (1, 0, 0)
    );
    let mut script = Script::default();
    script.expect(
        Method::Get,
        "/db/_changes?style=all_docs&since=0&",
        200,
        feed(json!([]), 0),
    );
    dev.pull(&mut script, false).await.unwrap();
    script.done();
}

#[tokio::test]
async fn a_new_session_starts_where_both_logs_agree() {
    let mut dev = device(Profile::pouchdb());
    let pull_id = dev.replication_ids().0.to_string();
    let log = format!("/db/_local/{pull_id}");
    let mut script = Script::default();
    script
        .expect(Method::Get, &log, 404, json!({}))
        .expect(
            Method::Get,
            "/db/_changes?style=all_docs&since=0&",
            200,
            feed(json!([]), 7),
        )
        .expect(Method::Put, &log, 201, json!({"ok": true, "rev": "0-1"}));
    dev.pull(&mut script, false).await.unwrap();
    script.done();
    let server_log = script.body(2).clone();
    // The server fails: the session ends, and the next pull reads the log again.
    let mut script = Script::default();
    script.expect(Method::Get, "/db/_changes", 0, json!(null));
    let error = dev.pull(&mut script, false).await.unwrap_err();
    assert_eq!(error.step(), error::Step::Feed);
    assert!(
        error.to_string().starts_with("reading _changes: no answer"),
        "{error}"
    );
    let mut stored = server_log.clone();
    stored["_rev"] = json!("0-1");
    let mut script = Script::default();
    script.expect(Method::Get, &log, 200, stored).expect(
        Method::Get,
        "/db/_changes?style=all_docs&since=7&",
        200,
        feed(json!([]), 7),
    );
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    assert_eq!(cycle.started_from, StartedFrom::Checkpoint);
    // A server log from someone else's sessions: from 0.
    dev.pulling.end();
    let mut script = Script::default();
    script
        .expect(Method::Get, &log, 200, json!({"_rev": "0-9", "session_id": "other", "last_seq": 7, "history": [{"session_id": "other", "last_seq": 7}]}))
        .expect(Method::Get, "/db/_changes?style=all_docs&since=0&", 200, feed(json!([]), 7))
        .expect(Method::Put, &log, 409, json!({"error": "conflict"}))
        .expect(Method::Get, &log, 200, json!({"_rev": "0-10", "session_id": "other", "last_seq": 7}))
        .expect(Method::Put, &log, 201, json!({"ok": true, "rev": "0-11"}));
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    assert_eq!(
        cycle.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoCommonSession
        }
    );
    assert_eq!(script.body(2)["_rev"], "0-9");
    assert_eq!(script.body(4)["_rev"], "0-10");
    assert_eq!(cycle.checkpoint_writes, 1);
}

#[tokio::test]
async fn a_doc_ids_scope_posts_its_ids() {
    let mut dev = Device::new(
        DeviceSpec {
            name: "d".into(),
            scope: Scope::DocIds {
                path: "/db".into(),
                ids: Arc::from(vec!["a".to_string()]),
            },
            profile: Profile::replicator(),
            doc_bytes: 100,
        },
        1,
    );
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(
            Method::Post,
            "/db/_changes?style=all_docs&since=0&limit=500&filter=_doc_ids",
            200,
            feed(json!([]), 4),
        );
    let cycle = dev.pull(&mut script, false).await.unwrap();
    script.done();
    // The replicator's timer has not come: no log written yet.
    assert_eq!(cycle.checkpoint_writes, 0);
    assert_eq!(script.body(1), &json!({"doc_ids": ["a"]}));
}

#[tokio::test]
async fn garbage_is_an_error_naming_its_step() {
    let mut dev = device(Profile::pouchdb());
    let mut script = Script::default();
    script
        .expect(Method::Get, "/db/_local/", 404, json!({}))
        .expect(Method::Get, "/db/_changes", 200, json!("garbage"));
    let error = dev.pull(&mut script, false).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "reading _changes: unusable answer: no \"results\" list"
    );
    let mut script = Script::default();
    script.expect(Method::Get, "/db/_local/", 500, json!({"error": "boom"}));
    let error = dev.pull(&mut script, false).await.unwrap_err();
    assert!(
        matches!(error, SyncError::Status { status: 500, .. }),
        "{error}"
    );
}
