//! The built-in `mango` and `views` scenarios against PouchDB Server on disk with an
//! admin: their indexes are made on the server and timed, idle and under writes, their
//! queries' rows are checked against the seed's documents where nothing writes, and the
//! database holds what the run says it wrote.

mod common;

use common::*;
use serde_json::Value;
use sofabench::results::{BuiltWhen, OperationResult, PhaseResult, RunResult};

/// Runs a built-in scenario small: 40 bulk requests of 20 documents to load, then 40
/// operations per phase on 2 connections. Gives the result and the HTML page.
fn run(server: &PouchServer, scenario: &str, db: &str) -> (RunResult, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={db}"),
        "--seed=11",
        "--quiet",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=20",
        "--total-operations=40",
        "--scenario",
        scenario,
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let page = std::fs::read_to_string(out.join("result.html")).unwrap();
    (RunResult::read(&out.join("result.json")).unwrap(), page)
}

fn of<'a>(phase: &'a PhaseResult, name: &str) -> &'a OperationResult {
    phase
        .operations
        .iter()
        .find(|o| o.operation == name)
        .unwrap_or_else(|| panic!("no {name} in {}", phase.name))
}

/// Every operation of every phase succeeded, and the documents the run created (800
/// loaded, then its creates) are the database's.
fn all_succeeded_and_counted(result: &RunResult, server: &PouchServer, db: &str) {
    let mut created = 0;
    for phase in &result.phases {
        for op in &phase.operations {
            assert_eq!(op.failed, 0, "{} {}: {op:?}", phase.name, op.operation);
            if op.operation == "create" {
                created += op.succeeded;
            }
        }
    }
    let design_docs = get(&format!(
        "{}/_all_docs?startkey=\"_design/\"&endkey=\"_design0\"",
        server.admin_db(db)
    ))
    .1["rows"]
        .as_array()
        .unwrap()
        .len() as u64;
    assert_eq!(doc_count(&server.admin_db(db)), 800 + created + design_docs);
}

#[test]
fn mango_times_an_idle_build_and_one_under_writes_and_checks_its_rows() {
    let server = PouchServer::secured(Storage::Disk);
    let (result, page) = run(&server, "mango", "mango");
    let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mango_load",
            "mango_equal",
            "mango_range",
            "mango_equal_under_writes",
            "mango_build_under_writes"
        ]
    );
    all_succeeded_and_counted(&result, &server, "mango");

    let idle = &result.phases[1].index_builds;
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert_eq!(
        (idle[0].queries.as_slice(), idle[0].when),
        (&["equal".to_string()][..], BuiltWhen::BeforePhase)
    );
    let busy = &result.phases[4].index_builds;
    assert_eq!(busy.len(), 1, "{busy:?}");
    assert_eq!(busy[0].queries, ["equal_by_id"]);
    assert_ne!(busy[0].when, BuiltWhen::BeforePhase);
    for phase in &result.phases[2..4] {
        assert!(
            phase.index_builds.is_empty(),
            "{}: {:?}",
            phase.name,
            phase.index_builds
        );
    }
    assert_eq!(page.matches("<h3>Index builds").count(), 2);
    assert!(page.contains("<td>equal</td>") && page.contains("before the phase, idle"));

    // Alone, every answer holds what the seed's documents give; among writes nothing
    // is checked.
    for phase in &result.phases[1..3] {
        let check = of(phase, "find").row_check.clone().unwrap();
        assert_eq!(
            (check.answers, check.wrong),
            (40, 0),
            "{}: {check:?}",
            phase.name
        );
    }
    assert!(of(&result.phases[3], "find").row_check.is_none());
    // Integer values are unique: an equality finds its own document alone; a range of
    // 1/200 of the values over 800 documents finds its own and a few more, sorted.
    assert_eq!(of(&result.phases[1], "find").rows, Some(40));
    assert!(of(&result.phases[2], "find").rows.unwrap() >= 40);

    // Both indexes are on the server.
    let indexes = get(&format!("{}/_index", server.admin_db("mango"))).1;
    let fields: Vec<Value> = indexes["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["def"]["fields"].clone())
        .collect();
    assert!(
        fields.contains(&serde_json::json!([{"integer1": "asc"}])),
        "{indexes}"
    );
    assert!(
        fields.contains(&serde_json::json!([{"integer1": "asc"}, {"_id": "asc"}])),
        "{indexes}"
    );
}

#[test]
fn views_compare_update_modes_under_writes_and_build_a_second_view_under_them() {
    let server = PouchServer::secured(Storage::Disk);
    let (result, page) = run(&server, "views", "views");
    let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "views_load",
            "views_key",
            "views_count_range",
            "views_update_true_under_writes",
            "views_update_false_under_writes",
            "views_update_lazy_under_writes",
            "views_build_under_writes"
        ]
    );
    all_succeeded_and_counted(&result, &server, "views");

    let idle = &result.phases[1].index_builds;
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert_eq!(
        (idle[0].index.as_str(), idle[0].when),
        ("_design/sofabench", BuiltWhen::BeforePhase)
    );
    let busy = &result.phases[6].index_builds;
    assert_eq!(busy.len(), 1, "{busy:?}");
    assert_eq!(busy[0].index, "_design/sofabench_second");
    assert_ne!(busy[0].when, BuiltWhen::BeforePhase);
    assert!(page.contains("<td>_design/sofabench_second</td>"));

    // A key query finds its own document's row; a range count is one reduced row.
    assert_eq!(of(&result.phases[1], "view").rows, Some(40));
    assert_eq!(of(&result.phases[2], "view").rows, Some(40));
    for phase in &result.phases[3..6] {
        let view = of(phase, "view");
        assert!(
            view.succeeded > 0 && view.latency.count == view.succeeded,
            "{}: {view:?}",
            phase.name
        );
    }

    // The two design documents are on the server, with the views the queries asked.
    for (design, value) in [("sofabench", "null"), ("sofabench_second", "1")] {
        let (status, doc) = get(&format!("{}/_design/{design}", server.admin_db("views")));
        assert_eq!(status, 200, "{doc}");
        let map = doc["views"]["by_value"]["map"].as_str().unwrap();
        assert!(
            map.contains(&format!("emit(doc[\"integer1\"], {value})")),
            "{map}"
        );
        assert_eq!(doc["views"]["by_value"]["reduce"], "_count");
    }
}
