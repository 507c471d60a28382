//! Devices speaking CouchDB's replication protocol with a real server (PouchDB Server on
//! disk, with an admin): what they push and pull is checked against the server's own
//! answers, and against real PouchDB replicating the same database afterwards.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sofabench::device::{Device, DeviceSpec, Profile, Scope, StartedFrom, ZeroBecause};
use sofabench::driver::auth::Auth;
use sofabench::driver::{Client, Endpoint};
use sofabench::target::Target;

/// A document as one side holds it: winning revision, deleted, conflicts (sorted).
type Held = BTreeMap<String, (String, bool, Vec<String>)>;

struct Bench {
    server: PouchServer,
    runtime: tokio::runtime::Runtime,
}

impl Bench {
    fn new(db: &str) -> Bench {
        let server = PouchServer::secured(Storage::Disk);
        let (status, body) = request("PUT", &server.admin_db(db), None);
        assert_eq!(status, 201, "{body}");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Bench { server, runtime }
    }

    fn client(&self) -> Client {
        let target = Target::parse(&self.server.admin_url, "unused").unwrap();
        let auth = Auth::basic(target.credentials.clone());
        let endpoint = Endpoint::all(&target, &auth, 64 * 1024 * 1024).remove(0);
        Client::new(endpoint, Some(Duration::from_secs(120)))
    }

    fn push(&self, device: &mut Device) -> sofabench::device::Cycle {
        let mut client = self.client();
        let cycle = self.runtime.block_on(device.push(&mut client)).unwrap();
        assert_eq!(cycle.failures, 0, "{cycle:?}");
        cycle
    }

    fn pull(&self, device: &mut Device) -> sofabench::device::Cycle {
        let mut client = self.client();
        let cycle = self
            .runtime
            .block_on(device.pull(&mut client, false))
            .unwrap();
        assert_eq!(cycle.failures, 0, "{cycle:?}");
        cycle
    }

