//! Functional tests of `run --runs N` (repetitions, each on a database of its own) and of
//! `compare` over repeated and differing runs, against PouchDB Server on disk with an
//! admin.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;
use sofabench::results::RunResult;

/// Iron Cushion's two steps, small: 2 connections × 2 bulk inserts of 20 documents, then
/// 2 × 50 CRUD operations of weights 2/2/3/3 (20 creates, 30 deletes).
fn run_args(server: &PouchServer, db: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={db}"),
        "--quiet",
        "--seed=7",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=20",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=50",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(server: &PouchServer, db: &str, extra: &[&str]) -> Run {
    let args = run_args(server, db, extra);
    sofabench(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn read(path: &Path) -> RunResult {
    RunResult::read(path).unwrap()
}

fn databases(server: &PouchServer) -> Vec<String> {
    let (status, all) = get(&format!("{}/_all_dbs", server.admin_url));
    assert_eq!(status, 200, "{all}");
    serde_json::from_value(all).unwrap()
}

/// Every live document of a database by id, without `_id` and `_rev`.
fn documents(db_url: &str) -> Vec<(String, Value)> {
    let (status, body) = get(&format!("{db_url}/_all_docs?include_docs=true"));
    assert_eq!(status, 200, "{body}");
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut doc = row["doc"].clone();
            doc.as_object_mut().unwrap().remove("_id");
            doc.as_object_mut().unwrap().remove("_rev");
            (row["id"].as_str().unwrap().to_string(), doc)
        })
        .collect()
}

fn scratch_file(test: &str, name: &str) -> PathBuf {
    scratch("runs", test).join(name)
}

#[test]
fn three_runs_make_three_databases_and_one_result_of_three_repetitions() {
    let server = PouchServer::secured(Storage::Disk);
    let json = scratch_file("three", "r.json");
    let out = format!("--json={}", json.display());
    let done = run(&server, "rep", &["--runs=3", "--id-prefix=t", &out]);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);

    let mut all = databases(&server);
    all.retain(|name| !name.starts_with('_'));
    assert_eq!(all, ["rep-run1", "rep-run2", "rep-run3"]);
    let mut contents = Vec::new();
    for index in 1..=3 {
        let db = server.admin_db(&format!("rep-run{index}"));
        // 80 bulk inserted, 20 created, 30 deleted.
        assert_eq!(doc_count(&db), 80 + 20 - 30, "rep-run{index}");
        let docs = documents(&db);
        let prefix = format!("t-r{index}-");
        assert!(
            docs.iter().all(|(id, _)| id.starts_with(&prefix)),
            "{docs:?}"
        );
        contents.push(docs.into_iter().map(|(_, doc)| doc).collect::<Vec<_>>());
    }
    // The same seed: the same documents, updated alike, in every repetition.
    assert_eq!(contents[0], contents[1]);
    assert_eq!(contents[0], contents[2]);

    let result = read(&json);
    assert_eq!(result.config["runs"], 3);
    assert_eq!(result.config["database_name"], "rep");
    let repetitions: Vec<(u64, &str, &str, bool, bool)> = result
        .repetitions
        .iter()
        .map(|r| {
            (
                r.index,
                r.database_name.as_str(),
                r.id_prefix.as_str(),
                r.interrupted,
                r.database_deleted,
            )
        })
        .collect();
    assert_eq!(
        repetitions,
        [
            (1, "rep-run1", "t-r1", false, false),
            (2, "rep-run2", "t-r2", false, false),
            (3, "rep-run3", "t-r3", false, false),
        ]
    );
    // The merged phases hold all three repetitions' operations, over their summed time.
    let merged_crud = &result.phases[1];
    let creates = |phase: &sofabench::results::PhaseResult| {
        phase
            .operations
            .iter()
            .find(|o| o.operation == "create")
            .unwrap()
            .succeeded
    };
    assert_eq!(creates(merged_crud), 60);
    let walls: f64 = result
        .repetitions
        .iter()
        .map(|r| r.phases[1].wall_seconds)
        .sum();
    assert!((merged_crud.wall_seconds - walls).abs() < 1e-9);
    assert!(
        result
            .repetitions
            .iter()
            .all(|r| creates(&r.phases[1]) == 20)
    );
    assert_eq!(merged_crud.connections, 2);

    for index in 1..=3 {
        let heading = format!("REPETITION {index} of 3: database \"rep-run{index}\"");
        assert!(done.stdout.contains(&heading), "{}", done.stdout);
    }
    assert!(
        done.stdout.contains("REPETITIONS: 3 of 3 finished;")
            && done
                .stdout
                .contains("databases left on the server: \"rep-run1\", \"rep-run2\", \"rep-run3\""),
        "{}",
        done.stdout
    );
    let spread = line_with(&done.stdout, "bulk_insert  docs/s");
    assert!(spread.contains(" ± ") && spread.contains(".."), "{spread}");
    // The text report made again from the file has the same repetitions and spread.
    let again = sofabench(&["report", json.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains("REPETITION 3 of 3: database \"rep-run3\"")
    );
    assert!(again.stdout.contains(spread), "{}", again.stdout);
}

/// The first indented line (a table's row) holding `text`.
fn line_with<'a>(stdout: &'a str, text: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with("  ") && l.contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?}:\n{stdout}"))
}

