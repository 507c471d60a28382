//! Functional tests of result analysis: runs of several nodes against one PouchDB Server
//! merged into one result, thresholds on a run and on a saved result, and the
//! environment a saved result must have run against and from (`check --expect`).

mod common;

use std::path::Path;

use common::*;
use sofabench::results::RunResult;
use sofabench::results::environment::{
    ClientEnvironment, DatabaseShape, ServerEnvironment, ServerNode,
};

/// A small run's flags against `db` of `server`, plus `extra`.
fn run_args(server: &PouchServer, db: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--quiet",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=25",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=40",
        "--create_weight=3",
        "--read_weight=3",
        "--update_weight=2",
        "--delete_weight=2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--database_address={}", server.url));
    args.push(format!("--database_name={db}"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn read(path: &Path) -> RunResult {
    RunResult::read(path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn node_results_merge_into_their_sums_and_the_database_agrees() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();
    // Three nodes of one run start together; every node gets --reuse, so the one that
    // creates the database first is joined by the others. Node 2 takes its index and
    // the node count from the environment, as in a Kubernetes Indexed Job.
    let mut children = Vec::new();
    for index in 0..3 {
        let json = format!("--json={}", file(&format!("node{index}.json")));
        let args = if index == 2 {
            run_args(&server, "nodes", &["--reuse", &json])
        } else {
            let index = format!("--node-index={index}");
            run_args(
                &server,
                "nodes",
                &["--reuse", "--node-count=3", &index, &json],
            )
        };
        children.push(spawn_sofabench_with_env(
            &strs(&args),
            &[("JOB_COMPLETION_INDEX", "2"), ("SOFABENCH_NODE_COUNT", "3")],
        ));
    }
    for child in children {
        let run = finish(child);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    }
    let nodes: Vec<RunResult> = (0..3)
        .map(|i| read(&dir.path().join(format!("node{i}.json"))))
        .collect();
    for (i, node) in nodes.iter().enumerate() {
        assert_eq!((node.nodes[0].index, node.nodes[0].count), (i as u64, 3));
        assert_eq!(node.config["node_index"], i);
        assert_eq!(node.config["node_count"], 3);
    }

    let merged_path = file("merged.json");
    let merge = sofabench(&[
        "merge",
        &file("node0.json"),
        &file("node1.json"),
        &file("node2.json"),
        "--json",
        &merged_path,
    ]);
    assert_eq!(merge.code, 0, "{}\n{}", merge.stdout, merge.stderr);
    assert!(
        merge.stdout.contains("CRUD BENCHMARK RESULTS:"),
        "{}",
        merge.stdout
    );
    assert!(merge.stdout.contains(&format!("wrote {merged_path}")));
    let merged = read(Path::new(&merged_path));
    assert_eq!(merged.nodes.len(), 3);
    assert_eq!(merged.config["node_index"], serde_json::json!([0, 1, 2]));
    assert_eq!(merged.phases.len(), 2);
    for (p, phase) in merged.phases.iter().enumerate() {
        let parts: Vec<_> = nodes.iter().map(|n| &n.phases[p]).collect();
        assert_eq!(phase.connections, 6);
        let wall = parts.iter().map(|p| p.wall_seconds).fold(0.0, f64::max);
        assert_eq!(phase.wall_seconds, wall);
        // Every node's connections keep their times, so Iron Cushion's spreads are those
        // over all six connections: the extremes are the nodes' extremes.
        let times = phase.connection_times.as_ref().expect("connection times");
        assert_eq!(times.local_ns.len(), 6);
        let local = &phase.iron_cushion.local_processing;
        let node_min = parts
            .iter()
            .map(|p| p.iron_cushion.local_processing.min)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(local.min, node_min);
        for op in &phase.operations {
            let of = |get: &dyn Fn(&sofabench::results::OperationResult) -> u64| -> u64 {
                parts
                    .iter()
                    .flat_map(|p| p.operations.iter())
                    .filter(|o| o.operation == op.operation)
                    .map(get)
                    .sum()
            };
            assert_eq!(op.succeeded, of(&|o| o.succeeded), "{}", op.operation);
            assert_eq!(op.failed, of(&|o| o.failed));
            assert_eq!(op.documents, of(&|o| o.documents));
            assert_eq!(op.latency.count, op.succeeded, "one latency per success");
            assert_eq!(op.latency.count, of(&|o| o.latency.count));
            let statuses: u64 = op.statuses.values().sum();
            assert_eq!(statuses, of(&|o| o.statuses.values().sum()));
            assert!((op.throughput - op.succeeded as f64 / wall).abs() < 1e-9);
        }
        let intervals: u64 = phase
            .intervals
            .iter()
            .flat_map(|i| i.operations.iter())
            .map(|o| o.succeeded)
            .sum();
        let node_intervals: u64 = parts
            .iter()
            .flat_map(|p| p.intervals.iter())
            .flat_map(|i| i.operations.iter())
            .map(|o| o.succeeded)
            .sum();
        assert_eq!(intervals, node_intervals, "interval rows are summed");
    }
    let count = |phase: usize, name: &str, get: fn(&sofabench::results::OperationResult) -> u64| {
        merged.phases[phase]
            .operations
            .iter()
            .find(|o| o.operation == name)
            .map_or(0, get)
    };
    // 3 nodes x 2 connections x 2 bulk inserts x 25 documents.
    let bulk_documents = count(0, "bulk_insert", |o| o.documents);
    assert_eq!(bulk_documents, 300);
    let (created, deleted) = (
        count(1, "create", |o| o.succeeded),
        count(1, "delete", |o| o.succeeded),
    );
    assert_eq!(created + deleted, 3 * 2 * 40 * 5 / 10);
    assert_eq!(
        doc_count(&server.db("nodes")),
        bulk_documents + created - deleted
    );

    // The merged result is refused as an output without --overwrite, and reads as any.
    let again = sofabench(&["merge", &file("node0.json"), "--json", &merged_path]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("--overwrite"), "{}", again.stderr);
    let check = sofabench(&["check", &merged_path, "--threshold", "errors == 0"]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("PASS  errors == 0  actual 0"),
        "{}",
        check.stdout
    );
    let compare = sofabench(&["compare", &file("node0.json"), &merged_path]);
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    assert!(
        compare.stdout.contains("PHASE crud:")
            && compare.stdout.contains("noise: no test possible"),
        "{}",
        compare.stdout
    );
}

#[test]
fn thresholds_decide_the_exit_code_and_show_the_actual_values() {
    let server = PouchServer::start();
    let failing = sofabench(&strs(&run_args(
        &server,
        "strict",
        &[
            "--threshold",
            "read.p99 < 0.001ms",
            "--threshold=read.errors == 0",
        ],
    )));
    assert_eq!(failing.code, 1, "{}\n{}", failing.stdout, failing.stderr);
    let line = failing
        .stdout
        .lines()
        .find(|l| l.contains("read.p99 < 0.001ms"))
        .unwrap_or_else(|| panic!("{}", failing.stdout));
    assert!(failing.stdout.contains("THRESHOLDS:"));
    assert!(line.trim_start().starts_with("FAIL"), "{line}");
    let actual: f64 = line
        .split("actual ")
        .nth(1)
        .and_then(|v| v.strip_suffix("ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("an actual value in ms: {line}"));
    assert!(actual >= 0.001, "{line}");
    assert!(
        failing.stdout.contains("PASS  read.errors == 0"),
        "{}",
        failing.stdout
    );
    assert!(
        failing.stderr.contains("1 of 2 thresholds failed"),
        "{}",
        failing.stderr
    );

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let passing = sofabench(&strs(&run_args(
        &server,
        "relaxed",
        &[
            "--threshold=read.p99 < 60s",
            "--threshold=crud:error_rate < 1%",
            "--threshold=bulk_insert.throughput > 0",
            &format!("--json={}", json.display()),
        ],
    )));
    assert_eq!(passing.code, 0, "{}\n{}", passing.stdout, passing.stderr);
    assert_eq!(
        passing.stdout.matches("  PASS  ").count(),
        3,
        "{}",
        passing.stdout
    );

    // The same thresholds on the saved result; a failing one exits 1.
    let json = json.display().to_string();
    let check = sofabench(&["check", &json, "--threshold=read.p99 < 60s"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let check = sofabench(&[
        "check",
        &json,
        "--threshold=read.p99 < 60s",
        "--threshold=create.p50 < 1us",
    ]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check.stdout.contains("FAIL  create.p50 < 1us"),
        "{}",
        check.stdout
    );
}

#[test]
fn bad_input_exits_2_before_anything_is_sent() {
    let server = PouchServer::start();
    for (extra, says) in [
        (vec!["--threshold=read.p98 < 1ms"], "unknown metric \"p98\""),
        (vec!["--threshold=read.p99 < 1kg"], "read.p99 < 1kg"),
        (vec!["--node-count=3", "--node-index=3"], "--node-index 3"),
        (
            vec!["--node-count=2", "--cleanup"],
            "--cleanup with --node-count 2",
        ),
    ] {
        let run = sofabench(&strs(&run_args(&server, "untouched", &extra)));
        assert_eq!(run.code, 2, "{extra:?}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(says), "{extra:?}: {}", run.stderr);
        assert_eq!(
            get(&server.db("untouched")).0,
            404,
            "no database was created"
        );
    }
    let run = sofabench(&["check", "/nonexistent.json", "--threshold=errors == 0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("/nonexistent.json"), "{}", run.stderr);
    let run = sofabench(&["check", "/nonexistent.json", "--threshold=errors"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("expected [PHASE:]"), "{}", run.stderr);
    let run = sofabench(&["merge", "/nonexistent.json"]);
    assert_eq!(run.code, 2);
    let run = sofabench(&["compare", "Cargo.toml", "Cargo.toml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("not a sofabench result"),
        "{}",
        run.stderr
    );
}

/// A run killed after its first phase of two left a result that `check` passed. An
/// interrupted result fails the check and says why, unless `--allow-interrupted` asks
/// for it to be judged anyway.
#[test]
fn an_interrupted_result_fails_a_check_unless_allowed() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let json_flag = format!("--json={}", json.display());
    let address = format!("--database_address={}", server.url);
    let mut child = spawn_sofabench(&[
        "run",
        &address,
        "--database_name=killed",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=10",
        "--duration=60s",
        &json_flag,
    ]);
    // The bulk insert phase ends within seconds and is written; the CRUD phase would
    // take a minute.
    assert!(
        wait_for(std::time::Duration::from_secs(30), || json.exists()),
        "no result file after the first phase"
    );
    child.kill().unwrap();
    let _ = child.wait();
    let result = read(&json);
    assert!(result.interrupted);
    assert_eq!(result.phases.len(), 1, "one phase of two");
    let json = json.display().to_string();
    let threshold = "--threshold=errors == 0";
    let check = sofabench(&["check", &json, threshold]);
    assert_eq!(check.code, 1, "{}\n{}", check.stdout, check.stderr);
    assert_eq!(check.stderr.lines().count(), 1, "{}", check.stderr);
    for words in [json.as_str(), "was interrupted", "--allow-interrupted"] {
        assert!(check.stderr.contains(words), "{words:?}: {}", check.stderr);
    }
    assert!(!check.stdout.contains("PASS"), "{}", check.stdout);
    let check = sofabench(&["check", &json, threshold, "--allow-interrupted"]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(check.stdout.contains("was interrupted"), "{}", check.stdout);
    assert!(
        check.stdout.contains("PASS  errors == 0"),
        "{}",
        check.stdout
    );
}

/// The cores this process may use: `nproc`'s count (its affinity), or fewer under a
/// cgroup CPU quota, which a container's CI may set and `nproc` does not read.
fn nproc() -> String {
    std::thread::available_parallelism().unwrap().to_string()
}

/// The cargo profile the binary under test was built in: its folder under target/.
fn profile() -> String {
    let binary = Path::new(env!("CARGO_BIN_EXE_sofabench"));
    let folder = binary.parent().and_then(Path::file_name).unwrap();
    folder.to_str().unwrap().to_string()
}

/// A run against PouchDB Server on disk with an admin records this machine: `check
/// --expect` passes on what it is and fails, with exit 1 and what the result says, on
/// what it is not; a name that is no fact is bad input that lists the names.
#[test]
fn a_run_records_its_client_and_check_expects_it() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = run_args(
        &server,
        "expected",
        &[&format!("--json={}", json.display())],
    );
    args.retain(|a| !a.starts_with("--database_address="));
    args.push(format!("--database_address={}", server.admin_url));
    let run = sofabench(&strs(&args));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let json = json.display().to_string();
    let (cores, version) = (nproc(), env!("CARGO_PKG_VERSION"));
    let expect = |fact: &str| format!("--expect={fact}");
    let met = [
        expect(&format!("client.cores={cores}")),
        expect(&format!("client.threads={cores}")),
        expect(&format!("client.sofabench={version}")),
        expect(&format!("client.profile={}", profile())),
        expect("client.machines=1"),
        expect("server.product=PouchDB Server"),
        expect("database.q=unknown"),
    ];
    let mut line = vec!["check", json.as_str()];
    line.extend(met.iter().map(String::as_str));
    let check = sofabench(&line);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check
            .stdout
            .starts_with(&format!("ENVIRONMENT:\n  PASS  client.cores={cores}\n")),
        "{}",
        check.stdout
    );
    assert!(!check.stdout.contains("THRESHOLDS"), "{}", check.stdout);

    let more = format!("{}", cores.parse::<u64>().unwrap() + 1);
    let wrong = expect(&format!("client.cores={more}"));
    let check = sofabench(&["check", &json, &wrong, "--threshold=errors == 0"]);
    assert_eq!(check.code, 1, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains(&format!(
            "  FAIL  expected client.cores={more}, the result says {cores}\n"
        )),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("PASS  errors == 0"),
        "{}",
        check.stdout
    );
    assert_eq!(check.stderr.trim(), "sofabench: 1 of 1 expectation failed");

    let check = sofabench(&["check", &json, "--expect=client.core=2"]);
    assert_eq!(check.code, 2, "{}\n{}", check.stdout, check.stderr);
    for words in [
        "client.core",
        "no fact is named",
        "client.cores",
        "server.version",
    ] {
        assert!(check.stderr.contains(words), "{words}: {}", check.stderr);
    }
    // Neither a threshold nor an expectation: nothing to check.
    let check = sofabench(&["check", &json]);
    assert_eq!(check.code, 2, "{}", check.stderr);
    assert!(
        check.stderr.contains("--threshold") && check.stderr.contains("--expect"),
        "{}",
        check.stderr
    );
}

/// A result of the written layout, from the old fixture (a result written before the
/// environment was kept) with `nodes` put in its place, saved as `name` in `dir`.
fn with_nodes(dir: &Path, name: &str, nodes: Vec<sofabench::results::NodeInfo>) -> String {
    let mut result = read(&repository().join("tests/fixtures/result-v2.json"));
    result.nodes = nodes;
    let path = dir.join(name);
    std::fs::write(&path, result.to_json()).unwrap();
    path.display().to_string()
}

/// `check --expect` on results built here: an old result answers "unknown" for every
/// fact but the machine count; a merged one's differing values are expected whole; the
/// server's facts are compared as text.
#[test]
fn expectations_are_compared_as_text_on_old_merged_and_server_results() {
    let dir = tempfile::tempdir().unwrap();
    let check = |file: &str, facts: &[&str]| {
        let mut line = vec!["check".to_string(), file.to_string()];
        line.extend(facts.iter().map(|f| format!("--expect={f}")));
        sofabench(&strs(&line))
    };

    let old = repository().join("tests/fixtures/result-v2.json");
    let old = old.display().to_string();
    let run = check(&old, &["server.version=unknown", "client.cores=unknown"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let run = check(&old, &["client.sofabench=0.1.0"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("FAIL  expected client.sofabench=0.1.0, the result says unknown"),
        "{}",
        run.stdout
    );

    let machine = |index: u64, cores: u64| sofabench::results::NodeInfo {
        index,
        count: 2,
        host: format!("client-{index}"),
        client: Some(ClientEnvironment {
            sofabench: "0.1.0".to_string(),
            cores: Some(cores),
            ..ClientEnvironment::default()
        }),
        server: None,
    };
    let merged = with_nodes(
        dir.path(),
        "merged.json",
        vec![machine(0, 2), machine(1, 8)],
    );
    let run = check(&merged, &["client.cores=2 | 8", "client.machines=2"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let run = check(&merged, &["client.cores=2"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("the result says 2 | 8"),
        "{}",
        run.stdout
    );

    let mut node = machine(0, 2);
    node.count = 1;
    node.server = Some(ServerEnvironment {
        product: Some("Apache CouchDB".to_string()),
        nodes: vec![ServerNode {
            address: "http://127.0.0.1:5984/".to_string(),
            answered: "welcome".to_string(),
            version: Some("3.5.0".to_string()),
            ..ServerNode::default()
        }],
        database: Some(DatabaseShape {
            name: "db".to_string(),
            created: true,
            q: Some(2),
            n: Some(3),
            partitioned: None,
        }),
        ..ServerEnvironment::default()
    });
    let couchdb = with_nodes(dir.path(), "couchdb.json", vec![node]);
    let run = check(
        &couchdb,
        &[
            "server.product=Apache CouchDB",
            "database.q=2",
            "database.n=3",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let run = check(
        &couchdb,
        &["server.version=3.5.2", "database.partitioned=unknown"],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "ENVIRONMENT:\n  FAIL  expected server.version=3.5.2, the result says 3.5.0\n  PASS  database.partitioned=unknown\n"
    );
    assert_eq!(run.stderr.trim(), "sofabench: 1 of 2 expectations failed");
}
