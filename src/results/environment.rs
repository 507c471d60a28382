//! What a run measured against and from: the server as it answered at setup, the
//! database as the run found or made it, and the client machine. A comparison of two runs
//! means little unless it can say which of these differ.
//!
//! Each client machine (node of the run, [`super::NodeInfo`]) records its own, so `merge`
//! keeps every machine's. Every field may be missing: results written before these
//! fields existed, servers that leave things out and answers the credentials may not
//! read, all read as "unknown" ([`UNKNOWN`]). Strings come from the server or the machine
//! and are untrusted: they are bounded when captured ([`bounded`]) and escaped when shown,
//! like any other server text.
//!
//! [`facts`] flattens it all into named values (`server.version`, `database.q`,
//! `client.cores`, …): the header, the HTML page, `compare` and `check --expect` all read
//! the same names.

use serde::{Deserialize, Serialize};

use super::{NodeInfo, RunResult};

/// How a fact that is not known is shown and compared.
pub const UNKNOWN: &str = "unknown";

/// The most characters kept of one captured string (a version, a CPU model, an address).
pub const MOST_TEXT: usize = 200;

/// The most entries kept of a captured list (the server's features, its nodes).
pub const MOST_ITEMS: usize = 64;

/// The server as one client machine found it at setup.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerEnvironment {
    /// What the server is, from its own words (see [`Product`]'s names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// Each server node the run was given, in the order given, as it answered `GET /`.
    #[serde(default)]
    pub nodes: Vec<ServerNode>,
    /// `GET /_membership`: the nodes in the cluster (`cluster_nodes`) and all the nodes
    /// it knows of (`all_nodes`); absent where the server has no such endpoint or the
    /// credentials may not read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_nodes: Option<u64>,
    /// The JavaScript engine that runs views and validation (`GET /_node/_local/_versions`),
    /// e.g. `spidermonkey 91` or `quickjs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub javascript_engine: Option<String>,
    /// Compaction tasks (of databases or views) running when the run started
    /// (`GET /_active_tasks`): a compaction beside a run takes disk and CPU from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compactions_running: Option<u64>,
    /// The database the run used, as it found or made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseShape>,
    /// Why a fact above is missing, one line each, e.g.
    /// `_membership: status 401 (needs an admin)`: a reader can tell "the server has no
    /// such thing" from "sofabench was not allowed to look".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_because: Vec<String>,
}

/// One server node as it answered `GET /`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerNode {
    /// Its address as given, without credentials (user, password, token) or query.
    pub address: String,
    /// How `GET /` answered: `welcome` for a CouchDB welcome object, else what came
    /// instead (`status 500`, `not JSON`, `no welcome`).
    pub answered: String,
    /// What the server is, from this node's welcome (see [`Product`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// The welcome's `vendor.name` and `vendor.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_version: Option<String>,
    /// The welcome's `version` (PouchDB Server: `express-pouchdb`'s version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_sha: Option<String>,
    /// The welcome's `features`, as listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

/// The database a run used, as its server described it at setup.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DatabaseShape {
    pub name: String,
    /// True when the run made it; false when it was there before.
    pub created: bool,
    /// Shards (`cluster.q`) and copies of each (`cluster.n`) from `GET /{db}`; absent on
    /// a server without shards (PouchDB Server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// `props.partitioned`; absent where the server does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioned: Option<bool>,
}

/// The client machine and the sofabench that ran on it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientEnvironment {
    /// sofabench's version and the commit it was built from (`unknown` outside a git
    /// checkout), and its build profile (`release`, `checked`, `debug`).
    pub sofabench: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The operating system's name (`PRETTY_NAME` of os-release) and kernel release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// CPUs this process may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u64>,
    /// Worker threads the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// The system's 1-minute load average when the run started: a busy client machine
    /// measures its own queueing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<f64>,
}

/// What a server is, told by its own welcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    ApacheCouchDb,
    PouchDbServer,
    Cloudant,
    Other,
}

impl Product {
    pub fn name(self) -> &'static str {
        match self {
            Product::ApacheCouchDb => "Apache CouchDB",
            Product::PouchDbServer => "PouchDB Server",
            Product::Cloudant => "Cloudant",
            Product::Other => "other",
        }
    }
}

