//! Hot documents (`--hot-docs`): connections update a few shared documents, meet each
//! other's revisions, fetch the current one after a 409 and send again; checked against
//! PouchDB Server on disk, the result's counts against the documents' revisions.

mod common;

use common::*;
use serde_json::Value;

const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 10
total = 3
connections = 3
[[phase]]
name = "hot"
mix = { update = 1 }
total = 240
connections = 3
"#;

fn update_result(result: &Value) -> &Value {
    let phase = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "hot")
        .unwrap();
    phase["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == "update")
        .unwrap()
}

#[test]
fn shared_documents_meet_409s_that_are_retried_and_every_attempt_is_counted() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hot.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let json = dir.path().join("hot.json");
    let html = dir.path().join("hot.html");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=hot",
        "--quiet",
        "--seed=3",
        "--id-prefix=h",
        "--hot-docs=2",
        "--scenario",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&json).unwrap();
    let result: Value = serde_json::from_str(&text).unwrap();
    let update = update_result(&result);
    let hot = &update["hot"];
    let (succeeded, failed) = (
        update["succeeded"].as_u64().unwrap(),
        update["failed"].as_u64().unwrap(),
    );
    let n = |v: &Value| v.as_u64().unwrap();
    // Only an update that met a 409 at every attempt allowed may fail, as a 409.
    assert_eq!(failed, n(&hot["gave_up"]), "{text}");
    assert_eq!(
        run.code,
        if failed == 0 { 0 } else { 1 },
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(succeeded + failed, 240, "{text}");
    let by_attempts: u64 = hot["by_attempts"]
        .as_object()
        .unwrap()
        .values()
        .map(n)
        .sum();
    assert_eq!(by_attempts, succeeded, "{text}");
    // Every PUT succeeded or met a 409; each 409 but an update's last was followed by a
    // fetch, and a last one leaves the revision unknown until the next update fetches it
    // (the revisions the run made the documents with were known: nothing else is fetched).
    let conflicts = n(&hot["conflicts"]);
    let fetches = n(&hot["fetches"]);
    assert_eq!(n(&hot["attempts"]), succeeded + conflicts, "{text}");
    assert!(
        (conflicts - failed..=conflicts).contains(&fetches),
        "{text}"
    );
    assert_eq!(n(&update["statuses"]["409"]), conflicts, "{text}");
    assert_eq!(n(&update["statuses"]["200"]), fetches, "{text}");
    // The run made both documents at revision 1, known to all three connections: only
    // one PUT over revision 1 of a document can succeed, so each document that more
    // than one connection updated gave at least one 409.
    assert!(conflicts >= 1, "{text}");
    let rate = hot["conflict_rate"].as_f64().unwrap();
    assert!((rate - conflicts as f64 / n(&hot["attempts"]) as f64).abs() < 1e-9);
    assert_eq!(result["config"]["hot_docs"], 2);
    assert!(run.stdout.contains("hot update:"), "{}", run.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    let row = format!(
        "<tr><td>update</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
        grouped(n(&hot["attempts"])),
        grouped(conflicts)
    );
    assert!(
        page.contains("<h3>Hot documents") && page.contains(&row),
        "{row}"
    );

    // The database: the two documents' revisions hold every successful update.
    let db = server.admin_db("hot");
    let mut generations = 0;
    for k in 0..2 {
        let (status, doc) = get(&format!("{db}/h-hot-00000{k}"));
        assert_eq!(status, 200, "{doc}");
        let rev = doc["_rev"].as_str().unwrap();
        generations += rev.split('-').next().unwrap().parse::<u64>().unwrap() - 1;
    }
    assert_eq!(generations, succeeded, "{text}");
    assert_eq!(doc_count(&db), 30 + 2);
}

#[test]
fn a_hot_document_already_there_is_kept_and_its_revision_fetched() {
    let server = PouchServer::secured(Storage::Disk);
    let db = server.admin_db("warm");
    assert_eq!(request("PUT", &db, None).0, 201);
    let body = serde_json::json!({"kept": true});
    assert_eq!(
        request("PUT", &format!("{db}/w-hot-000000"), Some(&body)).0,
        201
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("warm.toml");
    let one_connection = SCENARIO
        .replace("connections = 3", "connections = 1")
        .replace("total = 240", "total = 20");
    std::fs::write(&file, one_connection).unwrap();
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=warm",
        "--reuse",
        "--quiet",
        "--id-prefix=w",
        "--hot-docs=1",
        "--scenario",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("update"), 20, "{}", run.stdout);
    // One connection: its one fetch was for the revision the run did not make.
    assert!(
        run.stdout
            .contains("hot update: 20 PUTs, 409 ×0 (0.0 % of PUTs")
            && run.stdout.contains("1 fetches"),
        "{}",
        run.stdout
    );
    let (_, doc) = get(&format!("{db}/w-hot-000000"));
    assert!(doc["_rev"].as_str().unwrap().starts_with("21-"), "{doc}");
    assert!(doc.get("kept").is_none(), "{doc}");
}

#[test]
fn a_hot_document_count_out_of_bounds_is_refused() {
    let run = sofabench(&["run", "--hot-docs=0", "--database_name=x"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--hot-docs") && run.stderr.contains("1 to 100000"),
        "{}",
        run.stderr
    );
}

/// A count as the report prints it: thousands grouped with commas.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn updates_alone_need_no_load_before_them() {
    let server = PouchServer::secured(Storage::Disk);
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=alone",
        "--quiet",
        "--seed=5",
        "--id-prefix=a",
        "--hot-docs=3",
        "--num_connections=1",
        "--num_bulk_insert_operations=0",
        "--num_crud_operations=20",
        "--update_weight=1",
        "--read_weight=0",
        "--create_weight=0",
        "--delete_weight=0",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("update"), 20, "{}", run.stdout);
    // One connection meets no other's revision: every update succeeds at its first PUT.
    assert!(
        run.stdout.contains("hot update: 20 PUTs, 409 ×0")
            && run.stdout.contains("succeeded at attempt 1: 20;"),
        "{}",
        run.stdout
    );
    let db = server.admin_db("alone");
    let generations: u64 = (0..3)
        .map(|k| {
            let (_, doc) = get(&format!("{db}/a-hot-00000{k}"));
            let rev = doc["_rev"].as_str().unwrap().to_string();
            rev.split('-').next().unwrap().parse::<u64>().unwrap() - 1
        })
        .sum();
    assert_eq!(generations, 20);
    assert_eq!(doc_count(&db), 3);
}
