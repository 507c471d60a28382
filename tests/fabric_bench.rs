//! The built-in `fabric-bench` scenario (CouchDB's `fabric_bench` over HTTP) against
//! PouchDB Server on disk with an admin, small: its steps run in `fabric_bench`'s order,
//! each with its figure in the output and the result, and the database holds what the
//! steps wrote, at `fabric_bench`'s document size.

mod common;

use common::*;
use sofabench::results::{OperationResult, PhaseResult, RunResult, SettleOutcome};

const STEPS: [&str; 6] = [
    "fabric_insert",
    "fabric_read",
    "fabric_all_docs",
    "fabric_all_docs_include_docs",
    "fabric_changes",
    "fabric_single_docs",
];

fn only(phase: &PhaseResult) -> &OperationResult {
    assert_eq!(phase.operations.len(), 1, "{}", phase.name);
    &phase.operations[0]
}

/// 300 documents in 3 bulk requests of 100, 300 reads, the three whole reads, 20
/// single writes, of `size` documents, at the scenario's one connection.
fn run(server: &PouchServer, db: &str, size: &str) -> (RunResult, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={db}"),
        "--seed=5",
        "--scenario=fabric-bench",
        "--fabric-docs=300",
        "--fabric-single-docs=20",
        &format!("--fabric-doc-size={size}"),
        "--num_documents_per_bulk_insert=100",
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    (
        RunResult::read(&out.join("result.json")).unwrap(),
        run.stdout,
    )
}

#[test]
fn the_steps_run_in_order_and_the_database_holds_what_they_wrote() {
    let server = PouchServer::secured(Storage::Disk);
    let (result, stdout) = run(&server, "fabric", "small");
    let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, STEPS);
    for phase in &result.phases {
        let op = only(phase);
        assert_eq!(op.failed, 0, "{}: {op:?}", phase.name);
        assert_eq!(phase.connections, 1, "{}: one connection", phase.name);
    }
    let ops: Vec<&OperationResult> = result.phases.iter().map(only).collect();
    assert_eq!(
        (
            ops[0].operation.as_str(),
            ops[0].succeeded,
            ops[0].documents
        ),
        ("bulk_insert", 3, 300)
    );
    assert_eq!((ops[1].operation.as_str(), ops[1].succeeded), ("read", 300));
    // The whole reads: one request each, every document a row.
    for (k, operation) in [(2, "all_docs"), (3, "all_docs"), (4, "changes_read")] {
        assert_eq!(ops[k].operation, operation);
        assert_eq!(
            (ops[k].succeeded, ops[k].rows),
            (1, Some(300)),
            "{}",
            names[k]
        );
        let per_second = ops[k].rows_per_sec.unwrap();
        let expected = 300.0 / result.phases[k].wall_seconds;
        assert!(
            (per_second - expected).abs() <= expected * 1e-9,
            "{per_second} {expected}"
        );
    }
    assert!(
        ops[3].bytes_received > ops[2].bytes_received + 300 * 300,
        "include_docs brings the documents: {} vs {}",
        ops[3].bytes_received,
        ops[2].bytes_received
    );
    assert_eq!(
        (ops[5].operation.as_str(), ops[5].succeeded),
        ("create", 20)
    );
    // The database: the inserted documents and the single ones, at fabric_bench's size.
    let db = server.admin_db("fabric");
    assert_eq!(doc_count(&db), 320);
    // The writer's rule (src/template/writer.rs): padded to the size exactly, unless a
    // document falls short by less than the padding member itself, which it then lacks.
    const PADDING_MEMBER: usize = r#","sofabench_padding":"""#.len();
    let (_, page) = get(&format!("{db}/_all_docs?include_docs=true"));
    let rows = page["rows"].as_array().unwrap();
    let mut exact = 0;
    for row in rows {
        let mut doc = row["doc"].clone();
        doc.as_object_mut().unwrap().remove("_rev");
        let bytes = serde_json::to_vec(&doc).unwrap().len();
        if doc.get("sofabench_padding").is_some() || bytes == 335 {
            assert_eq!(bytes, 335, "{doc}");
            exact += 1;
        } else {
            assert!(
                bytes < 335 && 335 - bytes < PADDING_MEMBER,
                "{bytes}: {doc}"
            );
        }
    }
    assert!(
        exact * 10 >= rows.len() * 8,
        "{exact} of {} at 335 bytes",
        rows.len()
    );
    // PouchDB Server shows its tasks (none compacting here) but no replication backlog,
    // which it has no _node/_local/_system to show: each measured step says so.
    for phase in &result.phases[1..] {
        let settle = phase.settle.as_ref().unwrap();
        assert_eq!(settle.outcome, SettleOutcome::Settled, "{}", phase.name);
        assert_eq!((settle.shows_tasks, settle.shows_backlog), (true, false));
        assert_eq!(
            (settle.compactions, settle.compactions_at_end),
            (Some(0), 0)
        );
        assert_eq!(
            settle.replication_backlog, None,
            "PouchDB Server shows none"
        );
        let said = format!("  {}: the server was settled", phase.name);
        assert!(stdout.contains(&said), "{said}: {stdout}");
    }
    assert!(
        result.phases[0].settle.is_none(),
        "the insert does not wait"
    );
    assert!(
        stdout.contains("this server shows no internal replication backlog (no _node/_local/_system: CouchDB 2 and later have it), so none was waited for"),
        "{stdout}"
    );
    // fabric_bench's lines, each step with its figure.
    let block = stdout
        .split("FABRIC_BENCH STEPS")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    for line in [
        "Add docs (300 docs)",
        "Get random doc (300 reads)",
        "All docs (300 rows)",
        "All docs w/ include_docs (300 rows)",
        "Changes (300 rows)",
        "Single doc updates (20 docs)",
        "Time to run all steps",
    ] {
        assert!(block.contains(line), "{line}: {block}");
    }
}

#[test]
fn a_medium_document_has_fabric_bench_s_arrays_and_about_its_size() {
    let server = PouchServer::secured(Storage::Disk);
    let (result, _) = run(&server, "medium", "medium");
    assert_eq!(result.phases.len(), 6);
    let (_, page) = get(&format!(
        "{}/_all_docs?include_docs=true&limit=3",
        server.admin_db("medium")
    ));
    for row in page["rows"].as_array().unwrap() {
        let mut doc = row["doc"].clone();
        doc.as_object_mut().unwrap().remove("_rev");
        // fabric_bench's 14,555 bytes, but for its 1,000 floats, which sofabench's
        // template writes longer (0.8474894 where it writes 1.0 to 1000.0).
        let bytes = serde_json::to_vec(&doc).unwrap().len();
        assert!((14_846..=15_283).contains(&bytes), "{bytes}");
        assert_eq!(doc["array_ints"].as_array().unwrap().len(), 1_000);
        assert_eq!(doc["array_floats"].as_array().unwrap().len(), 1_000);
    }
}

#[test]
fn counts_that_cannot_run_are_refused_before_anything_is_sent() {
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--scenario=fabric-bench",
        "--fabric-docs=1500",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("--fabric-docs 1500 is not a multiple"),
        "{}",
        run.stderr
    );
    let run = sofabench(&["run", "--scenario=fabric-bench", "--fabric-doc-size=huge"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("small, medium or large"),
        "{}",
        run.stderr
    );
}
