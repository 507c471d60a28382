//! A device replicating with servers that misbehave: a PouchDB Server (on disk, with an
//! admin) behind a proxy whose answers each test spoils on purpose (a feed that restarts,
//! repeats, skips or goes backwards, garbage, huge, endless and stalled answers; a
//! `_bulk_get` or `open_revs` giving missing, extra, foreign, unreachable or error rows;
//! replication logs that vanish, belong to someone else or cannot be written; a server
//! that is down or cuts its answers; a `_bulk_docs` answering nonsense). Whatever it
//! meets, the device must not panic or hang, must keep its state bounded, must surface
//! each problem as an error or a counted figure, and must never hold a revision the
//! server did not give it; once the server behaves again, it must catch up.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use common::hostile_proxy::{HostileProxy, Reply, Seen, Upstream};
use common::{ADMIN, PouchServer, Storage, get, request};
use sofabench::device::fetch::rev_text;
use sofabench::device::{
    Checkpointing, Device, DeviceSpec, Profile, Scope, StartedFrom, Step, SyncError, ZeroBecause,
};
use sofabench::driver::Client;
use sofabench::driver::auth::Auth;
use sofabench::driver::connection::Endpoint;
use sofabench::target::Target;
use sofabench::workload::changes::FeedKind;

/// The largest answer the device's client reads (the fleet sets its own).
const MAX_ANSWER: u64 = 1 << 20;
/// Documents each test database starts with (besides the conflicted one).
const DOCS: usize = 30;
/// The two leaves of the conflicted document `c`.
const LEAF_A: &str = "2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const LEAF_B: &str = "2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A cycle's figures, without its list of revisions.
fn figures(cycle: &sofabench::device::Cycle) -> String {
    format!(
        "requests {}, read {}, missing {}, written {}, failures {}, checkpoints {}, from {:?}",
        cycle.requests,
        cycle.changes_read,
        cycle.missing,
        cycle.written,
        cycle.failures,
        cycle.checkpoint_writes,
        cycle.started_from
    )
}

/// Runs `future`, failing the test if it does not end within a generous bound.
async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), future)
        .await
        .unwrap_or_else(|_| panic!("the device hung: {what}"))
}

/// A client for `url` (credentials in it are used), timing each request out after
/// `timeout` and reading at most [`MAX_ANSWER`] bytes of an answer.
fn client(url: &str, timeout: Duration) -> Client {
    let target = Target::parse(url, "x").unwrap();
    let auth = Auth::basic(target.credentials.clone());
    let endpoint = Endpoint::all(&target, &auth, MAX_ANSWER).remove(0);
    Client::new(endpoint, Some(timeout))
}

fn device(name: &str, db: &str, batch_size: u32) -> Device {
    let profile = Profile {
        batch_size,
        checkpoint: Checkpointing::EveryBatch,
        feed: FeedKind::Normal,
        feed_timeout: Duration::from_secs(1),
    };
    let spec = DeviceSpec {
        name: name.into(),
        scope: Scope::Database {
            path: format!("/{db}"),
        },
        profile,
        doc_bytes: 100,
    };
    Device::new(spec, 7)
}

/// A database of [`DOCS`] documents and `c`, which holds two conflicting leaves.
fn seed(server: &PouchServer, db: &str) {
    let url = server.admin_db(db);
    let (status, body) = request("PUT", &url, None);
    assert_eq!(status, 201, "{body}");
    let docs: Vec<Value> = (0..DOCS)
        .map(|i| json!({"_id": format!("d{i:02}"), "n": i}))
        .collect();
    let (status, body) = request(
        "POST",
        &format!("{url}/_bulk_docs"),
        Some(&json!({"docs": docs})),
    );
    assert_eq!(status, 201, "{body}");
    let base = "cccccccccccccccccccccccccccccccc";
    let leaves: Vec<Value> = [LEAF_A, LEAF_B]
        .iter()
        .map(|leaf| {
            let hash = &leaf[2..];
            json!({"_id": "c", "_rev": leaf, "_revisions": {"start": 2, "ids": [hash, base]}, "v": hash})
        })
        .collect();
    let body = json!({"docs": leaves, "new_edits": false});
    let (status, answer) = request("POST", &format!("{url}/_bulk_docs"), Some(&body));
    assert_eq!(status, 201, "{answer}");
}

fn secured_server() -> PouchServer {
    PouchServer::secured(Storage::Disk)
}

