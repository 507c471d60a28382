//! Files that are valid in form yet built to cost far more to read than their size says
//! (issue 27): a result whose `config` is a 63 MiB array, results whose histograms claim
//! 5 significant digits over the widest range, results of many intervals, and config and
//! scenario files of arrays of empty tables. Each command runs under an address-space
//! limit of four times what it reads and 100 MB, and a wall-clock bound of 60 s: what
//! it accepts it reads within that, and what it refuses it refuses with one message
//! naming the file.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use common::bad_server::sofabench_within;
use common::{Run, repository, scratch};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use serde_json::{Value, json};

const MIB: usize = 1 << 20;

/// The memory any accepted file may take, as docs/misbehaving-servers.md states it: four times the bytes
/// read and 100 MB, in KiB for `ulimit -v`.
fn allowance_kib(files: &[&Path]) -> u64 {
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    (4 * bytes + 100_000_000) / 1024
}

fn shown(run: &Run) -> String {
    format!(
        "exit {} in {:?}\n{}\n{}",
        run.code, run.took, run.stdout, run.stderr
    )
}

fn fixture() -> Value {
    let path = repository().join("tests/fixtures/result-v2.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The fixture as node `index` of two, so that two of them merge.
fn as_node(mut result: Value, index: u64) -> Value {
    result["nodes"] = json!([{"index": index, "count": 2, "host": format!("node{index}")}]);
    result["config"]["node_index"] = json!(index);
    result["config"]["node_count"] = json!(2);
    result
}

fn write_json(path: &Path, value: &Value) -> PathBuf {
    std::fs::write(path, serde_json::to_vec(value).unwrap()).unwrap();
    path.to_path_buf()
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// What each command that reads results does with `a` (and `b`, for those taking two):
/// its arguments, with `out` a folder for what it writes.
fn reading_commands(a: &Path, b: &Path, out: &Path) -> Vec<Vec<String>> {
    let (a, b) = (text(a), text(b));
    let html = format!("--html={}", out.join("report.html").display());
    let merged = format!("--json={}", out.join("merged.json").display());
    vec![
        vec![
            "check".into(),
            "--threshold=error_rate < 50%".into(),
            a.clone(),
        ],
        vec!["report".into(), a.clone()],
        vec!["report".into(), a.clone(), html, "--overwrite".into()],
        vec!["compare".into(), a.clone(), b.clone()],
        vec!["merge".into(), a, b, merged, "--overwrite".into()],
    ]
}

fn run_within(kib: u64, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sofabench_within(kib, &args)
}

/// Ended with exit 2 and one line of stderr holding each of `words`.
fn assert_refused(run: &Run, words: &[&str]) {
    assert_eq!(run.code, 2, "{}", shown(run));
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", shown(run));
    for word in words {
        assert!(run.stderr.contains(word), "no {word:?} in {}", shown(run));
    }
}

/// The fixture as node `index`, `body` in place of its first phase's `aborted`.
fn with_aborted(index: u64, body: &str) -> String {
    let mut result = as_node(fixture(), index);
    result["phases"][0]["aborted"] = json!("HERE");
    serde_json::to_string(&result)
        .unwrap()
        .replacen("\"HERE\"", body, 1)
}

#[test]
fn a_result_whose_config_is_huge_is_refused_within_the_allowance() {
    let dir = scratch("hostile_files", "config");
    // 63 MiB of numbers in the settings: before, 4.6 GB to check, 7.5 GB to merge two.
    let numbers = format!("[{}]", vec!["10000000"; 63 * MIB / 9].join(","));
    let write = |name: &str, index: u64| {
        let mut result = as_node(fixture(), index);
        result["config"]["extra"] = json!("HERE");
        let text = serde_json::to_string(&result)
            .unwrap()
            .replacen("\"HERE\"", &numbers, 1);
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let (a, b) = (write("a.json", 0), write("b.json", 1));
    let kib = allowance_kib(&[&a, &b]);
    for args in reading_commands(&a, &b, &dir) {
        let run = run_within(kib, &args);
        assert_refused(
            &run,
            &[
                "a.json:1:",
                "its config (the run's settings) is 6606",
                "reads at most 1024 KiB",
            ],
        );
    }
}

#[test]
fn a_result_of_millions_of_short_values_is_refused_within_the_allowance() {
    let dir = scratch("hostile_files", "short-values");
    // 60 MiB of `"",` (before: 990 MB, 16 times the file) and of `{"node":""},` as the
    // servers' figures of one interval (before: 2.5 GB to check).
    let strings = format!("[{}]", vec!["\"\""; 60 * MIB / 3].join(","));
    let a = dir.join("a.json");
    std::fs::write(&a, with_aborted(0, &strings)).unwrap();
    let mut servers = as_node(fixture(), 1);
    servers["phases"][0]["intervals"][0]["server"] = json!("HERE");
    let objects = format!("[{}]", vec!["{\"node\":\"\"}"; 60 * MIB / 12].join(","));
    let servers = serde_json::to_string(&servers)
        .unwrap()
        .replacen("\"HERE\"", &objects, 1);
    let b = dir.join("b.json");
    std::fs::write(&b, servers).unwrap();
    let kib = allowance_kib(&[&a, &b]);
    for (first, second, name) in [(&a, &b, "a.json: "), (&b, &a, "b.json: ")] {
        for args in reading_commands(first, second, &dir) {
            let run = run_within(kib, &args);
            assert_refused(&run, &[name, "MiB would take", "MiB once read"]);
        }
    }
}

#[test]
fn a_result_of_many_intervals_is_read_within_the_allowance() {
    let dir = scratch("hostile_files", "intervals");
    // 10,000 intervals of the fixture's (6 MiB): before, merging two took 2.6 GB (each
    // moment's histograms were all held decoded at once).
    let histogram = fixture()["phases"][0]["intervals"][0]["operations"][0]["histogram"]
        .as_str()
        .unwrap()
        .to_string();
    let a = write_json(&dir.join("a.json"), &with_intervals(0, 10_000, &histogram));
    let b = write_json(&dir.join("b.json"), &with_intervals(1, 10_000, &histogram));
    let kib = allowance_kib(&[&a, &b]);
    for args in reading_commands(&a, &b, &dir) {
        let run = run_within(kib, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", shown(&run));
    }
}

/// A histogram HdrHistogram allows and sofabench never writes: 5 significant digits from
/// 1 to 2^63 - 1, which its decoder sizes at 50 MiB of counts, holding one value.
fn widest_histogram(digits: u8) -> String {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, i64::MAX as u64, digits).unwrap();
    histogram.record(1_000).unwrap();
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The fixture as node `index`, its first phase with `intervals` intervals, each
/// operation's histogram `histogram`.
fn with_intervals(index: u64, intervals: usize, histogram: &str) -> Value {
    let mut result = as_node(fixture(), index);
    let phase = &mut result["phases"][0];
    let first = phase["intervals"][0].clone();
    let rows: Vec<Value> = (0..intervals)
        .map(|i| {
            let mut row = first.clone();
            row["end_ms"] = json!(first["end_ms"].as_u64().unwrap() + 1_000 * i as u64);
            row["elapsed_seconds"] = json!(1.0 + i as f64);
            for op in row["operations"].as_array_mut().unwrap() {
                op["histogram"] = json!(histogram);
            }
            row
        })
        .collect();
    phase["intervals"] = json!(rows);
    result
}

#[test]
fn histograms_wider_than_sofabench_writes_are_refused_naming_the_file() {
    let dir = scratch("hostile_files", "digits");
    // Before, `report --html` of 400 such intervals took 33-46 s, `merge` of two 66-79 s.
    let wide = widest_histogram(5);
    let a = write_json(&dir.join("a.json"), &with_intervals(0, 400, &wide));
    let b = write_json(&dir.join("b.json"), &with_intervals(1, 400, &wide));
    let kib = allowance_kib(&[&a, &b]);
    for args in reading_commands(&a, &b, &dir) {
        let run = run_within(kib, &args);
        assert_refused(
            &run,
            &[
                "a.json:1:",
                "a histogram has 5 significant digits: sofabench writes 3",
            ],
        );
        assert!(run.took < Duration::from_secs(10), "{}", shown(&run));
    }
}

#[test]
fn histograms_as_wide_as_sofabench_writes_are_read() {
    let dir = scratch("hostile_files", "widest-accepted");
    // 3 digits over 1 to 2^63 - 1: what sofabench itself can write, 432 KiB of counts.
    let wide = widest_histogram(3);
    let a = write_json(&dir.join("a.json"), &with_intervals(0, 2_000, &wide));
    let b = write_json(&dir.join("b.json"), &with_intervals(1, 2_000, &wide));
    let kib = allowance_kib(&[&a, &b]);
    for args in reading_commands(&a, &b, &dir) {
        let run = run_within(kib, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", shown(&run));
    }
}

/// A histogram that claims the widest range sofabench reads, 3 digits from 1 to 2^64 - 1,
/// for a value near its top: its 52 characters make every decode walk 56,320 counts.
fn far_histogram() -> String {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, u64::MAX, 3).unwrap();
    histogram.record(u64::MAX / 2).unwrap();
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The fixture as node `index`, its first phase with `intervals` copies of the second
/// phase's first interval (four operations), each operation's histogram `histogram`.
fn with_crud_intervals(index: u64, intervals: usize, histogram: &str) -> Value {
    let mut result = as_node(fixture(), index);
    let first = result["phases"][1]["intervals"][0].clone();
    let rows: Vec<Value> = (0..intervals)
        .map(|i| {
            let mut row = first.clone();
            row["end_ms"] = json!(first["end_ms"].as_u64().unwrap() + 1_000 * i as u64);
            for op in row["operations"].as_array_mut().unwrap() {
                op["histogram"] = json!(histogram);
            }
            row
        })
        .collect();
    result["phases"][0]["intervals"] = json!(rows);
    result
}

#[test]
fn histograms_claiming_far_more_work_than_their_text_are_refused_naming_the_file() {
    let dir = scratch("hostile_files", "far");
    // 10,000 rows of four such histograms (15 MB): before, `merge` of two took minutes of
    // CPU, and the HTML page about 40 s; their headers claim 172 counts per byte of the
    // file, where sofabench writes 14 to 30.
    let far = far_histogram();
    let a = write_json(&dir.join("a.json"), &with_crud_intervals(0, 10_000, &far));
    let b = write_json(&dir.join("b.json"), &with_crud_intervals(1, 10_000, &far));
    let kib = allowance_kib(&[&a, &b]);
    for args in reading_commands(&a, &b, &dir) {
        let run = run_within(kib, &args);
        assert_refused(
            &run,
            &["a.json: its histograms claim 2580 million counts to walk"],
        );
    }
    // The same rows with the fixture's own histograms are read.
    let own = fixture()["phases"][1]["intervals"][0]["operations"][0]["histogram"]
        .as_str()
        .unwrap()
        .to_string();
    let c = write_json(&dir.join("c.json"), &with_crud_intervals(0, 10_000, &own));
    let d = write_json(&dir.join("d.json"), &with_crud_intervals(1, 10_000, &own));
    let kib = allowance_kib(&[&c, &d]);
    for args in reading_commands(&c, &d, &dir) {
        let run = run_within(kib, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", shown(&run));
    }
}

/// `count` copies of `item`, separated by `separator`, after `head`.
fn repeated(head: &str, item: &str, separator: &str, count: usize) -> String {
    let mut text = String::with_capacity(head.len() + count * (item.len() + 1));
    text.push_str(head);
    for i in 0..count {
        if i > 0 {
            text.push_str(separator);
        }
        text.push_str(item);
    }
    text
}

#[test]
fn config_and_scenario_files_over_1_mib_are_refused_unread() {
    let dir = scratch("hostile_files", "toml-big");
    // 63 MiB of empty tables: before, 4.4 GB of memory before "unknown key".
    let tables = dir.join("tables.toml");
    std::fs::write(&tables, repeated("x = [", "{}", ",", 63 * MIB / 3) + "]\n").unwrap();
    let kib = allowance_kib(&[&tables]);
    for flag in ["--config", "--scenario"] {
        let args = ["run".to_string(), format!("{flag}={}", text(&tables))];
        let run = run_within(kib, &args);
        assert_refused(&run, &["tables.toml: ", "is larger than 1 MiB"]);
    }
}

#[test]
fn config_and_scenario_files_under_1_mib_are_read_within_the_allowance() {
    let dir = scratch("hostile_files", "toml-small");
    let limit = MIB - 100;
    let cases = [
        (
            "tables.toml",
            repeated("x = [", "{}", ",", limit / 3) + "]\n",
        ),
        (
            "arrays.json",
            repeated("{\"x\": [", "[]", ",", limit / 3) + "]}",
        ),
        ("phases.toml", repeated("", "[[phase]]\n", "", limit / 10)),
    ];
    for (name, body) in cases {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        let kib = allowance_kib(&[&path]);
        for flag in ["--config", "--scenario"] {
            if name.ends_with(".json") && flag == "--scenario" {
                continue; // a scenario is TOML only
            }
            let args = ["run".to_string(), format!("{flag}={}", text(&path))];
            let run = run_within(kib, &args);
            // Refused for what it says, not for its size or the memory it took.
            assert_eq!(run.code, 2, "{}", shown(&run));
            assert!(run.stderr.contains(name), "{}", shown(&run));
            assert!(!run.stderr.contains("larger than"), "{}", shown(&run));
        }
    }
}
