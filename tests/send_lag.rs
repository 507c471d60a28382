//! The open model sends on time: against a server that answers in 2 ms, the response time
//! (from the scheduled start) is the service time plus a lag far below tokio's 1 ms timer.
//! A file of its own so that cargo runs it alone: other tests beside it would share the
//! two cores and show up in the lag. `make bench` measures the tight bound (0.1 ms p99).

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;
use serde_json::Value;

/// What one run measured, milliseconds.
struct Figures {
    /// Response p50 − service p50 of the reads.
    gap: f64,
    lag_p50: f64,
    lag_p90: f64,
    lag_p99: f64,
    /// Operations whose connection was free at their slot, of the 600 due.
    count: u64,
}

impl Figures {
    /// Bounds loose enough for a shared CI machine, still far below tokio's timer, whose
    /// lag made the gap and the lag's p50 0.9–1.5 ms. The p99 is not held here: other
    /// processes' bursts on two shared cores reached 170 ms in it; `make bench` measures
    /// it on a quiet machine.
    /// A run where other processes kept connections busy past their slots (fewer than
    /// 500 of 600 free at theirs) measured the machine more than the tool.
    fn on_time(&self) -> bool {
        self.count >= 500 && self.gap < 0.5 && self.lag_p50 < 0.3 && self.lag_p90 < 1.0
    }
}

fn one_run(server: &DelayServer) -> (Figures, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = format!("--database_address={}", server.url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=lag",
        "--quiet",
        "--num_connections=4",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--read_weight=1",
        "--create_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
        "--rate=200",
        "--duration=3s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let crud = &result["phases"][1];
    let read = &crud["operations"][0];
    assert_eq!(read["operation"], "read");
    let ms = |v: &Value| v.as_f64().unwrap();
    let lag = &crud["send_lag"];
    let count = lag["count"].as_u64().unwrap();
    let started = read["succeeded"].as_u64().unwrap() + read["failed"].as_u64().unwrap();
    assert!(count > 0 && count <= started, "{lag}, {started} started");
    let figures = Figures {
        gap: ms(&read["response"]["p50_ms"]) - ms(&read["latency"]["p50_ms"]),
        lag_p50: ms(&lag["p50_ms"]),
        lag_p90: ms(&lag["p90_ms"]),
        lag_p99: ms(&lag["p99_ms"]),
        count,
    };
    (figures, run.stdout)
}

#[test]
fn the_open_model_sends_on_time_against_a_2_ms_server() {
    let server = DelayServer::start(Duration::from_millis(2));
    // tokio's timer made the gap 1.3–1.5 ms. Other processes busy on the same two cores
    // add their own delays: the best of three runs is the one that measures the tool.
    let mut runs = Vec::new();
    for _ in 0..3 {
        let (figures, stdout) = one_run(&server);
        assert!(
            stdout
                .contains("send lag (scheduled to actual start, connection free at its slot): p50"),
            "{stdout}"
        );
        if figures.on_time() {
            return;
        }
        runs.push((figures, stdout));
    }
    let figures: Vec<String> = runs
        .iter()
        .map(|(f, _)| {
            format!(
                "{} lagged, gap {:.3}, lag p50 {:.3}, p90 {:.3}, p99 {:.3}",
                f.count, f.gap, f.lag_p50, f.lag_p90, f.lag_p99
            )
        })
        .collect();
    panic!(
        "{figures:?} ms: no run had 500 lagged, gap < 0.5, lag p50 < 0.3 and p90 < 1:\n{}",
        runs[0].1
    );
}
