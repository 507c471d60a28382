//! Memory stays flat over any length of run: a phase keeps at most `--max-intervals`
//! intervals, merged pairwise past it, and what it counted stays whole. Thousands of
//! live intervals pass in seconds with millisecond intervals (the hidden
//! `--short-intervals`) against a server that answers at once, rather than a day's soak.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;
use serde_json::Value;

/// A run against `url` of `seconds` of reads and creates at 400/s with 1 ms intervals, keeping at most
/// `bound` of them, writing `result.json` into `dir`; under `/usr/bin/time -v`, whose
/// report (with the peak resident set) ends stderr, and `extra` arguments last. Bounded
/// at 60 s.
fn many_intervals(url: &str, dir: &Path, (seconds, bound): (u64, u64), extra: &[&str]) -> Run {
    let output = Command::new("timeout")
        .args(["60", "/usr/bin/time", "-v"])
        .arg(env!("CARGO_BIN_EXE_sofabench"))
        .args([
            "run",
            &format!("--database_address={url}"),
            "--database_name=long",
            "--quiet",
            "--num_connections=2",
            "--num_bulk_insert_operations=1",
            "--num_documents_per_bulk_insert=10",
            "--rate=400",
            &format!("--duration={seconds}s"),
            "--read_weight=1",
            "--create_weight=1",
            "--update_weight=0",
            "--delete_weight=0",
            "--short-intervals",
            "--interval=1ms",
            &format!("--max-intervals={bound}"),
            "--overwrite",
        ])
        .args(extra)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run sofabench under /usr/bin/time");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: Duration::ZERO,
    }
}

/// The peak resident set `/usr/bin/time -v` reported, KiB.
fn peak_kib(run: &Run) -> u64 {
    run.stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in:\n{}", run.stderr))
}

fn sum(rows: &[Value], operation: &str, field: &str) -> u64 {
    rows.iter()
        .flat_map(|r| r["operations"].as_array().unwrap())
        .filter(|o| o["operation"] == operation)
        .map(|o| o[field].as_u64().unwrap_or(0))
        .sum()
}

/// Every phase holds at most `bound` intervals, says how wide they became, and its
/// intervals add up to the phase's own counts.
fn assert_bounded_and_whole(result: &Value, bound: usize) -> u64 {
    let mut widest = 0;
    for phase in result["phases"].as_array().unwrap() {
        let rows = phase["intervals"].as_array().unwrap();
        let width = phase["interval_width"].as_u64().unwrap_or(1);
        widest = widest.max(width);
        assert!(rows.len() <= bound, "{} intervals", rows.len());
        for op in phase["operations"].as_array().unwrap() {
            let name = op["operation"].as_str().unwrap();
            for field in ["succeeded", "failed"] {
                assert_eq!(
                    sum(rows, name, field),
                    op[field].as_u64().unwrap(),
                    "{name} {field} over the intervals of {}",
                    phase["name"]
                );
            }
        }
        let late: u64 = rows.iter().map(|r| r["late"].as_u64().unwrap()).sum();
        assert_eq!(late, phase["late"].as_u64().unwrap());
        // The intervals tile the phase: their lengths add up to its time.
        let covered: f64 = rows
            .iter()
            .map(|r| r["length_seconds"].as_f64().unwrap())
            .sum();
        let wall = phase["wall_seconds"].as_f64().unwrap();
        assert!(
            (covered - wall).abs() < 0.05 * wall + 0.05,
            "{covered} of {wall}"
        );
    }
    widest
}

