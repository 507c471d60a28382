//! How long a run is, against PouchDB Server: `--duration` given to a built-in scenario
//! ends each counted phase at its count or the duration, whichever comes first (never
//! later than the count alone), a phase without a count runs for the duration, and the
//! header says what is known of the run's length before it starts.
//!
//! Lengths are judged by the operations each phase did, as the result file records them,
//! and by the least a phase cut at its duration lasted: never by how fast the machine was.

mod common;

use common::*;
use sofabench::results::{PhaseResult, RunResult};

/// Runs a built-in scenario on 2 connections with batches of 10 documents; gives the
/// run and its result.
fn run(server: &PouchServer, db: &str, extra: &[&str]) -> (Run, RunResult) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={}", server.admin_url),
        format!("--database_name={db}"),
        "--seed=5".to_string(),
        "--quiet".to_string(),
        "--num_connections=2".to_string(),
        "--num_documents_per_bulk_insert=10".to_string(),
        format!("--json={}", json.display()),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = sofabench(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = RunResult::read(&json).unwrap();
    (run, result)
}

/// Every operation the phase did, succeeded or failed.
fn done(phase: &PhaseResult) -> u64 {
    phase
        .operations
        .iter()
        .map(|o| o.succeeded + o.failed)
        .sum()
}

/// The header's `length:` line.
fn length_line(run: &Run) -> &str {
    run.stdout
        .lines()
        .find(|l| l.starts_with("  length: "))
        .unwrap_or_else(|| panic!("no length line:\n{}", run.stdout))
}

/// Each phase did at most its count (so it ended no later than without `--duration`),
/// and either all of it or for the whole duration.
fn ended_by_count_or_duration(phase: &PhaseResult, count: u64, seconds: f64) {
    let done = done(phase);
    assert!(done <= count, "{}: {done} of {count}", phase.name);
    assert!(
        done == count || phase.wall_seconds >= seconds,
        "{}: {done} of {count} in {} s, cut before {seconds} s",
        phase.name,
        phase.wall_seconds
    );
}

#[test]
fn a_duration_cuts_mango_s_phases_at_their_counts_or_sooner() {
    let server = PouchServer::secured(Storage::Disk);
    let (run, result) = run(&server, "mango", &["--scenario=mango", "--duration=2s"]);
    let counts = [20, 1_000, 1_000, 1_000, 1_000];
    assert_eq!(result.phases.len(), counts.len());
    for (phase, count) in result.phases.iter().zip(counts) {
        ended_by_count_or_duration(phase, count, 2.0);
    }
    assert_eq!(
        length_line(&run),
        "  length: at most 10s (5 phases of counts, each ending at its duration if sooner: at most 10s; plus setup, index builds, waits and the operations in flight at a phase's end)"
    );
}

#[test]
fn a_long_duration_leaves_each_count_as_it_was() {
    // 20 bulk requests a phase: done long before 60 s, as they are without it.
    let server = PouchServer::secured(Storage::Disk);
    let (plain_run, plain) = run(&server, "plain", &["--scenario=id-scheme"]);
    let (timed_run, timed) = run(
        &server,
        "timed",
        &["--scenario=id-scheme", "--duration=60s"],
    );
    assert_eq!(plain.phases.len(), 3);
    assert_eq!(timed.phases.len(), 3);
    for (without, with) in plain.phases.iter().zip(&timed.phases) {
        assert_eq!(done(without), 20, "{}", without.name);
        ended_by_count_or_duration(with, done(without), 60.0);
    }
    assert_eq!(
        length_line(&plain_run),
        "  length: unknown, 60 operations at the server's pace (3 phases of counts with no duration or rate; plus setup, index builds, waits and the operations in flight at a phase's end)"
    );
    assert_eq!(
        length_line(&timed_run),
        "  length: at most 3m (3 phases of counts, each ending at its duration if sooner: at most 3m; plus setup, index builds, waits and the operations in flight at a phase's end)"
    );
}

#[test]
fn a_phase_without_a_count_runs_for_the_duration() {
    // soak: one bulk request per connection, then 20 operations a second for 2 s.
    let server = PouchServer::secured(Storage::Disk);
    let (run, result) = run(
        &server,
        "soak",
        &["--scenario=soak", "--duration=2s", "--rate=20"],
    );
    let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["soak_load", "soak"]);
    ended_by_count_or_duration(&result.phases[0], 2, 2.0);
    // Under a rate a connection ends when its next slot lies past the deadline: the
    // phase lasts at least until its last slot, 1.95 s (40 operations due in 2 s).
    let soak = &result.phases[1];
    assert!(soak.wall_seconds >= 1.9, "{} s", soak.wall_seconds);
    assert!((1..=40).contains(&done(soak)), "{}", done(soak));
    assert_eq!(
        length_line(&run),
        "  length: about 2.1s (1 phase by duration alone: 2s; 1 phase of counts at a --rate: 0.1s if the server keeps up; plus setup, index builds, waits and the operations in flight at a phase's end)"
    );
}
