//! A server that misbehaves must not take the client down with it: an endless or huge
//! answer fails its operation as `too_large` with memory flat, endless interim answers end
//! at the timeout, and an answer that comes before a request's body is all written is
//! read as what it is. Each run is bounded in time, and in memory by an address-space
//! limit under which a client that buffered the answers would die.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::Run;
use common::bad_server::{self, BadServer, Fault, sofabench_within};

/// 2 GB of address space: a few times what a healthy run maps, far below what the
/// misbehaving answers would make a client without bounds take.
const ADDRESS_SPACE_KIB: u64 = 2_000_000;

/// `sofabench run` against `server` with 2 connections, `args` and then `extra`, within
/// the address space.
fn run_within(server: &BadServer, args: &[String], extra: &[&str]) -> Run {
    let given = [
        "run".to_string(),
        format!("--database_address={}", server.url),
        "--database_name=bad".to_string(),
        "--quiet".to_string(),
        "--num_connections=2".to_string(),
    ];
    let all: Vec<&str> = given
        .iter()
        .chain(args)
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    sofabench_within(ADDRESS_SPACE_KIB, &all)
}

/// A run of `reads` document reads (after a small bulk insert) against `server`.
fn reads(server: &BadServer, reads: u64, extra: &[&str]) -> Run {
    let args = [
        "--num_bulk_insert_operations=1".to_string(),
        "--num_documents_per_bulk_insert=10".to_string(),
        format!("--num_crud_operations={reads}"),
        "--create_weight=0".to_string(),
        "--read_weight=1".to_string(),
        "--update_weight=0".to_string(),
        "--delete_weight=0".to_string(),
        "--seed=5".to_string(),
    ];
    run_within(server, &args, extra)
}

fn shown(run: &Run) -> String {
    format!(
        "exit {} in {:?}\n{}\n{}",
        run.code, run.took, run.stdout, run.stderr
    )
}

fn assert_ends_within(run: &Run, limit: Duration) {
    assert!(run.took < limit, "{}", shown(run));
}

/// The run failed (exit 1) within `limit`, and its report has the line `failed`.
fn assert_fails_with(run: &Run, failed: &str, limit: Duration) {
    assert_eq!(run.code, 1, "{}", shown(run));
    assert!(run.stdout.contains(failed), "{}", shown(run));
    assert_ends_within(run, limit);
}

#[test]
fn an_endless_chunked_answer_fails_as_too_large() {
    let server = BadServer::start(Fault::EndlessChunks, bad_server::document_reads);
    let run = reads(&server, 4, &["--timeout=30s", "--max-response-size=1MiB"]);
    assert_fails_with(&run, "failed read: too_large x8", Duration::from_secs(20));
}

#[test]
fn a_huge_content_length_fails_as_too_large_before_the_body_is_read() {
    let server = BadServer::start(Fault::HugeLength, bad_server::document_reads);
    // The default limit: 9999999999999999999 bytes are refused from the head alone.
    let run = reads(&server, 4, &["--timeout=30s"]);
    assert_fails_with(&run, "failed read: too_large x8", Duration::from_secs(20));
}

