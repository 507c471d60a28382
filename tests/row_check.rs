//! Value domains and the row check against PouchDB Server on disk: `find` answers in a
//! phase that writes nothing are compared with the rows the seed's documents give, and a
//! writer the run does not know about shows as wrong answers, not as nothing.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sofabench::results::{OperationResult, PhaseResult, RunResult};

/// A load, then a phase of checked queries: equality on a 50-value string and a range
/// of 10 over an 18..=99 integer, and a view (not checked).
const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 100
total = 4
connections = 2
[[phase]]
name = "countries"
mix = { find = 1, view = 1 }
queries = { find = "by_country", view = "ages" }
total = 60
connections = 2
[[phase]]
name = "ages"
mix = { find = 1, read = 1 }
queries = { find = "age_range" }
total = 40
[[phase]]
name = "updates"
mix = { find = 1, update = 1 }
queries = { find = "age_range" }
total = 40
[query.by_country]
kind = "find"
field = "country"
limit = 1000
index = { fields = ["country"] }
[query.age_range]
kind = "find"
field = "age"
range = 10
limit = 1000
[query.ages]
kind = "view"
field = "age"
map = "function (doc) { emit(doc.age, null); }"
"#;

fn of(phase: &PhaseResult, name: &str) -> OperationResult {
    phase
        .operations
        .iter()
        .find(|o| o.operation == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {}", phase.name))
}

/// The run's documents as the database holds them.
fn documents(server: &PouchServer, db: &str) -> Vec<Value> {
    let url = format!("{}/_all_docs?include_docs=true", server.admin_db(db));
    let (status, body) = get(&url);
    assert_eq!(status, 200, "{body}");
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| !row["id"].as_str().unwrap().starts_with("_design/"))
        .map(|row| row["doc"].clone())
        .collect()
}

/// Starts the run of `scenario` into database `db`; its result file will be in the folder
/// given.
fn run(server: &PouchServer, db: &str, scenario: &str) -> (std::process::Child, PathBuf) {
    let dir = scratch("row_check", db);
    let file = dir.join("scenario.toml");
    std::fs::write(&file, scenario).unwrap();
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={db}"),
        "--seed=11",
        "--quiet",
        "--json_document_schema_filename=examples/domains.json",
        "--scenario",
        file.to_str().unwrap(),
        &format!("--out={}", dir.join("out").display()),
    ]);
    (child, dir)
}

fn result(dir: &Path) -> RunResult {
    RunResult::read(&dir.join("out/result.json")).unwrap()
}

#[test]
fn find_answers_hold_the_rows_the_seed_gives() {
    let server = PouchServer::secured(Storage::Disk);
    let (child, dir) = run(&server, "checked", SCENARIO);
    let finished = finish(child);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let result = result(&dir);
    let docs = documents(&server, "checked");
    assert_eq!(docs.len(), 400);
    let countries: std::collections::HashSet<&str> = docs
        .iter()
        .map(|d| d["country"].as_str().unwrap())
        .collect();
    assert!(
        countries.len() > 40 && countries.len() <= 50,
        "{}",
        countries.len()
    );

    // Equality on one of 50 values: about 8 rows an answer, every answer as the seed says.
    let find = of(&result.phases[1], "find");
    assert_eq!((find.succeeded, find.failed), (30, 0), "{find:?}");
    let check = find
        .row_check
        .clone()
        .expect("a phase without writes is checked");
    assert_eq!((check.answers, check.wrong), (30, 0), "{check:?}");
    assert_eq!(Some(check.expected_rows), find.rows);
    assert!(find.rows.unwrap() > 30 * 3, "{find:?}");
    assert_eq!(
        of(&result.phases[1], "view").row_check,
        None,
        "views are not checked"
    );

    // A numeric range: 11 of 82 ages, about 54 rows an answer.
    let find = of(&result.phases[2], "find");
    let check = find.row_check.clone().expect("reads write nothing");
    assert_eq!(
        (check.answers, check.wrong),
        (find.succeeded, 0),
        "{check:?}"
    );
    assert_eq!(Some(check.expected_rows), find.rows);
    assert!(find.rows.unwrap() > find.succeeded * 20, "{find:?}");

    // Updates change the values while queries run: nothing to check against.
    assert_eq!(of(&result.phases[3], "find").row_check, None);
    assert!(
        finished.stdout.contains(
            "rows checked against the seed's documents: find 30 answers, all as expected"
        )
    );
}

#[test]
fn documents_the_run_did_not_write_show_as_wrong_answers() {
    let server = PouchServer::secured(Storage::Disk);
    // The countries phase runs long enough for a writer outside the run to add to it.
    let scenario = SCENARIO.replace(
        "total = 60\nconnections = 2",
        "duration = \"6s\"\nrate = 10",
    );
    let (child, dir) = run(&server, "intruded", &scenario);
    let db = server.admin_db("intruded");
    let loaded = wait_for(Duration::from_secs(60), || {
        request("GET", &db, None).1["doc_count"].as_u64() >= Some(400)
    });
    assert!(loaded, "the load phase stored its 400 documents");
    // Copies of the run's documents under other ids: every country query now matches
    // more documents than the seed's.
    let copies: Vec<Value> = documents(&server, "intruded")
        .into_iter()
        .map(|mut d| {
            let id = format!("intruder-{}", d["_id"].as_str().unwrap());
            d["_id"] = json!(id);
            d.as_object_mut().unwrap().remove("_rev");
            d
        })
        .collect();
    let (status, _) = request(
        "POST",
        &format!("{db}/_bulk_docs"),
        Some(&json!({ "docs": copies })),
    );
    assert_eq!(status, 201);
    let finished = finish(child);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let find = of(&result(&dir).phases[1], "find");
    let check = find
        .row_check
        .clone()
        .expect("the run wrote nothing in the phase");
    assert!(check.wrong > 0, "{check:?}");
    assert!(find.rows.unwrap() > check.expected_rows, "{find:?}");
    assert!(finished.stdout.contains("WRONG"), "{}", finished.stdout);
}
