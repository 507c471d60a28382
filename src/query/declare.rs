//! A scenario file's `[query.NAME]` tables and its phases' `queries` keys, checked.
//!
//! ```toml
//! [query.by_age]
//! kind = "find"                    # find, view, all_docs or changes_read
//! field = "Age"                    # top-level field whose value a known document gives
//! range = 10                       # optional: from the value to value + 10
//! limit = 25
//! sort = true
//! fields = ["_id", "Age"]
//! index = { fields = ["Age"] }     # Mango index, POSTed to /db/_index
//! [query.ages]
//! kind = "view"
//! field = "Age"
//! map = "function (doc) { emit(doc.Age, 1); }"
//! reduce_function = "_count"
//! group = true
//! update = "lazy"                  # true, false or lazy
//! [query.pages]
//! kind = "all_docs"
//! keys = 5                         # ids of 5 known documents; 0 (default): a range
//! include_docs = true
//! limit = 20                       # or whole = true: every document, no startkey
//! [query.feed]
//! kind = "changes_read"            # GET /db/_changes once, its rows counted
//! include_docs = false
//! limit = 1000                     # none: the whole feed
//! partition = true                 # any kind: /db/_partition/P/… of the drawn document's
//!                                  # partition (not with keys)
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::{AllDocs, ChangesRead, Draw, Find, PhaseQueries, Query, QueryKind, Update, View};
use crate::workload::Operation;

/// The design document views go in unless the query names one.
pub const DESIGN: &str = "sofabench";

/// Most rows a query may ask for, and most ids a `keys` query sends: an answer is read
/// (and its rows counted) as it comes, but must still end within `--max-response-size`.
const MOST_ROWS: u64 = 100_000;
const MOST_KEYS: u64 = 1_000;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct QueryEntry {
    kind: String,
    field: Option<String>,
    range: Option<serde_json::Number>,
    limit: Option<u64>,
    #[serde(default)]
    sort: bool,
    #[serde(default)]
    fields: Vec<String>,
    index: Option<toml::Value>,
    design: Option<String>,
    map: Option<String>,
    reduce_function: Option<String>,
    reduce: Option<bool>,
    #[serde(default)]
    group: bool,
    update: Option<toml::Value>,
    #[serde(default)]
    stable: bool,
    keys: Option<u64>,
    #[serde(default)]
    include_docs: bool,
    #[serde(default)]
    partition: bool,
    #[serde(default)]
    whole: bool,
}

/// The keys each kind takes besides `kind`.
fn allowed(kind: &str) -> &'static [&'static str] {
    match kind {
        "find" => &[
            "field",
            "range",
            "limit",
            "sort",
            "fields",
            "index",
            "partition",
        ],
        "view" => &[
            "field",
            "range",
            "limit",
            "design",
            "map",
            "reduce_function",
            "reduce",
            "group",
            "update",
            "stable",
            "partition",
        ],
        "changes_read" => &["include_docs", "limit"],
        _ => &["keys", "include_docs", "limit", "partition", "whole"],
    }
}

/// The keys an entry gives, by name.
fn given(entry: &QueryEntry) -> Vec<&'static str> {
    let pairs = [
        ("field", entry.field.is_some()),
        ("range", entry.range.is_some()),
        ("limit", entry.limit.is_some()),
        ("sort", entry.sort),
        ("fields", !entry.fields.is_empty()),
        ("index", entry.index.is_some()),
        ("design", entry.design.is_some()),
        ("map", entry.map.is_some()),
        ("reduce_function", entry.reduce_function.is_some()),
        ("reduce", entry.reduce.is_some()),
        ("group", entry.group),
        ("update", entry.update.is_some()),
        ("stable", entry.stable),
        ("keys", entry.keys.is_some()),
        ("include_docs", entry.include_docs),
        ("partition", entry.partition),
        ("whole", entry.whole),
    ];
    pairs
        .into_iter()
        .filter(|(_, g)| *g)
        .map(|(k, _)| k)
        .collect()
}

