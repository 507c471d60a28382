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
        .find(|l| l.contains("WARNING") && l.contains("the server stopped answering from"))
        .unwrap_or_else(|| panic!("no warning naming the stall:\n{}", run.stdout));
    assert!(
        warning.contains("the server stalled, not the client"),
        "{warning}"
    );
    assert!(
        run.stderr
            .contains("STALLED: no answer while operations were in flight (4 still are)"),
        "{}",
        run.stderr
    );

    // Live line by live line: the late starts of the stalled intervals and of those
    // catching up after them are put down to the stall; before it, on a busy machine,
    // other processes may be named, never the stall.
    let live = live_causes(&run.stderr);
    assert!(live.iter().any(|l| l.stalled), "{}", run.stderr);
    let mut catching_up = false;
    let mut stall_late = 0;
    for (i, line) in live.iter().enumerate() {
        let after = i > 0 && live[i - 1].stalled;
        catching_up = line.stalled || after || (catching_up && line.late.is_some());
        let Some((count, cause)) = line.late else {
            continue;
        };
        assert!(CAUSES.iter().any(|(c, _)| *c == cause), "{cause}");
        if catching_up {
            assert_eq!(cause, STALL, "line {i} of {live:#?}");
            stall_late += count;
        } else {
            assert_ne!(cause, STALL, "line {i} of {live:#?}");
        }
    }
    // Operations due while the server did not answer start late once it answers again.
    assert!(stall_late > 0, "{live:#?}");

    // The report puts down to each cause what the live lines did: none of the stall's
    // late starts goes to the connections.
    for (live_cause, report_cause) in CAUSES {
        let in_live: u64 = live
            .iter()
            .filter_map(|l| l.late)
            .filter(|(_, cause)| *cause == live_cause)
            .map(|(count, _)| count)
            .sum();
        let in_report: u64 = run
            .stdout
            .lines()
            .filter_map(|l| reported_late(l, report_cause))
            .sum();
        assert_eq!(in_live, in_report, "{live_cause}\n{}", run.stdout);
    }
    // The header's settings lines name the flags each phase's values came from; the
    // advice to add connections, given only when late starts were put down to them,
    // would name the flag elsewhere.
    let blamed_connections = live
        .iter()
        .any(|l| l.late.is_some_and(|(_, c)| c == CONNECTIONS));
    let advice = |l: &&str| !l.trim_start().starts_with("settings:");
    assert_eq!(
        run.stdout
            .lines()
            .filter(advice)
            .any(|l| l.contains("--num_connections")),
        blamed_connections,
        "{}",
        run.stdout
    );
}

const STALL: &str = "the server stalled, not the client";
const CONNECTIONS: &str = "every connection was waiting for an answer; add connections";

/// Each cause as a live line gives it, and as the report's warning does.
const CAUSES: [(&str, &str); 5] = [
    (STALL, "because the server stopped answering"),
    (
        "the server limits its rate (429), not the client",
        "while the server turned requests away with 429",
    ),
    (
        "the client's CPU is saturated; lower --rate",
        "while the client's CPU was saturated",
    ),
    (
        "other processes keep the machine's CPU busy",
        "while other processes kept the machine's CPU busy",
    ),
    (
        CONNECTIONS,
        "because every connection was still waiting for an answer",
    ),
];

/// What a live line says of its interval: stalled, and its late starts with their cause.
#[derive(Debug)]
struct Live<'a> {
    stalled: bool,
    late: Option<(u64, &'a str)>,
}

/// The live lines of the run (one per interval, `elapsed  operation(...) cpu=...`).
fn live_causes(stderr: &str) -> Vec<Live<'_>> {
    stderr
        .lines()
        .filter(|l| l.contains(" cpu="))
        .map(|l| Live {
            stalled: l.contains(" STALLED: "),
            late: l.split_once(" BEHIND: ").map(|(_, behind)| {
                let (count, rest) = behind.split_once(" started late").unwrap();
                let (_, cause) = rest.split_once(": ").unwrap();
                let cause = cause.split(" SATURATED: ").next().unwrap();
                (count.parse().unwrap(), cause)
            }),
        })
        .collect()
}

/// The late starts a report's warning line puts down to `cause`.
fn reported_late(line: &str, cause: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix("WARNING: ")?;
    let (count, rest) = rest.split_once(" operations started late ")?;
    rest.starts_with(cause)
        .then(|| count.replace(',', "").parse().unwrap())
}