    /// What the server holds: `_changes?style=all_docs` for the documents, `GET
    /// ?conflicts=true` for a live one's winner and conflicts, `open_revs=all` for a
    /// deleted one's leaves (all deleted: the highest wins).
    fn held(&self, db: &str) -> Held {
        let url = self.server.admin_db(db);
        let (status, feed) = get(&format!("{url}/_changes?style=all_docs"));
        assert_eq!(status, 200, "{feed}");
        let mut held = Held::new();
        for row in feed["results"].as_array().unwrap() {
            let id = row["id"].as_str().unwrap().to_string();
            let deleted = row["deleted"].as_bool().unwrap_or(false);
            let state = if deleted {
                let (status, leaves) = get(&format!("{url}/{id}?open_revs=all"));
                assert_eq!(status, 200, "{leaves}");
                let winner = leaves
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|leaf| leaf["ok"]["_rev"].as_str().unwrap().to_string())
                    .max_by_key(|rev| rev_key(rev))
                    .unwrap();
                (winner, true, Vec::new())
            } else {
                let (status, doc) = get(&format!("{url}/{id}?conflicts=true"));
                assert_eq!(status, 200, "{doc}");
                let mut conflicts: Vec<String> = doc["_conflicts"]
                    .as_array()
                    .map(|c| c.iter().map(|r| r.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                conflicts.sort();
                (doc["_rev"].as_str().unwrap().to_string(), false, conflicts)
            };
            held.insert(id, state);
        }
        held
    }
}

fn rev_key(rev: &str) -> (u64, String) {
    let (generation, hash) = rev.split_once('-').unwrap();
    (generation.parse().unwrap(), hash.to_string())
}

fn device(name: &str, db: &str, profile: Profile) -> Device {
    Device::new(
        DeviceSpec {
            name: name.into(),
            scope: Scope::Database {
                path: format!("/{db}"),
            },
            profile,
            doc_bytes: 300,
        },
        42,
    )
}

fn text(rev: &sofabench::workload::Rev) -> String {
    let mut out = String::new();
    rev.write_to(&mut out);
    out
}

fn held_by(device: &Device) -> Held {
    device
        .documents()
        .map(|doc| {
            let mut conflicts: Vec<String> = doc.conflicts.iter().map(|r| text(r)).collect();
            conflicts.sort();
            (
                doc.id.to_string(),
                (text(doc.winner), doc.deleted, conflicts),
            )
        })
        .collect()
}

#[test]
fn what_one_device_pushes_another_pulls_and_the_server_agrees() {
    let bench = Bench::new("devs");
    let mut a = device("a", "devs", Profile::pouchdb());
    for n in 0..130 {
        a.create(&format!("doc-{n:03}")).unwrap();
    }
    for n in 0..20 {
        a.edit(&format!("doc-{n:03}")).unwrap();
        a.edit(&format!("doc-{n:03}")).unwrap();
    }
    for n in 20..30 {
        a.delete(&format!("doc-{n:03}")).unwrap();
    }
    let pushed = bench.push(&mut a);
    assert_eq!(a.unpushed(), 0);
    assert_eq!((pushed.written, pushed.landed.len()), (130, 130));
    // Two batches of 100: each a _revs_diff and a _bulk_docs and a log write, and the
    // session's first log read.
    assert_eq!((pushed.requests, pushed.checkpoint_writes), (7, 2));
    assert_eq!(
        pushed.started_from,
        StartedFrom::Zero {
            because: ZeroBecause::NoLog
        }
    );

    let server = bench.held("devs");
    assert_eq!(server.len(), 130);
    assert_eq!(server, held_by(&a), "the server holds what device a wrote");
    assert_eq!(doc_count(&bench.server.admin_db("devs")), 120);
    assert_eq!(server["doc-005"].0.split('-').next(), Some("3"));

    let mut b = device("b", "devs", Profile::pouchdb());
    let pulled = bench.pull(&mut b);
    assert_eq!(
        (pulled.written, pulled.missing, pulled.conflicts_seen),
        (130, 130, 0)
    );
    // The log read, and per batch (100, then 30) a feed read, a _bulk_get and a log write.
    assert_eq!((pulled.requests, pulled.checkpoint_writes), (7, 2));
    assert_eq!(held_by(&b), server, "device b holds what the server holds");
    assert_eq!(b.unpushed(), 0);
    assert_eq!(bench.push(&mut b).requests, 0, "nothing of b's own to push");

    // b edits; a pulls b's edit on top of its own revisions.
    let edited = b.edit("doc-050").unwrap();
    bench.push(&mut b);
    let again = bench.pull(&mut a);
    assert_eq!(again.written, 1);
    assert_eq!(again.landed, vec![("doc-050".into(), edited)]);
    assert_eq!(held_by(&a), bench.held("devs"));
}

#[test]
fn offline_edits_of_one_document_meet_as_the_servers_conflicts() {
    let bench = Bench::new("shared");
    let mut a = device("a", "shared", Profile::pouchdb());
    let mut b = device("b", "shared", Profile::replicator());
    a.create("note").unwrap();
    a.create("gone").unwrap();
    bench.push(&mut a);
    bench.pull(&mut b);
    // Offline, both edit "note"; a twice. b deletes "gone", a edits it.
    a.edit("note").unwrap();
    a.edit("note").unwrap();
    b.edit("note").unwrap();
    b.delete("gone").unwrap();
    a.edit("gone").unwrap();
    bench.push(&mut a);
    bench.push(&mut b);

    let server = bench.held("shared");
    let (winner, deleted, conflicts) = &server["note"];
    assert!(!deleted);
    assert_eq!(
        winner.split('-').next(),
        Some("3"),
        "a's longer branch wins"
    );
    assert_eq!(conflicts.len(), 1, "b's edit is the conflict: {server:?}");
    assert_eq!(conflicts[0].split('-').next(), Some("2"));
    // A deleted branch is no conflict: "gone" stands with a's edit alone.
    assert_eq!(server["gone"].2, Vec::<String>::new());
    assert!(!server["gone"].1);

    let pulled_a = bench.pull(&mut a);
    let pulled_b = bench.pull(&mut b);
    assert_eq!(held_by(&a), server);
    assert_eq!(held_by(&b), server);
    assert_eq!(pulled_a.conflicts_seen, 1, "{pulled_a:?}");
    assert_eq!(pulled_b.conflicts_seen, 1, "{pulled_b:?}");
}

/// PouchDB Server keeps PouchDB's `revs_limit` of 1000 and has no `_revs_limit` to lower
/// it, so the chain is longer than that: the server keeps its last 1000 revisions, and
/// the chain must still join the revision it grew from, not start a tree of its own.
#[test]
fn a_chain_longer_than_revs_limit_pushes_without_a_spurious_branch() {
    const EDITS: u32 = 1100;
    let bench = Bench::new("limited");
    let url = bench.server.admin_db("limited");
    let mut a = device("a", "limited", Profile::pouchdb());
    a.create("long").unwrap();
    a.create("short").unwrap();
    bench.push(&mut a);
    let mut b = device("b", "limited", Profile::pouchdb());
    bench.pull(&mut b);
    let mut tip = None;
    for _ in 0..EDITS {
        tip = a.edit("long");
    }
    let tip = text(&tip.unwrap());
    let pushed = bench.push(&mut a);
    assert_eq!((pushed.written, pushed.failures), (1, 0));
    let (status, leaves) = get(&format!("{url}/long?open_revs=all"));
    assert_eq!(status, 200, "{leaves}");
    let leaves: Vec<&str> = leaves
        .as_array()
        .unwrap()
        .iter()
        .map(|leaf| leaf["ok"]["_rev"].as_str().unwrap())
        .collect();
    assert_eq!(leaves, vec![tip.as_str()], "one leaf: the chain's tip");
    let (_, doc) = get(&format!("{url}/long?revs=true&conflicts=true"));
    assert!(doc.get("_conflicts").is_none(), "{doc}");
    assert_eq!(doc["_revisions"]["start"], EDITS + 1);
    assert_eq!(
        doc["_revisions"]["ids"].as_array().unwrap().len(),
        1000,
        "stemmed"
    );
    // b held generation 1: the pulled tip's history no longer reaches it, yet b ends with
    // the one leaf the server has (b's old leaf is an ancestor the server stemmed away).
    bench.pull(&mut b);
    let server = bench.held("limited");
    assert_eq!(held_by(&a), server);
    assert_eq!(held_by(&b), server);
}

#[test]
fn the_checkpoint_is_a_local_document_and_an_idle_pull_is_one_request() {
    let bench = Bench::new("logs");
    let url = bench.server.admin_db("logs");
    let mut a = device("a", "logs", Profile::pouchdb());
    for n in 0..5 {
        a.create(&format!("d{n}")).unwrap();
    }
    bench.push(&mut a);
    let mut b = device("b", "logs", Profile::pouchdb());
    let first = bench.pull(&mut b);
    assert_eq!(first.checkpoint_writes, 1);
    let pull_id = b.replication_ids().0.to_string();
    let (status, log) = get(&format!("{url}/_local/{pull_id}"));
    assert_eq!(status, 200, "{log}");
    let (_, info) = get(&url);
    assert_eq!(log["last_seq"], info["update_seq"], "{log}");
    assert!(log["_rev"].as_str().unwrap().starts_with("0-"), "{log}");
    assert_eq!(log["history"][0]["session_id"], log["session_id"]);
    assert_eq!(log["history"][0]["last_seq"], log["last_seq"]);
    assert_eq!(log["history"].as_array().unwrap().len(), 1);

    let idle = bench.pull(&mut b);
    assert_eq!(
        (idle.requests, idle.checkpoint_writes, idle.written),
        (1, 0, 0)
    );
    assert_eq!(idle.started_from, StartedFrom::Continuing);

    // More changes: the log is written again over its own revision.
    a.edit("d0").unwrap();
    bench.push(&mut a);
    let more = bench.pull(&mut b);
    assert_eq!((more.written, more.checkpoint_writes), (1, 1));
    let (_, again) = get(&format!("{url}/_local/{pull_id}"));
    assert_ne!(again["_rev"], log["_rev"]);
    assert_eq!(again["last_seq"], get(&url).1["update_seq"]);
    // The push log of a is there too, at a's own sequence (6 local writes).
    let push_id = a.replication_ids().1.to_string();
    let (status, push_log) = get(&format!("{url}/_local/{push_id}"));
    assert_eq!(
        (status, &push_log["last_seq"]),
        (200, &json!(6)),
        "{push_log}"
    );
}

#[test]
fn a_doc_ids_device_pulls_only_its_documents() {
    let bench = Bench::new("scoped");
    let mut a = device("a", "scoped", Profile::pouchdb());
    for id in ["mine-1", "mine-2", "other-1", "other-2"] {
        a.create(id).unwrap();
    }
    bench.push(&mut a);
    let ids: Arc<[String]> = Arc::from(vec!["mine-1".to_string(), "mine-2".to_string()]);
    let mut scoped = Device::new(
        DeviceSpec {
            name: "scoped".into(),
            scope: Scope::DocIds {
                path: "/scoped".into(),
                ids,
            },
            profile: Profile::pouchdb(),
            doc_bytes: 100,
        },
        1,
    );
    let pulled = bench.pull(&mut scoped);
    assert_eq!(pulled.written, 2);
    let held: Vec<String> = scoped.documents().map(|d| d.id.to_string()).collect();
    assert_eq!(held, vec!["mine-1", "mine-2"]);
    let server = bench.held("scoped");
    for doc in scoped.documents() {
        assert_eq!(text(doc.winner), server[doc.id].0);
    }
}

#[test]
fn real_pouchdb_replicating_afterwards_finds_what_the_devices_and_server_hold() {
    let bench = Bench::new("field");
    let mut a = device("a", "field", Profile::pouchdb());
    let mut b = device("b", "field", Profile::replicator());
    for n in 0..40 {
        a.create(&format!("a-{n}")).unwrap();
        b.create(&format!("b-{n}")).unwrap();
    }
    a.create("shared").unwrap();
    bench.push(&mut a);
    bench.push(&mut b);
    bench.pull(&mut b);
    for _ in 0..12 {
        a.edit("shared").unwrap();
    }
    b.edit("shared").unwrap();
    b.delete("a-3").unwrap();
    a.edit("b-7");
    bench.push(&mut a);
    bench.push(&mut b);
    bench.pull(&mut a);
    bench.pull(&mut b);
    let server = bench.held("field");
    assert_eq!(held_by(&a), server);
    assert_eq!(held_by(&b), server);
    assert_eq!(server["shared"].2.len(), 1, "{:?}", server["shared"]);

    let script = repository().join("tests/scripts/pouchdb-replicate.js");
    let output = Command::new("node")
        .arg(&script)
        .arg(bench.server.admin_db("field"))
        .current_dir(repository())
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pouch: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(pouch["doc_write_failures"], 0, "{pouch}");
    let docs = pouch["docs"].as_object().unwrap();
    assert_eq!(docs.len(), server.len());
    for (id, (winner, deleted, conflicts)) in &server {
        let doc = &docs[id];
        assert_eq!(doc["deleted"], *deleted, "{id}: {doc}");
        let leaves: Vec<&str> = doc["leaves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!(leaves.contains(&winner.as_str()), "{id}: {doc}");
        if !deleted {
            assert_eq!(doc["winner"], *winner, "{id}: {doc}");
            let pouch_conflicts: Vec<&str> = doc["conflicts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert_eq!(pouch_conflicts, *conflicts, "{id}");
        }
    }
}