#[test]
fn thousands_of_intervals_keep_at_most_the_bound_and_every_count() {
    let server = DelayServer::start(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = many_intervals(&server.url, dir.path(), (4, 64), &["--json=result.json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result_json(&dir.path().join("result.json"));
    assert_eq!(result["config"]["max_intervals"], 64);
    let widest = assert_bounded_and_whole(&result, 64);
    // 4 s of 1 ms intervals in at most 64: each holds at least 32 of them.
    assert!(widest >= 32, "width {widest}");
    let size = std::fs::metadata(dir.path().join("result.json"))
        .unwrap()
        .len();
    assert!(size < 1 << 20, "result of {size} bytes");
    // `report` reads it back.
    let path = dir.path().join("result.json");
    let report = sofabench(&["report", path.to_str().unwrap()]);
    assert_eq!(report.code, 0, "{}", report.stderr);
}

#[test]
fn merging_nodes_of_many_intervals_keeps_the_bound_and_every_count() {
    let server = DelayServer::start(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let nodes: Vec<_> = (0..2)
        .map(|node| {
            let (url, path) = (server.url.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                let args = [
                    format!("--node-index={node}"),
                    "--node-count=2".to_string(),
                    format!("--json=node{node}.json"),
                ];
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                many_intervals(&url, &path, (3, 50), &args)
            })
        })
        .collect();
    for node in nodes {
        let run = node.join().unwrap();
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let merge = sofabench(&[
        "merge",
        &file("node0.json"),
        &file("node1.json"),
        "--json",
        &file("merged.json"),
    ]);
    assert_eq!(merge.code, 0, "{}\n{}", merge.stdout, merge.stderr);
    let merged = result_json(Path::new(&file("merged.json")));
    // Aligned on the coarser node's stretches: one more at most where the nodes'
    // last intervals end apart.
    assert_bounded_and_whole(&merged, 51);
}

#[test]
fn memory_does_not_grow_with_the_number_of_intervals() {
    let server = DelayServer::start(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let short = many_intervals(&server.url, dir.path(), (2, 100), &[]);
    assert_eq!(short.code, 0, "{}", short.stderr);
    // Four times as many intervals: 8,000 where keeping each took about 1.5 KB.
    let long = many_intervals(&server.url, dir.path(), (8, 100), &[]);
    assert_eq!(long.code, 0, "{}", long.stderr);
    let (short, long) = (peak_kib(&short), peak_kib(&long));
    eprintln!("peak resident set: {short} KiB over 2,000 intervals, {long} KiB over 8,000");
    assert!(
        long < short + 4 * 1024,
        "{long} KiB over 8,000 intervals, {short} KiB over 2,000"
    );
}

/// The JSON rows of `phase`, by their end (Unix ms).
fn rows_by_end(phase: &Value) -> std::collections::BTreeMap<u64, &Value> {
    phase["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["end_ms"].as_u64().unwrap(), r))
        .collect()
}

/// A phase whose intervals were merged is read by its intervals' own lengths: the CSV's
/// rates are each interval's count over its own length, the hlog's intervals start and
/// last as the JSON's do, and `report` (HTML and CSV again), `check` and `compare` take it.
#[test]
fn merged_intervals_are_read_by_their_own_lengths_in_every_output() {
    let server = DelayServer::start(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = many_intervals(&server.url, dir.path(), (2, 16), &["--out=out"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = dir.path().join("out");
    let result = result_json(&out.join("result.json"));
    let crud = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "crud")
        .unwrap();
    assert!(crud["interval_width"].as_u64().unwrap() >= 2, "{crud}");
    let rows = rows_by_end(crud);
    // CSV: each row's throughput is its succeeded over its own interval's length.
    let csv = std::fs::read_to_string(out.join("result.csv")).unwrap();
    let mut checked = 0;
    for line in csv.lines().skip(1).filter(|l| l.starts_with("crud,")) {
        let cells: Vec<&str> = line.split(',').collect();
        let row = rows[&cells[1].parse::<u64>().unwrap()];
        let length = row["length_seconds"].as_f64().unwrap();
        let succeeded: f64 = cells[4].parse().unwrap();
        let throughput: f64 = cells[7].parse().unwrap();
        assert!(
            (throughput - succeeded / length).abs() < 0.001,
            "{line}: {succeeded} in {length} s"
        );
        assert_eq!(cells[2].parse::<f64>().unwrap(), {
            let e = row["elapsed_seconds"].as_f64().unwrap();
            (e * 1e3).round() / 1e3
        });
        checked += 1;
    }
    assert!(checked >= 2, "{csv}");
    // hlog: one line per interval of the phase, each as long as the JSON's interval.
    let hlog = std::fs::read_to_string(out.join("result.read.hlog")).unwrap();
    let lengths: Vec<f64> = hlog
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('"'))
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    let json_lengths: Vec<f64> = rows
        .values()
        .map(|r| (r["length_seconds"].as_f64().unwrap() * 1e3).round() / 1e3)
        .collect();
    assert_eq!(lengths, json_lengths);
    let json = out.join("result.json");
    let json = json.to_str().unwrap();
    let html = dir.path().join("again.html");
    let report = sofabench(&["report", json, "--html", html.to_str().unwrap()]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    let check = sofabench(&["check", json, "--threshold=errors == 0"]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("PASS  errors == 0"),
        "{}",
        check.stdout
    );
    let compare = sofabench(&["compare", json, json]);
    assert_eq!(compare.code, 0, "{}\n{}", compare.stdout, compare.stderr);
}

/// A result written before intervals were merged (no `interval_width`, no
/// `config.interval_seconds`) is read by `report`, `merge`, `check` and `compare`, and a
/// merge of it keeps its intervals as they were.
#[test]
fn a_result_written_before_intervals_were_merged_is_still_read() {
    let fixture = repository().join("tests/fixtures/result-v2.json");
    let old = result_json(&fixture);
    assert!(old["config"].get("interval_seconds").is_none());
    assert!(
        old["phases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p.get("interval_width").is_none())
    );
    let fixture = fixture.to_str().unwrap();
    let report = sofabench(&["report", fixture]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(
        report.stdout.contains("CRUD BENCHMARK RESULTS"),
        "{}",
        report.stdout
    );
    let check = sofabench(&["check", fixture, "--threshold=errors == 0"]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    let compare = sofabench(&["compare", fixture, fixture]);
    assert_eq!(compare.code, 0, "{}\n{}", compare.stdout, compare.stderr);
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("merged.json");
    let merge = sofabench(&["merge", fixture, "--json", merged.to_str().unwrap()]);
    assert_eq!(merge.code, 0, "{}\n{}", merge.stdout, merge.stderr);
    let merged = result_json(&merged);
    for (old, new) in old["phases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(merged["phases"].as_array().unwrap())
    {
        // Each row stays a row of its own, its end and length to the millisecond.
        let rows = |p: &Value| -> Vec<(u64, f64)> {
            rows_by_end(p)
                .values()
                .map(|r| {
                    (
                        r["end_ms"].as_u64().unwrap(),
                        r["length_seconds"].as_f64().unwrap(),
                    )
                })
                .collect()
        };
        let (new, old) = (rows(new), rows(old));
        assert_eq!(new.len(), old.len(), "{new:?} {old:?}");
        for ((new_end, new_length), (old_end, old_length)) in new.iter().zip(&old) {
            assert!(new_end.abs_diff(*old_end) <= 1, "{new:?} {old:?}");
            assert!((new_length - old_length).abs() < 0.002, "{new:?} {old:?}");
        }
    }
}
