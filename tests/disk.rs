//! Disk cost: the database's sizes looked at before, during and after each phase, against
//! a PouchDB Server on disk with an admin, and against servers whose `GET /db` stalls or
//! answers garbage.

mod common;

use std::time::Duration;

use common::db_info_server::{DbInfo, DbInfoServer};
use common::*;
use serde_json::Value;

fn result(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn phase<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}: {result}"))
}

#[test]
fn sizes_before_during_and_after_each_phase_are_what_the_database_says() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 100
total = 20
connections = 2
[[phase]]
name = "writes"
mix = { create = 1, update = 1 }
duration = "3s"
connections = 2
"#,
    )
    .unwrap();
    let json = dir.path().join("result.json");
    let csv = dir.path().join("series.csv");
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("--database_address={}", server.admin_url),
        "--database_name=disk-cost",
        "--scenario",
        scenario.to_str().unwrap(),
        "--interval",
        "500ms",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);
    let on_server = get(&server.admin_db("disk-cost")).1;

    let load = &phase(&result, "load")["disk"];
    assert_eq!(load["documents_written"], 2_000, "{load}");
    // The database was empty before the load; after it, the server holds what it says.
    assert_eq!(load["start"]["doc_count"], 0, "{load}");
    assert_eq!(load["end"]["doc_count"], 2_000, "{load}");
    let file_after_load = load["end"]["file"].as_u64().expect("PouchDB's disk_size");
    // PouchDB Server reports no active or external size: absent, not 0.
    assert!(load["end"].get("active").is_none() && load["end"].get("external").is_none());
    // The template's documents are a few hundred bytes of JSON; LevelDB stores each
    // with its revision tree and indexes, compressed.
    let per_document = load["bytes_per_document"].as_f64().unwrap();
    assert!((50.0..20_000.0).contains(&per_document), "{per_document}");
    assert_eq!(per_document, file_after_load as f64 / 2_000.0);
    let grown = file_after_load - load["start"]["file"].as_u64().unwrap();
    assert_eq!(
        load["growth_per_document_written"].as_f64().unwrap(),
        grown as f64 / 2_000.0
    );

    let writes = &phase(&result, "writes")["disk"];
    let created = phase(&result, "writes")["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["operation"] == "create")
        .map(|o| o["documents"].as_u64().unwrap())
        .sum::<u64>();
    assert!(created > 0, "{writes}");
    assert_eq!(writes["start"]["doc_count"], 2_000, "{writes}");
    assert_eq!(writes["end"]["doc_count"].as_u64(), Some(2_000 + created));
    assert_eq!(writes["end"]["doc_count"], on_server["doc_count"]);
    assert_eq!(
        writes["end"]["file"], on_server["disk_size"],
        "nothing wrote since"
    );
    assert!(writes["end"]["file"].as_u64().unwrap() > file_after_load);

    // Every interval of the 3 s phase looked, on a connection of its own.
    let intervals = phase(&result, "writes")["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 5, "{}", intervals.len());
    let files: Vec<u64> = intervals
        .iter()
        .filter_map(|i| i["disk"]["file"].as_u64())
        .collect();
    assert!(files.len() + 1 >= intervals.len(), "{files:?}");
    assert!(
        files.windows(2).all(|w| w[0] <= w[1]),
        "only writes: {files:?}"
    );
    let counts: Vec<u64> = intervals
        .iter()
        .filter_map(|i| i["disk"]["doc_count"].as_u64())
        .collect();
    assert!(counts.first() < counts.last(), "{counts:?}");

    assert!(
        run.stdout.contains("disk after     file "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("active unknown, external unknown"));
    let series = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = series.lines().next().unwrap().split(',').collect();
    let file_column = header.iter().position(|c| *c == "disk_file_bytes").unwrap();
    let active_column = header
        .iter()
        .position(|c| *c == "disk_active_bytes")
        .unwrap();
    let rows: Vec<Vec<&str>> = series
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(
        rows.iter()
            .any(|r| r[file_column].parse::<u64>().is_ok_and(|f| f > 0))
    );
    assert!(
        rows.iter().all(|r| r[active_column].is_empty()),
        "unknown is empty"
    );
}

/// A run against `server` of 2.5 s in intervals of 250 ms: its result, and how long it took.
fn run_beside(server: &DbInfoServer, dir: &std::path::Path) -> (Run, Value) {
    let json = dir.join("result.json");
    let run = sofabench(&[
        "run",
        "--verbose",
        &format!("--database_address={}", server.url),
        "--database_name=looked",
        "--num_documents_per_bulk_insert=10",
        "--num_bulk_insert_operations=4",
        "--num_connections=2",
        "--duration=2500ms",
        "--interval=250ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    (run, result(&json))
}

#[test]
fn a_server_whose_database_information_stalls_or_is_garbage_leaves_the_sizes_unknown() {
    for info in [DbInfo::Stall, DbInfo::Garbage, DbInfo::OddSizes] {
        let server = DbInfoServer::start(info);
        let dir = tempfile::tempdir().unwrap();
        let (run, result) = run_beside(&server, dir.path());
        let crud = phase(&result, "crud");
        // The phase kept its time and its interval lines: each look is bounded (2 s) and
        // runs apart from the monitor, so a stalled one delays no line.
        let wall = crud["wall_seconds"].as_f64().unwrap();
        assert!((2.4..3.5).contains(&wall), "{info:?}: {wall}");
        let intervals = crud["intervals"].as_array().unwrap();
        assert!(intervals.len() >= 9, "{info:?}: {}", intervals.len());
        for interval in intervals {
            assert!(interval.get("disk").is_none(), "{info:?}: {interval}");
        }
        // Before and after each phase: two bounded looks, each at most 2 s.
        assert!(
            run.took < Duration::from_secs(20),
            "{info:?}: {:?}",
            run.took
        );
        let disk = &crud["disk"];
        assert!(
            disk.get("start").is_none() && disk.get("end").is_none(),
            "{disk}"
        );
        assert!(disk.get("bytes_per_document").is_none(), "{disk}");
        assert!(
            run.stdout
                .contains("disk after     unknown (GET /db gave no sizes within 2 s"),
            "{info:?}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains("disk per doc   unknown"),
            "{}",
            run.stdout
        );
        assert!(server.looks() >= 3, "{info:?}: {} looks", server.looks());
        if !matches!(info, DbInfo::Stall) {
            // Answered looks come every interval.
            assert!(server.looks() >= 10, "{info:?}: {} looks", server.looks());
        }
    }
}
