//! Document shape against PouchDB Server on disk, with an admin: padded sizes, id
//! schemes, and partitioned databases refused where the server has none.

mod common;

use common::*;
use serde_json::Value;

/// A template without floats: its documents read back byte for byte.
const TEMPLATE: &str = "--json_document_schema_filename=examples/account.json";

fn run(server: &PouchServer, db: &str, extra: &[&str]) -> Run {
    let address = format!("--database_address={}", server.admin_url);
    let name = format!("--database_name={db}");
    let mut args = vec![
        "run",
        address.as_str(),
        name.as_str(),
        "--quiet",
        "--seed=5",
        "--id-prefix=shape",
        TEMPLATE,
    ];
    args.extend_from_slice(extra);
    let run = sofabench(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run
}

/// Every live document: its id, its generation, and its size as sent (compact JSON,
/// its `_id` in, its `_rev` out).
fn documents(db_url: &str) -> Vec<(String, u32, usize)> {
    let (status, body) = get(&format!("{db_url}/_all_docs?include_docs=true"));
    assert_eq!(status, 200, "{body}");
    body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut doc = row["doc"].clone();
            let rev = doc.as_object_mut().unwrap().remove("_rev").unwrap();
            let generation = rev.as_str().unwrap().split('-').next().unwrap();
            let size = serde_json::to_vec(&doc).unwrap().len();
            let id = doc["_id"].as_str().unwrap().to_string();
            (id, generation.parse().unwrap(), size)
        })
        .collect()
}

