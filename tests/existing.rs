//! Existing data (`--key-range`, `--key-sample`): reads, updates and deletes of documents
//! an earlier run stored, checked against PouchDB Server on disk with an admin: misses
//! counted beside the hits and never as failures, writes that fetch the revision or go
//! blind, and the database holding what the result says.

mod common;

use common::*;
use serde_json::Value;

/// An earlier run: 200 documents `ex-0000000000` … `ex-0000000199`.
fn load(server: &PouchServer, name: &str) {
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={name}"),
        "--quiet",
        "--id-prefix=ex",
        "--num_connections=2",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=50",
        "--num_crud_operations=0",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(doc_count(&server.admin_db(name)), 200);
}

fn operation<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["phases"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == name)
        .unwrap_or_else(|| panic!("no {name} in {result}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn run_json(dir: &tempfile::TempDir, args: &[&str]) -> (Run, Value) {
    let json = dir.path().join("result.json");
    let _ = std::fs::remove_file(&json);
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    let run = sofabench(&all);
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{}", run.stderr));
    (run, serde_json::from_str(&text).unwrap())
}

#[test]
fn a_key_range_reads_hits_and_misses_and_writes_over_fetched_revisions() {
    let server = PouchServer::secured(Storage::Disk);
    load(&server, "range");
    let dir = tempfile::tempdir().unwrap();
    // Numbers 0 … 399: half of them were stored.
    let (run, result) = run_json(
        &dir,
        &[
            "run",
            &format!("--database_address={}", server.admin_url),
            "--database_name=range",
            "--reuse",
            "--quiet",
            "--seed=4",
            "--id-prefix=ex",
            "--key-range=0-400",
            "--num_connections=2",
            "--num_bulk_insert_operations=0",
            "--num_crud_operations=100",
            "--create_weight=0",
            "--read_weight=2",
            "--update_weight=1",
            "--delete_weight=1",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (read, update, delete) = (
        operation(&result, "read"),
        operation(&result, "update"),
        operation(&result, "delete"),
    );
    for op in [read, update, delete] {
        assert_eq!(n(&op["failed"]), 0, "{op}");
    }
    let total: u64 = [read, update, delete]
        .iter()
        .map(|op| n(&op["succeeded"]))
        .sum();
    assert_eq!(total, 200);
    // A read found its document (200) or did not (404), and every 404 is a miss.
    let misses = n(&read["existing"]["misses"]);
    assert_eq!(n(&read["statuses"]["404"]), misses, "{read}");
    assert_eq!(n(&read["statuses"]["200"]) + misses, n(&read["succeeded"]));
    assert!(misses > 0 && misses < n(&read["succeeded"]), "{read}");
    // Every write fetched the revision first; one that found nothing is a miss.
    for op in [update, delete] {
        let e = &op["existing"];
        assert_eq!(n(&e["fetches"]), n(&op["succeeded"]), "{op}");
        assert_eq!(n(&op["statuses"]["404"]), n(&e["misses"]), "{op}");
    }
    // The database: every delete that found its document (and met no 409) took it away.
    let deleted = n(&delete["succeeded"])
        - n(&delete["existing"]["misses"])
        - n(&delete["existing"]["conflicts"]);
    // Its 200s: a fetch of each document found, and each delete that took one away.
    let found = n(&delete["succeeded"]) - n(&delete["existing"]["misses"]);
    assert_eq!(n(&delete["statuses"]["200"]), found + deleted, "{delete}");
    assert_eq!(doc_count(&server.admin_db("range")), 200 - deleted);
    assert_eq!(
        result["config"]["existing"],
        "range 0-400 (sequential), writes fetch"
    );
    // titan's read hits are the reads that found their document.
    assert!(run.stdout.contains("existing read: "), "{}", run.stdout);
}

#[test]
fn a_sample_of_all_docs_is_read_whole_and_blind_writes_meet_409s() {
    let server = PouchServer::secured(Storage::Disk);
    load(&server, "sample");
    let db = server.admin_db("sample");
    let before = changes(&db);
    let dir = tempfile::tempdir().unwrap();
    let (run, result) = run_json(
        &dir,
        &[
            "run",
            &format!("--database_address={}", server.admin_url),
            "--database_name=sample",
            "--reuse",
            "--seed=4",
            "--key-sample=50",
            "--existing-writes=blind",
            "--num_connections=1",
            "--num_bulk_insert_operations=0",
            "--num_crud_operations=60",
            "--create_weight=0",
            "--read_weight=1",
            "--update_weight=1",
            "--delete_weight=0",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("existing data: 50 ids sampled from 200 documents in _all_docs"),
        "{}",
        run.stdout
    );
    let (read, update) = (operation(&result, "read"), operation(&result, "update"));
    // Sampled ids are all there: every read is a hit.
    assert_eq!(n(&read["existing"]["misses"]), 0, "{read}");
    assert_eq!(n(&read["statuses"]["200"]), n(&read["succeeded"]));
    // A blind update of a document that is there meets a 409, counted, not failed.
    assert_eq!(n(&update["failed"]), 0, "{update}");
    assert_eq!(
        n(&update["existing"]["conflicts"]),
        n(&update["succeeded"]),
        "{update}"
    );
    assert_eq!(n(&update["statuses"]["409"]), n(&update["succeeded"]));
    // Nothing was written.
    assert_eq!(changes(&db), before);
}

#[test]
fn existing_data_needs_reuse_a_prefix_and_documents() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    let without_reuse = sofabench(&[
        "run",
        &address,
        "--database_name=x",
        "--id-prefix=ex",
        "--key-range=0-10",
    ]);
    assert_eq!(without_reuse.code, 2, "{}", without_reuse.stderr);
    assert!(
        without_reuse.stderr.contains("--reuse"),
        "{}",
        without_reuse.stderr
    );
    let server_ids = sofabench(&[
        "run",
        &address,
        "--database_name=x",
        "--reuse",
        "--id-prefix=ex",
        "--id-scheme=server",
        "--key-range=0-10",
    ]);
    assert_eq!(server_ids.code, 2);
    assert!(
        server_ids.stderr.contains("--key-sample"),
        "{}",
        server_ids.stderr
    );
    let db = server.admin_db("empty");
    assert_eq!(request("PUT", &db, None).0, 201);
    let empty = sofabench(&[
        "run",
        &address,
        "--database_name=empty",
        "--reuse",
        "--key-sample=5",
    ]);
    assert_eq!(empty.code, 2, "{}\n{}", empty.stdout, empty.stderr);
    assert!(
        empty.stderr.contains("no document to sample"),
        "{}",
        empty.stderr
    );
}
