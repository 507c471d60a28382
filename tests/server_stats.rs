//! The servers' own statistics beside every interval: read from a test-only server that
//! answers with figures recorded from Apache CouchDB 3.5 (and can stall), and from
//! PouchDB Server on disk with an admin, which has none of the `_node` endpoints.

mod common;

use std::time::{Duration, Instant};

use common::couch_like::{CouchLike, Timeline};
use common::*;
use serde_json::{Value, json};

const ADDRESS: &str = "--database_address";

const CREATES: &str = r#"
[[phase]]
name = "creating"
mix = { create = 1 }
duration = "3s"
connections = 2
rate = 50
"#;

fn read_result(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn each_interval_has_the_servers_figures_and_a_stalled_endpoint_costs_only_its_own() {
    let couch = CouchLike::start("watched", Timeline::INSTANT);
    couch.stall_system();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, CREATES).unwrap();
    let json = dir.path().join("r.json");
    let address = couch.url.replace("http://", "http://admin:Pa55-w0rd@");
    let began = Instant::now();
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("--database_address={address}"),
        "--database_name=watched",
        "--scenario",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let took = began.elapsed();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The stalled `_system` held up neither the phase nor its end.
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let result = read_result(&json);
    let phase = &result["phases"][0];
    let intervals = phase["intervals"].as_array().unwrap();
    let with_figures: Vec<&Value> = intervals
        .iter()
        .filter(|i| i["server"].is_array())
        .collect();
    assert!(with_figures.len() >= 2, "{intervals:?}");
    let node = &with_figures[1]["server"][0];
    // 50 creates a second, and the looks' own requests, counted by the server itself.
    let requests = node["counts"]["requests"].as_u64().unwrap();
    assert!((45..=70).contains(&requests), "{node}");
    assert_eq!(node["request_time_ms"]["count"], json!(205), "{node}");
    assert_eq!(node["tasks"], json!({}), "{node}");
    // The stalled endpoint gave nothing, and is not said to be missing.
    assert!(node["memory_bytes"].is_null(), "{node}");
    assert!(phase["server_notes"].is_null(), "{phase}");
    assert!(
        run.stdout
            .contains("requests counted; its request time p99 up to 335.2 ms"),
        "{}",
        run.stdout
    );
}

#[test]
fn pouchdb_servers_missing_endpoints_are_said_once_and_the_run_goes_on() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("{ADDRESS}={}", server.admin_url),
        "--database_name=watched",
        "--num_connections=2",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=50",
        "--duration=3s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = read_result(&json);
    assert_eq!(result["config"]["server_stats"], json!(true));
    let crud = &result["phases"][1];
    let notes: Vec<&str> = crud["server_notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0..2].iter().all(|n| n.ends_with(" gave 404")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("GET /_node/_local/_stats")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("GET /_node/_local/_system")),
        "{notes:?}"
    );
    assert!(notes.iter().all(|n| !n.contains("Pa55")), "{notes:?}");
    // `_active_tasks` it has: an empty list each interval.
    let intervals = crud["intervals"].as_array().unwrap();
    assert!(
        intervals
            .iter()
            .filter(|i| i["server"][0]["tasks"] == json!({}))
            .count()
            >= 2,
        "{intervals:?}"
    );
    assert!(
        run.stdout.contains("server figures not asked again:"),
        "{}",
        run.stdout
    );
    // The operations were what the database holds.
    let (status, info) = get(&server.admin_db("watched"));
    assert_eq!(status, 200, "{info}");
    // 2 connections of 2 bulk inserts of 50 documents.
    let expected = 200 + run.count("create") - run.count("delete");
    assert_eq!(info["doc_count"], json!(expected), "{info}");

    // Not asked at all with --no-server-stats.
    let quiet = dir.path().join("q.json");
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("{ADDRESS}={}", server.admin_url),
        "--database_name=unwatched",
        "--num_connections=1",
        "--num_bulk_insert_operations=1",
        "--num_crud_operations=20",
        "--no-server-stats",
        "--json",
        quiet.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = read_result(&quiet);
    assert_eq!(result["config"]["server_stats"], json!(false));
    // No interval holds the server's figures; the server found at setup is still
    // recorded (`nodes[].server`), which --no-server-stats does not turn off.
    for phase in result["phases"].as_array().unwrap() {
        assert!(phase.get("server_notes").is_none(), "{phase}");
        for interval in phase["intervals"].as_array().unwrap() {
            assert!(interval.get("server").is_none(), "{interval}");
        }
    }
    assert_eq!(
        result["nodes"][0]["server"]["product"],
        json!("PouchDB Server")
    );
}

/// Intervals of a phase that its charts draw (not shorter than half the longest), with
/// how many of them have `field` of the first node.
fn drawn_with(phase: &Value, field: &str) -> u64 {
    let intervals = phase["intervals"].as_array().unwrap();
    let length = |i: &Value| i["length_seconds"].as_f64().unwrap();
    let longest = intervals.iter().map(length).fold(0.0, f64::max);
    intervals
        .iter()
        .filter(|i| length(i) >= longest / 2.0)
        .filter(|i| !i["server"][0][field].is_null())
        .count() as u64
}

#[test]
fn the_html_page_charts_the_servers_figures_on_the_phases_time_axis_in_chromium() {
    let couch = CouchLike::start("watched", Timeline::INSTANT);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, CREATES).unwrap();
    let out = dir.path().join("out");
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("{ADDRESS}={}", couch.url),
        "--database_name=watched",
        "--scenario",
        file.to_str().unwrap(),
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = read_result(&out.join("result.json"));
    let phase = &result["phases"][0];
    let memory = drawn_with(phase, "memory_bytes");
    let tasks = drawn_with(phase, "tasks");
    assert!(memory >= 2 && tasks >= 2, "{phase}");
    // Requests are growth since the look before: the first look has none.
    let requests = drawn_with(phase, "counts");
    let p99 = drawn_with(phase, "request_time_ms");
    assert!(requests >= 1 && p99 >= 2, "{phase}");

    let dom = page::render_in_chromium(&out.join("result.html"), "report-server");
    assert_eq!(page::drawn(&dom, "server-memory"), [memory]);
    assert_eq!(page::drawn(&dom, "server-requests"), [requests + p99]);
    // Background tasks, and the run queue as `_system` tells it beside memory.
    assert_eq!(page::drawn(&dom, "server-work"), [tasks + memory]);
    assert!(dom.contains("over its own stats interval (10 s by default)"));
}
