//! Latency accuracy against a test-only server with a known delay. A file of its own so
//! that cargo runs it alone: other tests running beside it would share the two cores and
//! show up in the figures.

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;

#[test]
fn a_fixed_delay_is_measured_as_that_delay() {
    let server = DelayServer::start(Duration::from_millis(5));
    let address = format!("--database_address={}", server.url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=accuracy",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--quiet",
        "--num_connections=1",
        "--num_crud_operations=150",
        "--read_weight=1",
        "--create_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
    ]);
    // The server answers after exactly 5 ms; what the report adds is the client's own
    // cost, and the loopback's.
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let read = latency_row(&run.stdout, "latency(ms)", "read");
    let p50 = read[3];
    assert!(
        (4.75..=5.25).contains(&p50),
        "p50 {p50} ms is not within 5% of 5 ms:\n{}",
        run.stdout
    );
}