/// The server's leaves of `id`: revision and deleted flag.
fn server_leaves(server: &PouchServer, db: &str, id: &str) -> Vec<(String, bool)> {
    let url = format!("{}/{}?open_revs=all", server.admin_db(db), encode(id));
    let (status, body) = get(&url);
    if status == 404 {
        return Vec::new();
    }
    assert_eq!(status, 200, "{url}: {body}");
    body.as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row.get("ok"))
        .map(|doc| {
            let deleted = doc
                .get("_deleted")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            (doc["_rev"].as_str().unwrap().to_string(), deleted)
        })
        .collect()
}

fn encode(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes()).collect()
}

/// Every revision the device holds is a leaf the server has: it claims nothing it was
/// not given (a pull-only device makes no revisions of its own).
fn holds_only_what_the_server_gave(dev: &Device, server: &PouchServer, db: &str) {
    for doc in dev.documents() {
        let leaves = server_leaves(server, db, doc.id);
        let held: Vec<String> = std::iter::once(doc.winner)
            .chain(doc.conflicts.iter().copied())
            .map(rev_text)
            .collect();
        for rev in held {
            assert!(
                leaves.iter().any(|(leaf, _)| *leaf == rev),
                "the device holds {}@{rev}, which the server never had (its leaves: {leaves:?})",
                doc.id
            );
        }
    }
}

/// The device holds every document of the server with the same winner and conflicts.
fn agrees_with_the_server(dev: &Device, server: &PouchServer, db: &str) {
    let (status, body) = get(&format!("{}/_changes?style=all_docs", server.admin_db(db)));
    assert_eq!(status, 200, "{body}");
    let ids: Vec<String> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());
    for id in &ids {
        let (status, doc) = get(&format!(
            "{}/{}?conflicts=true",
            server.admin_db(db),
            encode(id)
        ));
        assert_eq!(status, 200, "{id}: {doc}");
        let held = dev
            .document(id)
            .unwrap_or_else(|| panic!("the device lacks {id}"));
        assert_eq!(rev_text(held.winner), doc["_rev"].as_str().unwrap(), "{id}");
        let mut theirs: Vec<String> = doc
            .get("_conflicts")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|r| r.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let mut mine: Vec<String> = held.conflicts.iter().map(|r| rev_text(r)).collect();
        theirs.sort();
        mine.sort();
        assert_eq!(mine, theirs, "{id}'s conflicts");
    }
    assert_eq!(dev.documents().count(), ids.len());
}

/// A proxy in front of `server` that spoils what `spoil` says while `hostile` is set,
/// and passes everything through otherwise.
fn proxy(
    server: &PouchServer,
    hostile: Arc<AtomicBool>,
    spoil: impl Fn(&Seen, &Upstream) -> Option<Reply> + Send + Sync + 'static,
) -> HostileProxy {
    HostileProxy::start(Some(&server.admin_url), move |seen, upstream| {
        if hostile.load(Ordering::SeqCst)
            && let Some(reply) = spoil(seen, upstream)
        {
            return reply;
        }
        upstream.pass(seen)
    })
}

/// The server's answer to `seen` as JSON, changed by `change`.
fn rewritten(seen: &Seen, upstream: &Upstream, change: impl Fn(&mut Value)) -> Reply {
    let (status, body) = upstream.forward(seen);
    let mut value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    change(&mut value);
    Reply::Answer(status, value.to_string().into_bytes())
}

/// The number after `since=` in a feed request.
fn since_of(path: &str) -> u64 {
    path.split(['?', '&'])
        .find_map(|part| part.strip_prefix("since="))
        .and_then(|since| since.parse().ok())
        .unwrap_or(0)
}

/// The state a device of these databases may take: generous, and far below what a
/// hostile server tried to make it keep.
const STATE_BOUND: usize = 64 * 1024;

#[derive(Clone, Copy, Debug)]
enum FeedTrouble {
    /// Every read answered as if `since` were 0.
    RestartsFromZero,
    /// Every row twice.
    Repeats,
    /// Every other row left out.
    Skips,
    /// Full batches whose `last_seq` goes back and forth, lower than `since` every
    /// other time.
    Backwards,
    Garbage,
    /// An answer beyond the client's bound.
    Huge,
    /// A chunked answer that never ends.
    Endless,
    /// Rows whose revisions are 64 KB long, with `_bulk_get` answering them.
    HugeRevisions,
}

