//! Numbers and names out of range (issue 13): each is refused with one message naming the
//! input, the range and why, exit 2, fast, and before anything is sent to the server.

mod common;

use std::time::Duration;

use common::*;

/// Runs with `extra` against `server`'s database `db`, a small run otherwise.
fn refused(server: &PouchServer, dir: &std::path::Path, extra: &[&str], says: &str) {
    let address = format!("--database_address={}", server.url);
    let mut args = vec![
        "run",
        address.as_str(),
        "--database_name=limits",
        "--quiet",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=5",
        "--num_bulk_insert_operations=1",
        "--num_crud_operations=10",
    ];
    args.extend_from_slice(extra);
    let run = sofabench_in(dir, &args);
    assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    assert!(run.stderr.contains(says), "{extra:?}: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(
        !run.stderr.contains('\u{1b}'),
        "no escape reaches the terminal"
    );
    assert!(
        run.took < Duration::from_secs(10),
        "{extra:?} took {:?}",
        run.took
    );
}

#[test]
fn flags_out_of_range_are_refused_before_anything_is_sent() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let huge = "1000000000000";
    let connections = format!("--num_connections={huge}");
    let batch = format!("--num_documents_per_bulk_insert={huge}");
    let nodes = format!("--node-count={huge}");
    let prefix = format!("--id-prefix={}", "x".repeat(101));
    let sizes: Vec<String> = (1..=1_001).map(|n| n.to_string()).collect();
    let sizes = format!("--batch-sizes={}", sizes.join(","));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--duration=2562047788015215h"], "longer than 10 years"),
        (vec!["--timeout=2562047788015215h"], "longer than 10 years"),
        (
            vec!["--reconnect-for=2562047788015215h"],
            "longer than 10 years",
        ),
        (
            vec!["--action-timeout=2562047788015215h"],
            "longer than 10 years",
        ),
        (
            vec!["--late-threshold=2562047788015215h"],
            "longer than 10 years",
        ),
        (vec![&connections], "ulimit -n"),
        (vec![&batch], "at most 1000000 documents per bulk insert"),
        (
            vec![&nodes],
            "--node-count 1000000000000: give the number of nodes",
        ),
        (vec!["--duration=0"], "--duration 0"),
        (vec!["--total-operations=0"], "--total-operations 0"),
        (vec!["--interval=1ms"], "at least 100ms"),
        (vec!["--rate=1e9"], "to 10000000"),
        (vec!["--rate=1e-300"], "from 0.001"),
        (vec!["--retry-429=0"], "retries from 1 to 1000"),
        (vec!["--retry-429=4294967296"], "retries from 1 to 1000"),
        (
            vec!["--create_weight=18446744073709551615"],
            "weights are relative",
        ),
        (
            vec!["--num_crud_operations=18446744073709551615"],
            "more than 2^64 operations",
        ),
        (
            vec!["--num_bulk_insert_operations=1000000000000"],
            "operations in one phase",
        ),
        (
            vec!["--scenario=couchdb-report", "--batch-sizes=10,10"],
            "\"bulk_10\" appears twice",
        ),
        (
            vec!["--threshold=foo.p99 < 1"],
            "\"foo\" is not an operation",
        ),
        (
            vec!["--delete_weight=0", "--threshold=delete.p99 < 1"],
            "no phase performs delete",
        ),
        (
            vec!["--scenario=scaling", "--writes=0"],
            "--writes 0: scaling reads only the documents its writes created",
        ),
        (
            vec!["--scenario=scaling", "--writes=0", "--reads=5"],
            "give --writes 1 or more (--reads 0 for writes alone)",
        ),
        (
            vec!["--scenario=scaling", "--reads=5"],
            "--reads without --writes",
        ),
        (vec![&prefix], "--id-prefix of 101 characters: at most 100"),
        (
            vec!["--scenario=couchdb-report", &sizes],
            "--batch-sizes: 1001 sizes, at most 1000",
        ),
    ];
    for (extra, says) in cases {
        refused(&server, dir.path(), &extra, says);
    }
    assert_eq!(get(&server.db("limits")).0, 404, "nothing was created");
}

