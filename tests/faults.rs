//! Faults a real deployment meets: a request held and then cut, a server restarted
//! mid-run, a node that stays down. The figures must say what happened: no time hidden
//! by a resend, no write applied twice, no planned operation silently dropped.

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;
use serde_json::Value;

/// A run of `crud` operations per connection against `address`, reads and updates only.
fn reads_and_updates(address: &str, crud: u64, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        &format!("--database_address={address}"),
        "--database_name=faults",
        "--quiet",
        "--num_connections=1",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        &format!("--num_crud_operations={crud}"),
        "--create_weight=0",
        "--read_weight=1",
        "--update_weight=1",
        "--delete_weight=0",
        "--seed=3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sofabench(&args)
}

#[test]
fn a_write_held_then_cut_keeps_its_time_and_is_sent_once() {
    let server = DelayServer::start(Duration::from_millis(1));
    server.cut_next("PUT", Duration::from_secs(2));
    let run = run(&reads_and_updates(&server.url, 40, &[]));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // The cut update failed, with an unknown outcome, and its 2 s are in its figures.
    assert!(
        run.stdout.contains("unknown update: 1 documents"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("failed update: transport x1"),
        "{}",
        run.stdout
    );
    let took = run
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("the failures took (ms): p50 "))
        .and_then(|rest| rest.split(',').next()?.parse::<f64>().ok())
        .expect("the failures' times are shown");
    assert!(took >= 2_000.0, "{took} ms\n{}", run.stdout);
    // Every update the report counts reached the server exactly once: none was resent.
    let updates = run.count("update") + run.errors("update");
    assert_eq!(updates, 20, "{}", run.stdout);
    assert_eq!(server.document_requests("PUT"), updates);
    assert!(!run.stdout.contains("resent"), "{}", run.stdout);
}

#[test]
fn a_read_held_then_cut_is_resent_once_and_its_time_counts() {
    let server = DelayServer::start(Duration::from_millis(1));
    server.cut_next("GET", Duration::from_secs(2));
    let run = run(&reads_and_updates(&server.url, 40, &[]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("resent read: 1 "), "{}", run.stdout);
    let max = latency_row(&run.stdout, "latency(ms)", "read")[7];
    assert!(
        max >= 2_000.0,
        "max {max} ms hides the held request\n{}",
        run.stdout
    );
    assert_eq!(run.count("read"), 20);
    assert_eq!(server.document_requests("GET"), 21);
}

/// The CRUD phase of a result file.
fn crud_phase(path: &std::path::Path) -> Value {
    let result: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "crud")
        .cloned()
        .expect("a crud phase")
}