/// A path segment of a design document or view: plain characters, so the path needs no
/// escaping and no name can reach another part of the server.
fn segment(key: &str, name: &str) -> Result<String, String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || name.len() > 100 || !name.chars().all(plain) {
        return Err(format!(
            "{key}: {name:?} is not a plain name; use up to 100 letters, digits, _ and -"
        ));
    }
    Ok(name.to_string())
}

fn draw(entry: &QueryEntry) -> Result<Draw, String> {
    let field = entry.field.as_deref().ok_or_else(|| {
        "field: give the top-level field whose value the query matches, e.g. field = \"Age\""
            .to_string()
    })?;
    Ok(Draw {
        quoted_field: serde_json::to_string(field).map_err(|e| e.to_string())?,
        range: entry.range.clone(),
    })
}

fn limit(entry: &QueryEntry) -> Result<Option<u64>, String> {
    match entry.limit {
        Some(n) if n == 0 || n > MOST_ROWS => Err(format!(
            "limit: {n} rows; give 1 to {MOST_ROWS} (or leave it out)"
        )),
        other => Ok(other),
    }
}

fn update(value: &Option<toml::Value>) -> Result<Option<Update>, String> {
    let Some(value) = value else { return Ok(None) };
    match (value.as_bool(), value.as_str()) {
        (Some(true), _) | (_, Some("true")) => Ok(Some(Update::True)),
        (Some(false), _) | (_, Some("false")) => Ok(Some(Update::False)),
        (_, Some("lazy")) => Ok(Some(Update::Lazy)),
        _ => Err(format!(
            "update: {value} is not one of true, false, \"lazy\""
        )),
    }
}

fn find(entry: &QueryEntry) -> Result<QueryKind, String> {
    let index = match &entry.index {
        None => None,
        Some(toml::Value::Table(t)) if t.contains_key("fields") => {
            Some(serde_json::to_value(t).map_err(|e| format!("index: {e}"))?)
        }
        Some(_) => {
            return Err(
                "index: give a Mango index definition, e.g. index = { fields = [\"Age\"] }"
                    .to_string(),
            );
        }
    };
    Ok(QueryKind::Find(Find {
        draw: draw(entry)?,
        limit: limit(entry)?,
        sort: entry.sort,
        fields: entry.fields.clone(),
        index,
    }))
}

fn view(name: &str, entry: &QueryEntry) -> Result<QueryKind, String> {
    let map = entry.map.clone().ok_or_else(|| {
        "map: give the view's map function, e.g. map = \"function (doc) { emit(doc.Age, 1); }\""
            .to_string()
    })?;
    if entry.reduce_function.is_none() && (entry.reduce.is_some() || entry.group) {
        return Err("reduce and group need reduce_function (e.g. \"_count\")".to_string());
    }
    Ok(QueryKind::View(View {
        draw: draw(entry)?,
        design: segment("design", entry.design.as_deref().unwrap_or(DESIGN))?,
        view: segment("the query's name", name)?,
        map,
        reduce_function: entry.reduce_function.clone(),
        reduce: entry.reduce,
        group: entry.group,
        update: update(&entry.update)?,
        stable: entry.stable,
        limit: limit(entry)?,
    }))
}

fn all_docs(entry: &QueryEntry) -> Result<QueryKind, String> {
    let keys = entry.keys.unwrap_or(0);
    if keys > MOST_KEYS {
        return Err(format!("keys: {keys} ids; give at most {MOST_KEYS}"));
    }
    if entry.whole && (keys > 0 || entry.partition) {
        return Err(
            "whole reads every document from the first: leave out keys and partition, or whole"
                .to_string(),
        );
    }
    Ok(QueryKind::AllDocs(AllDocs {
        keys,
        include_docs: entry.include_docs,
        limit: limit(entry)?,
        whole: entry.whole,
    }))
}

