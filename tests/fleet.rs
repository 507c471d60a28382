//! A fleet of devices against PouchDB Server on disk with an admin, run through the
//! library (a phase of a `run` command line given a fleet): afterwards the server
//! itself is read, and every device's writes must be there, every device must have
//! converged, and the conflicts the server holds must be the ones the report counted.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::Value;
use sofabench::engine::observer::Silent;
use sofabench::workload::changes::FeedKind;
use sofabench::workload::fleet::{ColdJoin, Fleet, FleetScope, Offline, SyncEvery, WriteMix};

/// Runs one phase of `seconds` with one slow connection and `fleet` beside it; returns
/// the phase's `devices` result.
fn run_fleet(
    server: &PouchServer,
    database: &str,
    databases: u32,
    fleet: Fleet,
    json: &Path,
) -> Value {
    let args: Vec<OsString> = [
        "sofabench".to_string(),
        "run".to_string(),
        format!("--database_address={}", server.admin_url),
        format!("--database_name={database}"),
        format!("--databases={databases}"),
        "--quiet".to_string(),
        "--num_connections=1".to_string(),
        "--num_bulk_insert_operations=0".to_string(),
        "--num_crud_operations=100".to_string(),
        "--create_weight=1".to_string(),
        "--read_weight=0".to_string(),
        "--update_weight=0".to_string(),
        "--delete_weight=0".to_string(),
        "--duration=8s".to_string(),
        "--rate=2".to_string(),
        "--id-prefix=fl-".to_string(),
        "--json".to_string(),
        json.to_str().unwrap().to_string(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    let mut setup = sofabench::cli::run_setup(args).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(setup.scenario.phases.len(), 1);
    setup.scenario.phases[0].fleet = Some(fleet);
    sofabench::run::runner::run(setup, Arc::new(Silent)).unwrap_or_else(|e| panic!("{e:?}"));
    let result = result_json(json);
    result["phases"][0]["devices"].clone()
}

fn count(devices: &Value, path: &[&str]) -> u64 {
    let mut value = devices;
    for key in path {
        value = &value[key];
    }
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{path:?} in {devices}"))
}

/// The server's live documents of a database: id → (winning generation, conflicts).
fn server_docs(db_url: &str) -> BTreeMap<String, (u64, usize)> {
    let (status, body) = get(&format!(
        "{db_url}/_all_docs?include_docs=true&conflicts=true"
    ));
    assert_eq!(status, 200, "{body}");
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let rev = row["value"]["rev"].as_str().unwrap();
            let generation = rev.split('-').next().unwrap().parse().unwrap();
            let conflicts = row["doc"]["_conflicts"].as_array().map_or(0, Vec::len);
            (
                row["id"].as_str().unwrap().to_string(),
                (generation, conflicts),
            )
        })
        .collect()
}

/// What the devices wrote, as the server holds it: the generations of their own
/// documents (a create is generation 1, each edit one more: one per write, since only
/// its device edits one), and the shared documents' conflicts.
fn devices_on_server(dbs: &[String], shared: u64) -> (u64, u64, usize) {
    let (mut own_writes, mut conflicts, mut shared_seen) = (0, 0, 0);
    for db in dbs {
        for (id, (generation, conflicting)) in server_docs(db) {
            if id.starts_with("fl-n0-d") {
                own_writes += generation;
                assert_eq!(conflicting, 0, "{id}: a document only its device edits");
            } else if id.starts_with("fl-shared-") {
                shared_seen += 1;
                conflicts += conflicting as u64;
            }
        }
    }
    assert_eq!(shared_seen as u64, shared * dbs.len() as u64);
    (own_writes, conflicts, shared_seen)
}

fn converged_all(devices: &Value, expected: u64) {
    let convergence = &devices["convergence"];
    assert_eq!(count(devices, &["devices_run"]), expected, "{devices}");
    assert_eq!(count(convergence, &["checked"]), expected, "{convergence}");
    assert_eq!(
        count(convergence, &["converged"]),
        expected,
        "{convergence}"
    );
    assert!(convergence.get("diverged").is_none(), "{convergence}");
    assert_eq!(count(devices, &["last_sync_unfinished"]), 0, "{devices}");
}

