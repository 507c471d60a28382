//! Attachments: standalone writes streamed from the seed and reads counted as they come,
//! against PouchDB Server on disk, and a server whose attachment answers never end.

mod common;

use std::time::Duration;

use common::bad_server::{self, BadServer, Fault, sofabench_within};
use common::*;
use sofabench::workload::attachment::attachment_body;

const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 10
total = 2
connections = 2
[[phase]]
name = "attach"
mix = { attachment_write = 1 }
total = 20
connections = 2
[[phase]]
name = "fetch"
mix = { attachment_read = 1 }
total = 30
connections = 2
"#;

fn scenario_file(dir: &std::path::Path) -> String {
    let file = dir.join("attach.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    file.to_str().unwrap().to_string()
}

/// The bytes the run with `seed` wrote on document `id` (`<prefix><number>`).
fn expected_bytes(seed: u64, number: u64, length: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    attachment_body(seed, number, length).write_part(0, length as usize, &mut bytes);
    bytes
}

fn raw_get(url: &str) -> Vec<u8> {
    let response = ureq::get(url).call().expect("GET attachment");
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut response.into_reader(), &mut bytes).unwrap();
    bytes
}

#[test]
fn attachments_are_written_streamed_and_read_back_with_their_lengths() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario_file(dir.path());
    let address = format!("--database_address={}", server.admin_url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=att",
        "--quiet",
        "--seed=5",
        "--id-prefix=d",
        "--attachment-size=3000,70000",
        "--scenario",
        &file,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("attachment_write"), 20, "{}", run.stdout);
    assert_eq!(run.errors("attachment_write"), 0, "{}", run.stdout);
    assert_eq!(run.count("attachment_read"), 30, "{}", run.stdout);
    assert_eq!(run.errors("attachment_read"), 0, "{}", run.stdout);

    let db = server.admin_db("att");
    let (status, all) = get(&format!("{db}/_all_docs?include_docs=true"));
    assert_eq!(status, 200, "{all}");
    let mut attached = 0;
    for row in all["rows"].as_array().unwrap() {
        let Some(blob) = row["doc"]["_attachments"]["blob"].as_object() else {
            continue;
        };
        attached += 1;
        let id = row["id"].as_str().unwrap();
        let length = blob["length"].as_u64().unwrap();
        assert!([3000, 70000].contains(&length), "{id}: {length}");
        let number: u64 = id.trim_start_matches("d-").parse().unwrap();
        let stored = raw_get(&format!("{db}/{id}/blob"));
        assert_eq!(stored.len() as u64, length, "{id}");
        assert!(
            stored == expected_bytes(5, number, length),
            "{id}: the stored bytes are the seed's"
        );
        assert_eq!(blob["content_type"], "application/octet-stream");
    }
    assert!(attached > 0 && attached <= 20, "{attached} documents");
}

#[test]
fn an_endless_attachment_answer_fails_as_too_large_in_bounded_memory() {
    let server = BadServer::start(Fault::EndlessChunks, bad_server::attachment_reads);
    let dir = tempfile::tempdir().unwrap();
    let file = scenario_file(dir.path());
    let address = format!("--database_address={}", server.url);
    let run = sofabench_within(
        2 << 20,
        &[
            "run",
            &address,
            "--database_name=db",
            "--quiet",
            "--seed=1",
            "--attachment-size=100000",
            "--timeout=30s",
            "--scenario",
            &file,
        ],
    );
    assert!(run.took < Duration::from_secs(30), "{}", run.stdout);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("failed attachment_read: too_large x30"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn a_bad_attachment_size_is_refused_with_the_fix() {
    for bad in ["0", "5GiB", "1KiB,,2KiB", "lots"] {
        let flag = format!("--attachment-size={bad}");
        let run = sofabench(&["run", "--database_address=http://127.0.0.1:9", &flag]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains("attachment-size"),
            "{bad}: {}",
            run.stderr
        );
    }
}

#[test]
fn attachment_weights_mix_attachments_into_iron_cushions_crud_step() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=weights",
        "--quiet",
        "--seed=9",
        "--id-prefix=w",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=20",
        "--create_weight=1",
        "--read_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
        "--attachment_write_weight=2",
        "--attachment-read-weight=1",
        "--attachment-size=2000",
    ]);
    // 20 operations a connection split 1:2:1 by the weights.
    assert_eq!(run.count("create"), 10, "{}", run.stdout);
    assert_eq!(run.count("attachment_write"), 20, "{}", run.stdout);
    assert_eq!(run.errors("attachment_write"), 0, "{}", run.stdout);
    // A read drawn before its connection wrote any attachment has none to read: that is
    // the only way one may fail.
    let failed_reads = run.errors("attachment_read");
    assert_eq!(
        run.count("attachment_read") + failed_reads,
        10,
        "{}",
        run.stdout
    );
    if failed_reads > 0 {
        let line = format!("failed attachment_read: no_document x{failed_reads}");
        assert!(run.stdout.contains(&line), "{}", run.stdout);
    }
    let db = server.admin_db("weights");
    let (status, all) = get(&format!("{db}/_all_docs?include_docs=true"));
    assert_eq!(status, 200, "{all}");
    let attached: Vec<u64> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["doc"]["_attachments"]["blob"]["length"].as_u64())
        .collect();
    assert!(!attached.is_empty() && attached.len() <= 20, "{attached:?}");
    assert!(
        attached.iter().all(|&length| length == 2000),
        "{attached:?}"
    );
}

#[test]
fn attachment_reads_without_attachment_writes_are_refused() {
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--attachment_read_weight=1",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--attachment_read_weight=1 needs --attachment_write_weight above 0 or --bulk-attachment-size"),
        "{}",
        run.stderr
    );
}

#[test]
fn bulk_documents_carry_inline_attachments_that_later_reads_get() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inline.toml");
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 8
total = 4
connections = 2
[[phase]]
name = "fetch"
mix = { attachment_read = 1 }
total = 20
connections = 2
"#,
    )
    .unwrap();
    let address = format!("--database_address={}", server.admin_url);
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=inline",
        "--quiet",
        "--seed=11",
        "--id-prefix=i",
        "--bulk-attachment-size=100,5000",
        "--scenario",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.count("attachment_read"), 20, "{}", run.stdout);
    assert_eq!(run.errors("attachment_read"), 0, "{}", run.stdout);

    let db = server.admin_db("inline");
    let (status, all) = get(&format!("{db}/_all_docs?include_docs=true"));
    assert_eq!(status, 200, "{all}");
    let rows = all["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 32);
    let mut lengths = std::collections::BTreeSet::new();
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let blob = &row["doc"]["_attachments"]["blob"];
        let length = blob["length"].as_u64().unwrap_or_else(|| panic!("{row}"));
        lengths.insert(length);
        assert_eq!(blob["content_type"], "application/octet-stream");
        let number: u64 = id.trim_start_matches("i-").parse().unwrap();
        let stored = raw_get(&format!("{db}/{id}/blob"));
        assert!(
            stored == expected_bytes(11, number, length),
            "{id}: the stored bytes are the seed's"
        );
    }
    assert_eq!(lengths, [100, 5000].into(), "both sizes were drawn");
}

#[test]
fn inline_attachments_too_large_for_a_bulk_request_are_refused() {
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--num_documents_per_bulk_insert=1000",
        "--bulk-attachment-size=1MiB",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("give a smaller --bulk-attachment-size or batch size"),
        "{}",
        run.stderr
    );
    let bad = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--bulk-attachment-size=0",
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("--bulk-attachment-size"),
        "{}",
        bad.stderr
    );
}
