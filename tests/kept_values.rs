//! What a server sends must not decide how much memory the client takes, nor how often it
//! asks: each test has a server that answers one thing badly (10 MB revisions, bulk rows
//! for ids never sent, 6 KB ids to sample, 60 MB statistics, longpolls answered at once)
//! or a template that makes huge documents, and each run is bounded in time and in
//! address space, with its peak resident memory measured.

mod common;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::Run;
use common::rewriting_server::{RewritingServer, database_info, sofabench_measured};

/// 2 GB of address space: a few times what a healthy run maps, below what keeping what
/// these servers send would take.
const ADDRESS_SPACE_KIB: u64 = 2_000_000;

/// The peak resident memory a run of these tests stays under: answers are read whole (up
/// to 60 MB here), never kept.
const PEAK_KIB: u64 = 400_000;

fn shown(run: &Run, peak: u64) -> String {
    format!(
        "exit {} in {:?}, peak {peak} KiB\n{}\n{}",
        run.code, run.took, run.stdout, run.stderr
    )
}

/// `sofabench run` against `server`'s database `kept`, quiet, with `args`.
fn run_against(server: &RewritingServer, args: &[&str]) -> (Run, u64) {
    let address = format!("--database_address={}", server.url);
    // Verbose: what the server said of itself is part of the detail.
    let mut all = vec![
        "run",
        &address,
        "--database_name=kept",
        "--quiet",
        "--verbose",
    ];
    all.extend_from_slice(args);
    let (run, peak) = sofabench_measured(ADDRESS_SPACE_KIB, &all);
    // Shown with --nocapture, for the figures.
    eprintln!("exit {} in {:?}, peak {peak} KiB", run.code, run.took);
    (run, peak)
}

/// A scenario file of one phase, `body` its keys after the name; kept with its folder.
fn scenario(body: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, format!("[[phase]]\nname = \"p\"\n{body}")).unwrap();
    let flag = format!("--scenario={}", path.display());
    (dir, flag)
}