fn feed_spoil(trouble: FeedTrouble) -> impl Fn(&Seen, &Upstream) -> Option<Reply> + Send + Sync {
    move |seen, upstream| {
        let huge_rev = format!("1-{}", "f".repeat(64 * 1024));
        if seen.is("POST", "/_bulk_get") {
            if !matches!(trouble, FeedTrouble::HugeRevisions) {
                return None;
            }
            let asked: Value = serde_json::from_slice(&seen.body).unwrap_or(Value::Null);
            let results: Vec<Value> = asked["docs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|doc| {
                    let id = &doc["id"];
                    let ok = json!({"_id": id, "_rev": &huge_rev,
                        "_revisions": {"start": 1, "ids": [&huge_rev[2..]]}});
                    json!({"id": id, "docs": [{"ok": ok}]})
                })
                .collect();
            let body = json!({ "results": results }).to_string();
            return Some(Reply::Answer(200, body.into_bytes()));
        }
        if !seen.is("GET", "/_changes") {
            return None;
        }
        let since = since_of(&seen.path);
        Some(match trouble {
            FeedTrouble::RestartsFromZero => {
                let mut from_zero = seen.clone();
                from_zero.path = seen.path.replace(&format!("since={since}"), "since=0");
                upstream.pass(&from_zero)
            }
            FeedTrouble::Repeats => rewritten(seen, upstream, |answer| {
                if let Some(rows) = answer["results"].as_array_mut() {
                    let twice: Vec<Value> =
                        rows.iter().flat_map(|r| [r.clone(), r.clone()]).collect();
                    *rows = twice;
                }
            }),
            FeedTrouble::Skips => rewritten(seen, upstream, |answer| {
                if let Some(rows) = answer["results"].as_array_mut() {
                    let kept: Vec<Value> = rows.iter().step_by(2).cloned().collect();
                    *rows = kept;
                }
            }),
            FeedTrouble::Backwards => {
                let mut from_zero = seen.clone();
                from_zero.path = seen.path.replace(&format!("since={since}"), "since=0");
                rewritten(&from_zero, upstream, |answer| {
                    answer["last_seq"] = json!(if since == 20 { 10 } else { 20 });
                })
            }
            FeedTrouble::Garbage => Reply::Answer(200, b"<html>502 Bad Gateway</html>".to_vec()),
            FeedTrouble::Huge => {
                let row = json!({"seq": 1, "id": "x", "changes": [{"rev": "1-a"}]}).to_string();
                let rows = vec![row; (4 << 20) / 40].join(",");
                Reply::Answer(
                    200,
                    format!("{{\"results\":[{rows}],\"last_seq\":1}}").into_bytes(),
                )
            }
            FeedTrouble::Endless => Reply::Endless,
            FeedTrouble::HugeRevisions => {
                let rows: Vec<Value> = (0..10)
                    .map(|i| json!({"seq": i + 1, "id": format!("d{i:02}"), "changes": [{"rev": &huge_rev}]}))
                    .collect();
                let body = json!({"results": rows, "last_seq": 10}).to_string();
                Reply::Answer(200, body.into_bytes())
            }
        })
    }
}

/// What the feed's trouble must come to: `Ok` with at most what the server gave, or an
/// error of the feed.
fn check_feed_outcome(trouble: FeedTrouble, outcome: &Result<sofabench::device::Cycle, SyncError>) {
    match trouble {
        FeedTrouble::RestartsFromZero | FeedTrouble::Skips => {
            assert!(outcome.is_ok(), "{trouble:?}: {outcome:?}");
        }
        FeedTrouble::Repeats => {
            let cycle = outcome.as_ref().unwrap();
            // Every revision stored once, however often it was listed.
            assert_eq!(cycle.written, DOCS as u64 + 2, "{trouble:?}");
            assert_eq!(cycle.failures, 0, "{trouble:?}");
        }
        FeedTrouble::HugeRevisions => {
            let cycle = outcome.as_ref().unwrap();
            assert_eq!(cycle.written, 0, "{trouble:?}: {}", figures(cycle));
            assert!(cycle.failures >= 10, "{trouble:?}: {}", figures(cycle));
        }
        FeedTrouble::Backwards
        | FeedTrouble::Garbage
        | FeedTrouble::Huge
        | FeedTrouble::Endless => {
            let error = outcome.as_ref().expect_err(&format!("{trouble:?}"));
            assert_eq!(error.step(), Step::Feed, "{trouble:?}: {error}");
        }
    }
}