fn is_sequential(id: &str) -> bool {
    id.strip_prefix("shape-")
        .is_some_and(|n| n.len() >= 10 && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_uuid(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[test]
fn padded_documents_keep_their_size_through_updates() {
    let server = PouchServer::secured(Storage::Disk);
    let run = run(
        &server,
        "padded",
        &[
            "--num_connections=2",
            "--num_bulk_insert_operations=2",
            "--num_documents_per_bulk_insert=20",
            "--num_crud_operations=40",
            "--doc-size=2000",
        ],
    );
    assert!(
        run.stdout.contains("documents of 2000 bytes"),
        "{}",
        run.stdout
    );
    let docs = documents(&server.admin_db("padded"));
    assert_eq!(docs.len() as u64, doc_count(&server.admin_db("padded")));
    assert!(docs.len() >= 60, "{}", docs.len());
    assert!(docs.iter().any(|d| d.1 > 1), "some documents were updated");
    for (id, generation, size) in &docs {
        assert!(is_sequential(id), "{id}");
        assert_eq!(*size, 2000, "{id} at generation {generation}");
    }
}

#[test]
fn a_size_range_and_uuid_ids_reach_the_database() {
    let server = PouchServer::secured(Storage::Disk);
    run(
        &server,
        "ranged",
        &[
            "--num_connections=2",
            "--num_bulk_insert_operations=3",
            "--num_documents_per_bulk_insert=25",
            "--num_crud_operations=30",
            "--doc-size=500-5000",
            "--id-scheme=uuid",
        ],
    );
    let docs = documents(&server.admin_db("ranged"));
    assert!(docs.len() >= 120, "{}", docs.len());
    let sizes: Vec<usize> = docs.iter().map(|d| d.2).collect();
    assert!(sizes.iter().all(|s| (500..=5000).contains(s)), "{sizes:?}");
    assert!(sizes.iter().min() < Some(&1500) && sizes.iter().max() > Some(&4000));
    assert!(docs.iter().all(|d| is_uuid(&d.0)), "{docs:?}");
    assert!(
        docs.iter().any(|d| d.1 > 1),
        "uuid documents were found again to update"
    );
}

#[test]
fn the_id_scheme_scenario_stores_both_kinds() {
    let server = PouchServer::secured(Storage::Disk);
    let run = run(
        &server,
        "schemes",
        &[
            "--scenario=id-scheme",
            "--total-operations=3",
            "--num_documents_per_bulk_insert=10",
        ],
    );
    assert_eq!(run.count("bulk_insert"), 9, "{}", run.stdout);
    let docs = documents(&server.admin_db("schemes"));
    let sequential = docs.iter().filter(|d| is_sequential(&d.0)).count();
    let uuid = docs.iter().filter(|d| is_uuid(&d.0)).count();
    assert_eq!((sequential, uuid, docs.len()), (30, 30, 90), "{docs:?}");
}

#[test]
fn ids_the_server_gives_are_kept_and_used_by_every_later_operation() {
    let server = PouchServer::secured(Storage::Disk);
    let run = run(
        &server,
        "given",
        &[
            "--num_connections=2",
            "--num_bulk_insert_operations=2",
            "--num_documents_per_bulk_insert=10",
            "--num_crud_operations=40",
            "--id-scheme=server",
        ],
    );
    assert!(
        run.stdout
            .contains("or the server's in server phases (POST /db"),
        "the header says how ids are paired: {}",
        run.stdout
    );
    for operation in ["bulk_insert", "create", "read", "update", "delete"] {
        assert_eq!(run.errors(operation), 0, "{operation}: {}", run.stdout);
    }
    let db = server.admin_db("given");
    let docs = documents(&db);
    // 40 bulk inserted, then the creates added and the deletes took away.
    let expected = 40 + run.count("create") - run.count("delete");
    assert_eq!(docs.len() as u64, expected, "{}", run.stdout);
    assert!(run.count("update") > 0 && run.count("delete") > 0);
    for (id, _, _) in &docs {
        assert!(!is_sequential(id) && !id.starts_with('_'), "{id}");
    }
    assert!(
        docs.iter().any(|d| d.1 > 1),
        "documents were found again by the ids the server gave, and updated"
    );
    // Every stored document is the template's, without an id of the tool's.
    let (_, all) = get(&format!("{db}/_all_docs?include_docs=true&limit=5"));
    for row in all["rows"].as_array().unwrap() {
        assert!(
            row["doc"]["Id"].is_number() && row["doc"]["LastLogin"].is_string(),
            "{row}"
        );
    }
}

#[test]
fn ids_the_server_gives_cannot_name_partitions() {
    let refused = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:9",
        "--db-partitioned",
        "--id-scheme=server",
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("(id scheme server), which a partitioned database refuses"),
        "{}",
        refused.stderr
    );
}

#[test]
fn the_doc_size_sweep_pads_each_phase_to_its_size() {
    let server = PouchServer::secured(Storage::Disk);
    run(
        &server,
        "sizes",
        &[
            "--scenario=doc-size-sweep",
            "--total-operations=1",
            "--num_documents_per_bulk_insert=4",
            "--num_connections=1",
        ],
    );
    let mut sizes: Vec<usize> = documents(&server.admin_db("sizes"))
        .iter()
        .map(|d| d.2)
        .collect();
    sizes.sort();
    let expected: Vec<usize> = [256, 1024, 4096, 16384, 65536]
        .iter()
        .flat_map(|&s| [s; 4])
        .collect();
    assert_eq!(sizes, expected);
}

#[test]
fn a_partitioned_database_is_refused_on_pouchdb_server_and_not_left_behind() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    let refused = sofabench(&[
        "run",
        &address,
        "--database_name=parts",
        "--quiet",
        "--db-partitioned",
        "--partitions=4",
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("does not partition databases (GET on database \"parts\" has no \"props\": {\"partitioned\": true}), so --db-partitioned cannot be honoured"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        refused.stderr.matches("error").count(),
        1,
        "{}",
        refused.stderr
    );
    let (status, _) = get(&server.admin_db("parts"));
    assert_eq!(status, 404, "the database the run created is deleted");
    let (status, body): (u16, Value) = get(&format!("{}/_all_dbs", server.admin_url));
    assert_eq!(status, 200);
    assert!(!body.to_string().contains("parts"), "{body}");
    let alone = sofabench(&["run", &address, "--database_name=parts", "--partitions=4"]);
    assert_eq!(alone.code, 2);
    assert!(
        alone.stderr.contains("--partitions needs --db-partitioned"),
        "{}",
        alone.stderr
    );
}