#[test]
fn devices_of_per_user_databases_converge_and_every_write_reaches_the_server() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet {
        devices: 6,
        scope: FleetScope::OwnDatabase,
        feed: FeedKind::Longpoll,
        sync: SyncEvery::Live,
        writes_per_second: 2.0,
        mix: WriteMix {
            create: 40,
            edit_own: 30,
            edit_shared: 30,
        },
        shared_documents: 2,
        last_sync: Duration::from_secs(120),
        ..Fleet::default()
    };
    let devices = run_fleet(&server, "userdb", 2, fleet, &dir.path().join("r.json"));
    converged_all(&devices, 6);
    let dbs: Vec<String> = (0..2)
        .map(|i| server.admin_db(&format!("userdb-{i:04}")))
        .collect();
    let (own_writes, conflicts, _) = devices_on_server(&dbs, 2);
    let counts = &devices["counts"];
    let writes = count(counts, &["writes"]);
    assert!(writes > 20, "{counts}");
    // Every write of a device's own documents is a revision on the server.
    assert_eq!(
        own_writes,
        writes - count(counts, &["shared_edits"]),
        "{counts}"
    );
    // The conflicts the server holds are the branches the report counted.
    assert_eq!(
        conflicts,
        count(counts, &["conflicts_created"]),
        "{devices}"
    );
    assert_eq!(
        conflicts,
        count(&devices["convergence"], &["server_conflicts"])
    );
    // Live devices: each write pushed, each other device of its database seeing it.
    assert!(
        count(counts, &["pushes"]) > 0 && count(counts, &["pulls"]) > 0,
        "{counts}"
    );
    assert!(
        count(&devices["time_to_visible"], &["count"]) > 0,
        "{devices}"
    );
    assert_eq!(
        count(counts, &["failed_pushes"]) + count(counts, &["failed_pulls"]),
        0,
        "{devices}"
    );
    // A live device pushes beside its held feed: a feed is given up only when the
    // writes stop, at most once per device, never for a write.
    assert!(count(counts, &["feeds_given_up"]) <= 6, "{counts}");
}

#[test]
fn doc_id_devices_go_offline_join_cold_and_still_converge() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet {
        devices: 6,
        scope: FleetScope::DocIds,
        feed: FeedKind::Normal,
        sync: SyncEvery::Every(Duration::from_millis(700)),
        writes_per_second: 2.0,
        mix: WriteMix {
            create: 50,
            edit_own: 25,
            edit_shared: 25,
        },
        shared_documents: 3,
        offline: Some(Offline {
            share: 50,
            from: Duration::from_secs(1),
            lasting: Duration::from_secs(3),
        }),
        cold: Some(ColdJoin {
            devices: 2,
            at: Duration::from_secs(2),
        }),
        last_sync: Duration::from_secs(120),
        ..Fleet::default()
    };
    let devices = run_fleet(&server, "shared", 1, fleet, &dir.path().join("r.json"));
    converged_all(&devices, 6);
    assert_eq!(count(&devices, &["cold_devices"]), 2);
    assert_eq!(count(&devices, &["offline_devices"]), 3);
    // Each cold device's initial sync, and each return from offline, was timed.
    assert_eq!(count(&devices["initial_sync"], &["count"]), 2, "{devices}");
    assert_eq!(count(&devices["catch_up"], &["count"]), 3, "{devices}");
    let db = server.admin_db("shared");
    let (own_writes, conflicts, _) = devices_on_server(std::slice::from_ref(&db), 3);
    let counts = &devices["counts"];
    assert_eq!(
        own_writes,
        count(counts, &["writes"]) - count(counts, &["shared_edits"])
    );
    assert_eq!(
        conflicts,
        count(counts, &["conflicts_created"]),
        "{devices}"
    );
    assert_eq!(
        conflicts,
        count(&devices["convergence"], &["server_conflicts"])
    );
    // Budget: a pull with nothing new is one request, a push with nothing none.
    assert_eq!(count(counts, &["over_budget"]), 0, "{devices}");
}

/// A database whose `validate_doc_update` refuses every write: PouchDB Server takes the
/// devices' `_bulk_docs` (`new_edits: false`) and answers an error row per refused
/// document, so no push fails; the report must still say that the server refused them.
#[test]
fn revisions_the_server_refuses_are_counted_and_said() {
    let server = PouchServer::secured(Storage::Disk);
    for n in 0..2 {
        let database = server.admin_db(&format!("refuse-000{n}"));
        assert_eq!(request("PUT", &database, None).0, 201);
        let check = "function (doc) { throw({forbidden: 'nobody writes here'}); }";
        let design = serde_json::json!({ "validate_doc_update": check });
        let url = format!("{database}/_design/nobody");
        assert_eq!(request("PUT", &url, Some(&design)).0, 201);
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("refuse.toml"), dir.path().join("r.json"));
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "devices"
duration = "4s"
connections = 0
devices = { count = 2, writes = 2, grace = "60s" }
"#,
    )
    .unwrap();
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=refuse",
        "--databases=2",
        "--reuse",
        "--quiet",
        "--scenario",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let devices = &result_json(&json)["phases"][0]["devices"];
    let counts = &devices["counts"];
    // The pushes went through, the server took none of their revisions.
    assert!(count(counts, &["pushes"]) > 0, "{counts}");
    assert_eq!(count(counts, &["failed_pushes"]), 0, "{counts}");
    assert_eq!(count(counts, &["pushed"]), 0, "{counts}");
    for n in 0..2 {
        assert_eq!(doc_count(&server.admin_db(&format!("refuse-000{n}"))), 1);
    }
    // Every push refused at least one revision, and said so.
    let refused = count(counts, &["push_refused"]);
    assert!(refused >= count(counts, &["pushes"]), "{counts}");
    assert!(
        run.stdout
            .contains(&format!("REFUSED: {refused} revisions by the server")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nobody writes here"), "{}", run.stdout);
}
