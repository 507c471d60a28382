//! The server a run measured, as its result records it (`nodes[].server`): PouchDB Server
//! as it describes itself, and test-only servers whose answers no database gives on
//! demand (a welcome with odd or missing fields, garbage, a 500, a `_membership` that
//! fails), after which the run goes on with those facts unknown, bounded and escaped.

mod common;

use common::rewriting_server::RewritingServer;
use common::*;
use serde_json::Value;

/// A short run against `address`, its result written as JSON: the run and the result
/// (`Null` when none was written).
fn run_against(address: &str, extra: &[&str]) -> (Run, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={address}"),
        "--database_name=env".to_string(),
        "--quiet".to_string(),
        "--num_connections=2".to_string(),
        "--num_bulk_insert_operations=2".to_string(),
        "--num_documents_per_bulk_insert=10".to_string(),
        "--num_crud_operations=20".to_string(),
        format!("--json={}", json.display()),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = sofabench(&args);
    let result = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (run, result)
}

fn shown(run: &Run) -> String {
    format!("exit {}\n{}\n{}", run.code, run.stdout, run.stderr)
}

/// The server as the result's first client machine recorded it.
fn recorded(result: &Value) -> &Value {
    &result["nodes"][0]["server"]
}

fn unknown_because(result: &Value) -> Vec<String> {
    recorded(result)["unknown_because"]
        .as_array()
        .map(|lines| {
            lines
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Neither output carries an escape byte: the server's words were escaped.
fn assert_no_raw_escape(run: &Run) {
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'),
        "{}",
        shown(run)
    );
}

#[test]
fn pouchdb_server_is_recorded_as_it_describes_itself() {
    let server_process = PouchServer::secured(Storage::Disk);
    let (status, welcome) = get(&format!("{}/", server_process.url));
    assert_eq!(status, 200, "{welcome}");
    let (run, result) = run_against(&server_process.admin_url, &[]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let server = recorded(&result);
    assert_eq!(server["product"], "PouchDB Server", "{server}");
    let node = &server["nodes"][0];
    assert_eq!(node["answered"], "welcome");
    assert_eq!(node["version"], welcome["version"], "{node}");
    assert_eq!(node["vendor"], welcome["vendor"]["name"], "{node}");
    assert_eq!(node["address"].as_str(), Some(server_process.url.as_str()));
    assert!(
        !result.to_string().contains(ADMIN.1),
        "no password: {result}"
    );
    // Its database has no shards and no partitions, and the run made it.
    let database = &server["database"];
    assert_eq!(database["name"], "env");
    assert_eq!(database["created"], true);
    for absent in ["q", "n", "partitioned"] {
        assert!(database.get(absent).is_none(), "{database}");
    }
    // PouchDB Server answers _membership (one node of its own) and _active_tasks
    // (`[]`), and has no _node/_local/_versions: the result says so.
    let (_, membership) = get(&format!("{}/_membership", server_process.admin_url));
    let listed = membership["cluster_nodes"].as_array().unwrap().len();
    assert_eq!(server["cluster_nodes"], listed as u64, "{server}");
    assert_eq!(server["compactions_running"], 0, "{server}");
    assert!(server.get("javascript_engine").is_none(), "{server}");
    let why = unknown_because(&result);
    assert_eq!(
        why,
        ["/_node/_local/_versions: status 404 (not on this server)"],
        "{server}"
    );
}

/// `GET /` with a number for a version, features that are not a list, a vendor name of
/// 10 MB and escape bytes in `git_sha`.
fn odd_welcome(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    line.starts_with("GET / ").then(|| {
        let name = "n".repeat(10 * 1024 * 1024);
        let welcome = format!(
            r#"{{"couchdb":"Welcome","version":3.5,"git_sha":"\u001b[2J","features":"all","vendor":{{"name":"{name}"}}}}"#
        );
        ("200 OK", welcome)
    })
}

#[test]
fn a_welcome_with_odd_fields_is_kept_bounded_and_escaped() {
    let server = RewritingServer::start(odd_welcome);
    let (run, result) = run_against(&server.url, &[]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    assert_no_raw_escape(&run);
    let node = &server_node(&result);
    assert_eq!(node["answered"], "welcome");
    assert!(
        node.get("version").is_none(),
        "a number is no version: {node}"
    );
    assert!(node.get("features").is_none(), "{node}");
    assert_eq!(node["git_sha"], "\\x1b[2J");
    let vendor = node["vendor"].as_str().unwrap();
    assert_eq!(
        vendor.chars().count(),
        201,
        "200 characters and an ellipsis"
    );
    assert!(!result.to_string().contains('\u{1b}'));
}

fn server_node(result: &Value) -> Value {
    recorded(result)["nodes"][0].clone()
}

/// A welcome that says nothing but that it is one.
fn bare_welcome(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    line.starts_with("GET / ")
        .then(|| ("200 OK", r#"{"couchdb":"Welcome"}"#.to_string()))
}

#[test]
fn a_welcome_that_leaves_fields_out_records_them_unknown() {
    let server = RewritingServer::start(bare_welcome);
    let (run, result) = run_against(&server.url, &[]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let node = server_node(&result);
    assert_eq!(node["answered"], "welcome");
    for absent in ["version", "vendor", "git_sha", "features"] {
        assert!(node.get(absent).is_none(), "{node}");
    }
    assert_eq!(recorded(&result)["product"], "other");
    // No warning: a welcome was given.
    assert!(
        !run.stderr.contains("no CouchDB welcome"),
        "{}",
        shown(&run)
    );
}

/// `GET /` answered with escape bytes and HTML.
fn garbage_welcome(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    line.starts_with("GET / ")
        .then(|| ("200 OK", "\u{1b}[2J<html>hello</html>".to_string()))
}

/// `GET /` answered with a 500.
fn failing_welcome(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    line.starts_with("GET / ").then(|| {
        (
            "500 Internal Server Error",
            r#"{"error":"unknown_error","reason":"\u001b[2Jbadarg"}"#.to_string(),
        )
    })
}

#[test]
fn a_server_without_a_welcome_whose_database_answers_like_couchdb_is_run() {
    for (rewrite, answered) in [
        (
            garbage_welcome as common::rewriting_server::Rewrite,
            "not JSON",
        ),
        (failing_welcome, "status 500"),
    ] {
        let server = RewritingServer::start(rewrite);
        let (run, result) = run_against(&server.url, &[]);
        assert_eq!(run.code, 0, "{answered}: {}", shown(&run));
        assert_no_raw_escape(&run);
        let node = server_node(&result);
        assert_eq!(node["answered"], answered, "{node}");
        assert!(node.get("version").is_none(), "{node}");
        assert!(recorded(&result).get("product").is_none(), "{result}");
        let warnings: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("gave no CouchDB welcome"))
            .collect();
        assert_eq!(warnings.len(), 1, "said once: {}", shown(&run));
        assert!(warnings[0].contains(answered), "{}", warnings[0]);
    }
}

/// Neither `GET /` nor `GET /env` answers like CouchDB.
fn not_couchdb(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    (line.starts_with("GET / ") || line.starts_with("GET /env "))
        .then(|| ("200 OK", "<html>hello</html>".to_string()))
}

#[test]
fn a_server_that_answers_neither_like_couchdb_is_refused_as_before() {
    let server = RewritingServer::start(not_couchdb);
    let (run, result) = run_against(&server.url, &[]);
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stderr.contains(&format!(
            "{} does not answer like a CouchDB server (GET / gave status 200 without a CouchDB welcome); check --database_address",
            server.url
        )),
        "{}",
        shown(&run)
    );
    assert!(result.is_null(), "no result: {result}");
}

/// `_membership` answered with garbage, `_active_tasks` with a 500.
fn failing_looks(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    if line.starts_with("GET /_membership ") {
        Some(("200 OK", "\u{0}{{garbage".to_string()))
    } else if line.starts_with("GET /_active_tasks ") {
        Some(("500 Internal Server Error", "{}".to_string()))
    } else {
        None
    }
}

#[test]
fn looks_that_fail_leave_their_facts_unknown_and_say_why() {
    let server = RewritingServer::start(failing_looks);
    let (run, result) = run_against(&server.url, &["--runs=2"]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let described = recorded(&result);
    for absent in ["cluster_nodes", "all_nodes", "compactions_running"] {
        assert!(described.get(absent).is_none(), "{described}");
    }
    let why = unknown_because(&result);
    assert!(
        why.contains(&"/_membership: not the answer expected".to_string()),
        "{why:?}"
    );
    assert!(
        why.contains(&"/_active_tasks: status 500".to_string()),
        "{why:?}"
    );
    // With repetitions, the first repetition's database is the one described.
    assert_eq!(described["database"]["name"], "env-run1", "{described}");
    assert_eq!(described["nodes"][0]["version"], "test");
}

#[test]
fn every_node_given_is_recorded_in_order_and_without_credentials() {
    let server = RewritingServer::start(|_, _| None);
    let live = server
        .url
        .replace("http://", "http://runner:n0t-in-results@");
    let dead = format!("http://runner:n0t-in-results@127.0.0.1:{}", free_port());
    let (run, result) = run_against(&format!("{dead},{live}"), &["--failover"]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let nodes = recorded(&result)["nodes"].as_array().unwrap().clone();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    assert_eq!(
        nodes[0]["address"],
        dead.replace("runner:n0t-in-results@", "")
    );
    assert_eq!(nodes[0]["answered"], "no answer");
    assert_eq!(nodes[1]["address"].as_str(), Some(server.url.as_str()));
    assert_eq!(nodes[1]["answered"], "welcome");
    assert_eq!(nodes[1]["version"], "test");
    assert!(!result.to_string().contains("n0t-in-results"), "{result}");
}
