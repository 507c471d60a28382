//! Functional tests of the units in a report: a bulk insert counts documents where users
//! count documents (documents/s, failed documents) with its requests beside them, and
//! every phase starts with what it achieved over its wall-clock time.

mod common;

use std::time::Duration;

use common::delay_server::DelayServer;
use common::*;
use sofabench::results::{OperationResult, PhaseResult, RunResult};

/// A run of `connections` × `bulks` bulk inserts of `per_bulk` documents and `crud`
/// CRUD operations per connection against `address`, into database `db`.
fn run(address: &str, db: &str, shape: [u64; 4], extra: &[&str]) -> Run {
    let [connections, bulks, per_bulk, crud] = shape;
    let mut args: Vec<String> = vec![
        "run".into(),
        "--quiet".into(),
        // The achieved tables are part of the detail.
        "--verbose".into(),
        format!("--database_address={address}"),
        format!("--database_name={db}"),
        format!("--num_connections={connections}"),
        format!("--num_bulk_insert_operations={bulks}"),
        format!("--num_documents_per_bulk_insert={per_bulk}"),
        format!("--num_crud_operations={crud}"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    sofabench(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The cells after the label of the `achieved` table's row `label` in the block titled
/// `title`: [per sec, succeeded, failed, error rate].
fn achieved(stdout: &str, title: &str, label: &str) -> Vec<String> {
    let block: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.starts_with("  timeTaken="))
        .collect();
    assert!(
        block
            .first()
            .is_some_and(|l| l.starts_with("  achieved in ")),
        "{title} starts with what was achieved:\n{stdout}"
    );
    let row = block
        .iter()
        .find(|l| l.trim_start().starts_with(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label} row under {title}:\n{stdout}"));
    row.trim_start()[label.len()..]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn number(cell: &str) -> f64 {
    cell.replace(',', "").parse().unwrap()
}

fn operation<'a>(phase: &'a PhaseResult, name: &str) -> &'a OperationResult {
    phase
        .operations
        .iter()
        .find(|o| o.operation == name)
        .unwrap_or_else(|| panic!("no {name} in {}", phase.name))
}

#[test]
fn documents_per_second_lead_the_report_and_pass_a_threshold() {
    let server = PouchServer::on_disk();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = run(
        &server.url,
        "rates",
        [2, 3, 100, 40],
        &[
            "--threshold",
            "bulk_insert.docs_per_sec > 100",
            "--threshold=bulk_insert.doc_error_rate == 0",
            &format!("--json={}", json.display()),
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let line = |expression: &str| {
        run.stdout
            .lines()
            .find(|l| l.contains(expression))
            .unwrap_or_else(|| panic!("{expression}:\n{}", run.stdout))
            .to_string()
    };
    assert!(
        line("bulk_insert.docs_per_sec > 100").starts_with("  PASS"),
        "{}",
        run.stdout
    );
    assert!(line("doc_error_rate == 0").contains("(0 of 600 documents)"));

    let result = RunResult::read(&json).unwrap();
    let bulk_phase = &result.phases[0];
    let bulk = operation(bulk_phase, "bulk_insert");
    assert_eq!(
        (bulk.succeeded, bulk.documents, bulk.documents_failed),
        (6, 600, 0)
    );
    let docs_per_sec = 600.0 / bulk_phase.wall_seconds;
    assert!((bulk.documents_per_sec - docs_per_sec).abs() < 1e-9 * docs_per_sec);
    assert!(docs_per_sec > 100.0, "{docs_per_sec}");

    // The report prints the same figures, documents above requests.
    let title = "BULK INSERT BENCHMARK RESULTS:";
    let documents = achieved(&run.stdout, title, "bulk_insert documents");
    assert_eq!(documents[1..], ["600", "0", "0.000%"]);
    assert!(
        (number(&documents[0]) - docs_per_sec).abs() <= 0.05,
        "{documents:?}"
    );
    let requests = achieved(&run.stdout, title, "bulk_insert requests");
    assert_eq!(requests[1..], ["6", "0", "0.000%"]);
    assert!((number(&requests[0]) - bulk.throughput).abs() <= 0.05);

    // CRUD: every operation and the total, over the phase's wall-clock time.
    let crud = &result.phases[1];
    let title = "CRUD BENCHMARK RESULTS:";
    let mut total = 0;
    for op in &crud.operations {
        let row = achieved(&run.stdout, title, &op.operation);
        assert_eq!(number(&row[1]) as u64, op.succeeded);
        assert!((number(&row[0]) - op.throughput).abs() <= 0.05, "{row:?}");
        total += op.succeeded;
    }
    assert_eq!(total, 80);
    let all = achieved(&run.stdout, title, "all operations");
    assert_eq!(all[1..], ["80", "0", "0.000%"]);
    assert!((number(&all[0]) - 80.0 / crud.wall_seconds).abs() <= 0.05);
}

#[test]
fn refused_documents_count_as_documents_not_as_requests() {
    let server = PouchServer::on_disk();
    let same = ["--seed=5", "--id-prefix=u"];
    let first = run(&server.url, "again", [2, 2, 10, 0], &same);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    // The same ids again, and as many new ones: the first 40 documents conflict.
    let mut extra = vec![
        "--reuse",
        "--threshold=bulk_insert.doc_error_rate == 50%",
        "--threshold=bulk_insert.doc_errors == 40",
        "--threshold=bulk_insert.error_rate == 0",
    ];
    extra.extend(same);
    let second = run(&server.url, "again", [2, 4, 10, 0], &extra);
    assert_eq!(second.code, 1, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(
        second.stdout.matches("  PASS  ").count(),
        3,
        "{}",
        second.stdout
    );
    let title = "BULK INSERT BENCHMARK RESULTS:";
    assert_eq!(
        achieved(&second.stdout, title, "bulk_insert documents")[1..],
        ["40", "40", "50.000%"]
    );
    assert_eq!(
        achieved(&second.stdout, title, "bulk_insert requests")[1..],
        ["8", "0", "0.000%"]
    );
    assert_eq!(second.errors("bulk_insert"), 0, "requests, not documents");
    assert!(
        second
            .stdout
            .contains("  failed bulk_insert documents: doc:conflict x40"),
        "{}",
        second.stdout
    );
    assert!(!second.stdout.contains("failed bulk_insert:"));
    assert!(
        second
            .stderr
            .contains("40 documents failed in bulk insert answers"),
        "{}",
        second.stderr
    );
    assert_eq!(doc_count(&server.db("again")), 40 + 40);
}

#[test]
fn every_document_of_a_failed_request_counts_as_failed() {
    let server = DelayServer::start(Duration::from_millis(1));
    server.fail_bulk_requests(2);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = run(
        &server.url,
        "failing",
        [1, 5, 10, 0],
        &[&format!("--json={}", json.display())],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let bulk = RunResult::read(&json).unwrap().phases[0].operations[0].clone();
    assert_eq!((bulk.succeeded, bulk.failed), (3, 2));
    assert_eq!((bulk.documents, bulk.documents_failed), (30, 20));
    let title = "BULK INSERT BENCHMARK RESULTS:";
    assert_eq!(
        achieved(&run.stdout, title, "bulk_insert documents")[1..],
        ["30", "20", "40.000%"]
    );
    assert_eq!(
        achieved(&run.stdout, title, "bulk_insert requests")[1..],
        ["3", "2", "40.000%"]
    );
    assert!(
        run.stdout.contains("  failed bulk_insert: 500 x2"),
        "{}",
        run.stdout
    );
}