#[test]
fn a_large_answer_fails_past_the_limit_and_is_read_below_it() {
    let server = BadServer::start(Fault::Large(50 << 20), bad_server::document_reads);
    let run = reads(&server, 2, &["--max-response-size=1MiB"]);
    assert_fails_with(&run, "failed read: too_large x4", Duration::from_secs(20));
    // Below the default limit, 50 MiB answers are read whole, within the same bound.
    let run = reads(&server, 2, &[]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    assert_eq!(run.count("read"), 4, "{}", shown(&run));
    assert_ends_within(&run, Duration::from_secs(30));
}

#[test]
fn an_endless_answer_to_the_server_check_ends_the_setup() {
    let server = BadServer::start(Fault::EndlessChunks, bad_server::welcome);
    let run = reads(&server, 4, &["--max-response-size=1MiB"]);
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(run.stderr.contains("too large"), "{}", shown(&run));
    assert_ends_within(&run, Duration::from_secs(20));
}

#[test]
fn endless_interim_answers_end_at_the_timeout() {
    let server = BadServer::start(Fault::EndlessContinue, bad_server::document_reads);
    // One read per connection, ending at its 2 s timeout. Before the timer was polled
    // first, a server with bytes always ready kept it from firing: 3 s took 12.
    let run = reads(&server, 1, &["--timeout=2s"]);
    assert_fails_with(&run, "failed read: timeout x2", Duration::from_secs(5));
}

#[test]
fn a_413_before_a_large_bulk_body_is_read_is_that_status_even_without_a_timeout() {
    refused_bulk_inserts(Fault::RefuseBody);
}

#[test]
fn a_413_then_a_close_before_a_large_bulk_body_is_read_is_that_status() {
    refused_bulk_inserts(Fault::RefuseBodyAndClose);
}

fn refused_bulk_inserts(fault: Fault) {
    let server = BadServer::start(fault, bad_server::bulk_inserts);
    let args = [
        "run".to_string(),
        format!("--database_address={}", server.url),
        "--database_name=bad".to_string(),
        "--quiet".to_string(),
        "--num_connections=1".to_string(),
        "--num_bulk_insert_operations=2".to_string(),
        "--num_documents_per_bulk_insert=50000".to_string(),
        "--num_crud_operations=0".to_string(),
        "--timeout=0".to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = sofabench_within(ADDRESS_SPACE_KIB, &args);
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stdout.contains("failed bulk_insert: 413 x2"),
        "{}",
        shown(&run)
    );
    assert!(!run.stdout.contains("timeout x"), "{}", shown(&run));
    assert_ends_within(&run, Duration::from_secs(30));
}

#[test]
fn a_bulk_answer_a_row_short_for_documents_without_ids_pairs_none_of_them() {
    let server = BadServer::start(Fault::MissingRow, bad_server::bulk_inserts);
    let address = format!("--database_address={}", server.url);
    let run = common::sofabench(&[
        "run",
        &address,
        "--database_name=bad",
        "--quiet",
        "--id-scheme=server",
        "--num_connections=1",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=5",
        "--num_crud_operations=0",
    ]);
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stdout.contains("failed bulk_insert: bad_answer x2"),
        "{}",
        shown(&run)
    );
    assert!(
        run.stdout
            .contains("4 rows for 5 documents sent without ids"),
        "the example names the count: {}",
        shown(&run)
    );
    assert!(
        run.stdout.contains("unknown bulk_insert: 10 documents"),
        "{}",
        shown(&run)
    );
}

/// Two `_all_docs` queries (one per connection) after a small load, against `server`,
/// with `extra` flags.
fn all_docs_queries(server: &BadServer, extra: &[&str]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("q.toml");
    std::fs::write(
        &scenario,
        r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 10
operations = 1
[[phase]]
name = "pages"
mix = { all_docs = 1 }
queries = { all_docs = "pages" }
total = 2
[query.pages]
kind = "all_docs"
limit = 100000
"#,
    )
    .unwrap();
    let json = dir.path().join("result.json");
    let args = [
        format!("--scenario={}", scenario.display()),
        format!("--json={}", json.display()),
    ];
    (run_within(server, &args, extra), dir)
}

