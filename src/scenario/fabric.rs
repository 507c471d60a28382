//! `fabric-bench`: the steps of Apache CouchDB's own benchmark, `fabric_bench`
//! (`src/fabric/src/fabric_bench.erl`, CouchDB 3.5.0), run over HTTP, one phase per
//! step and in its order: documents bulk inserted in batches, as many random reads of
//! them, `_all_docs` read whole without and with `include_docs`, `_changes` read whole,
//! then new documents written one at a time.
//!
//! `fabric_bench` runs inside the server's VM as one process: here the default is one
//! connection (`--num_connections` changes it). Its care for stable figures (compaction
//! off for its database, the internal replicator's backlog waited out after the insert)
//! becomes a bounded wait before each measured step for what the server lets a client
//! see of the two (`Phase::settle`).

use std::sync::Arc;

use super::builtin::Built;
use super::settings::{Layers, Spec};
use crate::query::{AllDocs, ChangesRead, Query, QueryKind};
use crate::workload::{DocSize, IdScheme, Operation, Weights};

/// `fabric_bench`'s `doc_size`: which of its three document bodies it writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FabricSize {
    Small,
    #[default]
    Medium,
    Large,
}

impl FabricSize {
    pub const ALL: [FabricSize; 3] = [FabricSize::Small, FabricSize::Medium, FabricSize::Large];

    pub fn name(self) -> &'static str {
        match self {
            FabricSize::Small => "small",
            FabricSize::Medium => "medium",
            FabricSize::Large => "large",
        }
    }

    /// `--fabric-doc-size`'s value.
    pub fn named(text: &str) -> Result<FabricSize, String> {
        FabricSize::ALL
            .into_iter()
            .find(|size| size.name() == text)
            .ok_or_else(|| {
                format!("{text:?} is not a fabric_bench size; give small, medium or large")
            })
    }

    /// The bytes of `fabric_bench`'s document of this size as compact JSON, with an id
    /// of 6 digits and a `random_val` of 16 (its bulk documents' at its default 100,000):
    /// `body(small)`, 13 short members; `body(medium)`, two hex blobs of 1,024
    /// characters, two paragraphs, 15 tags and 1,000 integers and 1,000 floats; and
    /// `body(large)`, medium with 32 members of 4,096 hex characters. Counted from its
    /// source; sofabench pads its documents to them (see [`FabricSize::template`]).
    pub fn bytes(self) -> u64 {
        match self {
            FabricSize::Small => 335,
            FabricSize::Medium => 14_555,
            FabricSize::Large => 145_874,
        }
    }
}

impl FabricSize {
    /// A template of `fabric_bench`'s body of this size: its members, in its order, with
    /// its kinds of value and its arrays' lengths (what the server's JSON decoding costs
    /// follow: medium's 1,000 integers and 1,000 floats above all), each value drawn
    /// (its integers from 1 to 1,000, as its `lists:seq(1, 1000)`; its floats `f32`s
    /// below 1, as `0.8474894`, where its are `1.0` to `1000.0`); its strings (hex
    /// blobs, paragraphs, tags) become one word each, and the padding, one string of
    /// random letters and digits, brings each document to [`FabricSize::bytes`]. Medium's
    /// floats write 3.5 KB more than its, more than its strings save: its documents are
    /// 2 to 5 % above its size, unpadded.
    pub fn template(self) -> String {
        use serde_json::{Value, json};
        let int = |min: u64, max: u64| json!({ "$integer": { "min": min, "max": max } });
        let random_val = int(1, 1 << 50);
        // One dictionary word (3 to 15 characters): short enough for the small body's
        // ten strings to stay under its 335 bytes, the padding making up the rest.
        let s = json!({ "$string": { "distinct": 32_768 } });
        let mut body = match self {
            FabricSize::Small => json!({
                "random_val": random_val, "worker_id": 72, "foo": s, "bar": s, "baz": s,
                "blah": s, "num1": s, "num2": s, "biz": s, "zab": s, "mtime": s,
                "ctime": s, "bool": false
            }),
            FabricSize::Medium | FabricSize::Large => json!({
                "random_val": random_val, "index": int(0, 0), "blob1": s, "guid": s,
                "isActive": true, "name": s, "company": s, "about": s, "extra": s,
                "registered": s, "latitude": 0.5, "longitude": 0.5,
                "tags": vec![s.clone(); 15],
                "array_ints": vec![int(1, 1000); 1000],
                "array_floats": vec![Value::from(0.5); 1000],
                "blob2": s
            }),
        };
        if self == FabricSize::Large
            && let Some(members) = body.as_object_mut()
        {
            for field in 1..=32 {
                members.insert(field.to_string(), s.clone());
            }
        }
        body.to_string()
    }
}

