//! Writing a query's request from the values of a document the connection knows: the
//! path (and body) go into the worker's buffers, so a query allocates no more than a
//! read does.

use std::fmt::Write as _;
use std::io::Write as _;

use super::{AllDocs, ChangesRead, Draw, Find, View};

/// The upper end of a range of `width` from `value` (a JSON number), written as JSON;
/// `None` when `value` is not a number (a string range runs from the value on).
pub(crate) fn range_end(value: &[u8], width: &serde_json::Number) -> Option<String> {
    let number: serde_json::Number = serde_json::from_slice(value).ok()?;
    if let (Some(a), Some(b)) = (number.as_i64(), width.as_i64())
        && let Some(end) = a.checked_add(b)
    {
        return Some(end.to_string());
    }
    let end = number.as_f64()? + width.as_f64()?;
    end.is_finite()
        .then(|| serde_json::Number::from_f64(end))?
        .map(|n| n.to_string())
}

/// `{database}/_partition/{P}` for the document whose id is `P:docid`, the path under
/// which a partition query goes; just the database for an id without a partition (a run
/// checks before it starts that partition queries go to a partitioned database).
pub fn partition_scope(database: &str, id: &str, scope: &mut String) {
    scope.clear();
    scope.push_str(database);
    if let Some((partition, _)) = id.split_once(':') {
        scope.push_str("/_partition/");
        scope.extend(url::form_urlencoded::byte_serialize(partition.as_bytes()));
    }
}

/// `POST /db/_find`'s body: the drawn field equal to `value`, or in its range.
pub fn find(query: &Find, value: &[u8], database: &str, path: &mut String, body: &mut Vec<u8>) {
    path.clear();
    path.push_str(database);
    path.push_str("/_find");
    body.clear();
    let field = query.draw.quoted_field.as_bytes();
    body.extend_from_slice(b"{\"selector\":{");
    body.extend_from_slice(field);
    body.extend_from_slice(b":{");
    match &query.draw.range {
        None => {
            body.extend_from_slice(b"\"$eq\":");
            body.extend_from_slice(value);
        }
        Some(width) => {
            body.extend_from_slice(b"\"$gte\":");
            body.extend_from_slice(value);
            if let Some(end) = range_end(value, width) {
                body.extend_from_slice(b",\"$lte\":");
                body.extend_from_slice(end.as_bytes());
            }
        }
    }
    body.extend_from_slice(b"}}");
    if let Some(limit) = query.limit {
        let _ = write!(body, ",\"limit\":{limit}");
    }
    if query.sort {
        body.extend_from_slice(b",\"sort\":[{");
        body.extend_from_slice(field);
        body.extend_from_slice(b":\"asc\"}]");
    }
    if !query.fields.is_empty() {
        let fields = serde_json::to_string(&query.fields).unwrap_or_default();
        let _ = write!(body, ",\"fields\":{fields}");
    }
    body.push(b'}');
}

/// Appends `&name=` and `value` percent-encoded.
fn parameter(path: &mut String, name: &str, value: &[u8]) {
    path.push(if path.contains('?') { '&' } else { '?' });
    path.push_str(name);
    path.push('=');
    path.extend(url::form_urlencoded::byte_serialize(value));
}

/// The keys a drawn value selects: `key=` or `startkey=`/`endkey=`.
fn view_keys(draw: &Draw, value: &[u8], path: &mut String) {
    match &draw.range {
        None => parameter(path, "key", value),
        Some(width) => {
            parameter(path, "startkey", value);
            if let Some(end) = range_end(value, width) {
                parameter(path, "endkey", end.as_bytes());
            }
        }
    }
}

/// `GET /db/_design/{design}/_view/{view}?…`.
pub fn view(query: &View, value: &[u8], database: &str, path: &mut String) {
    path.clear();
    let _ = write!(
        path,
        "{database}/_design/{}/_view/{}",
        query.design, query.view
    );
    view_keys(&query.draw, value, path);
    if let Some(reduce) = query.reduce {
        parameter(path, "reduce", if reduce { b"true" } else { b"false" });
    }
    if query.group {
        parameter(path, "group", b"true");
    }
    if let Some(update) = query.update {
        parameter(path, "update", update.name().as_bytes());
    }
    if query.stable {
        parameter(path, "stable", b"true");
    }
    if let Some(limit) = query.limit {
        parameter(path, "limit", limit.to_string().as_bytes());
    }
}

fn all_docs_options(query: &AllDocs, path: &mut String) {
    if query.include_docs {
        parameter(path, "include_docs", b"true");
    }
    if let Some(limit) = query.limit {
        parameter(path, "limit", limit.to_string().as_bytes());
    }
}

/// `GET /db/_all_docs?startkey="{id}"…`: the documents from `id` on.
pub fn all_docs_range(query: &AllDocs, id: &str, database: &str, path: &mut String) {
    path.clear();
    path.push_str(database);
    path.push_str("/_all_docs");
    let quoted = serde_json::to_string(id).unwrap_or_default();
    parameter(path, "startkey", quoted.as_bytes());
    all_docs_options(query, path);
}

/// `GET /db/_all_docs?…` from the first document on.
pub fn all_docs_whole(query: &AllDocs, database: &str, path: &mut String) {
    path.clear();
    path.push_str(database);
    path.push_str("/_all_docs");
    all_docs_options(query, path);
}

/// `GET /db/_changes?…`: the normal feed from the start.
pub fn changes_read(query: &ChangesRead, database: &str, path: &mut String) {
    path.clear();
    path.push_str(database);
    path.push_str("/_changes");
    if query.include_docs {
        parameter(path, "include_docs", b"true");
    }
    if let Some(limit) = query.limit {
        parameter(path, "limit", limit.to_string().as_bytes());
    }
}