#[test]
fn cleanup_deletes_each_repetitions_database_and_compare_tests_the_noise() {
    let server = PouchServer::secured(Storage::Disk);
    let (a, b) = (
        scratch_file("clean", "a.json"),
        scratch_file("clean", "b.json"),
    );
    for path in [&a, &b] {
        let out = format!("--json={}", path.display());
        let done = run(&server, "gone", &["--runs=3", "--cleanup", &out]);
        assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
        assert!(
            done.stdout
                .contains("deleted database \"gone-run3\" (--cleanup)")
        );
        assert!(done.stdout.contains("databases: deleted (--cleanup)"));
        for index in 1..=3 {
            let (status, _) = get(&server.admin_db(&format!("gone-run{index}")));
            assert_eq!(status, 404, "gone-run{index} is deleted");
        }
        assert!(
            read(path)
                .repetitions
                .iter()
                .all(|r| r.database_deleted && !r.interrupted)
        );
    }

    let compared = sofabench(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let text = &compared.stdout;
    assert!(text.contains("(3 repetitions, started"), "{text}");
    assert!(
        text.contains("\nverdicts: each by the two-sided Mann-Whitney U test"),
        "{text}"
    );
    assert!(
        !text.contains("different settings"),
        "same settings: {text}"
    );
    // Three repetitions a side cannot pass Holm's correction over the rows judged; the
    // comparison says how many would.
    assert!(
        text.contains("WARNING: too few repetitions for any change between A and B to show as significant: with A 3 repetitions and B 3 repetitions")
            && text.contains("repetitions per side (sofabench run --runs "),
        "{text}"
    );
    // Each judged figure has a p-value (or says why there is none); p90 is not judged,
    // nor is the bulk insert's throughput, judged by its documents per second.
    let judged =
        |line: &str| line.contains("p=") || line.contains("p≈") || line.contains("no test");
    for row in ["p50 ms", "p99 ms", "read  ", "docs/s"] {
        let line = line_with(text, row);
        assert!(judged(line), "{line}");
    }
    let p90 = line_with(text, "p90 ms");
    assert!(!judged(p90), "{p90}");
}

#[test]
fn compare_warns_of_the_settings_in_which_two_runs_differ() {
    let server = PouchServer::secured(Storage::Disk);
    let (a, b) = (
        scratch_file("differ", "a.json"),
        scratch_file("differ", "b.json"),
    );
    let closed = run(
        &server,
        "closed",
        &[&format!("--json={}", a.display()), "--cleanup"],
    );
    assert_eq!(closed.code, 0, "{}\n{}", closed.stdout, closed.stderr);
    let open = run(
        &server,
        "open",
        &[
            &format!("--json={}", b.display()),
            "--cleanup",
            "--num_connections=4",
            "--rate=400",
            "--read_weight=5",
        ],
    );
    assert_eq!(open.code, 0, "{}\n{}", open.stdout, open.stderr);
    let compared = sofabench(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let lines: Vec<&str> = compared.stdout.lines().collect();
    // Before the figures: the environment (the same server and machine, at most a note
    // of the load), then the settings.
    let settings = lines
        .iter()
        .position(|l| l.starts_with("WARNING: A and B were run with different settings"))
        .unwrap_or_else(|| panic!("no settings warning:\n{}", compared.stdout));
    let noise = lines.iter().position(|l| l.starts_with("noise:")).unwrap();
    assert!(
        settings < noise,
        "the warning comes first:\n{}",
        compared.stdout
    );
    assert!(
        !compared.stdout.contains("ran against a different server"),
        "{}",
        compared.stdout
    );
    for expected in [
        "  load model: A closed (no --rate), B open, --rate 400 operations/s",
        "  mix (create/read/update/delete weights): A 2/2/3/3, B 2/5/3/3",
        "  connections: A 2, B 4",
        "  database: A closed, B open",
    ] {
        assert!(lines.contains(&expected), "{expected}\n{}", compared.stdout);
    }
    assert!(
        compared
            .stdout
            .contains("noise: no test possible: A has 1 run, B 1 run;"),
        "{}",
        compared.stdout
    );
    assert!(!compared.stdout.contains("* "), "{}", compared.stdout);
}

#[test]
fn runs_refuse_what_they_cannot_honour_before_anything_is_sent() {
    let server = PouchServer::secured(Storage::Disk);
    let reuse = run(&server, "r", &["--runs=2", "--reuse"]);
    assert_eq!(reuse.code, 2, "{}", reuse.stderr);
    assert!(
        reuse
            .stderr
            .contains("--reuse with --runs 2: each repetition runs on a fresh database of its own (r-run1 … r-run2)"),
        "{}",
        reuse.stderr
    );
    // A repetition's database that holds documents: refused, naming it, and nothing made.
    let filled = server.admin_db("f-run2");
    assert_eq!(request("PUT", &filled, None).0, 201);
    let doc = serde_json::json!({"kept": true});
    assert_eq!(request("PUT", &format!("{filled}/mine"), Some(&doc)).0, 201);
    let refused = run(&server, "f", &["--runs=3"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "--runs 3: each repetition needs a fresh database of its own, but \"f-run2\" (1 document) already holds documents; add --recreate"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(
        get(&server.admin_db("f-run1")).0,
        404,
        "nothing was created"
    );
    assert_eq!(doc_count(&filled), 1, "nothing was touched");
    // --recreate starts it over.
    let recreated = run(&server, "f", &["--runs=3", "--recreate"]);
    assert_eq!(recreated.code, 0, "{}", recreated.stderr);
    assert_eq!(get(&format!("{filled}/mine")).0, 404);
    assert_eq!(doc_count(&filled), 70);
}

#[test]
fn ctrl_c_between_repetitions_keeps_those_that_ran() {
    let server = PouchServer::secured(Storage::Disk);
    let json = scratch_file("ctrl-c", "r.json");
    let address = format!("--database_address={}", server.admin_url);
    let out = format!("--json={}", json.display());
    // CRUD steps bound by time alone: the second repetition's is under way for 3 s.
    let mut child = spawn_sofabench(&[
        "run",
        &address,
        "--database_name=stop",
        "--quiet",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=20",
        "--num_bulk_insert_operations=2",
        "--duration=3s",
        "--runs=3",
        &out,
    ]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    // The second repetition's CRUD phase is under way once its bulk insert reported.
    while !seen.contains("REPETITION 2 of 3") || !seen.ends_with("BULK INSERT BENCHMARK RESULTS:\n")
    {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    stdout.read_to_string(&mut seen).unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{seen}");
    assert!(
        seen.contains(
            "REPETITIONS: 1 of 3 finished (repetition 2 interrupted, left out; 1 not started)"
        ),
        "{seen}"
    );
    let result = read(&json);
    assert!(result.interrupted);
    let kept: Vec<(u64, bool)> = result
        .repetitions
        .iter()
        .map(|r| (r.index, r.interrupted))
        .collect();
    assert_eq!(kept, [(1, false), (2, true)]);
    assert_eq!(
        get(&server.admin_db("stop-run3")).0,
        404,
        "no third repetition"
    );
}
