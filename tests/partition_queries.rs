//! Partition queries (`partition = true`) need a partitioned database: without
//! `--db-partitioned` the run stops before it sends anything, with one message naming the
//! query and the fix. (PouchDB Server has no partitions; the queries themselves were
//! checked on Apache CouchDB 3.5, see docs/verified.md.)

mod common;

use common::*;

const SCENARIO: &str = r#"
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
total = 1
[[phase]]
name = "scoped"
mix = { find = 1 }
queries = { find = "in_partition" }
total = 5
[query.in_partition]
kind = "find"
field = "country"
limit = 100
partition = true
"#;

#[test]
fn a_partition_query_without_a_partitioned_database_is_refused_before_anything_is_sent() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = scratch("partition_queries", "refused");
    let file = dir.join("scenario.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=scoped",
        "--json_document_schema_filename=examples/domains.json",
        "--scenario",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "sofabench: error: query \"in_partition\": partition = true needs a partitioned \
         database; add --db-partitioned (Apache CouchDB 3 or later), or leave partition out"
    );
    let (status, _) = get(&server.admin_db("scoped"));
    assert_eq!(status, 404, "nothing was created");
}
