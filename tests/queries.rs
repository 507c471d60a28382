//! Query operations (`find`, `view`, `all_docs`) against PouchDB Server on disk with an
//! admin: the indexes a scenario declares are made and timed, and the rows the answers
//! held are the rows the seed's documents give.

mod common;

use common::*;
use sofabench::results::RunResult;

const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 25
total = 4
connections = 2
[[phase]]
name = "queries"
mix = { find = 1, view = 1, all_docs = 1 }
queries = { find = "by_integer", view = "integers", all_docs = "three" }
total = 90
connections = 2
[[phase]]
name = "ranges"
mix = { find = 1, view = 1, all_docs = 1 }
queries = { find = "integer_range", view = "integer_counts", all_docs = "pages" }
total = 30
[query.by_integer]
kind = "find"
field = "integer1"
fields = ["_id", "integer1"]
index = { fields = ["integer1"] }
[query.integer_range]
kind = "find"
field = "integer1"
range = 100000000
limit = 200
[query.integers]
kind = "view"
field = "integer1"
map = "function (doc) { emit(doc.integer1, null); }"
update = "true"
[query.integer_counts]
kind = "view"
field = "integer1"
range = 100000000
map = "function (doc) { emit(doc.integer1, 1); }"
reduce_function = "_count"
group = true
[query.three]
kind = "all_docs"
keys = 3
include_docs = true
[query.pages]
kind = "all_docs"
limit = 10
"#;

/// The integer1 values of the database's documents, as the seed generated them.
fn integers(server: &PouchServer, db: &str) -> Vec<i64> {
    let url = format!("{}/_all_docs?include_docs=true", server.admin_db(db));
    let body: serde_json::Value = ureq::get(&url).call().unwrap().into_json().unwrap();
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| !row["id"].as_str().unwrap().starts_with("_design/"))
        .map(|row| row["doc"]["integer1"].as_i64().unwrap())
        .collect()
}

#[test]
fn queries_hit_the_seeds_documents_and_count_their_rows() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("queries.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.path().join("out");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=queries",
        "--seed=7",
        "--quiet",
        "--json_document_schema_filename=examples/ironcushion.json",
        "--scenario",
        file.to_str().unwrap(),
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = RunResult::read(&out.join("result.json")).unwrap();
    let mut values = integers(&server, "queries");
    assert_eq!(values.len(), 100);
    values.sort();
    values.dedup();
    assert_eq!(
        values.len(),
        100,
        "the seed's integer1 values are all different"
    );

    let queries = &result.phases[1];
    assert_eq!(queries.index_builds.len(), 2, "{:?}", queries.index_builds);
    assert!(
        queries
            .index_builds
            .iter()
            .any(|b| b.index == "_design/sofabench" && b.queries == ["integer_counts", "integers"]),
        "{:?}",
        queries.index_builds
    );
    let of = |phase: &sofabench::results::PhaseResult, name: &str| {
        phase
            .operations
            .iter()
            .find(|o| o.operation == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {}", phase.name))
    };
    for name in ["find", "view", "all_docs"] {
        let op = of(queries, name);
        assert_eq!((op.succeeded, op.failed), (30, 0), "{name}: {op:?}");
        assert!(
            op.bytes_received > 0 && op.latency.count == 30,
            "{name}: {op:?}"
        );
    }
    // Each value is its own document's alone: one row per equality query, three per
    // query of three ids.
    assert_eq!(of(queries, "find").rows, Some(30));
    assert_eq!(of(queries, "view").rows, Some(30));
    assert_eq!(of(queries, "all_docs").rows, Some(90));
    assert!(of(queries, "find").bytes_sent > 0);
    assert_eq!(of(queries, "view").bytes_sent, 0, "a GET has no body");

    // A range from a document's value holds at least that document; _all_docs pages
    // hold 10 rows unless they start among the last 9 ids.
    let ranges = &result.phases[2];
    assert!(ranges.index_builds.is_empty());
    for name in ["find", "view", "all_docs"] {
        let op = of(ranges, name);
        assert_eq!((op.succeeded, op.failed), (10, 0), "{name}: {op:?}");
        assert!(op.rows.unwrap() >= 10, "{name}: {op:?}");
    }
    assert!(of(ranges, "all_docs").rows.unwrap() <= 100);
    let load = of(&result.phases[0], "bulk_insert");
    assert_eq!(load.rows, None, "only queries count rows");
    assert!(load.bytes_sent > 0 && load.bytes_received > 0);
}

#[test]
fn a_query_field_the_template_lacks_is_refused_before_anything_is_sent() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "load"
mix = { create = 1, find = 1 }
queries = { find = "q" }
total = 10
[query.q]
kind = "find"
field = "nope"
"#,
    )
    .unwrap();
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=badquery",
        "--json_document_schema_filename=examples/ironcushion.json",
        "--scenario",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("field \"nope\" is not a top-level field"),
        "{}",
        run.stderr
    );
    assert_eq!(get(&server.db("badquery")).0, 404, "nothing was created");
}