#[tokio::test]
async fn a_hostile_changes_feed_never_makes_the_device_hang_or_hold_what_the_server_did_not_give() {
    let server = secured_server();
    let troubles = [
        FeedTrouble::RestartsFromZero,
        FeedTrouble::Repeats,
        FeedTrouble::Skips,
        FeedTrouble::Backwards,
        FeedTrouble::Garbage,
        FeedTrouble::Huge,
        FeedTrouble::Endless,
        FeedTrouble::HugeRevisions,
    ];
    for (n, trouble) in troubles.into_iter().enumerate() {
        let db = format!("feed-{n}");
        seed(&server, &db);
        let hostile = Arc::new(AtomicBool::new(true));
        let proxy = proxy(&server, hostile.clone(), feed_spoil(trouble));
        let mut http = client(&proxy.url, Duration::from_secs(30));
        let batch = if matches!(trouble, FeedTrouble::Repeats) {
            100
        } else {
            10
        };
        let mut dev = device(&format!("feed-{n}"), &db, batch);
        let outcome = bounded(&format!("{trouble:?}"), dev.pull(&mut http, false)).await;
        check_feed_outcome(trouble, &outcome);
        holds_only_what_the_server_gave(&dev, &server, &db);
        assert!(
            dev.state_bytes() < STATE_BOUND,
            "{trouble:?}: {}",
            dev.state_bytes()
        );
        // The server behaves again: the device catches up, unless the trouble took it
        // past changes it was never shown or could not use (a feed that skips rows,
        // whose last_seq is past its rows, as a filtered feed's may be, or whose rows it
        // passed over, counted).
        hostile.store(false, Ordering::SeqCst);
        let caught_up = bounded("catching up", dev.pull(&mut http, false)).await;
        assert!(caught_up.is_ok(), "{trouble:?}: {caught_up:?}");
        holds_only_what_the_server_gave(&dev, &server, &db);
        if !matches!(
            trouble,
            FeedTrouble::Skips | FeedTrouble::Backwards | FeedTrouble::HugeRevisions
        ) {
            agrees_with_the_server(&dev, &server, &db);
        }
    }
}

#[tokio::test]
async fn a_stalled_feed_ends_the_pull_with_a_transport_error() {
    let proxy = HostileProxy::start(None, |seen, _| {
        if seen.path.contains("/_local/") {
            Reply::Answer(404, br#"{"error":"not_found"}"#.to_vec())
        } else {
            Reply::Stall(Duration::from_secs(90))
        }
    });
    let mut http = client(&proxy.url, Duration::from_secs(2));
    let mut dev = device("stall", "db", 10);
    let outcome = bounded("a stall", dev.pull(&mut http, true)).await;
    match outcome {
        Err(SyncError::Transport {
            step: Step::Feed, ..
        }) => {}
        other => panic!("a stalled feed gave {other:?}"),
    }
    assert_eq!(dev.documents().count(), 0);
}

/// How a fetch (`_bulk_get`, or `open_revs` where it is refused) misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FetchTrouble {
    /// One leaf of the conflicted document left out.
    Missing,
    /// A revision never asked for added beside each one asked for.
    Extra,
    /// A revision of a document never asked for added.
    OtherDocument,
    /// `_revisions` that do not reach the revision.
    Unreached,
    /// Every revision an error row.
    ErrorRows,
    Garbage,
}

fn invented(id: &Value, generation: u32) -> Value {
    let ids: Vec<String> = (0..generation)
        .map(|g| format!("{:032x}", 0xdead_0000u64 + u64::from(g)))
        .collect();
    json!({"_id": id, "_rev": format!("{generation}-{}", ids[0]),
        "_revisions": {"start": generation, "ids": ids}, "invented": true})
}

/// Spoils the entries (`{"ok": doc}`, `{"error": …}`, `{"missing": rev}`) of one
/// document's answer.
fn spoil_entries(trouble: FetchTrouble, entries: &mut Vec<Value>) {
    match trouble {
        FetchTrouble::Missing => entries.retain(|entry| entry["ok"]["_rev"] != LEAF_A),
        FetchTrouble::Extra => {
            if let Some(id) = entries.iter().find_map(|e| e["ok"].get("_id").cloned()) {
                entries.push(json!({ "ok": invented(&id, 9) }));
            }
        }
        FetchTrouble::OtherDocument => {
            entries.push(json!({ "ok": invented(&json!("never-asked"), 1) }));
        }
        FetchTrouble::Unreached => {
            for entry in entries.iter_mut() {
                if let Some(ids) = entry["ok"]["_revisions"]["ids"].as_array_mut() {
                    ids[0] = json!("0123456789abcdef0123456789abcdef");
                }
            }
        }
        FetchTrouble::ErrorRows => {
            for entry in entries.iter_mut() {
                let (id, rev) = (entry["ok"]["_id"].clone(), entry["ok"]["_rev"].clone());
                *entry = json!({"error": {"id": id, "rev": rev, "error": "not_found", "reason": "missing"}});
            }
        }
        FetchTrouble::Garbage => {}
    }
}

