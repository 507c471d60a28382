//! A server that limits its rate answers 429 with `Retry-After`: without `--retry-429`
//! each is a failure of its own kind (`rate_limited`), never sent again; with it, the
//! operation goes out again after the wait the server asked for. Either way every request
//! the server saw is in the report, and the 429s show as such in every result format.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::limiting_server::LimitingServer;
use common::*;
use sofabench::results::{OperationResult, RunResult};

/// Requests to documents the server turns away first.
const TURNED_AWAY: u64 = 6;
/// CRUD operations of the run: two connections, ten each.
const OPERATIONS: u64 = 20;

/// A run of reads and updates against `server`, writing every result file into a folder
/// of its own (`name`).
fn run(server: &LimitingServer, name: &str, extra: &[&str]) -> (Run, PathBuf) {
    let out = scratch("rate_limit", name).join("out");
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={}", server.url),
        "--database_name=limited".to_string(),
        "--num_connections=2".to_string(),
        "--num_bulk_insert_operations=1".to_string(),
        "--num_documents_per_bulk_insert=10".to_string(),
        format!("--num_crud_operations={}", OPERATIONS / 2),
        "--create_weight=0".to_string(),
        "--read_weight=1".to_string(),
        "--update_weight=1".to_string(),
        "--delete_weight=0".to_string(),
        "--seed=3".to_string(),
        "--interval=250ms".to_string(),
        format!("--out={}", out.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (sofabench(&args), out)
}

fn shown(run: &Run) -> String {
    format!("exit {}\n{}\n{}", run.code, run.stdout, run.stderr)
}

/// The CRUD phase's operations in the result file.
fn crud(out: &Path) -> Vec<OperationResult> {
    let result = RunResult::read(&out.join("result.json")).unwrap();
    let phase = result
        .phases
        .into_iter()
        .find(|p| p.name == "crud")
        .unwrap();
    phase.operations
}

/// `field` of every CRUD operation, added up.
fn total(operations: &[OperationResult], field: impl Fn(&OperationResult) -> u64) -> u64 {
    operations.iter().map(field).sum()
}

/// A column of the CSV's CRUD rows, added up.
fn csv_total(out: &Path, column: &str) -> u64 {
    let mut reader = csv::Reader::from_path(out.join("result.csv")).unwrap();
    let at = reader.headers().unwrap().iter().position(|h| h == column);
    let at = at.unwrap_or_else(|| panic!("no column {column}"));
    reader
        .records()
        .map(Result::unwrap)
        .filter(|row| &row[0] == "crud")
        .map(|row| row[at].parse::<u64>().unwrap())
        .sum()
}

/// Every answer the CRUD phase counted, by status.
fn answers(operations: &[OperationResult], status: Option<&str>) -> u64 {
    operations
        .iter()
        .flat_map(|op| &op.statuses)
        .filter(|(s, _)| status.is_none_or(|wanted| wanted == s.as_str()))
        .map(|(_, n)| n)
        .sum()
}

#[test]
fn without_retry_429_each_429_fails_as_rate_limited_and_is_not_sent_again() {
    let server = LimitingServer::start(TURNED_AWAY, "1");
    // At a rate, so that the phase lasts long enough for a live line.
    let (run, out) = run(&server, "off", &["--rate=40"]);
    assert_eq!(run.code, 1, "{}", shown(&run));
    // The server saw each operation once: nothing was sent again.
    assert_eq!(server.document_requests(), OPERATIONS);
    let operations = crud(&out);
    assert_eq!(answers(&operations, None), server.document_requests());
    assert_eq!(answers(&operations, Some("429")), TURNED_AWAY);
    let rate_limited = |op: &OperationResult| op.failures.get("rate_limited").copied();
    assert_eq!(
        total(&operations, |op| rate_limited(op).unwrap_or(0)),
        TURNED_AWAY
    );
    assert_eq!(total(&operations, |op| op.failed), TURNED_AWAY);
    assert_eq!(
        total(&operations, |op| op.succeeded),
        OPERATIONS - TURNED_AWAY
    );
    assert_eq!(total(&operations, |op| op.retried_429), 0);
    // Its own kind in the report, with what the server asked for.
    assert!(
        run.stdout.contains("rate_limited (429) x"),
        "{}",
        shown(&run)
    );
    assert!(
        run.stdout
            .contains("e.g. rate_limited (429): Retry-After: 1 · {\"error\":\"too_many_requests\""),
        "{}",
        shown(&run)
    );
    assert!(!run.stdout.contains("retried "), "{}", shown(&run));
    assert_eq!(csv_total(&out, "rate_limited"), TURNED_AWAY);
    assert_eq!(csv_total(&out, "retried_429"), 0);
    let page = std::fs::read_to_string(out.join("result.html")).unwrap();
    assert!(page.contains("rate_limited (429) ×"));
    assert!(page.contains("data-chart=\"failures\""));
    assert!(run.stderr.contains(" 429="), "live lines: {}", run.stderr);
}

#[test]
fn with_retry_429_each_operation_goes_out_again_after_the_wait_asked_for() {
    let server = LimitingServer::start(TURNED_AWAY, "1");
    let (run, out) = run(&server, "on", &["--retry-429"]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    // Every operation succeeded, each 429 cost one more request.
    assert_eq!(server.document_requests(), OPERATIONS + TURNED_AWAY);
    let operations = crud(&out);
    assert_eq!(answers(&operations, None), server.document_requests());
    assert_eq!(answers(&operations, Some("429")), TURNED_AWAY);
    assert_eq!(total(&operations, |op| op.succeeded), OPERATIONS);
    assert_eq!(total(&operations, |op| op.failed), 0);
    assert_eq!(total(&operations, |op| op.retried_429), TURNED_AWAY);
    // The client waited the second the server asked for, each time, and counted it.
    let waits = server.waits_after_429();
    assert_eq!(waits.len() as u64, TURNED_AWAY);
    assert!(
        waits.iter().all(|w| *w >= Duration::from_millis(990)),
        "{waits:?}"
    );
    let waited = total(&operations, |op| op.retry_429_wait_ns);
    let asked = TURNED_AWAY * 1_000_000_000;
    assert!(
        (asked - asked / 100..asked * 2).contains(&waited),
        "{waited} ns waited"
    );
    assert!(
        run.stdout
            .contains("429 Too Many Requests: the operation is sent again, up to 10 times")
    );
    assert!(
        run.stdout.contains(" after a 429 (rate limited); "),
        "{}",
        shown(&run)
    );
    assert!(
        run.stdout
            .contains("e.g. rate_limited (429): Retry-After: 1 · ")
    );
    assert_eq!(csv_total(&out, "retried_429"), TURNED_AWAY);
    assert_eq!(csv_total(&out, "rate_limited"), 0);
    let page = std::fs::read_to_string(out.join("result.html")).unwrap();
    assert!(page.contains("Rate limited (429 Too Many Requests)"));
    assert!(
        run.stderr.contains(" retried="),
        "live lines: {}",
        run.stderr
    );
    let result = RunResult::read(&out.join("result.json")).unwrap();
    assert_eq!(result.config["retry_429"], serde_json::json!(10));
    // Intervals that ended during the waits saw the connections waiting, not in flight.
    let crud = result.phases.iter().find(|p| p.name == "crud").unwrap();
    assert!(
        crud.intervals.iter().any(|i| i.waiting_after_429 > 0),
        "{:?}",
        crud.intervals
    );
}
