//! Load models, bounds, timeouts and live output, against a test-only server with known
//! delays (and two PouchDB Servers for several nodes).

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;

fn run_against(url: &str, extra: &[&str]) -> Run {
    let address = format!("--database_address={url}");
    let mut args = vec![
        "run",
        address.as_str(),
        "--database_name=load",
        "--num_connections=4",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
    ];
    args.extend_from_slice(extra);
    sofabench(&args)
}

fn delivered_rate(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains("delivered"))
        .expect("a rate line");
    let after = line.split("delivered ").nth(1).unwrap();
    after.split('/').next().unwrap().parse().unwrap()
}

#[test]
fn a_stall_shows_in_response_time_not_in_service_time() {
    let server = DelayServer::start(Duration::from_millis(1));
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=stall",
        "--quiet",
        "--num_connections=8",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--rate=200",
        "--duration=10s",
        "--read_weight=1",
        "--create_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
    ]);
    std::thread::sleep(Duration::from_secs(5));
    server.stall(Duration::from_secs(1));
    let run = finish(child);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let response = latency_row(&run.stdout, "response(ms)", "read");
    let service = latency_row(&run.stdout, "latency(ms)", "read");
    assert!(
        response[5] > 300.0,
        "response p99 {} ms should show the 1 s stall:\n{}",
        response[5],
        run.stdout
    );
    assert!(response[7] > 900.0, "response max {} ms", response[7]);
    // The service time leaves the stall out: its p99 stays far below the stall's 1 s (a
    // busy machine adds tens of milliseconds to a 1 ms server, not hundreds).
    assert!(
        service[5] < 300.0,
        "service p99 {} ms should not show the stall:\n{}",
        service[5],
        run.stdout
    );
    assert!(run.stdout.contains("started late"), "{}", run.stdout);
}

#[test]
fn the_delivered_rate_is_the_target_when_the_server_keeps_up() {
    let server = DelayServer::start(Duration::from_millis(1));
    let run = run_against(&server.url, &["--quiet", "--rate=200", "--duration=5s"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let delivered = delivered_rate(&run.stdout);
    assert!(
        (delivered - 200.0).abs() / 200.0 < 0.02,
        "delivered {delivered}/s:\n{}",
        run.stdout
    );
    let total: u64 = ["create", "read", "update", "delete"]
        .iter()
        .map(|op| run.count(op))
        .sum();
    assert!(
        (980..=1010).contains(&total),
        "{total} operations in 5 s at 200/s"
    );
}

#[test]
fn timeouts_are_counted_and_the_run_goes_on() {
    let server = DelayServer::start(Duration::from_millis(1));
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=timeouts",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--duration=3s",
        "--timeout=200ms",
        "--read_weight=1",
        "--create_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    server.stall(Duration::from_millis(600));
    let run = finish(child);
    assert_eq!(
        run.code, 1,
        "failed operations make the exit code 1:\n{}\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stdout.contains("timeout x"), "{}", run.stdout);
    let timeouts: u64 = run
        .stdout
        .lines()
        .filter(|l| l.contains("failed read"))
        .flat_map(|l| l.split("timeout x").nth(1))
        .map(|n| n.split(',').next().unwrap().trim().parse::<u64>().unwrap())
        .sum();
    assert!(
        (2..=10).contains(&timeouts),
        "two connections time out a few times: {timeouts}\n{}",
        run.stdout
    );
    // After the stall the run went on with fresh connections.
    assert!(run.count("read") > 500, "{}", run.stdout);
}

#[test]
fn a_duration_ends_the_step_on_time() {
    let server = DelayServer::start(Duration::from_millis(1));
    let run = run_against(&server.url, &["--quiet", "--duration=2s"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let crud_time: f64 = run.fields("timeTaken")[1]
        .trim_end_matches(" secs")
        .parse()
        .unwrap();
    assert!(
        (2.0..3.0).contains(&crud_time),
        "CRUD step took {crud_time} s"
    );
}

#[test]
fn a_count_and_a_duration_end_at_whichever_comes_first() {
    let server = DelayServer::start(Duration::from_millis(1));
    let run = run_against(
        &server.url,
        &["--quiet", "--duration=30s", "--total-operations=101"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let total: u64 = ["create", "read", "update", "delete"]
        .iter()
        .map(|op| run.count(op))
        .sum();
    assert_eq!(total, 101);
    assert!(run.took < Duration::from_secs(10));
}

#[test]
fn ctrl_c_prints_the_interrupted_summary() {
    let server = DelayServer::start(Duration::from_millis(1));
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=int",
        "--quiet",
        "--num_connections=2",
        // A small bulk insert step, so that the CRUD step runs when Ctrl-C comes even on a
        // busy machine (20,000 documents took more than the 1.5 s there).
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--duration=60s",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = finish(child);
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("CRUD BENCHMARK RESULTS") && run.stdout.contains("INTERRUPTED"),
        "{}",
        run.stdout
    );
    assert!(run.count("read") + run.count("update") > 0);
    assert!(run.took < Duration::from_secs(5), "{:?}", run.took);
}

/// The grace after Ctrl-C is for requests still in flight: once every connection has
/// stopped, the run ends, without waiting the grace out.
#[test]
fn ctrl_c_ends_as_soon_as_the_requests_in_flight_are_answered() {
    let server = DelayServer::start(Duration::from_millis(1));
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=prompt",
        "--quiet",
        "--num_connections=4",
        "--duration=60s",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = finish(child);
    let ended = signalled.elapsed();
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("INTERRUPTED"), "{}", run.stdout);
    // Answers take 1 ms: the work stops at once, and the report follows. The grace is 1 s.
    assert!(
        ended < Duration::from_millis(1000),
        "ended {ended:?} after Ctrl-C"
    );
}

#[test]
fn live_lines_come_once_per_interval() {
    let server = DelayServer::start(Duration::from_millis(1));
    let run = run_against(&server.url, &["--duration=2.5s", "--interval=500ms"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("read(") && l.contains("/s p50="))
        .collect();
    assert!(
        (4..=7).contains(&lines.len()),
        "{} lines:\n{}",
        lines.len(),
        run.stderr
    );
    assert!(
        lines
            .iter()
            .all(|l| l.contains("err=0 to=0") && l.contains("cpu=")),
        "{}",
        run.stderr
    );
}

#[test]
fn connections_are_spread_over_several_nodes() {
    let first = PouchServer::start();
    let second = PouchServer::start();
    // Two independent servers stand in for the nodes of a cluster: the database must exist on both.
    for server in [&first, &second] {
        assert_eq!(request("PUT", &server.db("spread"), None).0, 201);
    }
    let run = sofabench(&[
        "run",
        &format!("--database_address={},{}", first.url, second.url),
        "--database_name=spread",
        "--quiet",
        "--num_connections=4",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=0",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(doc_count(&first.db("spread")), 20);
    assert_eq!(doc_count(&second.db("spread")), 20);
}