fn fetch_spoil(
    trouble: FetchTrouble,
    refuse_bulk_get: bool,
) -> impl Fn(&Seen, &Upstream) -> Option<Reply> + Send + Sync {
    move |seen, upstream| {
        if seen.is("POST", "/_bulk_get") {
            if refuse_bulk_get {
                return Some(Reply::Answer(404, br#"{"error":"not_found"}"#.to_vec()));
            }
            if trouble == FetchTrouble::Garbage {
                return Some(Reply::Answer(200, b"{\"results\": [{\"id\": ".to_vec()));
            }
            return Some(rewritten(seen, upstream, |answer| {
                for result in answer["results"].as_array_mut().into_iter().flatten() {
                    if let Some(docs) = result["docs"].as_array_mut() {
                        spoil_entries(trouble, docs);
                    }
                }
            }));
        }
        if seen.method == "GET" && seen.path.contains("open_revs=") {
            if trouble == FetchTrouble::Garbage {
                return Some(Reply::Answer(200, b"[{\"ok\": {\"_id\"".to_vec()));
            }
            return Some(rewritten(seen, upstream, |answer| {
                if let Some(entries) = answer.as_array_mut() {
                    spoil_entries(trouble, entries);
                }
            }));
        }
        None
    }
}

/// What a fetch's trouble must come to.
fn check_fetch_outcome(
    trouble: FetchTrouble,
    outcome: &Result<sofabench::device::Cycle, SyncError>,
    dev: &Device,
) {
    let label = format!("{trouble:?}");
    match trouble {
        FetchTrouble::Garbage => {
            let error = outcome.as_ref().expect_err(&label);
            assert!(
                matches!(error.step(), Step::BulkGet | Step::OpenRevs),
                "{error}"
            );
            assert_eq!(dev.documents().count(), 0, "{label}");
        }
        FetchTrouble::Missing => {
            let cycle = outcome.as_ref().expect(&label);
            assert!(cycle.failures >= 1, "{label}: {}", figures(cycle));
        }
        FetchTrouble::Unreached | FetchTrouble::ErrorRows => {
            let cycle = outcome.as_ref().expect(&label);
            assert_eq!(cycle.written, 0, "{label}: {}", figures(cycle));
            assert!(
                cycle.failures >= DOCS as u64 + 2,
                "{label}: {}",
                figures(cycle)
            );
            assert_eq!(dev.documents().count(), 0, "{label}");
        }
        FetchTrouble::Extra | FetchTrouble::OtherDocument => {
            let cycle = outcome.as_ref().expect(&label);
            assert_eq!(
                cycle.written,
                DOCS as u64 + 2,
                "{label}: {}",
                figures(cycle)
            );
            assert!(
                cycle.failures >= 1,
                "{label}: what was refused is counted: {}",
                figures(cycle)
            );
            assert!(dev.document("never-asked").is_none(), "{label}");
        }
    }
}

async fn hostile_fetches(refuse_bulk_get: bool) {
    let server = secured_server();
    let troubles = [
        FetchTrouble::Missing,
        FetchTrouble::Extra,
        FetchTrouble::OtherDocument,
        FetchTrouble::Unreached,
        FetchTrouble::ErrorRows,
        FetchTrouble::Garbage,
    ];
    for (n, trouble) in troubles.into_iter().enumerate() {
        let db = format!("fetch-{n}");
        seed(&server, &db);
        let hostile = Arc::new(AtomicBool::new(true));
        let proxy = proxy(
            &server,
            hostile.clone(),
            fetch_spoil(trouble, refuse_bulk_get),
        );
        let mut http = client(&proxy.url, Duration::from_secs(30));
        let mut dev = device(&format!("fetch-{n}"), &db, 100);
        let outcome = bounded(&format!("{trouble:?}"), dev.pull(&mut http, false)).await;
        check_fetch_outcome(trouble, &outcome, &dev);
        holds_only_what_the_server_gave(&dev, &server, &db);
        assert!(dev.state_bytes() < STATE_BOUND);
        if refuse_bulk_get {
            assert!(
                proxy.count("open_revs=") > 0,
                "{trouble:?}: the fall back was not taken"
            );
        }
        // The server behaves again (still without _bulk_get, where it refused it): what
        // could not be fetched is fetched now.
        hostile.store(false, Ordering::SeqCst);
        let caught_up = bounded("catching up", dev.pull(&mut http, false)).await;
        assert!(caught_up.is_ok(), "{trouble:?}: {caught_up:?}");
        agrees_with_the_server(&dev, &server, &db);
    }
}

#[tokio::test]
async fn a_hostile_bulk_get_is_counted_and_what_it_did_not_give_is_fetched_later() {
    hostile_fetches(false).await;
}

#[tokio::test]
async fn a_hostile_open_revs_fall_back_is_counted_and_what_it_did_not_give_is_fetched_later() {
    hostile_fetches(true).await;
}

/// A pull whose next session must read the server's log again: one feed read the proxy
/// answers 500 (a failure ends a session).
async fn fail_once(dev: &mut Device, http: &mut Client, fail: &AtomicUsize) {
    fail.store(1, Ordering::SeqCst);
    let failed = bounded("a failed pull", dev.pull(http, false)).await;
    assert!(
        matches!(
            failed,
            Err(SyncError::Status {
                step: Step::Feed,
                status: 500,
                ..
            })
        ),
        "{failed:?}"
    );
}

/// A proxy that answers the next `fail` feed reads 500, and `_local` writes as `log_put`
/// says (0: the server's answer).
fn log_proxy(
    server: &PouchServer,
    fail: Arc<AtomicUsize>,
    log_put: Arc<AtomicUsize>,
) -> HostileProxy {
    HostileProxy::start(Some(&server.admin_url), move |seen, upstream| {
        if seen.is("GET", "/_changes")
            && fail
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Reply::Answer(500, br#"{"error":"unknown_error"}"#.to_vec());
        }
        let status = log_put.load(Ordering::SeqCst);
        if seen.is("PUT", "/_local/") && status != 0 {
            return Reply::Answer(
                status as u16,
                br#"{"error":"no","reason":"not today"}"#.to_vec(),
            );
        }
        upstream.pass(seen)
    })
}

#[tokio::test]
async fn a_vanished_or_foreign_checkpoint_makes_the_device_sync_again_from_zero_and_say_so() {
    let server = secured_server();
    let db = "logs";
    seed(&server, db);
    let (fail, log_put) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let proxy = log_proxy(&server, fail.clone(), log_put.clone());
    let mut http = client(&proxy.url, Duration::from_secs(30));
    let mut dev = device("logs", db, 10);
    let first = bounded("the first pull", dev.pull(&mut http, false))
        .await
        .unwrap();
    assert_eq!(
        first.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoLog
        }
    );
    assert!(first.checkpoint_writes > 0);
    agrees_with_the_server(&dev, &server, db);
    let log_url = format!("{}/_local/{}", server.admin_db(db), dev.replication_ids().0);

    // A new session with both logs in place starts from the checkpoint.
    fail_once(&mut dev, &mut http, &fail).await;
    let again = bounded("a pull after a failure", dev.pull(&mut http, false))
        .await
        .unwrap();
    assert_eq!(again.started_from, StartedFrom::Checkpoint);
    assert_eq!(again.changes_read, 0);

    // The server's log vanishes: the next session starts from 0 and says why.
    let (status, log) = get(&log_url);
    assert_eq!(status, 200, "{log}");
    let deleted = request(
        "DELETE",
        &format!("{log_url}?rev={}", log["_rev"].as_str().unwrap()),
        None,
    );
    assert_eq!(deleted.0, 200, "{deleted:?}");
    fail_once(&mut dev, &mut http, &fail).await;
    let vanished = bounded("a pull without a log", dev.pull(&mut http, false))
        .await
        .unwrap();
    assert_eq!(
        vanished.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoLog
        }
    );
    assert_eq!(
        vanished.changes_read,
        DOCS as u64 + 1,
        "everything read again"
    );
    assert_eq!(
        (vanished.missing, vanished.written),
        (0, 0),
        "and nothing stored twice"
    );
    agrees_with_the_server(&dev, &server, db);

    // A log of someone else's sessions (with a sequence far ahead) is not believed.
    let (_, log) = get(&log_url);
    let foreign = json!({"_rev": log["_rev"], "session_id": "someone-else", "last_seq": 9999,
        "history": [{"session_id": "someone-else", "last_seq": 9999}]});
    assert_eq!(request("PUT", &log_url, Some(&foreign)).0, 201);
    fail_once(&mut dev, &mut http, &fail).await;
    let other = bounded("a pull with a foreign log", dev.pull(&mut http, false))
        .await
        .unwrap();
    assert_eq!(
        other.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoCommonSession
        }
    );
    assert_eq!(other.changes_read, DOCS as u64 + 1);
    agrees_with_the_server(&dev, &server, db);
}

