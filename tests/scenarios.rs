//! Scenarios against a real PouchDB Server: files, sweeps, built-ins, background actions.

mod common;

use common::*;

fn run_scenario(server: &PouchServer, db: &str, extra: &[&str]) -> Run {
    let address = format!("--database_address={}", server.url);
    let name = format!("--database_name={db}");
    let mut args = vec![
        "run",
        address.as_str(),
        name.as_str(),
        "--quiet",
        "--seed=3",
    ];
    args.extend_from_slice(extra);
    sofabench(&args)
}

#[test]
fn the_built_in_scenarios_are_listed() {
    let run = sofabench(&["scenarios"]);
    assert_eq!(run.code, 0);
    for name in [
        "ironcushion",
        "read-ratio-sweep",
        "scaling",
        "couchdb-report",
        "soak",
        "doc-size-sweep",
        "id-scheme",
        "changes",
        "replication-lag",
    ] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(name)),
            "{name}:\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_scenario_file_runs_its_phases_and_sweeps() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(
        &file,
        r#"
description = "load, then reads by a sweep of connections"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 25
total = 8
connections = 2
[[phase]]
name = "reads"
mix = { read = 1 }
total = 60
keys = "zipfian"
sweep = { connections = [1, 3] }
"#,
    )
    .unwrap();
    let run = run_scenario(&server, "scen", &["--scenario", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for title in [
        "PHASE load RESULTS:",
        "PHASE reads_1 RESULTS:",
        "PHASE reads_3 RESULTS:",
    ] {
        assert!(run.stdout.contains(title), "{title}:\n{}", run.stdout);
    }
    assert_eq!(doc_count(&server.db("scen")), 200);
    // Both read phases read 60 documents, all found, even the one whose 3 connections
    // did not insert anything themselves.
    let reads = latency_rows(&run.stdout, "latency(ms)", "read");
    assert_eq!(reads.len(), 2);
    assert!(
        reads.iter().all(|r| r[0] == 60.0 && r[1] == 0.0),
        "{reads:?}"
    );
}

#[test]
fn a_bad_scenario_file_is_refused_before_anything_is_sent() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[phase]]\nname = \"x\"\nmix = { raed = 1 }\ntotal = 5\n[[phase]]\nname = \"y\"\nmix = { read = 1 }\n").unwrap();
    let run = run_scenario(&server, "badscen", &["--scenario", file.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("bad.toml: phase \"x\": mix: unknown operation \"raed\""),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("bad.toml: phase \"y\": give operations"),
        "{}",
        run.stderr
    );
    assert_eq!(get(&server.db("badscen")).0, 404, "nothing was created");
    let run = run_scenario(&server, "badscen", &["--scenario", "no-such-scenario"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("sofabench scenarios"), "{}", run.stderr);
}

#[test]
fn read_ratio_sweep_prints_titan_lines() {
    let server = PouchServer::start();
    let run = run_scenario(
        &server,
        "titan",
        &[
            "--scenario=read-ratio-sweep",
            "--num_connections=2",
            "--total-operations=40",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("RR_"))
        .map(|l| l.split('\t').collect())
        .collect();
    let names: Vec<&str> = lines.iter().map(|l| l[0]).collect();
    assert_eq!(
        names,
        [
            "RR_00", "RR_10", "RR_25", "RR_50", "RR_75", "RR_90", "RR_95"
        ]
    );
    for line in &lines {
        assert_eq!(line.len(), 7, "{line:?}");
        // Plain numbers, as a spreadsheet reads them.
        let writes: u64 = line[2].parse().unwrap();
        let reads: u64 = line[4].parse().unwrap();
        let hits: u64 = line[6].parse().unwrap();
        assert_eq!(writes + reads, 40, "{line:?}");
        assert_eq!(hits, reads, "every read finds its document: {line:?}");
    }
    assert_eq!(lines[0][4], "0");
    assert_eq!(lines[3][2], "20");
}

#[test]
fn scaling_prints_the_table_with_a_weighted_average() {
    let server = PouchServer::start();
    let run = run_scenario(
        &server,
        "scaling",
        &[
            "--scenario=scaling",
            "--num_connections=2",
            "--writes=30",
            "--reads=20",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let table = run.stdout.split("SCALING TABLE:").nth(1).expect("a table");
    assert!(
        table.lines().any(|l| l.trim_start().starts_with("30 ")),
        "{table}"
    );
    assert!(table.contains("Weighted"), "{table}");
    assert_eq!(doc_count(&server.db("scaling")), 30);
    assert_eq!(run.count("read"), 20);
}

#[test]
fn couchdb_report_compacts_and_replicates_with_credentials() {
    // As users run a server: with an admin, on disk. The replicator is a client of both
    // URLs, so both need the credentials.
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=report",
        "--quiet",
        "--seed=3",
        "--scenario=couchdb-report",
        "--total-operations=20",
        "--duration=2s",
        "--batch-sizes=10,20",
        "--id-prefix=rep",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for phase in [
        "put_single_1conn",
        "bulk_10",
        "bulk_20",
        "read_1conn",
        "read_10conn",
        "bulk_50_while_compacting",
        "bulk_50_replicating_one_way",
        "bulk_50_replicating_two_way",
    ] {
        assert!(
            run.stdout.contains(&format!("PHASE {phase} RESULTS:")),
            "{phase}:\n{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.contains("action compact: started at"),
        "{}",
        run.stdout
    );
    // The replicating phases replicate for their whole length, with the lag measured.
    assert!(
        run.stdout
            .contains("replication: two-way to \"report-replica-rep\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("replication lag (answer on the source"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("throughput before"), "{}", run.stdout);
    assert!(!run.stdout.contains("failed:"), "{}", run.stdout);
    let text = std::fs::read_to_string(&json).unwrap();
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    let phases = result["phases"].as_array().unwrap();
    let compact = &phases
        .iter()
        .find(|p| p["name"] == "bulk_50_while_compacting")
        .unwrap()["action"];
    // PouchDB Server on disk reports `disk_size`, and compacts before it answers.
    assert_eq!(compact["size_field"], "disk_size", "{compact}");
    assert!(compact["size_before"].as_u64().unwrap() > 0, "{compact}");
    assert!(compact["size_after"].as_u64().unwrap() > 0, "{compact}");
    assert!(
        compact["finished_seconds"].as_f64() >= compact["started_seconds"].as_f64(),
        "{compact}"
    );
    // The replica (a database of the run's own, never an existing one) holds at least
    // every document the database held when the one-way replication started.
    let before_replication: u64 = phases
        .iter()
        .take_while(|p| p["name"] != "bulk_50_replicating_one_way")
        .flat_map(|p| p["operations"].as_array().unwrap())
        .filter(|o| o["operation"] == "create" || o["operation"] == "bulk_insert")
        .map(|o| o["documents"].as_u64().unwrap())
        .sum();
    assert!(before_replication > 1_000, "{before_replication}");
    let replica = doc_count(&server.admin_db("report-replica-rep"));
    assert!(
        replica >= before_replication,
        "replica {replica} < {before_replication}"
    );
    for (name, shown) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("result", &text),
    ] {
        assert!(!shown.contains(ADMIN.1), "the password in {name}:\n{shown}");
    }
}

#[test]
fn a_scenario_file_can_name_its_target_and_template() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("targeted.toml");
    std::fs::write(
        &file,
        format!(
            r#"
database_address = "{}"
database_name = "fromscenario"
json_document_schema_filename = "examples/account.json"
[[phase]]
name = "load"
mix = {{ bulk_insert = 1 }}
batch_size = 5
total = 2
connections = 1
"#,
            server.url
        ),
    )
    .unwrap();
    let run = sofabench(&["run", "--quiet", "--scenario", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("examples/account.json"),
        "{}",
        run.stdout
    );
    let (_, docs) = get(&format!(
        "{}/_all_docs?include_docs=true&limit=1",
        server.db("fromscenario")
    ));
    assert!(docs["rows"][0]["doc"]["LastLogin"].is_string(), "{docs}");
    // The command line wins over the file.
    let run = sofabench(&[
        "run",
        "--quiet",
        "--scenario",
        file.to_str().unwrap(),
        "--database_name=fromflag",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(doc_count(&server.db("fromflag")), 10);
    std::fs::write(
        &file,
        "databse_name = 'x'\n[[phase]]\nname = 'a'\nmix = { read = 1 }\ntotal = 1\n",
    )
    .unwrap();
    let run = sofabench(&["run", "--quiet", "--scenario", file.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown key \"databse_name\"") && run.stderr.contains("database_name"),
        "{}",
        run.stderr
    );
}

/// A scenario given as a pipe is read once, though both its top-level settings (flags of
/// `run`, and settings of its phases) and its phases are taken from it.
#[test]
fn a_scenario_from_a_pipe_or_standard_input_keeps_its_top_level_settings() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let server = PouchServer::start();
    let scenario = |db: &str| {
        format!(
            "database_address = \"{}\"\ndatabase_name = \"{db}\"\n\
             num_documents_per_bulk_insert = 7\n\
             [[phase]]\nname = \"load\"\nmix = {{ bulk_insert = 1 }}\ntotal = 3\nconnections = 1\n",
            server.url
        )
    };
    let piped = Command::new("bash")
        .args([
            "-c",
            r#"exec "$0" run --quiet --scenario <(printf '%s' "$SCENARIO")"#,
            env!("CARGO_BIN_EXE_sofabench"),
        ])
        .env("SCENARIO", scenario("frompipe"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success(), "{stderr}");
    assert_eq!(doc_count(&server.db("frompipe")), 21, "{stderr}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .args(["run", "--quiet", "--scenario", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text = scenario("fromstdin");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(doc_count(&server.db("fromstdin")), 21, "{stderr}");
}

#[test]
fn a_rate_flag_paces_the_file_phases_that_set_none() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("paced.toml");
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 10
total = 4
rate = 1000
[[phase]]
name = "writes"
mix = { create = 1 }
total = 60
connections = 2
"#,
    )
    .unwrap();
    let json = dir.path().join("paced.json");
    let started = std::time::Instant::now();
    let run = run_scenario(
        &server,
        "paced",
        &[
            "--scenario",
            file.to_str().unwrap(),
            "--rate",
            "40",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The header says where each phase's rate came from.
    assert!(
        run.stdout.contains("rate 1000/s (phase)") && run.stdout.contains("rate 40/s (--rate)"),
        "{}",
        run.stdout
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases[0]["target_rate"], 1000.0, "the phase's own key wins");
    assert_eq!(phases[1]["target_rate"], 40.0, "the flag reaches the phase");
    // 60 operations at 40/s take 1.5 s; flat out they would take a fraction of it.
    let wall = phases[1]["wall_seconds"].as_f64().unwrap();
    assert!((1.3..3.0).contains(&wall), "{wall} s");
    assert!(took.as_secs_f64() > 1.3, "{took:?}");
    assert_eq!(result["config"]["rate"], 40.0);
}
