//! Which indexes are built around which phase: an index (a design document with its
//! views, or one Mango index) is built before the first phase that runs a query using
//! it, or while that phase runs when the phase asks for it (`indexes = "during"`), so
//! that its build is timed on the documents the phases before it stored, idle or under
//! the phase's writes.
//!
//! The plan is made from the phases alone, before anything is sent, so that a phase
//! that asks to build during itself but would find its indexes built is refused then.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Query, QueryKind};
use crate::workload::{Operation, Phase};

/// One thing the server builds: a design document holding every view declared in it,
/// or the Mango index of one `find` query.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexUnit {
    Design {
        name: String,
        views: serde_json::Map<String, serde_json::Value>,
    },
    Mango {
        query: String,
        index: serde_json::Value,
    },
}

impl IndexUnit {
    /// Whether `query` needs this unit built.
    fn serves(&self, query: &Query) -> bool {
        match (self, &query.kind) {
            (IndexUnit::Design { name, .. }, QueryKind::View(view)) => &view.design == name,
            (IndexUnit::Mango { query: name, .. }, QueryKind::Find(_)) => &query.name == name,
            _ => false,
        }
    }
}

/// Every unit the declared queries need: the design documents in name order, then the
/// Mango indexes in declaration order.
pub fn units(queries: &[Arc<Query>]) -> Vec<IndexUnit> {
    let mut designs: BTreeMap<String, serde_json::Map<String, serde_json::Value>> = BTreeMap::new();
    for query in queries {
        if let QueryKind::View(view) = &query.kind {
            let mut definition = serde_json::json!({ "map": view.map });
            if let Some(reduce) = &view.reduce_function {
                definition["reduce"] = serde_json::Value::from(reduce.clone());
            }
            designs
                .entry(view.design.clone())
                .or_default()
                .insert(view.view.clone(), definition);
        }
    }
    let mango = queries.iter().filter_map(|query| match &query.kind {
        QueryKind::Find(find) => find.index.clone().map(|index| IndexUnit::Mango {
            query: query.name.clone(),
            index,
        }),
        _ => None,
    });
    designs
        .into_iter()
        .map(|(name, views)| IndexUnit::Design { name, views })
        .chain(mango)
        .collect()
}

/// The units built around one phase, as indexes into [`units`]'s list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseBuilds {
    /// Built before the phase starts, on an idle database.
    pub before: Vec<usize>,
    /// Built while the phase's operations run.
    pub during: Vec<usize>,
}

/// The queries a phase runs: those of the query operations its mix holds.
fn phase_queries(phase: &Phase) -> impl Iterator<Item = &Arc<Query>> {
    Operation::QUERIES
        .iter()
        .filter(|&&op| phase.mix[op] > 0)
        .filter_map(|&op| phase.queries.of(op))
}

/// For each phase, the units built around it; or, for a phase that asks to build
/// during itself and would find nothing left to build, what is wrong.
pub fn plan(phases: &[Phase], units: &[IndexUnit]) -> Result<Vec<PhaseBuilds>, Vec<String>> {
    let mut built = vec![false; units.len()];
    let mut plans = Vec::with_capacity(phases.len());
    let mut problems = Vec::new();
    for phase in phases {
        let mut needed = Vec::new();
        if phase.has_work() {
            for query in phase_queries(phase) {
                for (k, unit) in units.iter().enumerate() {
                    if !built[k] && unit.serves(query) && !needed.contains(&k) {
                        needed.push(k);
                    }
                }
            }
        }
        for &k in &needed {
            built[k] = true;
        }
        if phase.indexes_during {
            if needed.is_empty() {
                problems.push(format!(
                    "phase {:?}: indexes = \"during\", but its queries need no index that an earlier phase has not built already; give it a query with an index of its own (in CouchDB a view only gets an index of its own when its map or reduce function differs from every other view's)",
                    phase.name
                ));
            }
            plans.push(PhaseBuilds {
                before: Vec::new(),
                during: needed,
            });
        } else {
            plans.push(PhaseBuilds {
                before: needed,
                during: Vec::new(),
            });
        }
    }
    if problems.is_empty() {
        Ok(plans)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{Draw, Find, PhaseQueries, View};
    use crate::workload::Weights;

    fn view(name: &str, design: &str) -> Arc<Query> {
        Arc::new(Query {
            name: name.to_string(),
            kind: QueryKind::View(View {
                draw: Draw {
                    quoted_field: "\"n\"".to_string(),
                    range: None,
                },
                design: design.to_string(),
                view: name.to_string(),
                map: format!("function (doc) {{ emit(doc.n, '{name}'); }}"),
                reduce_function: None,
                reduce: None,
                group: false,
                update: None,
                stable: false,
                limit: None,
            }),
            partition: false,
        })
    }

    fn find(name: &str, indexed: bool) -> Arc<Query> {
        Arc::new(Query {
            name: name.to_string(),
            kind: QueryKind::Find(Find {
                draw: Draw {
                    quoted_field: "\"n\"".to_string(),
                    range: None,
                },
                limit: None,
                sort: false,
                fields: Vec::new(),
                index: indexed.then(|| serde_json::json!({"fields": ["n"]})),
            }),
            partition: false,
        })
    }

    fn phase(name: &str, queries: &[&Arc<Query>], during: bool) -> Phase {
        let mut mix = Weights::from_fn(|op| u64::from(op == Operation::Create));
        let mut set = PhaseQueries::default();
        for query in queries {
            mix[query.operation()] = 1;
            set.set(Arc::clone(query));
        }
        let mut phase = Phase::sample(name, mix);
        phase.queries = set;
        phase.indexes_during = during;
        phase
    }

    #[test]
    fn views_of_one_design_are_one_unit_and_mango_indexes_one_each() {
        let queries = [
            view("a", "d"),
            view("b", "d"),
            find("f", true),
            find("g", false),
        ];
        let units = units(&queries);
        assert_eq!(units.len(), 2);
        assert!(
            matches!(&units[0], IndexUnit::Design { name, views } if name == "d" && views.len() == 2)
        );
        assert!(matches!(&units[1], IndexUnit::Mango { query, .. } if query == "f"));
    }

    #[test]
    fn each_unit_is_built_around_the_first_phase_that_needs_it() {
        let (a, b, f) = (view("a", "d"), view("b", "e"), find("f", true));
        let units = units(&[a.clone(), b.clone(), f.clone()]);
        let phases = [
            phase("load", &[], false),
            phase("first", &[&a], false),
            phase("again", &[&a, &f], false),
            phase("writes", &[&b], true),
        ];
        let plan = plan(&phases, &units).unwrap();
        let at = |k: usize| (plan[k].before.clone(), plan[k].during.clone());
        assert_eq!(at(0), (vec![], vec![]));
        assert_eq!(at(1), (vec![0], vec![]));
        // The design "d" is built already; the Mango index is not.
        assert_eq!(at(2), (vec![2], vec![]));
        assert_eq!(at(3), (vec![], vec![1]));
    }

    #[test]
    fn a_phase_that_would_build_nothing_during_itself_is_refused() {
        let a = view("a", "d");
        let units = units(std::slice::from_ref(&a));
        let phases = [phase("first", &[&a], false), phase("late", &[&a], true)];
        let problems = plan(&phases, &units).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("phase \"late\": indexes = \"during\""),
            "{problems:?}"
        );
    }
}