#[tokio::test]
async fn a_log_that_cannot_be_written_fails_the_cycle_but_keeps_what_was_stored() {
    let server = secured_server();
    for (n, status) in [409usize, 500].into_iter().enumerate() {
        let db = format!("log-put-{n}");
        seed(&server, &db);
        let (fail, log_put) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(status)),
        );
        let proxy = log_proxy(&server, fail, log_put.clone());
        let mut http = client(&proxy.url, Duration::from_secs(30));
        let mut dev = device(&format!("log-put-{n}"), &db, 100);
        let outcome = bounded("a refused log", dev.pull(&mut http, false)).await;
        match &outcome {
            Err(SyncError::Status {
                step: Step::WriteLog,
                status: got,
                ..
            }) => {
                assert_eq!(*got as usize, status)
            }
            other => panic!("a log answered {status} gave {other:?}"),
        }
        // Tried once, and once more after reading the log again for a 409: no loop.
        let puts = proxy.count("PUT /");
        assert_eq!(puts, if status == 409 { 2 } else { 1 }, "{status}");
        holds_only_what_the_server_gave(&dev, &server, &db);
        assert_eq!(
            dev.documents().count(),
            DOCS + 1,
            "what was fetched is kept"
        );
        log_put.store(0, Ordering::SeqCst);
        let next = bounded("a pull once the log is taken", dev.pull(&mut http, false))
            .await
            .unwrap();
        assert_eq!(next.written, 0, "nothing fetched twice: {}", figures(&next));
        assert_eq!(next.checkpoint_writes, 1);
        agrees_with_the_server(&dev, &server, &db);
    }
}