/// What `fabric_bench`'s `opts()` sets, as the flags give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricOptions {
    /// `docs`: documents bulk inserted, and random reads of them.
    pub docs: u64,
    /// `individual_docs`: documents written one at a time.
    pub single_docs: u64,
    pub size: FabricSize,
}

impl Default for FabricOptions {
    /// `fabric_bench`'s defaults.
    fn default() -> FabricOptions {
        FabricOptions {
            docs: 100_000,
            single_docs: 1_000,
            size: FabricSize::Medium,
        }
    }
}

/// The scenario's template, `fabric_bench`'s body of `--fabric-doc-size`, described.
pub fn template(options: &super::BuiltinOptions) -> super::OwnTemplate {
    let size = options.fabric.size;
    (
        size.template(),
        format!(
            "fabric_bench's {} body: its members and arrays, padded to its {} bytes where shorter (built in; --json_document_schema_filename for your own)",
            size.name(),
            size.bytes()
        ),
    )
}

/// `batch_size`: documents per `_bulk_docs` request.
pub const BATCH: u64 = 1_000;

/// The phases' names, in `fabric_bench`'s order, with the line it prints for each.
pub const STEPS: [(&str, &str); 6] = [
    ("fabric_insert", "Add docs"),
    ("fabric_read", "Get random doc"),
    ("fabric_all_docs", "All docs"),
    ("fabric_all_docs_include_docs", "All docs w/ include_docs"),
    ("fabric_changes", "Changes"),
    ("fabric_single_docs", "Single doc updates"),
];

fn whole(name: &str, kind: QueryKind) -> Arc<Query> {
    Arc::new(Query {
        name: name.to_string(),
        kind,
        partition: false,
    })
}

fn all_docs(include_docs: bool) -> QueryKind {
    QueryKind::AllDocs(AllDocs {
        keys: 0,
        include_docs,
        limit: None,
        whole: true,
    })
}

/// A phase of `count` operations of `operation` alone, its own count whatever
/// `--total-operations` says (each step's count is `fabric_bench`'s).
fn step(name: &str, operation: Operation, count: u64) -> Spec {
    let mut spec = Spec::new(name, Weights::only(operation, 1));
    spec.own.total = Some(count);
    spec.scenario.connections = Some(1);
    spec
}

/// The documents per bulk request the run will use, and the requests for `docs`.
fn requests(layers: &Layers, docs: u64) -> Result<u64, Vec<String>> {
    let batch = layers.given.batch_size.unwrap_or(BATCH);
    if docs == 0 {
        return Err(vec![
            "--fabric-docs 0: fabric-bench reads the documents it inserted; give 1 or more (fabric_bench's default is 100000)".to_string(),
        ]);
    }
    if batch == 0 || !docs.is_multiple_of(batch) {
        return Err(vec![format!(
            "--fabric-docs {docs} is not a multiple of the batch size {batch} (--num_documents_per_bulk_insert, 1000 by default): sofabench's bulk requests are all of one size; give a multiple of it"
        )]);
    }
    Ok(docs / batch)
}

