//! Late starts under `--rate` are put down to the cause that was measured: here a server
//! that stopped answering, which the report and the live line must not blame on the
//! client or its connections.

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;

#[test]
fn a_stalled_server_is_named_as_the_cause_not_the_connections() {
    let server = DelayServer::start(Duration::from_millis(1));
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=stall",
        "--num_connections=4",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--rate=100",
        "--duration=7s",
        "--read_weight=1",
        "--create_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    // Longer than two live intervals, so that at least one holds no answer at all.
    server.stall(Duration::from_secs(3));
    let run = finish(child);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let warning = run
        .stdout
        .lines()
        .find(|l| l.contains("WARNING") && l.contains("started late"))
        .unwrap_or_else(|| panic!("no late-start warning:\n{}", run.stdout));
    assert!(
        warning.contains("the server stopped answering from")
            && warning.contains("the server stalled, not the client"),
        "{warning}"
    );
    // The header's settings lines name the flags each phase's values came from; the
    // advice to add connections would name the flag elsewhere.
    let advice = |l: &&str| !l.trim_start().starts_with("settings:");
    assert!(
        !run.stdout.contains("every connection was still waiting")
            && !run
                .stdout
                .lines()
                .filter(advice)
                .any(|l| l.contains("--num_connections")),
        "the stall is blamed on the connections:\n{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("STALLED: no answer while operations were in flight (4 still are)"),
        "{}",
        run.stderr
    );
    let behind: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("BEHIND"))
        .collect();
    assert!(!behind.is_empty(), "{}", run.stderr);
    assert!(
        behind.iter().all(|l| l.contains("the server stalled")),
        "{behind:#?}"
    );
}