#[test]
fn scenario_files_out_of_range_are_refused_before_anything_is_sent() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let phase = "[[phase]]\nname = \"a\"\nmix = { create = 1 }\ntotal = 5\n";
    let cases = [
        (
            format!("{phase}compact_at = \"2562047788015215h\"\n"),
            "compact_at: \"2562047788015215h\" is longer than 10 years",
        ),
        (
            format!("{phase}connections = 1000000000000\n"),
            "phase \"a\": connections 1000000000000",
        ),
        (
            format!("num_connections = 1000000000000\n{phase}"),
            "toml: num_connections 1000000000000: more connections than",
        ),
        (
            format!("{phase}keys = {{ zipfian = 1.0 }}\n"),
            "strictly between 0 and 1",
        ),
        (
            format!("{phase}sweep = {{ connections = [] }}\n"),
            "sweep.connections: no values",
        ),
        (format!("{phase}{phase}"), "phase \"a\" appears twice"),
        (
            format!("{phase}replicate_to = \"copy\"\n"),
            "replicate_to needs replicate_at",
        ),
        (
            "[[phase]]\nname = \"\"\nmix = { create = 1 }\ntotal = 5\n".to_string(),
            "give the phase a name",
        ),
        (
            "[[phase]]\nname = \"a\\u001b[2J\"\nmix = { create = 1 }\ntotal = 5\n".to_string(),
            "control characters",
        ),
        (
            "[[phase]]\nname = \"a\"\nmix = { create = 1 }\ntotal = 0\n".to_string(),
            "a total of 0 operations would run nothing",
        ),
        (
            "[[phase]]\nname = \"a\"\nmix = { create = 1 }\nduration = \"0s\"\n".to_string(),
            "a duration of 0 would run nothing",
        ),
    ];
    for (text, says) in cases {
        std::fs::write(dir.path().join("s.toml"), &text).unwrap();
        refused(&server, dir.path(), &["--scenario=s.toml"], says);
        let run = sofabench_in(dir.path(), &["run", "--scenario=s.toml", "--quiet"]);
        assert!(
            !run.stderr.contains('\u{1b}'),
            "no escape reaches the terminal"
        );
    }
    assert_eq!(get(&server.db("limits")).0, 404, "nothing was created");
}

/// Runs sofabench on a saved result and expects a refusal naming the file.
fn refused_result(dir: &std::path::Path, args: &[&str], says: &str) {
    let run = sofabench_in(dir, args);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn edited_results_are_refused_by_merge_check_and_report() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let address = format!("--database_address={}", server.url);
    let run = sofabench_in(
        dir.path(),
        &[
            "run",
            &address,
            "--database_name=saved",
            "--quiet",
            "--num_connections=2",
            "--num_documents_per_bulk_insert=5",
            "--num_bulk_insert_operations=1",
            "--num_crud_operations=10",
            "--json=result.json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    let mut result: serde_json::Value = serde_json::from_str(&text).unwrap();
    result["phases"][0]["operations"][0]["failures"]["gremlins"] = 1.into();
    std::fs::write(dir.path().join("odd.json"), result.to_string()).unwrap();
    let says = "odd.json: phase bulk_insert";
    refused_result(
        dir.path(),
        &["check", "odd.json", "--threshold=errors < 5"],
        says,
    );
    refused_result(dir.path(), &["report", "odd.json"], says);
    refused_result(dir.path(), &["merge", "odd.json"], "\"gremlins\"");

    let mut result: serde_json::Value = serde_json::from_str(&text).unwrap();
    result["nodes"][0]["index"] = 3.into();
    result["nodes"][0]["count"] = 2.into();
    std::fs::write(dir.path().join("past.json"), result.to_string()).unwrap();
    refused_result(
        dir.path(),
        &["merge", "past.json"],
        "past.json says it is node 3 of 2",
    );
}