/// Every document the device wrote is on the server with the device's winner.
fn server_has_every_write(dev: &Device, server: &PouchServer, db: &str) {
    for doc in dev.documents() {
        let leaves = server_leaves(server, db, doc.id);
        let winner = rev_text(doc.winner);
        assert!(
            leaves
                .iter()
                .any(|(rev, deleted)| *rev == winner && *deleted == doc.deleted),
            "the server lacks {}@{winner} (its leaves: {leaves:?})",
            doc.id
        );
    }
}

#[tokio::test]
async fn a_server_that_is_down_loses_nothing_the_device_wrote_and_gets_it_all_once_back() {
    let mut server = secured_server();
    let db = "down";
    assert_eq!(request("PUT", &server.admin_db(db), None).0, 201);
    let mut http = client(&server.admin_url, Duration::from_secs(30));
    let mut dev = device("down", db, 10);
    for i in 0..15 {
        dev.create(&format!("early-{i:02}")).unwrap();
    }
    let pushed = bounded("a push", dev.push(&mut http)).await.unwrap();
    assert_eq!((pushed.written, dev.unpushed()), (15, 0));

    server.kill();
    let mut failures = 0;
    for round in 0..3 {
        for i in 0..10 {
            dev.create(&format!("offline-{round}-{i}")).unwrap();
        }
        dev.edit(&format!("early-{round:02}")).unwrap();
        dev.delete(&format!("early-{:02}", round + 10)).unwrap();
        let refused = bounded("a push to a dead server", dev.push(&mut http)).await;
        match refused {
            Err(SyncError::Transport { .. }) => failures += 1,
            other => panic!("a push to a dead server gave {other:?}"),
        }
        assert_eq!(dev.unpushed(), (round + 1) * 12, "nothing local is lost");
    }
    assert_eq!(failures, 3);

    server.restart();
    let delivered = bounded("a push once back", dev.push(&mut http))
        .await
        .unwrap();
    assert_eq!(dev.unpushed(), 0);
    assert_eq!(delivered.written, 36, "{}", figures(&delivered));
    assert_eq!(delivered.failures, 0);
    server_has_every_write(&dev, &server, db);
    assert_eq!(common::doc_count(&server.admin_db(db)), 15 + 30 - 3);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PushTrouble {
    /// `_bulk_docs` applied, its answer cut off mid-body.
    CutAfterApplying,
    /// `_bulk_docs` applied, answered 201 with garbage.
    GarbageAfterApplying,
    /// `_bulk_docs` not applied, answered 201 with garbage.
    GarbageNotApplied,
    /// `_bulk_docs` applied, answered with error rows for documents never sent.
    RowsForOthers,
    /// `_revs_diff` answered with revisions and documents never offered.
    DiffForOthers,
}

fn push_spoil(trouble: PushTrouble) -> impl Fn(&Seen, &Upstream) -> Option<Reply> + Send + Sync {
    move |seen, upstream| {
        if trouble == PushTrouble::DiffForOthers && seen.is("POST", "/_revs_diff") {
            return Some(rewritten(seen, upstream, |diff| {
                diff["never-sent"] = json!({"missing": ["1-0123456789abcdef0123456789abcdef"]});
                if let Some(entries) = diff.as_object_mut() {
                    for entry in entries.values_mut() {
                        if let Some(missing) = entry["missing"].as_array_mut() {
                            missing.push(json!("7-0123456789abcdef0123456789abcdef"));
                        }
                    }
                }
            }));
        }
        if !seen.is("POST", "/_bulk_docs") {
            return None;
        }
        Some(match trouble {
            PushTrouble::CutAfterApplying => {
                let (_, body) = upstream.forward(seen);
                Reply::Cut(body[..body.len() / 2].to_vec())
            }
            PushTrouble::GarbageAfterApplying => {
                upstream.forward(seen);
                Reply::Answer(201, b"\x00\x01 not json".to_vec())
            }
            PushTrouble::GarbageNotApplied => Reply::Answer(201, b"{[".to_vec()),
            PushTrouble::RowsForOthers => rewritten(seen, upstream, |rows| {
                if let Some(rows) = rows.as_array_mut() {
                    rows.push(json!({"id": "never-sent", "error": "forbidden", "reason": "no"}));
                }
            }),
            PushTrouble::DiffForOthers => return None,
        })
    }
}

#[tokio::test]
async fn a_push_whose_answers_are_cut_garbled_or_about_other_documents_delivers_everything() {
    let server = secured_server();
    let troubles = [
        PushTrouble::CutAfterApplying,
        PushTrouble::GarbageAfterApplying,
        PushTrouble::GarbageNotApplied,
        PushTrouble::RowsForOthers,
        PushTrouble::DiffForOthers,
    ];
    for (n, trouble) in troubles.into_iter().enumerate() {
        let db = format!("push-{n}");
        assert_eq!(request("PUT", &server.admin_db(&db), None).0, 201);
        let hostile = Arc::new(AtomicBool::new(true));
        let proxy = proxy(&server, hostile.clone(), push_spoil(trouble));
        let mut http = client(&proxy.url, Duration::from_secs(30));
        let mut dev = device(&format!("push-{n}"), &db, 100);
        for i in 0..20 {
            dev.create(&format!("doc-{i:02}")).unwrap();
        }
        dev.edit("doc-00").unwrap();
        let outcome = bounded(&format!("{trouble:?}"), dev.push(&mut http)).await;
        match trouble {
            PushTrouble::CutAfterApplying
            | PushTrouble::GarbageAfterApplying
            | PushTrouble::GarbageNotApplied => {
                let error = outcome.expect_err(&format!("{trouble:?}"));
                assert_eq!(error.step(), Step::BulkDocs, "{trouble:?}: {error}");
                assert_eq!(
                    dev.unpushed(),
                    20,
                    "{trouble:?}: unknown outcomes stay unpushed"
                );
            }
            PushTrouble::RowsForOthers | PushTrouble::DiffForOthers => {
                let cycle = outcome.unwrap();
                assert_eq!(
                    (cycle.written, dev.unpushed()),
                    (20, 0),
                    "{trouble:?}: {}",
                    figures(&cycle)
                );
                assert_eq!(cycle.landed.len(), 20);
                assert!(cycle.landed.iter().all(|(id, _)| id.starts_with("doc-")));
            }
        }
        assert!(dev.document("never-sent").is_none());
        hostile.store(false, Ordering::SeqCst);
        let after = bounded("a push once it behaves", dev.push(&mut http))
            .await
            .unwrap();
        assert_eq!(dev.unpushed(), 0, "{trouble:?}: {}", figures(&after));
        assert_eq!(after.failures, 0);
        server_has_every_write(&dev, &server, &db);
        assert_eq!(common::doc_count(&server.admin_db(&db)), 20);
        let (_, never) = get(&format!("{}/never-sent", server.admin_db(&db)));
        assert_eq!(never["error"], "not_found");
    }
    let _ = ADMIN;
}
