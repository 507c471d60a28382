//! Reading the answers the environment is captured from into plain values: a node's
//! welcome (`GET /`), a database's description (`GET /{db}`), `_membership`,
//! `_node/_local/_versions` and `_active_tasks`. Each reader takes a status and a body
//! and never fails: what it cannot read is left out, and the result says "unknown".
//!
//! Every string kept passes through [`kept`]: the run's secrets hidden, control
//! characters escaped, and bounded ([`bounded`]), since a server may say anything.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::results::environment::{MOST_ITEMS, MOST_TEXT, Product, ServerNode, bounded};
use crate::text::{Quoted, Redact};

/// How [`ServerNode::answered`] names a CouchDB welcome.
pub const WELCOME: &str = "welcome";

/// `text`, a server's words, as a result keeps them: secrets hidden, control characters
/// escaped, at most [`MOST_TEXT`] characters.
pub fn kept(text: &str, secrets: &(impl Redact + ?Sized)) -> String {
    bounded(Quoted::of_text(text, secrets, MOST_TEXT).as_str())
}

/// A node as its `GET /` answered (`address` left for the caller): the welcome's fields
/// where it is one; else only what came instead, in `answered`.
pub fn read_welcome(status: u16, body: &[u8], secrets: &(impl Redact + ?Sized)) -> ServerNode {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let answered = |what: &str| ServerNode {
        answered: what.to_string(),
        ..ServerNode::default()
    };
    if status != 200 {
        return answered(&format!("status {status}"));
    }
    let Some(parsed) = parsed else {
        return answered("not JSON");
    };
    match parsed.as_object().filter(|w| is_welcome(w)) {
        Some(welcome) => welcome_node(welcome, secrets),
        None => answered("no welcome"),
    }
}

/// A CouchDB welcome names itself (`couchdb`, PouchDB Server's `express-pouchdb`) or its
/// vendor.
fn is_welcome(welcome: &Map<String, Value>) -> bool {
    ["couchdb", "express-pouchdb", "vendor"]
        .iter()
        .any(|key| welcome.contains_key(*key))
}

fn welcome_node(welcome: &Map<String, Value>, secrets: &(impl Redact + ?Sized)) -> ServerNode {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(|t| kept(t, secrets));
    let vendor = welcome.get("vendor");
    let features = match welcome.get("features") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .take(MOST_ITEMS)
            .map(|f| kept(f, secrets))
            .collect(),
        _ => Vec::new(),
    };
    ServerNode {
        address: String::new(),
        answered: WELCOME.to_string(),
        product: Some(product_of(welcome).name().to_string()),
        vendor: text(vendor.and_then(|v| v.get("name"))),
        vendor_version: text(vendor.and_then(|v| v.get("version"))),
        version: text(welcome.get("version")),
        git_sha: text(welcome.get("git_sha")),
        features,
    }
}

/// What the server is, from its own words. Cloudant's welcome says `"couchdb":
/// "Welcome"` too, and names itself in its vendor (`"name": "IBM Cloudant"`, or
/// `cloudant_build` in older ones), so it is looked for first.
pub fn product_of(welcome: &Map<String, Value>) -> Product {
    let vendor = welcome.get("vendor").and_then(Value::as_object);
    let vendor_name = vendor
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let cloudant = vendor_name.to_ascii_lowercase().contains("cloudant")
        || vendor.is_some_and(|v| v.keys().any(|k| k.starts_with("cloudant")));
    if cloudant {
        Product::Cloudant
    } else if welcome.contains_key("express-pouchdb") {
        Product::PouchDbServer
    } else if welcome.get("couchdb").and_then(Value::as_str) == Some("Welcome")
        && vendor_name == "The Apache Software Foundation"
    {
        Product::ApacheCouchDb
    } else {
        Product::Other
    }
}

/// Whether `GET /{db}` answered like CouchDB: a database's description (`db_name`), or
/// CouchDB's 404 `{"error":"not_found"}` for a database that is not there.
pub fn answers_like_database(status: u16, body: &[u8]) -> bool {
    let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    match status {
        200 => answer.contains_key("db_name"),
        404 => answer.get("error").and_then(Value::as_str) == Some("not_found"),
        _ => false,
    }
}