/// The scenario's phases: see the module's comment.
pub fn fabric_bench(layers: &Layers, options: &super::BuiltinOptions) -> Built {
    let fabric = options.fabric;
    let size = Some(DocSize::fixed(fabric.size.bytes()));
    let mut insert = step(
        STEPS[0].0,
        Operation::BulkInsert,
        requests(layers, fabric.docs)?,
    );
    insert.scenario.batch_size = Some(BATCH);
    insert.shape.doc_size = size;
    let read = step(STEPS[1].0, Operation::Read, fabric.docs);
    let all = step(STEPS[2].0, Operation::AllDocs, 1);
    let all_included = step(STEPS[3].0, Operation::AllDocs, 1);
    let changes = step(STEPS[4].0, Operation::ChangesRead, 1);
    // Its `doc(random, …)`: ids drawn at random, so each insert lands anywhere in the tree.
    let mut single = step(STEPS[5].0, Operation::Create, fabric.single_docs);
    single.shape.doc_size = size;
    single.shape.ids = Some(IdScheme::Uuid);
    let queries = [
        None,
        None,
        Some(whole("all_docs_whole", all_docs(false))),
        Some(whole("all_docs_whole_include_docs", all_docs(true))),
        Some(whole(
            "changes_whole",
            QueryKind::ChangesRead(ChangesRead {
                include_docs: false,
                limit: None,
            }),
        )),
        None,
    ];
    let specs = [insert, read, all, all_included, changes, single];
    let planned = specs
        .into_iter()
        .zip(queries)
        .enumerate()
        .map(|(k, (mut spec, query))| {
            // The insert runs on whatever the database holds; every measured step after it
            // waits for the server to settle first.
            spec.settle = k > 0;
            let (mut phase, origins) = spec.decide(layers);
            if let Some(query) = query {
                phase.queries.set(query);
            }
            (phase, origins)
        });
    Ok(planned.filter(|(phase, _)| phase.has_work()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::settings::Keys;

    fn built(fabric: FabricOptions, given: Keys) -> Built {
        let layers = Layers {
            given,
            default: Keys {
                connections: Some(100),
                batch_size: Some(100),
                ..Keys::default()
            },
            ..Layers::default()
        };
        let options = super::super::BuiltinOptions {
            fabric,
            ..crate::scenario::builtin::tests::options()
        };
        fabric_bench(&layers, &options)
    }

    #[test]
    fn the_steps_are_fabric_bench_s_in_its_order_with_its_counts() {
        let phases: Vec<_> = built(FabricOptions::default(), Keys::default())
            .unwrap()
            .into_iter()
            .map(|(phase, _)| phase)
            .collect();
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, STEPS.map(|(name, _)| name));
        let operations: Vec<Vec<Operation>> = phases.iter().map(|p| p.operations()).collect();
        use Operation::*;
        assert_eq!(
            operations,
            [
                vec![BulkInsert],
                vec![Read],
                vec![AllDocs],
                vec![AllDocs],
                vec![ChangesRead],
                vec![Create]
            ]
        );
        let totals: Vec<Option<u64>> = phases.iter().map(|p| p.bound.total).collect();
        let counted = [
            Some(100),
            Some(100_000),
            Some(1),
            Some(1),
            Some(1),
            Some(1_000),
        ];
        assert_eq!(totals, counted);
        assert_eq!(
            phases[0].batch_size, 1_000,
            "its batch, not the flag's default"
        );
        assert!(phases.iter().all(|p| p.connections == 1), "one process");
        let settles: Vec<bool> = phases.iter().map(|p| p.settle).collect();
        assert_eq!(settles, [false, true, true, true, true, true]);
        let medium = Some(DocSize::fixed(14_555));
        assert_eq!(
            (phases[0].shape.doc_size, phases[5].shape.doc_size),
            (medium, medium)
        );
        assert_eq!(phases[5].shape.ids, Some(IdScheme::Uuid));
        let whole = |k: usize, op| {
            phases[k]
                .queries
                .of(op)
                .map(|q| (q.is_whole(), q.kind.clone()))
        };
        assert_eq!(whole(2, AllDocs).map(|w| w.1), Some(all_docs(false)));
        assert_eq!(whole(3, AllDocs).map(|w| w.1), Some(all_docs(true)));
        assert_eq!(whole(4, ChangesRead).map(|w| w.0), Some(true));
    }

    #[test]
    fn the_flags_set_counts_sizes_batch_and_connections() {
        let fabric = FabricOptions {
            docs: 600,
            single_docs: 0,
            size: FabricSize::Large,
        };
        let given = Keys {
            batch_size: Some(200),
            connections: Some(3),
            total: Some(7),
            ..Keys::default()
        };
        let phases: Vec<_> = built(fabric, given)
            .unwrap()
            .into_iter()
            .map(|(phase, _)| phase)
            .collect();
        assert_eq!(phases.len(), 5, "no single document step when it has none");
        assert_eq!(phases[0].bound.total, Some(3), "600 documents in 200s");
        assert_eq!(phases[0].batch_size, 200);
        assert_eq!(
            phases[1].bound.total,
            Some(600),
            "--total-operations changes no step"
        );
        assert!(phases.iter().all(|p| p.connections == 3));
        assert_eq!(phases[0].shape.doc_size, Some(DocSize::fixed(145_874)));
    }

    /// Each size's documents have `fabric_bench`'s members and arrays, and its bytes
    /// once padded (small and large); medium's 1,000 floats alone write 3.5 KB more
    /// than its, which leaves it 2 to 5 % above (nothing to pad).
    #[test]
    fn the_templates_have_fabric_bench_s_shape_and_pad_to_its_size() {
        use crate::template::{DocumentWriter, Template};
        for size in FabricSize::ALL {
            let template = Template::from_json_str(&size.template(), "fabric").unwrap();
            let writer = DocumentWriter::new(template, 3);
            for number in 0..20 {
                let id = format!("sofabench-{number:010}");
                let mut plain = Vec::new();
                writer.write(&mut plain, number, 1, Some(&id), None);
                let mut padded = Vec::new();
                let fixed = Some(DocSize::fixed(size.bytes()));
                writer.write_sized(&mut padded, number, 1, Some(&id), None, fixed);
                let (natural, bytes) = (plain.len() as u64, padded.len() as u64);
                match size {
                    FabricSize::Medium => {
                        assert_eq!(bytes, natural, "nothing to pad");
                        let (low, high) = (size.bytes() * 102 / 100, size.bytes() * 105 / 100);
                        assert!((low..=high).contains(&bytes), "medium {bytes}");
                    }
                    _ => assert_eq!(bytes, size.bytes(), "{} from {natural}", size.name()),
                }
                let doc: serde_json::Value = serde_json::from_slice(&padded).unwrap();
                let members = doc.as_object().unwrap().len();
                let ints = doc["array_ints"].as_array().map(|a| a.len());
                match size {
                    // Its members, `_id` and (but medium) the padding.
                    FabricSize::Small => assert_eq!((members, ints), (13 + 2, None)),
                    FabricSize::Medium => assert_eq!((members, ints), (16 + 1, Some(1000))),
                    FabricSize::Large => assert_eq!((members, ints), (48 + 2, Some(1000))),
                }
                if let Some(ints) = doc["array_ints"].as_array() {
                    assert!(
                        ints.iter()
                            .all(|i| (1..=1000).contains(&i.as_u64().unwrap()))
                    );
                    assert_eq!(doc["array_floats"].as_array().unwrap().len(), 1000);
                    assert_eq!(doc["tags"].as_array().unwrap().len(), 15);
                }
            }
        }
    }

    #[test]
    fn counts_that_cannot_run_are_refused_with_the_fix() {
        let uneven = FabricOptions {
            docs: 1_500,
            ..FabricOptions::default()
        };
        let problems = built(uneven, Keys::default()).unwrap_err();
        assert!(
            problems[0].contains("not a multiple of the batch size 1000"),
            "{problems:?}"
        );
        let none = FabricOptions {
            docs: 0,
            ..FabricOptions::default()
        };
        assert!(built(none, Keys::default()).unwrap_err()[0].contains("give 1 or more"));
        assert_eq!(FabricSize::named("large"), Ok(FabricSize::Large));
        assert!(
            FabricSize::named("huge")
                .unwrap_err()
                .contains("small, medium or large")
        );
    }
}