/// Whether a difference in a fact may explain a difference in figures (the server's
/// version, the client's CPU), or only describes the moment (the load average, a
/// compaction that was running): `compare` warns of the first and shows the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Identity,
    Moment,
}

/// One named fact about a run: `server.version = 3.5.0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub name: &'static str,
    pub value: String,
    pub kind: Kind,
}

/// `text` cut to [`MOST_TEXT`] characters (an ellipsis says where), for strings kept
/// from a server or the machine.
pub fn bounded(text: &str) -> String {
    match text.char_indices().nth(MOST_TEXT) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// The run's environment as named facts, in a fixed order; a fact no node recorded is
/// [`UNKNOWN`]. Where a run's client machines differ (a merged result), a client fact is
/// the machines' values joined by ` | `, in node order.
pub fn facts(result: &RunResult) -> Vec<Fact> {
    facts_of(&result.nodes)
}

/// [`facts`] of a run's nodes, before its result is made (the run's header).
pub fn facts_of(nodes: &[NodeInfo]) -> Vec<Fact> {
    let server = nodes.iter().find_map(|n| n.server.as_ref());
    let mut facts = server_facts(server);
    facts.extend(client_facts(nodes));
    facts
}

/// Every fact's name, in [`facts`]' order.
pub fn names() -> Vec<&'static str> {
    facts_of(&[]).into_iter().map(|f| f.name).collect()
}

fn server_facts(server: Option<&ServerEnvironment>) -> Vec<Fact> {
    let default = ServerEnvironment::default();
    let server = server.unwrap_or(&default);
    let nodes = &server.nodes;
    let of_nodes = |pick: fn(&ServerNode) -> Option<String>| joined(nodes.iter().map(pick));
    let database = server.database.as_ref();
    vec![
        identity("server.product", server.product.as_deref().map(bounded)),
        identity("server.vendor", of_nodes(|n| n.vendor.clone())),
        identity("server.version", of_nodes(|n| n.version.clone())),
        identity("server.git_sha", of_nodes(|n| n.git_sha.clone())),
        identity("server.features", of_nodes(|n| Some(features(&n.features)))),
        identity(
            "server.nodes",
            (!nodes.is_empty()).then(|| nodes.len().to_string()),
        ),
        identity("server.cluster_nodes", number(server.cluster_nodes)),
        identity(
            "server.javascript_engine",
            server.javascript_engine.as_deref().map(bounded),
        ),
        moment(
            "server.compactions_running",
            number(server.compactions_running),
        ),
        identity("database.q", number(database.and_then(|d| d.q))),
        identity("database.n", number(database.and_then(|d| d.n))),
        identity(
            "database.partitioned",
            database.and_then(|d| d.partitioned).map(|p| p.to_string()),
        ),
    ]
}

fn client_facts(nodes: &[NodeInfo]) -> Vec<Fact> {
    let clients: Vec<Option<&ClientEnvironment>> =
        nodes.iter().map(|n| n.client.as_ref()).collect();
    let of_clients = |pick: fn(&ClientEnvironment) -> Option<String>| {
        joined(clients.iter().map(|c| c.and_then(pick)))
    };
    vec![
        identity(
            "client.sofabench",
            of_clients(|c| Some(c.sofabench.clone())),
        ),
        identity("client.commit", of_clients(|c| c.commit.clone())),
        identity("client.profile", of_clients(|c| c.profile.clone())),
        identity("client.os", of_clients(|c| c.os.clone())),
        identity("client.kernel", of_clients(|c| c.kernel.clone())),
        identity("client.cpu", of_clients(|c| c.cpu.clone())),
        identity("client.cores", of_clients(|c| number(c.cores))),
        identity("client.threads", of_clients(|c| number(c.threads))),
        identity(
            "client.machines",
            (!nodes.is_empty()).then(|| nodes.len().to_string()),
        ),
        moment(
            "client.load_average",
            of_clients(|c| c.load_average.map(|l| format!("{l:.2}"))),
        ),
    ]
}

fn identity(name: &'static str, value: Option<String>) -> Fact {
    fact(name, value, Kind::Identity)
}