/// A database's shape as `GET /{db}` describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// `cluster.q` and `cluster.n` (CouchDB 2 and later; PouchDB Server has no shards).
    pub shards: Option<(u64, u64)>,
    /// `props.partitioned` (CouchDB 3 and later, whose `props` is `{}` for a database
    /// that is not); `None` without `props`.
    pub partitioned: Option<bool>,
}

#[derive(Deserialize)]
struct DatabaseInfo {
    cluster: Option<Cluster>,
    props: Option<Props>,
}

#[derive(Deserialize)]
struct Cluster {
    q: u64,
    n: u64,
}

#[derive(Deserialize)]
struct Props {
    #[serde(default)]
    partitioned: Option<bool>,
}

/// The shape in a `GET /{db}` answer; `None` when the body is not a description.
pub fn read_layout(body: &[u8]) -> Option<Layout> {
    let info: DatabaseInfo = serde_json::from_slice(body).ok()?;
    Some(Layout {
        shards: info.cluster.map(|c| (c.q, c.n)),
        partitioned: info.props.map(|p| p.partitioned.unwrap_or(false)),
    })
}

/// `GET /_membership`: the nodes in the cluster and all the nodes it knows of
/// (`cluster_nodes`, `all_nodes`); `None` when neither is a list.
pub fn read_membership(body: &[u8]) -> Option<(Option<u64>, Option<u64>)> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let count = |key: &str| answer.get(key)?.as_array().map(|a| a.len() as u64);
    let counts = (count("cluster_nodes"), count("all_nodes"));
    (counts != (None, None)).then_some(counts)
}

/// `GET /_node/_local/_versions` (CouchDB 3.2 and later): the JavaScript engine's name
/// and version, e.g. `spidermonkey 91`; `None` when it names none.
pub fn read_javascript_engine(body: &[u8], secrets: &(impl Redact + ?Sized)) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let engine = answer.get("javascript_engine")?;
    let name = engine.get("name")?.as_str()?;
    let text = match engine.get("version").and_then(Value::as_str) {
        Some(version) => format!("{name} {version}"),
        None => name.to_string(),
    };
    Some(kept(&text, secrets))
}

