//! The built-in query scenarios, `mango` and `views`: a load, an index built on the idle
//! database and timed, queries alone (their rows checked against the seed's documents
//! where the check applies), the same queries under writes, and a second index built
//! while writes go on.
//!
//! Their queries draw on one top-level field of the template (`--query-field`, Iron
//! Cushion's `integer1` by default). Its values are uniform over the signed 32-bit range
//! in Iron Cushion's templates, so a range of [`RANGE`] holds about 1 document in 200.

use std::sync::Arc;

use super::BuiltinOptions;
use super::builtin::Built;
use super::settings::{Keys, Layers, Spec};
use crate::query::{Draw, Find, Query, QueryKind, Update, View};
use crate::workload::{Operation, Phase, Weights};

/// The width of a range query: 2^32 / 200, so about 0.5 % of the documents when the
/// field's values span the signed 32-bit range.
const RANGE: u64 = 21_474_836;

/// Rows a query asks for: CouchDB's default page of `_find`.
const LIMIT: u64 = 25;

/// Documents per bulk request, and bulk requests, of the load.
const LOAD_BATCH: u64 = 500;
const LOAD_REQUESTS: u64 = 20;

/// Operations of a query phase, unless `--duration` ends it first.
const QUERY_TOTAL: u64 = 1_000;

/// A phase as the scenario writes it, the queries it runs, and whether their indexes
/// are built while it runs.
type QueryPhase = (Spec, Vec<Arc<Query>>, bool);

/// The load: `LOAD_REQUESTS` bulk requests of `LOAD_BATCH` documents (10,000 documents),
/// cut at `--duration` if it comes first.
fn load(name: &str) -> Spec {
    let mut spec = Spec::new(name, Weights::only(Operation::BulkInsert, 1));
    spec.scenario = Keys {
        batch_size: Some(LOAD_BATCH),
        total: Some(LOAD_REQUESTS),
        ..Keys::default()
    };
    spec
}

/// A phase of `mix`, `QUERY_TOTAL` operations unless `--duration` ends it first.
fn queries(name: &str, mix: Weights) -> Spec {
    let mut spec = Spec::new(name, mix);
    spec.scenario.total = Some(QUERY_TOTAL);
    spec
}

/// Only `operation`.
fn alone(operation: Operation) -> Weights {
    Weights::only(operation, 1)
}

/// Queries among writes: 8 queries to 1 create and 1 update, so that every query finds
/// the index a little behind.
fn among_writes(operation: Operation) -> Weights {
    Weights::from_fn(|op| match op {
        op if op == operation => 8,
        Operation::Create | Operation::Update => 1,
        _ => 0,
    })
}

/// Writes with a few queries: 5 creates, 4 updates and 1 query, the writes that go on
/// while an index is built during the phase.
fn writes_with(operation: Operation) -> Weights {
    Weights::from_fn(|op| match op {
        op if op == operation => 1,
        Operation::Create => 5,
        Operation::Update => 4,
        _ => 0,
    })
}

fn draw(field: &str, range: Option<u64>) -> Draw {
    Draw {
        quoted_field: serde_json::Value::from(field).to_string(),
        range: range.map(serde_json::Number::from),
    }
}

fn query(name: &str, kind: QueryKind) -> Arc<Query> {
    Arc::new(Query {
        name: name.to_string(),
        kind,
        partition: false,
    })
}

/// `mango`: an index on the field built idle, equality and sorted range `_find`s alone,
/// equality among writes, then an index on the field and `_id` built under writes.
pub fn mango(layers: &Layers, options: &BuiltinOptions) -> Built {
    let field = options.query_field.as_str();
    let find = |range: Option<u64>, index: Option<serde_json::Value>, sort: bool| Find {
        draw: draw(field, range),
        limit: Some(LIMIT),
        sort,
        fields: if range.is_some() {
            vec!["_id".to_string(), field.to_string()]
        } else {
            Vec::new()
        },
        index,
    };
    let equal = query(
        "equal",
        QueryKind::Find(find(
            None,
            Some(serde_json::json!({ "fields": [field] })),
            false,
        )),
    );
    let range = query("range", QueryKind::Find(find(Some(RANGE), None, true)));
    let second = serde_json::json!({ "fields": [field, "_id"] });
    let equal_by_id = query(
        "equal_by_id",
        QueryKind::Find(find(None, Some(second), false)),
    );
    decide(
        vec![
            (load("mango_load"), Vec::new(), false),
            (
                queries("mango_equal", alone(Operation::Find)),
                vec![equal.clone()],
                false,
            ),
            (
                queries("mango_range", alone(Operation::Find)),
                vec![range],
                false,
            ),
            (
                queries("mango_equal_under_writes", among_writes(Operation::Find)),
                vec![equal],
                false,
            ),
            (
                queries("mango_build_under_writes", writes_with(Operation::Find)),
                vec![equal_by_id],
                true,
            ),
        ],
        layers,
    )
}