fn moment(name: &'static str, value: Option<String>) -> Fact {
    fact(name, value, Kind::Moment)
}

fn fact(name: &'static str, value: Option<String>, kind: Kind) -> Fact {
    let value = value
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_string());
    Fact { name, value, kind }
}

fn number(value: Option<u64>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// A node's features, as at most [`MOST_ITEMS`] of them, each [`bounded`]: a result file
/// may hold any number of any length.
fn features(all: &[String]) -> String {
    let kept: Vec<String> = all.iter().take(MOST_ITEMS).map(|f| bounded(f)).collect();
    kept.join(",")
}

/// One value when every item agrees (unknown items shown as such), the items joined by
/// ` | ` when they differ; `None` when there are none or none is known. Each item is
/// [`bounded`] and at most [`MOST_ITEMS`] are joined, the rest counted: a result file's
/// strings and nodes are as long and as many as its writer chose.
fn joined(items: impl Iterator<Item = Option<String>>) -> Option<String> {
    let items: Vec<String> = items
        .map(|i| {
            i.filter(|v| !v.is_empty())
                .map_or_else(|| UNKNOWN.to_string(), |v| bounded(&v))
        })
        .collect();
    let first = items.first()?;
    if items.iter().all(|i| i == UNKNOWN) {
        None
    } else if items.iter().all(|i| i == first) {
        Some(first.clone())
    } else {
        let mut shown = items[..items.len().min(MOST_ITEMS)].join(" | ");
        if items.len() > MOST_ITEMS {
            shown.push_str(&format!(" | … {} more", items.len() - MOST_ITEMS));
        }
        Some(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(index: u64, client: Option<ClientEnvironment>) -> NodeInfo {
        NodeInfo {
            index,
            count: 2,
            host: format!("h{index}"),
            client,
            server: None,
        }
    }

    fn value<'f>(facts: &'f [Fact], name: &str) -> &'f str {
        &facts.iter().find(|f| f.name == name).unwrap().value
    }

    #[test]
    fn a_result_without_an_environment_has_every_fact_unknown() {
        let facts = client_facts(&[node(0, None)]);
        let known: Vec<_> = facts.iter().filter(|f| f.value != UNKNOWN).collect();
        assert_eq!(known.len(), 1, "only the machine count: {known:?}");
        assert!(server_facts(None).iter().all(|f| f.value == UNKNOWN));
    }

    #[test]
    fn client_machines_that_agree_give_one_value_and_that_differ_give_each() {
        let machine = |cores| ClientEnvironment {
            sofabench: "0.9.0".to_string(),
            cores: Some(cores),
            ..ClientEnvironment::default()
        };
        let facts = client_facts(&[node(0, Some(machine(2))), node(1, Some(machine(8)))]);
        assert_eq!(value(&facts, "client.sofabench"), "0.9.0");
        assert_eq!(value(&facts, "client.cores"), "2 | 8");
        assert_eq!(value(&facts, "client.machines"), "2");
        let facts = client_facts(&[node(0, Some(machine(2))), node(1, None)]);
        assert_eq!(value(&facts, "client.cores"), "2 | unknown");
    }

    #[test]
    fn server_nodes_that_differ_in_version_show_each() {
        let at = |version: &str| ServerNode {
            address: "http://127.0.0.1:5984/".to_string(),
            answered: "welcome".to_string(),
            version: Some(version.to_string()),
            ..ServerNode::default()
        };
        let server = ServerEnvironment {
            nodes: vec![at("3.5.0"), at("3.4.2")],
            ..ServerEnvironment::default()
        };
        let facts = server_facts(Some(&server));
        assert_eq!(value(&facts, "server.version"), "3.5.0 | 3.4.2");
        assert_eq!(value(&facts, "server.nodes"), "2");
        assert_eq!(value(&facts, "database.q"), UNKNOWN);
    }

    #[test]
    fn long_strings_are_cut_on_a_character_boundary() {
        let long = "é".repeat(MOST_TEXT + 5);
        let cut = bounded(&long);
        assert_eq!(cut.chars().count(), MOST_TEXT + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("3.5.0"), "3.5.0");
    }
}