#[test]
fn a_server_restarted_mid_run_shows_as_errors_then_recovery() {
    let mut server = PouchServer::secured(Storage::Disk);
    let db = server.admin_db("faults");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let args = [
        "run".to_string(),
        format!("--database_address={}", server.admin_url),
        "--database_name=faults".to_string(),
        "--quiet".to_string(),
        "--num_connections=2".to_string(),
        "--num_bulk_insert_operations=1".to_string(),
        "--num_documents_per_bulk_insert=20".to_string(),
        "--num_crud_operations=3000".to_string(),
        "--delete_weight=0".to_string(),
        "--interval=250ms".to_string(),
        "--timeout=2s".to_string(),
        format!("--json={}", json.display()),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn_sofabench(&args);
    assert!(wait_for(Duration::from_secs(20), || {
        get(&db).1["doc_count"].as_u64().unwrap_or(0) > 100
    }));
    server.kill();
    std::thread::sleep(Duration::from_secs(2));
    server.restart();
    let run = finish(child);
    // Operations caught by the restart failed; the rest ran: the run finished its share.
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("stopped early"), "{}", run.stdout);
    assert!(!run.stdout.contains("not run"), "{}", run.stdout);
    let crud = crud_phase(&json);
    let operations = crud["operations"].as_array().unwrap();
    let done: u64 = operations
        .iter()
        .map(|o| o["succeeded"].as_u64().unwrap() + o["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(done, 6_000, "every planned operation ran or failed");
    let intervals = crud["intervals"].as_array().unwrap();
    let failed_in = |i: &Value| -> u64 {
        i["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["failed"].as_u64().unwrap())
            .sum()
    };
    let succeeded_in = |i: &Value| -> u64 {
        i["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["succeeded"].as_u64().unwrap())
            .sum()
    };
    let first_error = intervals
        .iter()
        .position(|i| failed_in(i) > 0)
        .expect("the restart shows as errors in the intervals");
    assert!(
        intervals[first_error..].iter().any(|i| succeeded_in(i) > 0),
        "and the run recovers after it"
    );
    // The database holds what the report says, within the writes whose outcome is unknown.
    let created: u64 = operations
        .iter()
        .filter(|o| o["operation"] == "create")
        .map(|o| o["succeeded"].as_u64().unwrap())
        .sum();
    let unknown: u64 = operations
        .iter()
        .map(|o| o["unknown_outcomes"].as_u64().unwrap_or(0))
        .sum();
    let count = doc_count(&db);
    assert!(
        count >= 40 + created && count <= 40 + created + unknown,
        "{count} documents; {created} created, {unknown} unknown"
    );
}

#[test]
fn a_server_that_stays_down_ends_the_phase_at_the_reconnect_bound() {
    let mut server = PouchServer::start();
    let db = server.db("down");
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=down",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=100000",
        "--delete_weight=0",
        "--reconnect-for=2s",
    ]);
    assert!(wait_for(Duration::from_secs(20), || {
        get(&db).1["doc_count"].as_u64().unwrap_or(0) > 40
    }));
    server.kill();
    let run = finish(child);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("CRUD BENCHMARK RESULTS"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("gave up reconnecting"),
        "{}",
        run.stdout
    );
    // What the connections could not do is counted, not dropped.
    assert!(run.stdout.contains("not run "), "{}", run.stdout);
    assert!(run.took < Duration::from_secs(30), "{:?}", run.took);
}

/// Two nodes that reach one PouchDB Server: one through a proxy that is cut mid-run, as a
/// cluster node that dies. Returns the run and its result file's CRUD phase.
fn one_node_dies(extra: &[&str]) -> (Run, Value) {
    one_node_dies_past(300, extra)
}

/// [`one_node_dies`], the proxy cut once the database holds more than `documents`.
fn one_node_dies_past(documents: u64, extra: &[&str]) -> (Run, Value) {
    let server = PouchServer::start();
    let proxy = common::cut_proxy::CutProxy::start(server.port);
    let db = server.db("nodes");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={},{}", proxy.url, server.url),
        "--database_name=nodes".to_string(),
        "--quiet".to_string(),
        "--num_connections=4".to_string(),
        "--num_bulk_insert_operations=1".to_string(),
        "--num_documents_per_bulk_insert=20".to_string(),
        "--num_crud_operations=1500".to_string(),
        "--delete_weight=0".to_string(),
        format!("--json={}", json.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn_sofabench(&args);
    assert!(wait_for(Duration::from_secs(20), || {
        get(&db).1["doc_count"].as_u64().unwrap_or(0) > documents
    }));
    proxy.cut();
    let run = finish(child);
    (run, crud_phase(&json))
}

#[test]
fn with_failover_connections_move_to_the_live_node() {
    let (run, crud) = one_node_dies(&["--failover", "--reconnect-for=2s"]);
    assert!(!run.stdout.contains("not run"), "{}", run.stdout);
    assert!(!run.stdout.contains("gave up"), "{}", run.stdout);
    let nodes = crud["target_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{crud}");
    // The dead node's failures are its own; the live one answered the rest.
    assert!(nodes[0]["failed"].as_u64().unwrap() > 0, "{nodes:?}");
    assert!(nodes[1]["answered"].as_u64().unwrap() > 3_000, "{nodes:?}");
    assert!(run.stdout.contains("answered"), "{}", run.stdout);
}

#[test]
fn without_failover_the_dead_node_s_connections_give_up_and_say_so() {
    let (run, crud) = one_node_dies(&["--reconnect-for=2s"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("gave up reconnecting"),
        "{}",
        run.stdout
    );
    let not_run: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["not_run"].as_u64().unwrap_or(0))
        .sum();
    assert!(not_run > 0, "{crud}");
    // The live node's connections finished their shares.
    let done: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["succeeded"].as_u64().unwrap() + o["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(done + not_run, 6_000, "{crud}");
}

#[test]
fn under_a_rate_what_falls_due_for_a_dead_node_counts_against_it() {
    // The dead node's connections wait to reconnect; meanwhile their operations fall due
    // and fail as unreachable, never sent. They used to be missing from the node's row.
    // Cut once the CRUD phase has begun (the bulk inserts store 160 documents).
    let extra = ["--rate=200", "--duration=6s", "--reconnect-for=60s"];
    let (run, crud) = one_node_dies_past(170, &extra);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let unreachable: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["failures"]["unreachable"].as_u64().unwrap_or(0))
        .sum();
    assert!(unreachable > 50, "{crud}");
    let nodes = crud["target_nodes"].as_array().unwrap();
    let failed = |n: usize| nodes[n]["failed"].as_u64().unwrap();
    assert!(
        failed(0) >= unreachable,
        "{unreachable} unreachable: {nodes:?}"
    );
    assert!(failed(1) < 10, "the live node: {nodes:?}");
    let row = format!(" {:>8} ", sofabench::report::numbers::grouped(failed(0)));
    assert!(run.stdout.contains(&row), "{row}: {}", run.stdout);
}

#[test]
fn a_connection_whose_bulk_inserts_failed_counts_what_it_could_not_run() {
    let server = DelayServer::start(Duration::from_millis(1));
    // Both connections' only bulk insert fails with a 500.
    server.fail_bulk_requests(2);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = server
        .url
        .replace("http://", "http://someone:pa%2Fss-w0rd@");
    let run = sofabench(&[
        "run",
        &format!("--database_address={address}"),
        "--database_name=faults",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=100",
        &format!("--json={}", json.display()),
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("had no document left"),
        "{}",
        run.stdout
    );
    // The server quoted the request back, Authorization header and all: the examples
    // show the answer without the password in any form.
    assert!(run.stdout.contains("e.g. 500:"), "{}", run.stdout);
    assert!(run.stdout.contains("Basic ***"), "{}", run.stdout);
    let written = std::fs::read_to_string(&json).unwrap();
    for secret in ["pa/ss-w0rd", "pa%2Fss-w0rd", "c29tZW9uZTpwYS9zcy13MHJk"] {
        assert!(!run.stdout.contains(secret), "{secret} in {}", run.stdout);
        assert!(!written.contains(secret), "{secret} in the result file");
    }
    let crud = crud_phase(&json);
    let accounted: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            ["succeeded", "failed", "not_run"]
                .iter()
                .map(|k| o[k].as_u64().unwrap_or(0))
                .sum::<u64>()
        })
        .sum();
    assert_eq!(
        accounted, 200,
        "every planned operation is accounted for: {crud}"
    );
}

#[test]
fn with_failover_a_node_down_at_the_start_leaves_its_connections_to_the_others() {
    let server = PouchServer::start();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let run = sofabench(&[
        "run",
        &format!("--database_address={dead},{}", server.url),
        "--database_name=start",
        "--quiet",
        "--failover",
        "--num_connections=4",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=50",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("is down at the start"),
        "{}",
        run.stderr
    );
    assert_eq!(run.count("create") + run.count("read"), 80);
    assert_eq!(doc_count(&server.db("start")), 40 + 40 - 60);
}