/// `GET /_active_tasks`: the compactions running (of databases and of views); `None`
/// when the answer is not a list of tasks.
pub fn read_compactions(body: &[u8]) -> Option<u64> {
    let counts = crate::server_stats::tasks::read(body)?;
    let of = |kind: &str| counts.by_kind.get(kind).copied().unwrap_or(0);
    Some(of("database_compaction") + of("view_compaction"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn welcome(json: &str) -> ServerNode {
        read_welcome(200, json.as_bytes(), &())
    }

    fn object(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn apache_couchdb_s_recorded_welcome_is_read_whole() {
        let body = std::fs::read("tests/fixtures/couchdb/welcome.json").unwrap();
        let node = read_welcome(200, &body, &());
        assert_eq!(node.answered, WELCOME);
        assert_eq!(node.product.as_deref(), Some("Apache CouchDB"));
        assert_eq!(
            node.vendor.as_deref(),
            Some("The Apache Software Foundation")
        );
        assert_eq!(node.vendor_version, None);
        assert_eq!(node.version.as_deref(), Some("3.5.0"));
        assert_eq!(node.git_sha.as_deref(), Some("11f0d36"));
        assert_eq!(node.features.len(), 6);
        assert_eq!(node.features[0], "quickjs");
    }

    #[test]
    fn pouchdb_server_s_welcome_gives_its_version() {
        let node = welcome(
            r#"{"express-pouchdb":"Welcome!","version":"4.2.0","pouchdb-adapters":["leveldb"],"vendor":{"name":"PouchDB authors","version":"4.2.0"},"uuid":"c92a"}"#,
        );
        assert_eq!(node.product.as_deref(), Some("PouchDB Server"));
        assert_eq!(node.vendor.as_deref(), Some("PouchDB authors"));
        assert_eq!(node.vendor_version.as_deref(), Some("4.2.0"));
        assert_eq!(node.version.as_deref(), Some("4.2.0"));
        assert!(node.features.is_empty() && node.git_sha.is_none());
    }

    #[test]
    fn products_are_told_by_their_own_words() {
        let product = |json: &str| product_of(&object(json));
        let apache = r#"{"couchdb":"Welcome","vendor":{"name":"The Apache Software Foundation"}}"#;
        assert_eq!(product(apache), Product::ApacheCouchDb);
        let cloudant = r#"{"couchdb":"Welcome","version":"3.3.3","vendor":{"name":"IBM Cloudant","version":"8521","variant":"paas"}}"#;
        assert_eq!(product(cloudant), Product::Cloudant);
        let old_cloudant =
            r#"{"couchdb":"Welcome","version":"1.0.2","vendor":{"cloudant_build":"1138"}}"#;
        assert_eq!(product(old_cloudant), Product::Cloudant);
        assert_eq!(
            product(r#"{"express-pouchdb":"Welcome!"}"#),
            Product::PouchDbServer
        );
        // A welcome that borrows CouchDB's greeting but names another vendor, or none.
        let other = r#"{"couchdb":"Welcome","vendor":{"name":"Couchbase Sync Gateway"}}"#;
        assert_eq!(product(other), Product::Other);
        assert_eq!(product(r#"{"couchdb":"Welcome"}"#), Product::Other);
        assert_eq!(product(r#"{"vendor":"Cloudant"}"#), Product::Other);
    }

    #[test]
    fn a_welcome_with_odd_fields_keeps_what_is_text_and_bounds_it() {
        let huge = "v".repeat(10 * 1024 * 1024);
        let body = format!(
            r#"{{"couchdb":"Welcome","version":3.5,"git_sha":"\u001b[2J","features":"all","vendor":{{"name":"{huge}","version":["x"]}}}}"#
        );
        let node = welcome(&body);
        assert_eq!(node.answered, WELCOME);
        assert_eq!(node.version, None, "a number is no version");
        assert_eq!(node.git_sha.as_deref(), Some("\\x1b[2J"));
        assert!(node.features.is_empty());
        let vendor = node.vendor.unwrap();
        assert_eq!(vendor.chars().count(), MOST_TEXT + 1);
        assert!(vendor.ends_with('…'));
        assert_eq!(node.vendor_version, None);
        let many: Vec<String> = (0..500).map(|i| format!("\"f{i}\"")).collect();
        let node = welcome(&format!(
            r#"{{"couchdb":"Welcome","features":[{},1,null]}}"#,
            many.join(",")
        ));
        assert_eq!(node.features.len(), MOST_ITEMS);
    }

    #[test]
    fn a_welcome_that_leaves_fields_out_is_still_a_welcome() {
        let node = welcome(r#"{"couchdb":"Welcome"}"#);
        assert_eq!(node.answered, WELCOME);
        assert_eq!(node.version, None);
        assert_eq!(node.vendor, None);
        assert_eq!(node.product.as_deref(), Some("other"));
    }

    #[test]
    fn what_is_not_a_welcome_says_what_came_instead() {
        let said = |status, body: &str| read_welcome(status, body.as_bytes(), &()).answered;
        assert_eq!(said(500, r#"{"error":"x"}"#), "status 500");
        assert_eq!(said(200, "\u{1b}[2J<html>"), "not JSON");
        assert_eq!(said(200, r#"{"ok":true}"#), "no welcome");
        assert_eq!(said(200, "[1,2]"), "no welcome");
        let node = read_welcome(500, b"{}", &());
        assert_eq!((node.product, node.version), (None, None));
    }

    #[test]
    fn kept_strings_hide_the_run_s_secrets() {
        struct Password;
        impl Redact for Password {
            fn secret_forms(&self, forms: &mut Vec<String>) {
                forms.push("hunter2-long".to_string());
            }
        }
        let node = read_welcome(
            200,
            br#"{"couchdb":"Welcome","version":"3.5 hunter2-long"}"#,
            &Password,
        );
        assert_eq!(node.version.as_deref(), Some("3.5 ***"));
    }

    #[test]
    fn a_database_answers_like_couchdb_with_its_name_or_couchdb_s_not_found() {
        let body = std::fs::read("tests/fixtures/couchdb/db_info.json").unwrap();
        assert!(answers_like_database(200, &body));
        let missing = br#"{"error":"not_found","reason":"Database does not exist."}"#;
        assert!(answers_like_database(404, missing));
        assert!(!answers_like_database(200, missing));
        assert!(!answers_like_database(404, b"<html>Not Found</html>"));
        assert!(!answers_like_database(500, br#"{"db_name":"x"}"#));
        assert!(!answers_like_database(200, b"[]"));
    }

    #[test]
    fn a_layout_is_read_from_couchdb_s_and_pouchdb_server_s_answers() {
        let body = std::fs::read("tests/fixtures/couchdb/db_info.json").unwrap();
        let couchdb = read_layout(&body).unwrap();
        assert_eq!(couchdb.shards, Some((2, 1)));
        assert_eq!(couchdb.partitioned, Some(false), "props is {{}}");
        let partitioned = br#"{"cluster":{"q":8,"n":3},"props":{"partitioned":true}}"#;
        assert_eq!(read_layout(partitioned).unwrap().partitioned, Some(true));
        let pouchdb = br#"{"db_name":"d","doc_count":0,"update_seq":0}"#;
        assert_eq!(read_layout(pouchdb), Some(Layout::default()));
        assert_eq!(read_layout(b"garbage"), None);
        assert_eq!(read_layout(br#"{"cluster":{"q":"two","n":1}}"#), None);
    }

    #[test]
    fn membership_counts_the_nodes_it_lists() {
        let answer = br#"{"all_nodes":["a@h","b@h","c@h"],"cluster_nodes":["a@h","b@h"]}"#;
        assert_eq!(read_membership(answer), Some((Some(2), Some(3))));
        let pouchdb = br#"{"all_nodes":["node1@127.0.0.1"],"cluster_nodes":["node1@127.0.0.1"]}"#;
        assert_eq!(read_membership(pouchdb), Some((Some(1), Some(1))));
        assert_eq!(read_membership(br#"{"cluster_nodes":3}"#), None);
        assert_eq!(read_membership(b"\x00garbage"), None);
        assert_eq!(read_membership(b"[]"), None);
    }

    #[test]
    fn the_javascript_engine_is_its_name_and_version() {
        let engine = |body: &str| read_javascript_engine(body.as_bytes(), &());
        let spidermonkey = r#"{"javascript_engine":{"version":"91","name":"spidermonkey"},"erlang":{"version":"26.2.5"}}"#;
        assert_eq!(engine(spidermonkey).as_deref(), Some("spidermonkey 91"));
        let quickjs = r#"{"javascript_engine":{"name":"quickjs"}}"#;
        assert_eq!(engine(quickjs).as_deref(), Some("quickjs"));
        assert_eq!(engine(r#"{"erlang":{"version":"26"}}"#), None);
        assert_eq!(engine(r#"{"javascript_engine":{"name":7}}"#), None);
        let escaped = r#"{"javascript_engine":{"name":"q\u001b[2J"}}"#;
        assert_eq!(engine(escaped).as_deref(), Some("q\\x1b[2J"));
    }

    #[test]
    fn compactions_are_counted_among_the_tasks() {
        let tasks = br#"[{"type":"database_compaction"},{"type":"view_compaction"},{"type":"indexer"},{"type":"database_compaction"}]"#;
        assert_eq!(read_compactions(tasks), Some(3));
        assert_eq!(read_compactions(b"[]"), Some(0));
        assert_eq!(read_compactions(br#"{"error":"unauthorized"}"#), None);
    }
}
