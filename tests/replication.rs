//! Continuous replication during a phase against PouchDB Server on disk with an admin:
//! every write the run made reaches each replica, with its lag; the `_replicator`
//! documents are gone afterwards; no password reaches a result file; and with a proxy
//! that delays the replicator's every request, the lag measured is at least the delay.

mod common;

use std::path::Path;
use std::time::Duration;

use common::delay_proxy::DelayProxy;
use common::*;
use serde_json::Value;

fn result(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Writes the database holds a trace of: each document's latest generation counts its
/// create, updates and delete.
fn writes_in(db_url: &str) -> u64 {
    changes(db_url).iter().map(|(_, g, _)| u64::from(*g)).sum()
}

fn count(value: &Value, name: &str) -> u64 {
    value[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} in {value}"))
}

/// The `_replicator` documents a run left behind.
fn replicator_documents(server: &PouchServer) -> Vec<String> {
    let (status, all) = get(&format!("{}/_all_docs", server.admin_db("_replicator")));
    assert_eq!(status, 200, "{all}");
    all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .filter(|id| id.starts_with("sofabench-"))
        .map(str::to_string)
        .collect()
}

/// A scenario file of one phase: creates and updates at 20/s for `seconds` while the
/// database replicates as `replication` says.
fn scenario(dir: &Path, seconds: u64, replication: &str) -> String {
    let path = dir.join("replication.toml");
    std::fs::write(
        &path,
        format!(
            "[[phase]]\nname = \"writes\"\nmix = {{ create = 3, update = 1 }}\nduration = \"{seconds}s\"\nconnections = 2\nrate = 20\nreplication = {replication}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn run(server: &PouchServer, database: &str, file: &str, extra: &[&str], json: &Path) -> Run {
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={}", server.admin_url),
        format!("--database_name={database}"),
        format!("--scenario={file}"),
        "--json".to_string(),
        json.to_str().unwrap().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sofabench(&args)
}

/// The operations the first phase's result counts as succeeded: its writes, when the
/// database itself is gone (`--cleanup`).
fn first_phase_writes(result: &Value) -> u64 {
    result["phases"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| count(o, "succeeded"))
        .sum()
}

/// Every write of the source is on the replica, seen once with its lag or through a
/// later revision, and none is missing.
fn every_write_reached(replica: &Value, writes: u64) {
    let lag = &replica["lag"];
    assert_eq!(count(lag, "writes_tracked"), writes, "{lag}");
    let seen = count(&lag["latency"], "count");
    assert_eq!(seen + count(lag, "superseded"), writes, "{lag}");
    for none in ["missing_writes", "writes_untracked"] {
        assert_eq!(count(lag, none), 0, "{none}: {lag}");
    }
    assert!(count(lag, "changes") >= seen, "{lag}");
}

#[test]
fn a_delay_between_the_replicator_and_the_databases_shows_in_the_lag() {
    let server = PouchServer::secured(Storage::Disk);
    let delay = Duration::from_millis(400);
    let proxy = DelayProxy::start(server.port, delay);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let file = scenario(dir.path(), 3, r#"{ to = "delayed-copy", grace = "60s" }"#);
    let address = format!("--replication-address={}", proxy.url);
    let run = run(&server, "delayed", &file, &[&address], &json);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);
    let replication = &result["phases"][0]["replication"];
    let replica = &replication["replicas"][0];
    assert_eq!(replica["database"], "delayed-copy");
    let writes = writes_in(&server.admin_db("delayed"));
    assert!(writes > 20, "{writes}");
    every_write_reached(replica, writes);
    // A write is committed a moment before its answer leaves the server; the replicator
    // can read it no sooner, and its write to the replica arrives `delay` later.
    let latency = &replica["lag"]["latency"];
    let least = delay.as_secs_f64() * 1000.0 - 50.0;
    assert!(latency["p50_ms"].as_f64().unwrap() >= least, "{latency}");
    assert_eq!(
        doc_count(&server.admin_db("delayed-copy")),
        doc_count(&server.admin_db("delayed"))
    );
    assert!(replicator_documents(&server).is_empty());
    assert!(
        run.stdout.contains("replication lag (answer on the source"),
        "{}",
        run.stdout
    );
}

#[test]
fn two_way_to_many_reaches_every_replica_and_leaves_no_job_or_password() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    // Four seconds: under a busy machine's load PouchDB Server's one-shot jobs can take
    // two before the first replicated document shows in an interval.
    let file = scenario(
        dir.path(),
        4,
        r#"{ to = ["many-a", "many-b"], two_way = true, grace = "60s" }"#,
    );
    let (csv, html) = (
        dir.path().join("result.csv"),
        dir.path().join("result.html"),
    );
    let csv_flag = format!("--csv={}", csv.display());
    let html_flag = format!("--html={}", html.display());
    let run = run(
        &server,
        "many",
        &file,
        &["--cleanup", &csv_flag, &html_flag],
        &json,
    );
    assert_eq!(
        run.code,
        0,
        "{}\n{}\nthe server's last words:\n{}",
        run.stdout,
        run.stderr,
        server.last_words()
    );
    let text = std::fs::read_to_string(&json).unwrap();
    let result: Value = serde_json::from_str(&text).unwrap();
    let replication = &result["phases"][0]["replication"];
    assert_eq!(replication["two_way"], true);
    let replicas = replication["replicas"].as_array().unwrap();
    assert_eq!(replicas.len(), 2);
    // The database is gone (--cleanup): its writes are those the result counts.
    let writes = first_phase_writes(&result);
    assert!(writes > 10, "{writes}");
    for replica in replicas {
        every_write_reached(replica, writes);
        assert_eq!(replica["created"], true);
        // One job each way.
        assert_eq!(replica["documents"].as_array().unwrap().len(), 2);
    }
    // PouchDB Server has no `_scheduler/jobs`: said once, and the run went on.
    let notes = replication["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("_scheduler/jobs")),
        "{notes:?}"
    );
    assert!(replicator_documents(&server).is_empty());
    // --cleanup deleted the replicas the run made, and the database.
    for database in ["many-a", "many-b", "many"] {
        assert_eq!(get(&server.admin_db(database)).0, 404, "{database}");
    }
    // The CSV has each interval's documents replicated and lag; no jobs' figures on
    // PouchDB Server. The HTML page draws a line per replica.
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header = rows.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (docs, lag, pending) = (
        column("replication_docs_per_second"),
        column("replication_lag_seconds"),
        column("replication_jobs_docs_written"),
    );
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert!(
        records
            .iter()
            .any(|r| r[docs].parse::<f64>().unwrap_or(0.0) > 0.0),
        "{table}"
    );
    assert!(
        records
            .iter()
            .all(|r| r[lag].is_empty() || r[lag].parse::<f64>().is_ok())
    );
    assert!(records.iter().all(|r| r[pending].is_empty()), "{table}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Continuous replication"),
        "no replication chart"
    );
    assert!(page.contains(r#""replica":"many-a""#) && page.contains(r#""replica":"many-b""#));
    for (name, shown) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("result", &text),
        ("CSV", &table),
        ("HTML page", &page),
    ] {
        assert!(!shown.contains(ADMIN.1), "the password is in the {name}");
    }
}

#[test]
fn the_built_in_scenario_reports_the_lag_of_its_writers() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=lag",
        "--scenario=replication-lag",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=20",
        "--duration=2s",
        "--rate=20",
        "--id-prefix=lag",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for phase in phases {
        let replica = &phase["replication"]["replicas"][0];
        assert_eq!(replica["database"], "lag-replica-lag", "{phase}");
        assert_eq!(count(&replica["lag"], "missing_writes"), 0, "{replica}");
        assert!(count(&replica["lag"]["latency"], "count") > 0, "{replica}");
    }
    assert_eq!(
        doc_count(&server.admin_db("lag-replica-lag")),
        doc_count(&server.admin_db("lag"))
    );
    assert!(replicator_documents(&server).is_empty());
}

#[test]
fn a_replica_at_a_url_on_another_server_is_followed_there_and_left_there() {
    let (source, other) = (
        PouchServer::secured(Storage::Disk),
        PouchServer::secured(Storage::Disk),
    );
    let (user, password) = ADMIN;
    let url = format!("http://{user}:{password}@127.0.0.1:{}/far-copy", other.port);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let file = scenario(
        dir.path(),
        2,
        &format!(r#"{{ to = ["near-copy", "{url}"], grace = "60s" }}"#),
    );
    let run = run(&source, "far", &file, &["--cleanup"], &json);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(&json).unwrap();
    let result: Value = serde_json::from_str(&text).unwrap();
    let replicas = result["phases"][0]["replication"]["replicas"]
        .as_array()
        .unwrap();
    let writes = first_phase_writes(&result);
    assert!(writes > 10, "{writes}");
    for replica in replicas {
        every_write_reached(replica, writes);
    }
    let far = &replicas[1];
    assert_eq!(far["database"], "far-copy");
    assert_eq!(
        far["url"],
        format!("http://127.0.0.1:{}/far-copy", other.port)
    );
    assert!(replicas[0].get("url").is_none(), "{}", replicas[0]);
    // --cleanup deleted the run's database and its own server's replica, and left the
    // other server's, which holds every document the run wrote.
    assert_eq!(get(&source.admin_db("far")).0, 404);
    assert_eq!(get(&source.admin_db("near-copy")).0, 404);
    assert_eq!(
        get(&source.admin_db("far-copy")).0,
        404,
        "nothing made on the wrong server"
    );
    let far_docs = doc_count(&other.admin_db("far-copy"));
    assert!(far_docs > 0 && far_docs <= writes, "{far_docs}");
    assert!(replicator_documents(&source).is_empty());
    for (name, shown) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("result", &text),
    ] {
        assert!(!shown.contains(password), "the password is in the {name}");
    }
    assert!(
        run.stdout.contains(&format!(
            "\"http://127.0.0.1:{}/far-copy\": replication lag",
            other.port
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_replica_url_that_names_no_database_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let file = scenario(
        dir.path(),
        1,
        r#"{ to = "http://u:hidden@elsewhere:5984/" }"#,
    );
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        &format!("--scenario={file}"),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("replication.to") && run.stderr.contains("names no database"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hidden"), "{}", run.stderr);
}
