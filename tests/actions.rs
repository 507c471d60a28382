//! Background actions that tell the truth: replication with credentials for both sides,
//! a failed action failing the run, `--cleanup` of the replica, and compaction followed
//! until it has finished. Against a PouchDB Server with an admin (not in admin party), and
//! against a test-only server answering like CouchDB 3.x where PouchDB Server cannot show
//! the behaviour (a compaction that goes on after its 202).

mod common;

use std::path::Path;
use std::time::Duration;

use common::couch_like::{CouchLike, SIZE_AFTER, SIZE_BEFORE, Timeline};
use common::*;
use serde_json::Value;

/// A scenario file of the given phases (TOML `[[phase]]` tables).
fn scenario(dir: &Path, phases: &str) -> String {
    let file = dir.join("actions.toml");
    std::fs::write(&file, phases).unwrap();
    file.to_str().unwrap().to_string()
}

fn result(path: &Path) -> (Value, String) {
    let text = std::fs::read_to_string(path).unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

fn action<'a>(result: &'a Value, phase: &str) -> &'a Value {
    let phases = result["phases"].as_array().unwrap();
    let found = phases.iter().find(|p| p["name"] == phase).unwrap();
    &found["action"]
}

// The replication starts after the inserts: PouchDB Server 4.2 answers a refused
// replication with 401 and then crashes (an unhandled 'error' event), and the failure
// must be the action's alone.
const COPY_PHASE: &str = r#"
[[phase]]
name = "copy"
mix = { bulk_insert = 1 }
batch_size = 10
total = 3
connections = 1
replicate_at = "1s"
replicate_to = "refused-copy"
"#;

#[test]
fn a_refused_replication_fails_the_run_and_never_shows_a_password() {
    let server = PouchServer::secured(Storage::Memory);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), COPY_PHASE);
    let json = dir.path().join("result.json");
    // The server is told to reach the database with a wrong password: it refuses.
    let wrong = format!("http://admin:Wr0ng-pw-7731@127.0.0.1:{}", server.port);
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=refused",
        "--quiet",
        "--scenario",
        &file,
        "--replication-address",
        &wrong,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("bulk_insert"), 3, "{}", run.stdout);
    assert_eq!(run.errors("bulk_insert"), 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("background action replicate of phase copy failed")
            && run.stderr.contains("401"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("action replicate failed:"),
        "{}",
        run.stdout
    );
    let (result, text) = result(&json);
    assert!(
        action(&result, "copy")["error"]
            .as_str()
            .is_some_and(|e| e.contains("401")),
        "{text}"
    );
    assert_eq!(
        result["config"]["replication_address"],
        format!("http://127.0.0.1:{}", server.port)
    );
    for secret in ["Wr0ng-pw-7731", "s3cret-pw", "YWRtaW46V3Iwbmct"] {
        for (name, shown) in [
            ("stdout", &run.stdout),
            ("stderr", &run.stderr),
            ("result", &text),
        ] {
            assert!(!shown.contains(secret), "{secret} in {name}:\n{shown}");
        }
    }
}

#[test]
fn cleanup_deletes_the_replica_the_run_created_and_nothing_else() {
    let server = PouchServer::secured(Storage::Memory);
    let kept = server.admin_db("kept-copy");
    assert_eq!(request("PUT", &kept, None).0, 201);
    let doc = serde_json::json!({"mine": true});
    assert_eq!(
        request("PUT", &format!("{kept}/not-the-runs"), Some(&doc)).0,
        201
    );
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        r#"
[[phase]]
name = "into_existing"
mix = { bulk_insert = 1 }
batch_size = 10
total = 3
connections = 1
replicate_at = "1s"
replicate_to = "kept-copy"
[[phase]]
name = "into_new"
mix = { bulk_insert = 1 }
batch_size = 10
total = 3
connections = 1
replicate_at = "1s"
replicate_to = "made-copy"
"#,
    );
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=cleaned",
        "--quiet",
        "--scenario",
        &file,
        "--cleanup",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("deleted replica \"made-copy\" (--cleanup)"),
        "{}",
        run.stdout
    );
    assert_eq!(
        get(&server.admin_db("made-copy")).0,
        404,
        "the run's replica"
    );
    assert_eq!(
        get(&server.admin_db("cleaned")).0,
        404,
        "the run's database"
    );
    // The database the run found is still there, with what it held and what it received.
    assert_eq!(doc_count(&kept), 1 + 30);
    assert_eq!(get(&format!("{kept}/not-the-runs")).0, 200);
}