/// One `[query.NAME]` table, checked.
pub fn query(name: &str, entry: &QueryEntry) -> Result<Query, String> {
    let context = |e: String| format!("query {name:?}: {e}");
    if !matches!(
        entry.kind.as_str(),
        "find" | "view" | "all_docs" | "changes_read"
    ) {
        return Err(context(format!(
            "kind: {:?} is not a query kind; use find, view, all_docs or changes_read",
            entry.kind
        )));
    }
    let allowed = allowed(&entry.kind);
    if let Some(stray) = given(entry).into_iter().find(|k| !allowed.contains(k)) {
        return Err(context(format!(
            "{stray} does not apply to kind = {:?}; it takes {}",
            entry.kind,
            allowed.join(", ")
        )));
    }
    let kind = match entry.kind.as_str() {
        "find" => find(entry),
        "view" => view(name, entry),
        "changes_read" => limit(entry).map(|limit| {
            QueryKind::ChangesRead(ChangesRead {
                include_docs: entry.include_docs,
                limit,
            })
        }),
        _ => all_docs(entry),
    }
    .map_err(context)?;
    if entry.partition && entry.keys.unwrap_or(0) > 0 {
        return Err(context(
            "partition with keys: the ids of known documents lie in many partitions; leave \
             out one of them"
                .to_string(),
        ));
    }
    Ok(Query {
        name: name.to_string(),
        kind,
        partition: entry.partition,
    })
}

/// Every declared query, or every problem found.
pub fn queries(entries: &BTreeMap<String, QueryEntry>) -> Result<Vec<Arc<Query>>, Vec<String>> {
    let (good, bad): (Vec<_>, Vec<_>) = entries
        .iter()
        .map(|(name, entry)| query(name, entry))
        .partition(Result::is_ok);
    if bad.is_empty() {
        Ok(good.into_iter().flatten().map(Arc::new).collect())
    } else {
        Err(bad.into_iter().filter_map(Result::err).collect())
    }
}