/// The ids of a `_bulk_docs` request's documents.
fn sent_ids(body: &[u8]) -> Vec<String> {
    let request: serde_json::Value = serde_json::from_slice(body).unwrap();
    request["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["_id"].as_str().unwrap().to_string())
        .collect()
}

fn is_bulk(line: &str) -> bool {
    line.starts_with("POST /kept/_bulk_docs ")
}

/// Each create (`PUT /kept/id`) answered with a revision of 10 MB.
fn huge_create_revisions(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    let path = line.split_whitespace().nth(1)?;
    let create = line.starts_with("PUT ") && path.trim_matches('/').split('/').count() == 2;
    let rev = format!("1-{}", "a".repeat(10_000_000));
    create.then(|| {
        (
            "201 Created",
            format!(r#"{{"ok":true,"id":"x","rev":"{rev}"}}"#),
        )
    })
}

#[test]
fn a_revision_longer_than_the_bound_fails_its_create_and_is_not_kept() {
    let server = RewritingServer::start(huge_create_revisions);
    let (_dir, file) = scenario("mix = { create = 1 }\ntotal = 100\nconnections = 2\n");
    let (run, peak) = run_against(&server, &[&file]);
    // It used to keep every 10 MB revision: 1 GB for 100 creates, and the run passed.
    assert_eq!(run.code, 1, "{}", shown(&run, peak));
    assert!(
        run.stdout.contains("failed create: value_too_long x100"),
        "{}",
        shown(&run, peak)
    );
    assert!(
        run.stderr.contains("100 operations failed"),
        "{}",
        shown(&run, peak)
    );
    assert!(peak < PEAK_KIB, "{}", shown(&run, peak));
}

/// Each bulk insert answered with a row per document, each with a revision of 60 KB.
fn long_bulk_revisions(line: &str, body: &[u8]) -> Option<(&'static str, String)> {
    if !is_bulk(line) {
        return None;
    }
    let rev = format!("1-{}", "b".repeat(60_000));
    let rows: Vec<String> = sent_ids(body)
        .iter()
        .map(|id| format!(r#"{{"ok":true,"id":"{id}","rev":"{rev}"}}"#))
        .collect();
    Some(("201 Created", format!("[{}]", rows.join(","))))
}

#[test]
fn long_revisions_in_bulk_answers_fail_their_requests_and_are_not_kept() {
    let server = RewritingServer::start(long_bulk_revisions);
    let (run, peak) = run_against(
        &server,
        &[
            "--num_connections=2",
            "--num_bulk_insert_operations=8",
            "--num_documents_per_bulk_insert=500",
            "--num_crud_operations=0",
        ],
    );
    assert_eq!(run.code, 1, "{}", shown(&run, peak));
    assert!(
        run.stdout
            .contains("failed bulk_insert: value_too_long x16"),
        "{}",
        shown(&run, peak)
    );
    assert!(peak < PEAK_KIB, "{}", shown(&run, peak));
    // A larger bound keeps them: the bound is on length, not on a revision's shape.
    let (run, peak) = run_against(
        &server,
        &[
            "--num_connections=1",
            "--num_bulk_insert_operations=1",
            "--num_documents_per_bulk_insert=10",
            "--num_crud_operations=0",
            "--max-kept-value=64KiB",
        ],
    );
    assert_eq!(run.code, 0, "{}", shown(&run, peak));
}

/// Each bulk insert answered with its documents' rows and 1,000 rows for ids never sent.
fn stranger_rows(line: &str, body: &[u8]) -> Option<(&'static str, String)> {
    if !is_bulk(line) {
        return None;
    }
    let rev = "1-0123456789abcdef0123456789abcdef";
    let sent = sent_ids(body).into_iter();
    let strangers = (0..1000).map(|i| format!("stranger-{i}"));
    let rows: Vec<String> = sent
        .chain(strangers)
        .map(|id| format!(r#"{{"ok":true,"id":"{id}","rev":"{rev}"}}"#))
        .collect();
    Some(("201 Created", format!("[{}]", rows.join(","))))
}

#[test]
fn rows_for_ids_never_sent_are_one_failure_counted_alike_everywhere() {
    let server = RewritingServer::start(stranger_rows);
    let (run, peak) = run_against(
        &server,
        &[
            "--num_connections=1",
            "--num_bulk_insert_operations=2",
            "--num_documents_per_bulk_insert=10",
            "--num_crud_operations=0",
            "--threshold=bulk_insert.doc_errors == 0",
        ],
    );
    let shown = shown(&run, peak);
    assert_eq!(run.code, 1, "{shown}");
    assert!(
        run.stdout
            .contains("failed bulk_insert documents: unknown_row x2,000"),
        "{shown}"
    );
    // The documents row counts them among its errors, as the threshold does.
    let row = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("bulk_insert documents "))
        .unwrap_or_else(|| panic!("{shown}"));
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(words[4], "2,000", "{shown}");
    assert!(run.stdout.contains("FAIL"), "{shown}");
    assert!(
        run.stderr
            .contains("2,000 bulk insert answer rows were for documents never sent (unknown_row)"),
        "{shown}"
    );
    assert!(!run.stderr.contains("documents failed"), "{shown}");
}

/// `_all_docs` pages asked so far, by [`long_ids`].
static PAGES: AtomicU64 = AtomicU64::new(0);

/// A database of 120,000 documents whose ids are 6 KB long but every tenth, in 12 full
/// pages of `_all_docs`.
fn long_ids(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    if line.starts_with("GET /kept ") {
        let info = database_info("kept").replace(r#""doc_count":0"#, r#""doc_count":120000"#);
        return Some(("200 OK", info));
    }
    if !line.starts_with("GET /kept/_all_docs?") {
        return None;
    }
    let page = PAGES.fetch_add(1, Ordering::SeqCst);
    let long = "x".repeat(6_000);
    let rows: Vec<String> = (0..if page < 12 { 10_000 } else { 0 })
        .map(|i| match i % 10 {
            0 => format!("s{page}-{i}"),
            _ => format!("l{page}-{i}-{long}"),
        })
        .map(|id| format!(r#"{{"id":"{id}"}}"#))
        .collect();
    Some(("200 OK", format!(r#"{{"rows":[{}]}}"#, rows.join(","))))
}

#[test]
fn a_key_sample_skips_ids_longer_than_the_bound_and_says_how_many() {
    let server = RewritingServer::start(long_ids);
    let (run, peak) = run_against(
        &server,
        &[
            "--reuse",
            "--key-sample=120000",
            "--num_connections=1",
            "--num_bulk_insert_operations=0",
            "--num_crud_operations=20",
            "--create_weight=0",
            "--read_weight=1",
            "--update_weight=0",
            "--delete_weight=0",
        ],
    );
    let shown = shown(&run, peak);
    assert_eq!(run.code, 0, "{shown}");
    assert!(
        run.stdout.contains(
            "existing data: 12,000 ids sampled from 12,000 documents in _all_docs; 108,000 ids longer than --max-kept-value (512 bytes) skipped"
        ),
        "{shown}"
    );
    assert_eq!(run.count("read"), 20, "{shown}");
    // It used to keep all 120,000 ids: 720 MB.
    assert!(peak < PEAK_KIB, "{shown}");
}

#[test]
fn a_template_too_large_for_its_batches_is_refused_before_anything_is_sent() {
    let server = RewritingServer::start(|_, _| None);
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("wide.json");
    // 262,144 numbers: documents of about 2.9 MB, batches of 1,000 of them 2.9 GB.
    let numbers = vec!["0"; 262_144].join(",");
    std::fs::write(&template, format!(r#"{{"numbers":[{numbers}]}}"#)).unwrap();
    let flag = format!("--json_document_schema_filename={}", template.display());
    let (run, peak) = run_against(&server, &[&flag, "--seed=1"]);
    let shown = shown(&run, peak);
    assert_eq!(run.code, 2, "{shown}");
    let said = &run.stderr;
    assert!(said.contains(&template.display().to_string()), "{shown}");
    assert!(said.contains("bulk inserts of 1000 documents"), "{shown}");
    assert!(said.contains("--num_documents_per_bulk_insert"), "{shown}");
    assert!(peak < 100_000, "{shown}");
}

/// `_node/_local/_stats` asked so far, by [`huge_statistics`].
static STATS_ASKED: AtomicU64 = AtomicU64::new(0);

/// `_node/_local/_stats` answered with 60 MB: CouchDB's group with a member of 15
/// million tiny arrays.
fn huge_statistics(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    if !line.starts_with("GET /_node/_local/_stats ") {
        return None;
    }
    STATS_ASKED.fetch_add(1, Ordering::SeqCst);
    // Made once, so that each answer goes out well within the look's wait.
    static ANSWER: OnceLock<String> = OnceLock::new();
    let answer = ANSWER.get_or_init(|| {
        let pad = vec!["[0]"; 15_000_000].join(",");
        format!(r#"{{"couchdb":{{"httpd":{{"requests":{{"value":1}}}},"pad":[{pad}]}}}}"#)
    });
    Some(("200 OK", answer.clone()))
}

#[test]
fn huge_server_statistics_are_not_read_and_the_run_goes_on() {
    let server = RewritingServer::start(huge_statistics);
    let (_dir, file) =
        scenario("mix = { create = 1 }\nduration = \"3s\"\nconnections = 2\nrate = 50\n");
    let (run, peak) = run_against(&server, &[&file]);
    let shown = shown(&run, peak);
    // It used to build the answer's whole tree: gigabytes, past the address space.
    assert_eq!(run.code, 0, "{shown}");
    assert!(STATS_ASKED.load(Ordering::SeqCst) >= 2, "{shown}");
    assert!(!run.stdout.contains("requests counted"), "{shown}");
    assert!(peak < PEAK_KIB, "{shown}");
}

/// Longpoll `_changes` requests so far, by [`hasty_longpolls`].
static LONGPOLLS: AtomicU64 = AtomicU64::new(0);

/// Every longpoll answered at once, with no change.
fn hasty_longpolls(line: &str, _: &[u8]) -> Option<(&'static str, String)> {
    if !(line.contains("/_changes?") && line.contains("feed=longpoll")) {
        return None;
    }
    LONGPOLLS.fetch_add(1, Ordering::SeqCst);
    Some(("200 OK", r#"{"results":[],"last_seq":"1"}"#.to_string()))
}

#[test]
fn a_longpoll_feed_answered_empty_at_once_backs_off() {
    let server = RewritingServer::start(hasty_longpolls);
    let (_dir, file) =
        scenario("mix = { create = 1 }\nduration = \"3s\"\nconnections = 1\nrate = 20\n");
    let (run, peak) = run_against(
        &server,
        &[&file, "--changes-consumers=2", "--changes-feed=longpoll"],
    );
    let shown = shown(&run, peak);
    assert!(run.took < Duration::from_secs(30), "{shown}");
    // It used to ask again at once: tens of thousands of requests in 3 s. Backing off
    // from 50 ms to the heartbeat (1 s), two consumers ask about 8 times each.
    let asked = LONGPOLLS.load(Ordering::SeqCst);
    assert!((2..60).contains(&asked), "{asked} longpolls\n{shown}");
}