fn couch_like_run(couch: &CouchLike, file: &str, json: &Path, extra: &[&str]) -> Run {
    let address = couch.url.replace("http://", "http://admin:Pa55-w0rd@");
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={address}"),
        "--database_name=followed".to_string(),
        "--quiet".to_string(),
        "--scenario".to_string(),
        file.to_string(),
        "--json".to_string(),
        json.to_str().unwrap().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sofabench(&args)
}

const COMPACT_PHASE: &str = r#"
[[phase]]
name = "compacting"
mix = { create = 1 }
duration = "1s"
connections = 1
compact_at = "0s"
"#;

#[test]
fn a_couchdb_compaction_is_followed_until_its_shards_have_finished() {
    // As CouchDB 3.x: nothing shows for 0.3 s after the 202, then compact_running for
    // 1.2 s, while `_active_tasks` lists a shard's compaction for 2 s.
    let timeline = Timeline {
        starts_after: Duration::from_millis(300),
        database_running: Duration::from_millis(1_200),
        tasks_running: Duration::from_millis(2_000),
    };
    let couch = CouchLike::start("followed", timeline);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), COMPACT_PHASE);
    let json = dir.path().join("result.json");
    let run = couch_like_run(&couch, &file, &json, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (result, text) = result(&json);
    let compact = action(&result, "compacting");
    let took = compact["finished_seconds"].as_f64().unwrap()
        - compact["started_seconds"].as_f64().unwrap();
    // It ended 2.3 s after the answer; a look every 0.2 s sees that within a look or two.
    let end = timeline.end().as_secs_f64();
    assert!(took >= end && took < end + 0.6, "took {took} s:\n{text}");
    assert_eq!(compact["size_before"], SIZE_BEFORE, "{text}");
    assert_eq!(
        compact["size_after"], SIZE_AFTER,
        "taken after the end: {text}"
    );
    assert_eq!(compact["size_field"], "sizes.file");
    assert!(compact["note"].is_null(), "{text}");
    assert!(compact["error"].is_null(), "{text}");
    assert!(
        run.stdout.contains(
            "database file size: 137,433,211 bytes before, 52,001,337 bytes after (sizes.file)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_compaction_that_does_not_end_in_time_is_reported_as_such() {
    let couch = CouchLike::start(
        "followed",
        Timeline {
            starts_after: Duration::ZERO,
            database_running: Duration::from_secs(600),
            tasks_running: Duration::from_secs(600),
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), COMPACT_PHASE);
    let json = dir.path().join("result.json");
    let run = couch_like_run(&couch, &file, &json, &["--action-timeout=2s"]);
    // The figures are real, only the end is unknown: not a failure of the run.
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.took < Duration::from_secs(20), "{:?}", run.took);
    let (result, text) = result(&json);
    let compact = action(&result, "compacting");
    assert!(compact["finished_seconds"].is_null(), "{text}");
    assert!(compact["size_after"].is_null(), "{text}");
    assert!(
        compact["note"]
            .as_str()
            .is_some_and(|n| n.contains("--action-timeout")),
        "{text}"
    );
    assert!(
        run.stdout.contains("action compact: started at")
            && run.stdout.contains("end unknown")
            && run.stdout.contains("still running"),
        "{}",
        run.stdout
    );
}

#[test]
fn couchdb_is_sent_credentials_for_both_sides_at_the_replication_address() {
    let couch = CouchLike::start("followed", Timeline::INSTANT);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        r#"
[[phase]]
name = "both_ways"
mix = { create = 1 }
total = 5
connections = 1
replicate_at = "0s"
replicate_to = "followed-copy"
two_way = true
"#,
    );
    let json = dir.path().join("result.json");
    // Inside the cluster the node is couchdb-0.couchdb, not the client's address.
    let run = couch_like_run(
        &couch,
        &file,
        &json,
        &["--replication-address=http://couchdb-0.couchdb:5984/"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Where CouchDB 3's replicator takes a user and password: auth.basic.
    let side = |db: &str| {
        serde_json::json!({
            "url": format!("http://couchdb-0.couchdb:5984/{db}"),
            "auth": {"basic": {"username": "admin", "password": "Pa55-w0rd"}},
        })
    };
    let bodies = couch.replications();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[0]["source"], side("followed"));
    assert_eq!(bodies[0]["target"], side("followed-copy"));
    assert_eq!(bodies[1]["source"], side("followed-copy"));
    assert_eq!(bodies[1]["target"], side("followed"));
    let (result, text) = result(&json);
    assert_eq!(
        result["config"]["replication_address"],
        "http://couchdb-0.couchdb:5984"
    );
    assert!(!text.contains("Pa55-w0rd") && !text.contains("YWRtaW46UGE1NS13MHJk"));
    assert!(!run.stdout.contains("Pa55-w0rd"), "{}", run.stdout);
}

#[test]
fn ctrl_c_during_a_compaction_ends_the_wait_and_says_so() {
    let couch = CouchLike::start(
        "followed",
        Timeline {
            starts_after: Duration::ZERO,
            database_running: Duration::from_secs(600),
            tasks_running: Duration::from_secs(600),
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), COMPACT_PHASE);
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", couch.url),
        "--database_name=followed",
        "--quiet",
        "--scenario",
        &file,
        "--action-timeout=0",
    ]);
    // The phase's operations end at 1 s; the compaction goes on.
    std::thread::sleep(Duration::from_millis(2_000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = finish(child);
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("the run was stopped while the compaction ran"),
        "{}",
        run.stdout
    );
    assert!(run.took < Duration::from_secs(5), "{:?}", run.took);
}