/// A phase's `queries = { find = "NAME", … }` against the declared queries and the
/// phase's mix: every query operation in the mix runs a declared query of its kind.
pub fn phase_queries(
    chosen: &BTreeMap<String, String>,
    declared: &[Arc<Query>],
    mix_has: impl Fn(Operation) -> bool,
) -> Result<PhaseQueries, String> {
    let mut queries = PhaseQueries::default();
    for (kind, name) in chosen {
        let operation = Operation::named(kind)
            .filter(|op| op.is_query())
            .ok_or_else(|| {
                format!("queries: {kind:?} is not a query operation; use find, view, all_docs or changes_read")
            })?;
        let query = declared.iter().find(|q| &q.name == name).ok_or_else(|| {
            format!("queries: {kind} = {name:?}, but no [query.{name}] is declared")
        })?;
        if query.operation() != operation {
            return Err(format!(
                "queries: {kind} = {name:?}, but query {name:?} has kind = \"{}\"",
                query.operation()
            ));
        }
        queries.set(query.clone());
    }
    for operation in Operation::QUERIES {
        if mix_has(operation) && queries.of(operation).is_none() {
            return Err(format!(
                "mix: {operation} needs the query it runs: add queries = {{ {operation} = \"NAME\" }} with a [query.NAME] of kind {operation}"
            ));
        }
    }
    Ok(queries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> BTreeMap<String, QueryEntry> {
        #[derive(Deserialize)]
        struct File {
            query: BTreeMap<String, QueryEntry>,
        }
        toml::from_str::<File>(text).unwrap().query
    }

    #[test]
    fn declarations_of_each_kind_are_read() {
        let declared = queries(&entries(
            r#"
            [query.by_age]
            kind = "find"
            field = "Age"
            range = 10
            limit = 25
            index = { fields = ["Age"] }
            [query.ages]
            kind = "view"
            field = "Age"
            map = "function (doc) { emit(doc.Age, 1); }"
            reduce_function = "_count"
            group = true
            update = "lazy"
            [query.pages]
            kind = "all_docs"
            keys = 3
            "#,
        ))
        .unwrap();
        assert_eq!(declared.len(), 3);
        let QueryKind::View(view) = &declared[0].kind else {
            panic!("{declared:?}")
        };
        assert_eq!((view.design.as_str(), view.view.as_str()), (DESIGN, "ages"));
        assert_eq!(view.update, Some(Update::Lazy));
        let QueryKind::Find(find) = &declared[1].kind else {
            panic!("{declared:?}")
        };
        assert_eq!(find.index, Some(serde_json::json!({"fields": ["Age"]})));
        assert_eq!(find.draw.quoted_field, "\"Age\"");
    }

    #[test]
    fn whole_reads_of_all_docs_and_changes_are_declared() {
        let declared = queries(&entries(
            r#"
            [query.everything]
            kind = "all_docs"
            whole = true
            include_docs = true
            [query.feed]
            kind = "changes_read"
            limit = 50
            "#,
        ))
        .unwrap();
        let kinds: Vec<(&str, bool, Operation)> = declared
            .iter()
            .map(|q| (q.name.as_str(), q.is_whole(), q.operation()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("everything", true, Operation::AllDocs),
                ("feed", true, Operation::ChangesRead)
            ]
        );
        let QueryKind::ChangesRead(feed) = &declared[1].kind else {
            panic!("{declared:?}")
        };
        assert_eq!((feed.include_docs, feed.limit), (false, Some(50)));
        let wrong = queries(&entries(
            "[query.a]\nkind = \"all_docs\"\nwhole = true\nkeys = 2\n[query.b]\nkind = \"changes_read\"\nkeys = 2\n",
        ))
        .unwrap_err();
        assert!(wrong[0].contains("leave out keys"), "{wrong:?}");
        assert!(wrong[1].contains("keys does not apply"), "{wrong:?}");
    }

    #[test]
    fn partition_applies_to_every_kind_but_not_to_keys() {
        let declared = queries(&entries(
            r#"
            [query.f]
            kind = "find"
            field = "Age"
            partition = true
            [query.v]
            kind = "view"
            field = "Age"
            map = "function (doc) { emit(doc.Age, 1); }"
            partition = true
            [query.a]
            kind = "all_docs"
            partition = true
            [query.g]
            kind = "find"
            field = "Age"
            "#,
        ))
        .unwrap();
        let partitioned: Vec<(&str, bool)> = declared
            .iter()
            .map(|q| (q.name.as_str(), q.partition))
            .collect();
        assert_eq!(
            partitioned,
            [("a", true), ("f", true), ("g", false), ("v", true)]
        );
        let problems = queries(&entries(
            "[query.k]\nkind = \"all_docs\"\nkeys = 3\npartition = true\n",
        ))
        .unwrap_err();
        assert_eq!(
            problems,
            [
                "query \"k\": partition with keys: the ids of known documents lie in many \
              partitions; leave out one of them"
            ]
        );
    }

    #[test]
    fn wrong_declarations_say_what_to_change() {
        let problems = queries(&entries(
            r#"
            [query.a]
            kind = "find"
            [query.b]
            kind = "all_docs"
            map = "x"
            [query.c]
            kind = "view"
            field = "x"
            map = "m"
            group = true
            [query.d]
            kind = "search"
            [query."e/f"]
            kind = "view"
            field = "x"
            map = "m"
            "#,
        ))
        .unwrap_err();
        let all = problems.join("\n");
        assert_eq!(problems.len(), 5, "{all}");
        assert!(all.contains("query \"a\": field: give"), "{all}");
        assert!(
            all.contains("map does not apply to kind = \"all_docs\""),
            "{all}"
        );
        assert!(all.contains("group need reduce_function"), "{all}");
        assert!(all.contains("\"search\" is not a query kind"), "{all}");
        assert!(all.contains("not a plain name"), "{all}");
    }

    #[test]
    fn phases_name_declared_queries_of_their_kind() {
        let declared = queries(&entries(
            "[query.p]\nkind = \"all_docs\"\n[query.q]\nkind = \"find\"\nfield = \"a\"",
        ))
        .unwrap();
        let chosen = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let has = |op: Operation| op == Operation::Find;
        let ok = phase_queries(&chosen(&[("find", "q")]), &declared, has).unwrap();
        assert_eq!(ok.of(Operation::Find).unwrap().name, "q");
        let err = phase_queries(&chosen(&[]), &declared, has).unwrap_err();
        assert!(err.contains("mix: find needs the query"), "{err}");
        let err = phase_queries(&chosen(&[("find", "p")]), &declared, has).unwrap_err();
        assert!(err.contains("has kind = \"all_docs\""), "{err}");
        let err = phase_queries(&chosen(&[("find", "z")]), &declared, has).unwrap_err();
        assert!(err.contains("no [query.z]"), "{err}");
    }
}
