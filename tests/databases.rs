//! `--databases N`, one database per user, against PouchDB Server on disk with an admin:
//! the documents spread over every database, each database's consumers see its writes
//! and no other's, the sizes add up over all of them, and the setup's rules (refuse a
//! filled database, `--reuse`, `--cleanup` only of what the run made) hold for each.

mod common;

use common::result_json as result;
use common::*;
use serde_json::json;

fn run_args<'a>(address: &'a str, database: &'a str, json: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        address,
        database,
        "--quiet",
        "--num_connections=3",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=20",
        "--num_crud_operations=60",
        "--seed=5",
        "--json",
        json,
    ]
}

#[test]
fn documents_spread_over_every_database_and_each_feed_sees_its_own_writes() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = format!("--database_address={}", server.admin_url);
    let mut args = run_args(&address, "--database_name=users", json.to_str().unwrap());
    args.extend(["--databases", "3", "--changes-consumers", "5"]);
    args.extend(["--changes-grace=30s"]);
    let run = sofabench(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);

    let names = ["users-0000", "users-0001", "users-0002"];
    let writes: Vec<u64> = names
        .iter()
        .map(|n| writes_in(&server.admin_db(n)))
        .collect();
    // 6 bulk inserts of 20 over 3 databases, and 180 CRUD operations: every database
    // got some of each connection's documents.
    assert!(writes.iter().all(|&w| w > 10), "{writes:?}");
    let (status, _) = get(&server.admin_db("users"));
    assert_eq!(status, 404, "the base name is no database of the run");
    assert_eq!(result["config"]["databases"], 3);

    // Consumers 0 and 3 follow users-0000, 1 and 4 users-0001, 2 users-0002: each (write,
    // consumer) pair of a database and its own consumers is seen, and nothing else.
    let consumers = [2, 2, 1];
    let pairs: u64 = writes.iter().zip(consumers).map(|(w, c)| w * c).sum();
    let phases = result["phases"].as_array().unwrap();
    let (mut tracked, mut sightings) = (0, 0);
    for phase in phases {
        let changes = &phase["changes"];
        assert_eq!(changes["databases"], 3, "{changes}");
        tracked += changes["writes_tracked"].as_u64().unwrap();
        sightings +=
            changes["latency"]["count"].as_u64().unwrap() + changes["superseded"].as_u64().unwrap();
        for none in ["missing_writes", "unmatched", "writes_untracked"] {
            assert_eq!(changes[none], 0, "{none}: {changes}");
        }
    }
    assert_eq!(tracked, writes.iter().sum::<u64>());
    assert_eq!(sightings, pairs);

    // The disk looks add up every database.
    let documents: u64 = names.iter().map(|n| doc_count(&server.admin_db(n))).sum();
    let end = &phases.last().unwrap()["disk"]["end"];
    assert_eq!(end["doc_count"].as_u64(), Some(documents), "{end}");
    assert!(
        run.stdout
            .contains("5 continuous consumers over 3 databases"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_filled_database_stops_the_run_before_any_is_made_and_cleanup_keeps_it() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let json = json.to_str().unwrap();
    let address = format!("--database_address={}", server.admin_url);
    request("PUT", &server.admin_db("kept-0001"), None);
    let mine = json!({"owner": "the user"});
    request(
        "PUT",
        &format!("{}/mine", server.admin_db("kept-0001")),
        Some(&mine),
    );

    let mut refused = run_args(&address, "--database_name=kept", json);
    refused.extend(["--databases", "3"]);
    let run = sofabench(&refused);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("\"kept-0001\" (1 document)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--reuse"), "{}", run.stderr);
    for name in ["kept-0000", "kept-0002"] {
        assert_eq!(get(&server.admin_db(name)).0, 404, "{name} was made");
    }

    let mut reused = run_args(&address, "--database_name=kept", json);
    reused.extend(["--databases", "3", "--reuse", "--cleanup"]);
    let run = sofabench(&reused);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for name in ["kept-0000", "kept-0002"] {
        assert_eq!(get(&server.admin_db(name)).0, 404, "{name} was kept");
    }
    let (status, doc) = get(&format!("{}/mine", server.admin_db("kept-0001")));
    assert_eq!((status, &doc["owner"]), (200, &json!("the user")));
    assert!(doc_count(&server.admin_db("kept-0001")) > 1);
    assert!(run.stdout.contains("kept the 1 it found"), "{}", run.stdout);
}

#[test]
fn what_needs_one_database_is_refused_with_several() {
    let cases: [(&[&str], &str); 5] = [
        (&["--databases", "0"], "from 1 to 10000"),
        (&["--databases", "2", "--hot-docs", "3"], "--hot-docs"),
        (
            &["--databases", "2", "--scenario", "mango"],
            "queries an index",
        ),
        (
            &["--databases", "2", "--scenario", "replication-lag"],
            "replicates its database",
        ),
        (
            &["--databases", "10000", "--database_name", &"a".repeat(236)],
            "over CouchDB's 238",
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["run", "--database_address=http://127.0.0.1:1", "--quiet"];
        args.extend_from_slice(flags);
        let run = sofabench(&args);
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{flags:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
}

#[test]
fn a_run_that_fails_after_its_setup_still_cleans_up_with_cleanup() {
    // PouchDB Server cannot filter a feed by selector: the run stops after making its
    // databases, before the first phase.
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = format!("--database_address={}", server.admin_url);
    let mut args = run_args(&address, "--database_name=failing", json.to_str().unwrap());
    args.extend(["--databases", "2", "--changes-consumers", "2"]);
    args.extend(["--changes-selector", r#"{"type":"user"}"#, "--cleanup"]);
    let run = sofabench(&args);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("selector"), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("deleted databases \"failing-0000\" … \"failing-0001\" (2)"),
        "{}",
        run.stdout
    );
    for name in ["failing-0000", "failing-0001"] {
        assert_eq!(get(&server.admin_db(name)).0, 404, "{name} was kept");
    }
}