/// Ctrl-C ends a phase's operations, which starts a waiting action early; a stopped run
/// must not start one (a replication after Ctrl-C kept the run going, up to the grace).
#[test]
fn ctrl_c_before_an_actions_moment_does_not_start_it() {
    let couch = CouchLike::start("followed", Timeline::INSTANT);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        r#"
[[phase]]
name = "later"
mix = { create = 1 }
duration = "60s"
connections = 1
replicate_at = "30s"
replicate_to = "never-copy"
"#,
    );
    let json = dir.path().join("result.json");
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", couch.url),
        "--database_name=followed",
        "--quiet",
        "--scenario",
        &file,
        "--json",
        json.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(1_500));
    let signalled = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = finish(child);
    let ended = signalled.elapsed();
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    assert!(
        couch.replications().is_empty(),
        "{:?}",
        couch.replications()
    );
    let (result, text) = result(&json);
    let note = action(&result, "later")["note"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        note, "not started: the run was stopped before its moment (replicate_at = 30.0 s)",
        "{text}"
    );
    assert!(
        ended < Duration::from_millis(1_000),
        "ended {ended:?} after Ctrl-C"
    );
}

#[test]
fn a_bad_replication_address_is_refused_before_anything_is_sent() {
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--replication-address=ftp://admin:hidden-pw@couchdb-0:5984",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("--replication-address") && run.stderr.contains("http or https"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hidden-pw"), "{}", run.stderr);
}

#[test]
fn an_action_whose_phase_ends_before_its_moment_starts_then_instead_of_waiting() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        r#"
[[phase]]
name = "short"
mix = { create = 1 }
total = 20
connections = 2
compact_at = "1h"
"#,
    );
    let json = dir.path().join("result.json");
    let started = std::time::Instant::now();
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=late-compaction",
        "--quiet",
        "--scenario",
        &file,
        "--json",
        json.to_str().unwrap(),
    ]);
    // Before, the run sat idle until the hour had passed.
    assert!(started.elapsed() < Duration::from_secs(60), "it waited");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("create"), 20, "{}", run.stdout);
    let (result, text) = result(&json);
    let compaction = action(&result, "short");
    assert!(compaction["error"].is_null(), "{text}");
    assert!(
        compaction["note"]
            .as_str()
            .is_some_and(|n| n.contains("before compact_at = 3600.0 s: it ran without load")),
        "{text}"
    );
    assert!(compaction["finished_seconds"].as_f64().is_some(), "{text}");
}
