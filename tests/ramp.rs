//! A phase whose rate ramps over its duration, against PouchDB Server as users run it (on
//! disk, with an admin): the intervals' target rates follow the ramp, what the server
//! achieved follows them, and the database holds what the report says was created.

mod common;

use common::*;
use serde_json::Value;

/// The ramp of the test's scenario: from 20 to 120 operations per second over 6 s.
const FROM: f64 = 20.0;
const TO: f64 = 120.0;
const SECONDS: f64 = 6.0;

/// The ramp's mean rate between two moments of the phase (as the schedule integrates it).
fn mean_rate(from_s: f64, to_s: f64) -> f64 {
    let due = |t: f64| {
        let t = t.clamp(0.0, SECONDS);
        FROM * t + (TO - FROM) * t * t / (2.0 * SECONDS)
    };
    (due(to_s) - due(from_s)) / (to_s - from_s)
}

/// Whether the report warns that operations started late (and names why).
fn fell_behind_warned(stdout: &str) -> bool {
    stdout
        .lines()
        .any(|l| l.contains("WARNING:") && l.contains("operations started late"))
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap()
}

const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
operations = 1
batch_size = 25
connections = 2

[[phase]]
name = "ramp"
mix = { create = 1, read = 2 }
connections = 4
duration = "6s"
rate = { from = 20, to = 120 }
"#;

#[test]
fn a_ramping_phase_aims_and_achieves_along_its_ramp_and_its_documents_land() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("ramp.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let json = dir.path().join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=ramp",
        "--quiet",
        "--seed=5",
        &format!("--scenario={}", scenario.display()),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "phase ramp: 4 connections, 6s (create 1, read 2) ramping from 20 to 120 ops/s"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("rate: ramp from 20.0/s to 120.0/s (mean target"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("ramp, stretch by stretch"),
        "{}",
        run.stdout
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let phase = &result["phases"][1];
    assert_eq!(phase["name"], "ramp");
    assert_eq!(
        phase["ramp"],
        serde_json::json!({"from": 20.0, "to": 120.0})
    );
    // Over the whole ramp: its mean, 70/s, and 420 operations due.
    let wall = number(&phase["wall_seconds"]);
    let target = number(&phase["target_rate"]);
    assert!(
        (target - mean_rate(0.0, wall.min(SECONDS))).abs() < 0.5,
        "{target}"
    );
    let succeeded: u64 = phase["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["succeeded"].as_u64().unwrap())
        .sum();
    // Never more than the ramp makes due. All of it when every operation started on
    // time; on a busy machine the server falls behind, and the run says so.
    assert!(succeeded <= 421, "{succeeded} of 420 due");
    let kept_up = phase["late"] == 0;
    if kept_up {
        assert!(succeeded >= 400, "{succeeded} of 420 due");
    } else {
        assert!(fell_behind_warned(&run.stdout), "{}", run.stdout);
    }

    // Interval by interval: the target is the ramp's mean over the interval, and what
    // the server answered keeps up with it where operations started on time (an
    // operation counts where it ends, so a little of each interval's work lands in the
    // next).
    let intervals = phase["intervals"].as_array().unwrap();
    let whole: Vec<&Value> = intervals
        .iter()
        .filter(|i| number(&i["length_seconds"]) > 0.9)
        .collect();
    assert!(whole.len() >= 5, "{intervals:?}");
    let mut targets = Vec::new();
    let mut achieved = Vec::new();
    for interval in &whole {
        let end = number(&interval["elapsed_seconds"]);
        let length = number(&interval["length_seconds"]);
        let target = number(&interval["target_rate"]);
        let expected = mean_rate(end - length, end);
        assert!(
            (target - expected).abs() < 0.01 * expected,
            "{target} vs {expected}"
        );
        let done: u64 = interval["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|op| op["succeeded"].as_u64().unwrap())
            .sum();
        let rate = done as f64 / length;
        if kept_up {
            assert!(
                (rate - target).abs() <= 0.25 * target + 3.0,
                "achieved {rate}/s in an interval aiming at {target}/s: {interval}"
            );
        } else {
            assert!(
                rate <= 1.25 * target + 3.0,
                "achieved {rate}/s in an interval aiming at {target}/s: {interval}"
            );
        }
        targets.push(target);
        achieved.push(rate);
    }
    assert!(targets.windows(2).all(|w| w[1] > w[0]), "{targets:?}");
    let (first, last) = (achieved[0], achieved[achieved.len() - 1]);
    if kept_up {
        assert!(last > 2.5 * first, "{achieved:?}");
    }

    // The database holds the bulk insert's documents and every create the report counts.
    let creates = phase["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["operation"] == "create")
        .unwrap();
    assert_eq!(creates["failed"], 0);
    let created = creates["succeeded"].as_u64().unwrap();
    if kept_up {
        assert!(created > 100, "{created}");
    }
    assert_eq!(doc_count(&server.admin_db("ramp")), 50 + created);
}

#[test]
fn the_rate_flag_ramps_the_crud_step_and_the_result_records_it() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=flag",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=20",
        "--rate=0..60",
        "--duration=2s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("rate 0..60/s (--rate)"),
        "{}",
        run.stdout
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        result["config"]["rate"],
        serde_json::json!({"from": 0.0, "to": 60.0})
    );
    let crud = &result["phases"][1];
    assert_eq!(crud["ramp"], serde_json::json!({"from": 0.0, "to": 60.0}));
    let bulk = &result["phases"][0];
    assert!(
        bulk.get("ramp").is_none() && bulk["target_rate"].is_null(),
        "{bulk}"
    );
    // From 0: 15 t² operations due by t, 60 in the 2 s: all of them when every one
    // started on time, never more; on a busy machine the run says it fell behind.
    let done: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["succeeded"].as_u64().unwrap() + op["failed"].as_u64().unwrap())
        .sum();
    assert!(done <= 61, "{done}");
    if crud["late"] == 0 {
        assert!(done >= 57, "{done}");
    } else {
        assert!(fell_behind_warned(&run.stdout), "{}", run.stdout);
    }
}

#[test]
fn a_ramp_without_a_duration_is_refused_before_anything_is_sent() {
    // Nothing listens there: the problem is found first.
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--rate=10..100",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "phase \"crud\": rate: a ramp (10..100) runs over the phase's duration; give the phase a duration"
        ),
        "{}",
        run.stderr
    );
    let run = sofabench(&["run", "--rate=100..1e9", "--duration=5s"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--rate 100..1000000000"),
        "{}",
        run.stderr
    );
}