/// `views`: a view of the field (with a `_count` reduce) built idle, key lookups and
/// counts of a range alone, key lookups among writes with `update=true`, `false` and
/// `lazy`, then a second view built under writes.
pub fn views(layers: &Layers, options: &BuiltinOptions) -> Built {
    let field = options.query_field.as_str();
    let accessor = format!("doc[{}]", serde_json::Value::from(field));
    let view = |design: &str, map: &str, range: Option<u64>, update: Option<Update>| View {
        draw: draw(field, range),
        design: design.to_string(),
        view: "by_value".to_string(),
        map: map.to_string(),
        reduce_function: Some("_count".to_string()),
        // Rows for a key; one count for a range.
        reduce: Some(range.is_some()),
        group: false,
        update,
        stable: false,
        limit: range.is_none().then_some(LIMIT),
    };
    let map = format!("function (doc) {{ emit({accessor}, null); }}");
    let key = |name: &str, update: Option<Update>| {
        query(name, QueryKind::View(view("sofabench", &map, None, update)))
    };
    let count = query(
        "count_range",
        QueryKind::View(view("sofabench", &map, Some(RANGE), None)),
    );
    // Another map function, so that CouchDB gives it an index of its own (views of
    // the same functions share one, whatever their design document).
    let other_map = format!("function (doc) {{ emit({accessor}, 1); }}");
    let built_under_writes = query(
        "key_second_view",
        QueryKind::View(view("sofabench_second", &other_map, None, None)),
    );
    let among = |name: &str, update: Update| {
        (
            queries(name, among_writes(Operation::View)),
            vec![key(&format!("key_update_{}", update.name()), Some(update))],
            false,
        )
    };
    decide(
        vec![
            (load("views_load"), Vec::new(), false),
            (
                queries("views_key", alone(Operation::View)),
                vec![key("key", None)],
                false,
            ),
            (
                queries("views_count_range", alone(Operation::View)),
                vec![count],
                false,
            ),
            among("views_update_true_under_writes", Update::True),
            among("views_update_false_under_writes", Update::False),
            among("views_update_lazy_under_writes", Update::Lazy),
            (
                queries("views_build_under_writes", writes_with(Operation::View)),
                vec![built_under_writes],
                true,
            ),
        ],
        layers,
    )
}

/// The phases with their settings decided and their queries on them.
fn decide(planned: Vec<QueryPhase>, layers: &Layers) -> Built {
    Ok(planned
        .into_iter()
        .map(|(spec, queries, during)| {
            let (mut phase, origins) = spec.decide(layers);
            for query in queries {
                phase.queries.set(query);
            }
            phase.indexes_during = during;
            (phase, origins)
        })
        .collect())
}

/// Every query the phases run, once each, in the order of first use.
pub fn of_phases(phases: &[Phase]) -> Vec<Arc<Query>> {
    let mut all: Vec<Arc<Query>> = Vec::new();
    for phase in phases {
        let its = [
            &phase.queries.find,
            &phase.queries.view,
            &phase.queries.all_docs,
            &phase.queries.changes_read,
        ];
        for query in its.into_iter().flatten() {
            if !all.iter().any(|q| q.name == query.name) {
                all.push(Arc::clone(query));
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::builds;
    use crate::scenario::settings::Keys;

    fn built(scenario: fn(&Layers, &BuiltinOptions) -> Built) -> Vec<Phase> {
        let layers = Layers {
            given: Keys::default(),
            file: Keys::default(),
            default: Keys {
                connections: Some(2),
                ..Keys::default()
            },
        };
        let options = crate::scenario::builtin::tests::options();
        scenario(&layers, &options)
            .unwrap()
            .into_iter()
            .map(|(phase, _)| phase)
            .collect()
    }

    #[test]
    fn each_built_in_builds_one_index_idle_and_one_under_writes() {
        for scenario in [mango as fn(&Layers, &BuiltinOptions) -> Built, views] {
            let phases = built(scenario);
            let queries = of_phases(&phases);
            let units = builds::units(&queries);
            let plan = builds::plan(&phases, &units).unwrap();
            assert_eq!(units.len(), 2, "{units:?}");
            assert_eq!(plan[1].before.len(), 1, "the first query phase builds idle");
            let last = plan.last().unwrap();
            assert_eq!((last.before.len(), last.during.len()), (0, 1));
            assert!(
                phases.last().unwrap().mix[Operation::Create] > 0,
                "under writes"
            );
            let built: usize = plan.iter().map(|p| p.before.len() + p.during.len()).sum();
            assert_eq!(built, 2, "each index once");
        }
    }

    #[test]
    fn the_update_modes_are_compared_on_one_index() {
        let phases = built(views);
        let updates: Vec<Option<Update>> = phases[3..6]
            .iter()
            .map(|p| match &p.queries.view.as_ref().unwrap().kind {
                QueryKind::View(view) => {
                    assert_eq!(view.design, "sofabench");
                    view.update
                }
                _ => panic!("a view query"),
            })
            .collect();
        assert_eq!(
            updates,
            [Some(Update::True), Some(Update::False), Some(Update::Lazy)]
        );
    }
}
