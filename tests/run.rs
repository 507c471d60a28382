//! Functional tests of `sofabench run` against a real PouchDB Server started per test.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const ADDRESS: &str = "--database_address";

fn small_run(server: &PouchServer, db: &str, extra: &[&str]) -> Run {
    let address = format!("{ADDRESS}={}", server.url);
    let name = format!("--database_name={db}");
    let mut args = vec![
        "run",
        address.as_str(),
        name.as_str(),
        "--quiet",
        "--json_document_schema_filename=examples/ironcushion.json",
        "--num_connections=4",
        "--num_documents_per_bulk_insert=50",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=100",
        "--create_weight=2",
        "--read_weight=2",
        "--update_weight=3",
        "--delete_weight=3",
    ];
    args.extend_from_slice(extra);
    sofabench(&args)
}

#[test]
fn the_database_holds_what_the_report_says() {
    let server = PouchServer::start();
    let run = small_run(&server, "crud", &["--seed=11", "--id-prefix=t"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let (bulk, create, read, update, delete) = (
        run.count("bulk_insert"),
        run.count("create"),
        run.count("read"),
        run.count("update"),
        run.count("delete"),
    );
    // 4 connections x 100 operations, weights 2/2/3/3 of 10; bulk 4 x 2 requests of 50.
    assert_eq!((bulk, create, read, update, delete), (8, 80, 80, 120, 120));
    let db = server.db("crud");
    assert_eq!(doc_count(&db), 400 + create - delete);

    let all = changes(&db);
    assert_eq!(all.len() as u64, 400 + create, "every document ever stored");
    let deleted = all.iter().filter(|(_, _, d)| *d).count() as u64;
    assert_eq!(deleted, delete);
    // Each successful update and delete adds one revision to its document.
    let extra_revisions: u64 = all.iter().map(|(_, g, _)| u64::from(*g) - 1).sum();
    assert_eq!(extra_revisions, update + delete);
    assert!(all.iter().all(|(id, _, _)| id.starts_with("t-")));
    for (id, generation, is_deleted) in all.iter().take(50) {
        let (status, doc) = get(&format!("{db}/{id}"));
        if *is_deleted {
            assert_eq!(status, 404, "{id} was deleted");
        } else {
            assert_eq!(status, 200);
            assert!(
                doc["_rev"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{generation}-"))
            );
        }
    }
}

#[test]
fn histogram_rows_are_as_wide_as_their_header() {
    let server = PouchServer::start();
    let run = small_run(&server, "histogram", &["--seed=3"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let mut tables = 0;
    let lines: Vec<&str> = run.stdout.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("histogram ") {
            continue;
        }
        tables += 1;
        let width = line.split_whitespace().count();
        let rows = lines[at + 1..]
            .iter()
            .take_while(|l| l.trim_end().ends_with('%'));
        for row in rows {
            assert_eq!(row.split_whitespace().count(), width, "{line}\n{row}");
        }
    }
    assert_eq!(tables, 2, "one table per phase:\n{}", run.stdout);
}

/// Iron Cushion's shape at a size where PouchDB Server on LevelDB answers `_bulk_docs`
/// rows out of order (tens of swaps per 10,000 documents): no failure, and the database
/// holds what the report says.
fn a_run_at_scale_has_no_failures_the_tool_caused(server: &PouchServer) {
    let address = format!("{ADDRESS}={}", server.admin_url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=scale",
        "--quiet",
        "--seed=1",
        "--num_connections=10",
        "--num_documents_per_bulk_insert=1000",
        "--num_bulk_insert_operations=1",
        "--num_crud_operations=1000",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("failed "), "{}", run.stdout);
    let (create, delete) = (run.count("create"), run.count("delete"));
    // Weights 2/2/3/3 of 10 x 1,000.
    assert_eq!((create, run.count("update"), delete), (2_000, 3_000, 3_000));
    let db = server.admin_db("scale");
    let (status, info) = get(&db);
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["doc_count"], json!(10_000 + create - delete), "{info}");
    if let Some(deleted) = info["doc_del_count"].as_u64() {
        assert_eq!(deleted, delete, "{info}");
    }
    let all = changes(&db);
    assert_eq!(all.iter().filter(|(_, _, d)| *d).count() as u64, delete);
}

#[test]
fn at_scale_on_disk_with_an_admin() {
    a_run_at_scale_has_no_failures_the_tool_caused(&PouchServer::secured(Storage::Disk));
}

#[test]
fn at_scale_in_memory() {
    a_run_at_scale_has_no_failures_the_tool_caused(&PouchServer::start());
}

/// The documents of the database, without `_id` and `_rev`, by their number.
fn contents(db: &str) -> HashMap<u64, (u32, Value)> {
    let (status, body) = get(&format!("{db}/_all_docs?include_docs=true"));
    assert_eq!(status, 200);
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut doc = row["doc"].clone();
            let map = doc.as_object_mut().unwrap();
            let id = map.remove("_id").unwrap();
            let rev = map.remove("_rev").unwrap();
            let number = id
                .as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let generation = rev
                .as_str()
                .unwrap()
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            (number, (generation, doc))
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_documents_and_operations() {
    let server = PouchServer::start();
    for db in ["first", "second"] {
        let run = small_run(&server, db, &["--seed=5"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let other = small_run(&server, "other", &["--seed=6"]);
    assert_eq!(other.code, 0, "{}", other.stderr);
    let first = contents(&server.db("first"));
    assert_eq!(first, contents(&server.db("second")));
    assert_ne!(first, contents(&server.db("other")));
    let deleted = |db: &str| -> Vec<String> {
        let mut ids: Vec<String> = changes(&server.db(db))
            .into_iter()
            .filter(|c| c.2)
            .map(|c| c.0.rsplit('-').next().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(deleted("first"), deleted("second"));

    // Bulk-inserted documents that were never updated are what `generate` prints.
    let generated = sofabench(&[
        "generate",
        "--schema",
        "examples/ironcushion.json",
        "-n",
        "400",
        "--seed=5",
    ]);
    let lines: Vec<Value> = generated
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut compared = 0;
    for (number, (generation, doc)) in &first {
        if *number < 400 && *generation == 1 {
            assert_eq!(doc, &lines[*number as usize], "document {number}");
            compared += 1;
        } else if *number < 400 {
            // An update regenerates exactly one top-level value.
            let original = lines[*number as usize].as_object().unwrap();
            let changed = doc
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, v)| original[k.as_str()] != **v)
                .count();
            assert!(
                changed <= generation.saturating_sub(1) as usize,
                "{number}: {changed} values changed"
            );
        }
    }
    assert!(compared > 100, "only {compared} documents compared");
}

#[test]
fn iron_cushion_command_line_runs_unchanged() {
    let server = PouchServer::start();
    // The README's example, scaled down, with no subcommand.
    let run = sofabench(&[
        &format!("--database_address={}", server.url),
        "--database_name=example",
        "--json_document_schema_filename=examples/ironcushion.json",
        "--num_connections=10",
        "--num_documents_per_bulk_insert=100",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=20",
        "--create_weight=2",
        "--read_weight=2",
        "--update_weight=3",
        "--delete_weight=3",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for field in [
        "timeTaken",
        "totalJsonBytesSent",
        "totalJsonBytesReceived",
        "localProcessing",
        "sendData",
        "remoteProcessing",
        "receiveData",
        "remoteProcessingRate",
        "localInsertRate",
        "remoteCreateProcessing",
        "remoteReadProcessing",
        "remoteUpdateProcessing",
        "remoteDeleteProcessing",
        "remoteCreateProcessingRate",
        "remoteReadProcessingRate",
        "remoteUpdateProcessingRate",
        "remoteDeleteProcessingRate",
    ] {
        assert!(
            !run.fields(field).is_empty(),
            "{field} missing:\n{}",
            run.stdout
        );
    }
    // Microsecond resolution, not whole milliseconds.
    let taken = &run.fields("timeTaken")[0];
    assert!(
        taken.split('.').nth(1).unwrap().len() >= 6 + " secs".len(),
        "{taken}"
    );
    assert_eq!(doc_count(&server.db("example")), 2000 + 40 - 60);
}

#[test]
fn validation_failures_explain_and_send_nothing() {
    let server = PouchServer::start();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--create_weight=1", "--read_weight=1", "--delete_weight=3"],
            "--delete_weight=3 is larger",
        ),
        (
            &[
                "--create_weight=0",
                "--read_weight=0",
                "--delete_weight=0",
                "--update_weight=1",
            ],
            "--update_weight=1 needs",
        ),
        (
            &[
                "--num_bulk_insert_operations=0",
                "--create_weight=1",
                "--read_weight=1",
                "--update_weight=0",
                "--delete_weight=2",
            ],
            "would delete",
        ),
        (&["--num_connections=0"], "--num_connections=0"),
        (
            &["--threshold=reads.p99 < 20ms"],
            "\"reads\" is not an operation",
        ),
        (
            &["--threshold=crd:update.mean < 20ms"],
            "the scenario has no phase \"crd\"",
        ),
    ];
    for (flags, message) in cases {
        let run = small_run(&server, "invalid", flags);
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{flags:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"));
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    assert_eq!(get(&server.db("invalid")).0, 404, "nothing was created");

    let run = small_run(
        &server,
        "invalid",
        &["--json_document_schema_filename=/nonexistent.json"],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("/nonexistent.json"), "{}", run.stderr);
}

#[test]
fn zero_counts_skip_steps() {
    let server = PouchServer::start();
    let run = small_run(&server, "onlybulk", &["--num_crud_operations=0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("BULK INSERT BENCHMARK RESULTS"));
    assert!(!run.stdout.contains("CRUD BENCHMARK RESULTS"));
    assert_eq!(doc_count(&server.db("onlybulk")), 400);

    let run = small_run(
        &server,
        "nodelete",
        &["--num_bulk_insert_operations=0", "--delete_weight=0"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("BULK INSERT BENCHMARK RESULTS"));
    assert_eq!(run.count("delete"), 0);
    assert_eq!(doc_count(&server.db("nodelete")), run.count("create"));
}

#[test]
fn existing_data_is_only_touched_when_asked() {
    let server = PouchServer::start();
    let db = server.db("mine");
    assert_eq!(request("PUT", &db, None).0, 201);
    assert_eq!(
        request(
            "PUT",
            &format!("{db}/precious"),
            Some(&json!({"keep": true}))
        )
        .0,
        201
    );

    let refused = small_run(&server, "mine", &[]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("--reuse") && refused.stderr.contains("--recreate"),
        "{}",
        refused.stderr
    );
    assert_eq!(doc_count(&db), 1, "untouched");

    // --cleanup never deletes a database the run did not create.
    let reused = small_run(
        &server,
        "mine",
        &["--reuse", "--cleanup", "--num_crud_operations=0"],
    );
    assert_eq!(reused.code, 0, "{}", reused.stderr);
    assert_eq!(doc_count(&db), 401);
    assert_eq!(get(&format!("{db}/precious")).0, 200);

    let recreated = small_run(&server, "mine", &["--recreate", "--num_crud_operations=0"]);
    assert_eq!(recreated.code, 0, "{}", recreated.stderr);
    assert_eq!(doc_count(&db), 400);
    assert_eq!(get(&format!("{db}/precious")).0, 404);

    let cleaned = small_run(&server, "fresh", &["--cleanup"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    assert_eq!(
        get(&server.db("fresh")).0,
        404,
        "--cleanup deletes what the run created"
    );
}

#[test]
fn an_unreachable_server_is_one_clear_message() {
    let port = free_port();
    let run = sofabench(&[
        "run",
        &format!("--database_address=http://127.0.0.1:{port}"),
        "--quiet",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("cannot reach"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!run.stdout.contains("RESULTS"));
    assert!(run.took < Duration::from_secs(6));
}

#[test]
fn a_server_that_is_not_couchdb_is_named() {
    // Something that speaks HTTP but is not CouchDB: a tiny one-shot server.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<html>hello</html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let run = sofabench(&[
        "run",
        &format!("--database_address=http://127.0.0.1:{port}"),
        "--quiet",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("does not answer like a CouchDB server"),
        "{}",
        run.stderr
    );
}

#[test]
fn credentials_work_and_passwords_never_show() {
    let server = PouchServer::start_with_config(
        r#"{"log":{"file":"/dev/null","level":"none"},"admins":{"someone":"t0p-secret"}}"#,
    );
    let run_as = |password: &str| {
        let address = server
            .url
            .replace("http://", &format!("http://someone:{password}@"));
        sofabench(&[
            "run",
            &format!("--database_address={address}"),
            "--database_name=auth",
            "--quiet",
            "--num_connections=2",
            "--num_bulk_insert_operations=1",
            "--num_documents_per_bulk_insert=10",
            "--num_crud_operations=10",
        ])
    };
    let run = run_as("t0p-secret");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("t0p-secret") && !run.stderr.contains("t0p-secret"));
    assert!(run.stdout.contains("someone"));

    let wrong = run_as("wr0ng-guess");
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    assert!(
        wrong.stderr.contains("refused the credentials"),
        "{}",
        wrong.stderr
    );
    assert!(!wrong.stderr.contains("wr0ng-guess") && !wrong.stdout.contains("wr0ng-guess"));
}

#[test]
fn a_database_deleted_mid_run_is_counted_as_404s() {
    let server = PouchServer::start();
    let db = server.db("vanishing");
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=vanishing",
        "--timeout=2s",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=3000",
        "--create_weight=1",
        "--read_weight=1",
        "--update_weight=1",
        "--delete_weight=0",
    ]);
    assert!(wait_for(
        Duration::from_secs(20),
        || get(&db).1["doc_count"].as_u64().unwrap_or(0) > 40
    ));
    assert_eq!(request("DELETE", &db, None).0, 200);
    let run = finish(child);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("failed") && run.stdout.contains("404 x"),
        "{}",
        run.stdout
    );
    assert!(run.errors("read") + run.errors("update") + run.errors("create") > 0);
}

#[test]
fn json_byte_totals_equal_the_bodies_on_the_wire() {
    let server = PouchServer::start();
    let proxy = common::counting_proxy::CountingProxy::start(server.port);
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", proxy.url),
        "--database_name=bytes",
        "--quiet",
        "--num_connections=3",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=20",
        "--num_crud_operations=60",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let total = |name: &str| -> u64 {
        run.fields(name)
            .iter()
            .map(|v| {
                v.trim_end_matches(" bytes")
                    .replace(',', "")
                    .parse::<u64>()
                    .unwrap()
            })
            .sum()
    };
    let sent = total("totalJsonBytesSent");
    let received = total("totalJsonBytesReceived");
    assert!(sent > 0 && received > 0);
    // The proxy also saw the setup requests (GET /, GET and PUT of the database) and
    // the disk looks (GET /db before, every interval of and after each phase), which
    // have no request body; their answers are small and counted separately below.
    assert_eq!(
        proxy
            .bytes
            .to_server
            .load(std::sync::atomic::Ordering::Relaxed),
        sent
    );
    let from_server = proxy
        .bytes
        .from_server
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        // Setup answers (under 1 KB) and a few disk looks (about 250 bytes each).
        from_server >= received && from_server - received < 5_000,
        "{from_server} vs {received}"
    );
}

#[test]
fn a_config_file_sets_flags_and_the_command_line_wins() {
    let server = PouchServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bench.toml");
    std::fs::write(
        &config,
        format!(
            "database_address = '{}'\ndatabase_name = 'fromfile'\nnum_connections = 3\nnum_documents_per_bulk_insert = 7\nnum_bulk_insert_operations = 2\nnum_crud_operations = 0\nquiet = true\n",
            server.url
        ),
    )
    .unwrap();
    let config_arg = format!("--config={}", config.display());
    let run = sofabench(&["run", &config_arg, "--num_connections=2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        doc_count(&server.db("fromfile")),
        2 * 2 * 7,
        "the flag's 2 connections, not the file's 3"
    );

    let json = dir.path().join("config.json");
    std::fs::write(&json, r#"{"num_conections": 4}"#).unwrap();
    let run = sofabench(&["run", &format!("--config={}", json.display())]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown key \"num_conections\"")
            && run.stderr.contains("num_connections"),
        "{}",
        run.stderr
    );
}

#[test]
fn credentials_from_the_environment_stay_out_of_output() {
    let server = PouchServer::start_with_config(
        r#"{"log":{"file":"/dev/null","level":"none"},"admins":{"envuser":"env-s3cret"}}"#,
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .args([
            "run",
            &format!("--database_address={}", server.url),
            "--database_name=envauth",
            "--quiet",
            "--num_connections=1",
            "--num_bulk_insert_operations=1",
            "--num_documents_per_bulk_insert=5",
            "--num_crud_operations=5",
        ])
        .env("SOFABENCH_USER", "envuser")
        .env("SOFABENCH_PASSWORD", "env-s3cret")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("envuser")
            && !stdout.contains("env-s3cret")
            && !stderr.contains("env-s3cret")
    );
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .args(["run", "--help"])
        .env("SOFABENCH_PASSWORD", "env-s3cret")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("SOFABENCH_PASSWORD") && !help.contains("env-s3cret"),
        "{help}"
    );
}

/// `--busy-poll` changes how the client waits, not what it does: the database holds what
/// the report says, the header says so and the result records it.
#[test]
fn busy_polling_runs_the_same_operations() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("{ADDRESS}={}", server.admin_url);
    let out = tempfile::tempdir().unwrap();
    let json = format!("--json={}", out.path().join("r.json").display());
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=busy",
        "--seed=5",
        "--num_connections=4",
        "--num_documents_per_bulk_insert=100",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=200",
        "--busy-poll",
        &json,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("(--busy-poll)"), "{}", run.stdout);
    assert!(!run.stdout.contains("failed "), "{}", run.stdout);
    let (create, delete) = (run.count("create"), run.count("delete"));
    assert_eq!((create, run.count("update"), delete), (160, 240, 240));
    let (status, info) = get(&server.admin_db("busy"));
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["doc_count"], json!(800 + create - delete), "{info}");
    let result: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(result["config"]["busy_poll"], json!(true));
    let intervals = result["phases"][1]["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    assert!(intervals.iter().all(|i| i["polling"] == json!(true)));
}

/// The report ends with the summary: a row per phase whose counts are the report's, the
/// thresholds and the verdict as the exit code has them, and the files as written.
#[test]
fn the_report_ends_with_a_summary_a_person_reads_first() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("{ADDRESS}={}", server.admin_url);
    let out = tempfile::tempdir().unwrap();
    let folder = format!("--out={}", out.path().display());
    let summary_of = |run: &Run| -> Vec<String> {
        let start = run.stdout.find("SUMMARY:\n").expect("a summary");
        run.stdout[start..].lines().map(str::to_string).collect()
    };
    let passing = small_run(
        &server,
        "summary",
        &[&address, &folder, "--threshold=error_rate<1%", "--seed=3"],
    );
    assert_eq!(passing.code, 0, "{}\n{}", passing.stdout, passing.stderr);
    let lines = summary_of(&passing);
    let crud: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(crud[0], "crud", "{lines:?}");
    let done: u64 = ["create", "read", "update", "delete"]
        .iter()
        .map(|op| passing.count(op))
        .sum();
    assert_eq!(crud[2], done.to_string(), "{lines:?}");
    assert_eq!(crud[3], "0", "{lines:?}");
    assert!(lines[2].starts_with("  bulk_insert "), "{lines:?}");
    assert!(lines[2].ends_with(" documents/s)"), "{lines:?}");
    assert_eq!(lines[4], "  thresholds: 1 of 1 passed");
    assert_eq!(lines[5], "  verdict: PASSED");
    let files = lines[6]
        .strip_prefix(&format!("  result files in {}: ", out.path().display()))
        .unwrap_or_else(|| panic!("{lines:?}"));
    for name in files.split(", ") {
        assert!(out.path().join(name).is_file(), "{name} of {lines:?}");
    }
    assert!(files.starts_with("result.json, result.csv, result.html"));

    // A threshold nothing can meet fails the run, and the summary says so.
    let failing = small_run(
        &server,
        "summary2",
        &[&address, "--threshold=p99<1us", "--seed=3"],
    );
    assert_eq!(failing.code, 1, "{}\n{}", failing.stdout, failing.stderr);
    let lines = summary_of(&failing);
    assert!(
        lines[4].starts_with("  thresholds: 1 of 1 failed: p99<1us (actual "),
        "{lines:?}"
    );
    assert_eq!(lines[5], "  verdict: FAILED: 1 threshold failed");
    assert!(lines[6].starts_with("  result files: none written"));
}

/// `--threads` sets the client's threads: the header and the result say how many, the
/// run is the same; a count out of range is refused before anything is sent.
#[test]
fn the_client_runs_on_the_threads_it_is_given() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("{ADDRESS}={}", server.admin_url);
    let out = tempfile::tempdir().unwrap();
    let json = format!("--json={}", out.path().join("r.json").display());
    let run = small_run(&server, "threads", &[&address, "--threads=1", &json]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("  client: 1 thread ("),
        "{}",
        run.stdout
    );
    let (create, delete) = (run.count("create"), run.count("delete"));
    let (status, info) = get(&server.admin_db("threads"));
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["doc_count"], json!(400 + create - delete), "{info}");
    let result: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(result["config"]["threads"], json!(1));

    for wrong in ["0", "1025", "many"] {
        let refused = small_run(&server, "never", &[&address, &format!("--threads={wrong}")]);
        assert_eq!(refused.code, 2, "{wrong}: {}", refused.stderr);
        assert!(
            refused.stderr.contains("from 1 to 1024"),
            "{}",
            refused.stderr
        );
    }
    let (status, _) = get(&server.admin_db("never"));
    assert_eq!(status, 404, "nothing was created");
}

/// `--db-q`/`--db-n` need a server that shards databases: PouchDB Server does not, so
/// the run says so before any operation and leaves no database behind.
#[test]
fn shards_are_refused_by_a_server_without_them() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("{ADDRESS}={}", server.admin_url);
    let run = small_run(&server, "sharded", &[&address, "--db-q=4", "--db-n=1"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "the server does not shard databases (GET on database \"sharded\" has no \"cluster\")"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("RESULTS"), "{}", run.stdout);
    let (status, _) = get(&server.admin_db("sharded"));
    assert_eq!(status, 404, "the database it made is deleted");
    let refused = small_run(&server, "sharded", &[&address, "--db-q=0"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("--db-q"), "{}", refused.stderr);
}

/// `--db-n 3` on a single CouchDB node: the database the run made has n=1. The run says
/// that it made it, what the server gave, that it deleted it, and what to do.
#[test]
fn copies_a_single_node_cannot_keep_are_explained_and_the_database_made_is_deleted() {
    let couch = common::couch_like::CouchLike::fresh("copies");
    let address = format!("--database_address={}", couch.url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=copies",
        "--db-n=3",
        "--num_crud_operations=10",
        "--quiet",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    for says in [
        "the run made database \"copies\" asking for n=3, and the server gave it q=2, n=1",
        "a single node keeps n=1",
        "give --db-n no larger than the cluster's number of nodes",
        "the run deleted database \"copies\", which it had made",
    ] {
        assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("--recreate"), "{}", run.stderr);
    assert!(!couch.exists(), "the database the run made is left");
}