/// `POST /db/_all_docs` with `{"keys":[…]}` of `ids`.
pub fn all_docs_keys<'a>(
    query: &AllDocs,
    ids: impl Iterator<Item = &'a str>,
    database: &str,
    path: &mut String,
    body: &mut Vec<u8>,
) {
    path.clear();
    path.push_str(database);
    path.push_str("/_all_docs");
    all_docs_options(query, path);
    body.clear();
    body.extend_from_slice(b"{\"keys\":");
    let ids: Vec<&str> = ids.collect();
    let _ = serde_json::to_writer(&mut *body, &ids);
    body.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Update;

    fn draw(range: Option<i64>) -> Draw {
        Draw {
            quoted_field: "\"Age\"".to_string(),
            range: range.map(serde_json::Number::from),
        }
    }

    #[test]
    fn partition_queries_go_under_the_documents_partition() {
        let mut scope = String::new();
        partition_scope("/db", "p7:run-0000000001", &mut scope);
        assert_eq!(scope, "/db/_partition/p7");
        let (mut path, mut body) = (String::new(), Vec::new());
        let query = Find {
            draw: draw(None),
            limit: None,
            sort: false,
            fields: Vec::new(),
            index: None,
        };
        find(&query, b"1", &scope, &mut path, &mut body);
        assert_eq!(path, "/db/_partition/p7/_find");
        partition_scope("/db", "plain-id", &mut scope);
        assert_eq!(scope, "/db");
    }

    #[test]
    fn find_bodies_select_the_value_or_its_range() {
        let (mut path, mut body) = (String::new(), Vec::new());
        let mut query = Find {
            draw: draw(None),
            limit: Some(25),
            sort: true,
            fields: vec!["_id".to_string(), "Age".to_string()],
            index: None,
        };
        find(&query, b"42", "/db", &mut path, &mut body);
        assert_eq!(path, "/db/_find");
        let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"selector": {"Age": {"$eq": 42}}, "limit": 25,
                "sort": [{"Age": "asc"}], "fields": ["_id", "Age"]})
        );
        query.draw = draw(Some(10));
        find(&query, b"-5", "/db", &mut path, &mut body);
        let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            sent["selector"],
            serde_json::json!({"Age": {"$gte": -5, "$lte": 5}})
        );
        find(
            &query,
            b"\"2020-01-01T00:00:00Z\"",
            "/db",
            &mut path,
            &mut body,
        );
        let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            sent["selector"],
            serde_json::json!({"Age": {"$gte": "2020-01-01T00:00:00Z"}})
        );
    }

    #[test]
    fn ranges_of_floats_and_of_the_largest_integers_stay_numbers() {
        assert_eq!(
            range_end(b"1.5", &serde_json::Number::from(2)),
            Some("3.5".to_string())
        );
        let huge = i64::MAX.to_string();
        let end = range_end(huge.as_bytes(), &serde_json::Number::from(1)).unwrap();
        assert!(end.parse::<f64>().unwrap() > 9e18, "{end}");
        assert_eq!(range_end(b"true", &serde_json::Number::from(1)), None);
    }

    #[test]
    fn view_paths_carry_keys_and_options_encoded() {
        let query = View {
            draw: draw(Some(3)),
            design: "sofabench".to_string(),
            view: "by_age".to_string(),
            map: String::new(),
            reduce_function: Some("_count".to_string()),
            reduce: Some(true),
            group: true,
            update: Some(Update::Lazy),
            stable: true,
            limit: Some(10),
        };
        let mut path = String::new();
        view(&query, b"7", "/db", &mut path);
        assert_eq!(
            path,
            "/db/_design/sofabench/_view/by_age?startkey=7&endkey=10&reduce=true&group=true&update=lazy&stable=true&limit=10"
        );
        let query = View {
            draw: draw(None),
            ..query
        };
        view(&query, b"\"a b\"", "/db", &mut path);
        assert!(path.contains("?key=%22a+b%22&"), "{path}");
    }

    #[test]
    fn all_docs_takes_a_range_or_keys() {
        let query = AllDocs {
            keys: 0,
            include_docs: true,
            limit: Some(5),
            whole: false,
        };
        let (mut path, mut body) = (String::new(), Vec::new());
        all_docs_range(&query, "doc-1", "/db", &mut path);
        assert_eq!(
            path,
            "/db/_all_docs?startkey=%22doc-1%22&include_docs=true&limit=5"
        );
        all_docs_keys(&query, ["a", "b"].into_iter(), "/db", &mut path, &mut body);
        assert_eq!(path, "/db/_all_docs?include_docs=true&limit=5");
        assert_eq!(body, br#"{"keys":["a","b"]}"#);
    }

    #[test]
    fn whole_reads_start_at_the_first_row() {
        let all = AllDocs {
            keys: 0,
            include_docs: false,
            limit: None,
            whole: true,
        };
        let mut path = String::new();
        all_docs_whole(&all, "/db", &mut path);
        assert_eq!(path, "/db/_all_docs");
        let included = AllDocs {
            include_docs: true,
            ..all
        };
        all_docs_whole(&included, "/db", &mut path);
        assert_eq!(path, "/db/_all_docs?include_docs=true");
        let feed = ChangesRead {
            include_docs: false,
            limit: None,
        };
        changes_read(&feed, "/db", &mut path);
        assert_eq!(path, "/db/_changes");
        let limited = ChangesRead {
            include_docs: true,
            limit: Some(3),
        };
        changes_read(&limited, "/db", &mut path);
        assert_eq!(path, "/db/_changes?include_docs=true&limit=3");
    }
}