#[test]
fn a_querys_answer_of_any_length_is_counted_as_it_comes_never_held() {
    // 20,000,000 rows: 860 MB per answer, two at once. Held whole they would not fit
    // the address space the client is given.
    let rows = 20_000_000;
    let server = BadServer::start(Fault::ManyRows(rows), bad_server::all_docs_queries);
    let (run, dir) = all_docs_queries(&server, &["--max-response-size=1GiB"]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let result = sofabench::results::RunResult::read(&dir.path().join("result.json")).unwrap();
    let pages = &result.phases[1].operations[0];
    assert_eq!((pages.succeeded, pages.failed), (2, 0), "{pages:?}");
    assert_eq!(pages.rows, Some(2 * rows as u64));
    let bytes = (r#"{"total_rows":20000000,"offset":0,"rows":[]}"#.len()
        + rows * (bad_server::ROW.len() + 1)
        - 1) as u64;
    assert_eq!(pages.bytes_received, 2 * bytes);
}

#[test]
fn an_endless_query_answer_fails_as_too_large() {
    let server = BadServer::start(Fault::EndlessChunks, bad_server::all_docs_queries);
    let (run, _dir) = all_docs_queries(&server, &[]);
    assert_fails_with(&run, "too_large", Duration::from_secs(30));
}

/// A view whose index never gets built: the query waiting for it is never answered.
/// `indexes` is the phase's `indexes` key.
fn stalled_build(indexes: &str) -> Run {
    let server = BadServer::start(Fault::Stall, bad_server::index_waits);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("q.toml");
    std::fs::write(
        &scenario,
        format!(
            r#"
[[phase]]
name = "load"
mix = {{ bulk_insert = 1 }}
batch_size = 10
operations = 1
[[phase]]
name = "writes"
mix = {{ create = 1, view = 1 }}
queries = {{ view = "v" }}
indexes = "{indexes}"
total = 20
[query.v]
kind = "view"
field = "integer1"
map = "function (doc) {{ emit(doc.integer1, null); }}"
"#
        ),
    )
    .unwrap();
    interrupted_after_2s(
        &server,
        &[
            "--json_document_schema_filename=examples/ironcushion.json",
            &format!("--scenario={}", scenario.display()),
        ],
    )
}

/// `sofabench run` against `server` (database `bad`, 2 connections) with `extra`,
/// given Ctrl-C after 2 s.
fn interrupted_after_2s(server: &BadServer, extra: &[&str]) -> Run {
    interrupted(server, extra, &[Duration::ZERO]).0
}

/// `sofabench run` against `server` (database `bad`, 2 connections) with `extra`, given
/// Ctrl-C after 2 s and again `again` after it; the run's time counts from the first
/// Ctrl-C, which came at the instant returned.
fn interrupted(server: &BadServer, extra: &[&str], again: &[Duration]) -> (Run, Instant) {
    let address = format!("--database_address={}", server.url);
    let mut args = vec![
        "run",
        &address,
        "--database_name=bad",
        "--quiet",
        "--num_connections=2",
    ];
    args.extend_from_slice(extra);
    let child = common::spawn_sofabench(&args);
    std::thread::sleep(Duration::from_secs(2));
    let first = Instant::now();
    for after in again {
        std::thread::sleep((first + *after).saturating_duration_since(Instant::now()));
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    let mut run = common::finish(child);
    run.took = first.elapsed();
    (run, first)
}

#[test]
fn ctrl_c_ends_the_wait_for_an_index_that_is_never_built() {
    for indexes in ["before", "during"] {
        let run = stalled_build(indexes);
        assert_eq!(run.code, 130, "indexes = {indexes}: {}", shown(&run));
        assert!(
            run.took < Duration::from_secs(6),
            "indexes = {indexes}: {}",
            shown(&run)
        );
        assert!(!run.stdout.contains("built in"), "{}", shown(&run));
    }
}

/// Looks at database `bad-0000` (`GET /bad-0000`) after the setup's two: the one where
/// its changes consumer asks where the feed stands (the test server knows no database
/// and would answer 404 there; stalled, it never answers).
fn feed_start_looks(line: &str) -> bool {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static LOOKS: AtomicUsize = AtomicUsize::new(0);
    line.starts_with("GET /bad-0000 ") && LOOKS.fetch_add(1, Ordering::SeqCst) >= 2
}

#[test]
fn ctrl_c_ends_the_wait_for_where_a_feed_stands_and_cleans_up() {
    let server = BadServer::start(Fault::Stall, feed_start_looks);
    let extra = ["--databases=2", "--changes-consumers=2", "--cleanup"];
    let run = interrupted_after_2s(&server, &extra);
    // It used to wait out the look's 30 s, then fail (exit 1) keeping the databases.
    assert_eq!(run.code, 130, "{}", shown(&run));
    assert!(run.took < Duration::from_secs(6), "{}", shown(&run));
    assert!(
        run.stderr
            .contains("stopped while the changes consumers were starting"),
        "{}",
        shown(&run)
    );
    assert!(
        run.stdout
            .contains("deleted databases \"bad-0000\" … \"bad-0001\" (2)"),
        "{}",
        shown(&run)
    );
}

/// The requests a server was sent, and when.
type Seen = Mutex<Vec<(Instant, String)>>;

fn note(seen: &Seen, line: &str) {
    seen.lock()
        .unwrap()
        .push((Instant::now(), line.trim().to_string()));
}

/// What the endless-`100 Continue` server was sent after `at`, but the cleanup's
/// `DELETE /bad`.
fn sent_after(seen: &Seen, at: Instant) -> Vec<String> {
    let seen = seen.lock().unwrap();
    seen.iter()
        .filter(|(when, line)| *when > at && !line.starts_with("DELETE /bad "))
        .map(|(_, line)| line.clone())
        .collect()
}

fn deleted(seen: &Seen) -> bool {
    let seen = seen.lock().unwrap();
    seen.iter()
        .any(|(_, line)| line.starts_with("DELETE /bad "))
}

static SEEN_ONCE: Seen = Mutex::new(Vec::new());
static SEEN_TWICE: Seen = Mutex::new(Vec::new());

fn reads_seen_once(line: &str) -> bool {
    note(&SEEN_ONCE, line);
    bad_server::document_reads(line)
}

fn reads_seen_twice(line: &str) -> bool {
    note(&SEEN_TWICE, line);
    bad_server::document_reads(line)
}

/// Reads answered with endless `100 Continue`, no timeout: every read stays in flight,
/// its connection always with bytes to read. `--cleanup` asked for.
const ENDLESS_READS: [&str; 10] = [
    "--timeout=0",
    "--cleanup",
    "--num_bulk_insert_operations=1",
    "--num_documents_per_bulk_insert=10",
    "--num_crud_operations=1000",
    "--create_weight=0",
    "--read_weight=1",
    "--update_weight=0",
    "--delete_weight=0",
    "--seed=5",
];

#[test]
fn ctrl_c_ends_a_run_within_2_s_while_bytes_keep_arriving_then_cleans_up() {
    let server = BadServer::start(Fault::EndlessContinue, reads_seen_once);
    let (run, first) = interrupted(&server, &ENDLESS_READS, &[Duration::ZERO]);
    // It used to take 3-21 s: the requests in flight had bytes always ready, and the
    // signal to give them up was never looked at.
    assert_eq!(run.code, 130, "{}", shown(&run));
    assert!(run.took < Duration::from_secs(3), "{}", shown(&run));
    assert!(
        run.stdout.contains("deleted database \"bad\" (--cleanup)"),
        "{}",
        shown(&run)
    );
    assert!(deleted(&SEEN_ONCE), "{}", shown(&run));
    let late = sent_after(&SEEN_ONCE, first + Duration::from_millis(100));
    assert!(late.is_empty(), "sent after Ctrl-C: {late:?}");
}

#[test]
fn a_second_ctrl_c_skips_the_cleanup_and_exits_at_once() {
    let server = BadServer::start(Fault::EndlessContinue, reads_seen_twice);
    let again = [Duration::ZERO, Duration::from_millis(200)];
    let (run, first) = interrupted(&server, &ENDLESS_READS, &again);
    // It used to take up to 8.7 s, and then delete the database.
    assert_eq!(run.code, 130, "{}", shown(&run));
    assert!(run.took < Duration::from_millis(1500), "{}", shown(&run));
    assert!(run.stdout.contains("skipped --cleanup"), "{}", shown(&run));
    assert!(!deleted(&SEEN_TWICE), "{}", shown(&run));
    let late = sent_after(&SEEN_TWICE, first + Duration::from_millis(100));
    assert!(late.is_empty(), "sent after Ctrl-C: {late:?}");
}
