//! What a run measured against and from, as its header and `report` say it: one line for
//! the server and the client, a line per server node where the nodes differ, and with
//! `-v` every fact by its name (the names `check --expect` takes).
//!
//! ```text
//!   against: Apache CouchDB 3.5.0 (3 nodes, q=2 n=3), client: sofabench 0.1.0 (0e2860b34457, release build) on 2 cores, load 0.40
//! ```

use super::Detail;
use crate::results::NodeInfo;
use crate::results::environment::{
    Fact, MOST_ITEMS, Product, ServerNode, UNKNOWN, bounded, facts_of,
};
use crate::text::visible;
use crate::words::counted;

/// How a node that answered `GET /` with a CouchDB welcome is recorded.
const WELCOME: &str = "welcome";

/// The header's lines of `nodes`' environment (a run's own node, or a result's nodes);
/// none for a result written before the environment was kept. Every value is escaped:
/// it came from a server, the machine or a file.
pub fn header(nodes: &[NodeInfo], detail: Detail) -> String {
    if nodes
        .iter()
        .all(|n| n.client.is_none() && n.server.is_none())
    {
        return String::new();
    }
    let facts = Facts(facts_of(nodes));
    let mut text = format!(
        "  against: {}, client: {}\n",
        server_part(&facts),
        client_part(&facts)
    );
    let server = nodes.iter().find_map(|n| n.server.as_ref());
    if let Some(server) = server {
        text.push_str(&node_lines(&server.nodes));
    }
    if detail == Detail::Verbose {
        let why = server.map_or(&[][..], |s| s.unknown_because.as_slice());
        text.push_str(&every_fact(&facts.0, why));
    }
    text
}

/// The facts, looked up by name.
struct Facts(Vec<Fact>);

impl Facts {
    /// The fact's value, escaped for one line; `None` when unknown.
    fn known(&self, name: &str) -> Option<String> {
        let fact = self.0.iter().find(|f| f.name == name)?;
        (fact.value != UNKNOWN).then(|| visible(&fact.value).into_owned())
    }

    /// A count, where it is one number (a merged result's differing counts are not).
    fn count(&self, name: &str) -> Option<u64> {
        self.known(name)?.parse().ok()
    }
}

/// What the server is and its version, then its shape: cluster nodes, the database's
/// shards and copies, partitioning, compactions that were running.
fn server_part(facts: &Facts) -> String {
    let other = Product::Other.name();
    let product = facts.known("server.product");
    let name = match (product, facts.known("server.vendor")) {
        (Some(product), _) if product != other => product,
        (_, Some(vendor)) => vendor,
        (Some(_), None) => "other server".to_string(),
        (None, None) => "unknown server".to_string(),
    };
    let mut text = match facts.known("server.version") {
        Some(version) => format!("{name} {version}"),
        None => name,
    };
    let mut shape = Vec::new();
    if let Some(nodes) = facts.count("server.cluster_nodes") {
        shape.push(counted(nodes, "node"));
    }
    let shards = [("q", "database.q"), ("n", "database.n")]
        .iter()
        .filter_map(|(short, name)| Some(format!("{short}={}", facts.known(name)?)))
        .collect::<Vec<_>>();
    if !shards.is_empty() {
        shape.push(shards.join(" "));
    }
    if facts.known("database.partitioned").as_deref() == Some("true") {
        shape.push("partitioned".to_string());
    }
    if let Some(compactions) = facts.count("server.compactions_running")
        && compactions > 0
    {
        shape.push(format!("{} running", counted(compactions, "compaction")));
    }
    if !shape.is_empty() {
        text.push_str(&format!(" ({})", shape.join(", ")));
    }
    text
}

/// sofabench's version, the commit and profile it was built from, the cores and the load
/// average at the start; the machines, where a merged result has several.
fn client_part(facts: &Facts) -> String {
    let Some(version) = facts.known("client.sofabench") else {
        return UNKNOWN.to_string();
    };
    let mut text = match facts.count("client.machines") {
        Some(machines) if machines > 1 => format!("{machines} machines, sofabench {version}"),
        _ => format!("sofabench {version}"),
    };
    let build: Vec<String> = [
        facts.known("client.commit"),
        facts.known("client.profile").map(|p| format!("{p} build")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !build.is_empty() {
        text.push_str(&format!(" ({})", build.join(", ")));
    }
    match (facts.count("client.cores"), facts.known("client.cores")) {
        (Some(cores), _) => text.push_str(&format!(" on {}", counted(cores, "core"))),
        (None, Some(cores)) => text.push_str(&format!(" on {cores} cores")),
        (None, None) => {}
    }
    if let Some(load) = facts.known("client.load_average") {
        text.push_str(&format!(", load {load}"));
    }
    text
}

/// A line per server node, where the nodes given did not all answer alike (another
/// version or vendor, or no welcome): a run across versions is said plainly.
fn node_lines(nodes: &[ServerNode]) -> String {
    let what = |node: &ServerNode| {
        let name = node
            .product
            .as_deref()
            .filter(|p| *p != Product::Other.name())
            .or(node.vendor.as_deref())
            .unwrap_or("unknown server");
        let version = node.version.as_deref().unwrap_or(UNKNOWN);
        let mut text = format!("{name} {version}");
        if node.answered != WELCOME {
            text.push_str(&format!(" (GET /: {})", node.answered));
        }
        text
    };
    let described: Vec<String> = nodes.iter().map(what).collect();
    if described.iter().all(|d| *d == described[0]) {
        return String::new();
    }
    // A result file may list any number of nodes, with any address: at most
    // MOST_ITEMS lines, each bounded.
    let mut lines: String = nodes
        .iter()
        .zip(&described)
        .take(MOST_ITEMS)
        .map(|(node, what)| {
            format!(
                "    server node {}: {}\n",
                visible(&bounded(&node.address)),
                visible(&bounded(what))
            )
        })
        .collect();
    if nodes.len() > MOST_ITEMS {
        lines.push_str(&format!(
            "    … {} more server nodes\n",
            nodes.len() - MOST_ITEMS
        ));
    }
    lines
}

/// Every fact by name, and why the server's unknown ones are (`-v`).
fn every_fact(facts: &[Fact], unknown_because: &[String]) -> String {
    let mut text = "  environment (names for check --expect):\n".to_string();
    for fact in facts {
        text.push_str(&format!("    {:<26} {}\n", fact.name, visible(&fact.value)));
    }
    for why in unknown_because.iter().take(MOST_ITEMS) {
        text.push_str(&format!("    unknown: {}\n", visible(&bounded(why))));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::environment::{ClientEnvironment, DatabaseShape, ServerEnvironment};

    fn couchdb(version: &str) -> ServerNode {
        ServerNode {
            address: "http://127.0.0.1:5984/".to_string(),
            answered: WELCOME.to_string(),
            product: Some("Apache CouchDB".to_string()),
            vendor: Some("The Apache Software Foundation".to_string()),
            version: Some(version.to_string()),
            ..ServerNode::default()
        }
    }

    fn client(cores: u64) -> ClientEnvironment {
        ClientEnvironment {
            sofabench: "0.1.0".to_string(),
            commit: Some("abc123def456".to_string()),
            profile: Some("release".to_string()),
            cores: Some(cores),
            load_average: Some(0.4),
            ..ClientEnvironment::default()
        }
    }

    fn node(
        index: u64,
        client: Option<ClientEnvironment>,
        server: Option<ServerEnvironment>,
    ) -> NodeInfo {
        NodeInfo {
            index,
            count: 1,
            host: "h".to_string(),
            client,
            server,
        }
    }

    fn cluster(nodes: Vec<ServerNode>) -> ServerEnvironment {
        ServerEnvironment {
            product: Some("Apache CouchDB".to_string()),
            nodes,
            cluster_nodes: Some(3),
            database: Some(DatabaseShape {
                name: "db".to_string(),
                created: true,
                q: Some(2),
                n: Some(3),
                partitioned: Some(false),
            }),
            ..ServerEnvironment::default()
        }
    }

    #[test]
    fn one_line_says_the_server_and_the_client() {
        let nodes = [node(
            0,
            Some(client(2)),
            Some(cluster(vec![couchdb("3.5.0")])),
        )];
        assert_eq!(
            header(&nodes, Detail::Brief),
            "  against: Apache CouchDB 3.5.0 (3 nodes, q=2 n=3), client: sofabench 0.1.0 (abc123def456, release build) on 2 cores, load 0.40\n"
        );
    }

    #[test]
    fn what_is_not_known_is_left_out_or_said_unknown() {
        let bare = ClientEnvironment {
            sofabench: "0.1.0".to_string(),
            ..ClientEnvironment::default()
        };
        let nodes = [node(0, Some(bare), None)];
        assert_eq!(
            header(&nodes, Detail::Brief),
            "  against: unknown server, client: sofabench 0.1.0\n"
        );
        let server = ServerEnvironment {
            nodes: vec![ServerNode {
                answered: "status 500".to_string(),
                ..ServerNode::default()
            }],
            ..ServerEnvironment::default()
        };
        assert_eq!(
            header(&[node(0, None, Some(server))], Detail::Brief),
            "  against: unknown server, client: unknown\n"
        );
        // A result written before the environment was kept says nothing of it.
        assert_eq!(header(&[node(0, None, None)], Detail::Verbose), "");
    }

    #[test]
    fn nodes_that_differ_get_a_line_each() {
        let mut old = couchdb("3.4.2");
        old.address = "http://127.0.0.1:5985/".to_string();
        let nodes = [node(
            0,
            Some(client(2)),
            Some(cluster(vec![couchdb("3.5.0"), old])),
        )];
        let text = header(&nodes, Detail::Brief);
        assert!(
            text.starts_with("  against: Apache CouchDB 3.5.0 | 3.4.2 (3 nodes"),
            "{text}"
        );
        assert!(text.ends_with(
            "    server node http://127.0.0.1:5984/: Apache CouchDB 3.5.0\n    server node http://127.0.0.1:5985/: Apache CouchDB 3.4.2\n"
        ), "{text}");
        let alike = [node(
            0,
            None,
            Some(cluster(vec![couchdb("3.5.0"), couchdb("3.5.0")])),
        )];
        assert_eq!(header(&alike, Detail::Brief).lines().count(), 1);
    }

    #[test]
    fn merged_machines_are_counted_and_their_differences_shown() {
        let nodes = [
            node(0, Some(client(2)), None),
            node(1, Some(client(8)), None),
        ];
        let text = header(&nodes, Detail::Brief);
        assert!(
            text.contains("client: 2 machines, sofabench 0.1.0 (abc123def456, release build) on 2 | 8 cores, load 0.40\n"),
            "{text}"
        );
    }

    #[test]
    fn a_servers_words_cannot_act_on_the_terminal() {
        let mut forged = couchdb("3.5.0\n  verdict: PASSED\u{1b}[2J");
        forged.address = "http://127.0.0.1:1/".to_string();
        let server = cluster(vec![couchdb("3.5.0"), forged]);
        let text = header(&[node(0, None, Some(server))], Detail::Verbose);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(!text.contains("\n  verdict"), "{text}");
        assert!(text.contains("3.5.0\\n  verdict: PASSED\\x1b[2J"), "{text}");
    }

    #[test]
    fn verbose_names_every_fact_and_why_one_is_unknown() {
        let mut server = cluster(vec![couchdb("3.5.0")]);
        server
            .unknown_because
            .push("_membership: status 401 (needs an admin)".to_string());
        let text = header(&[node(0, Some(client(2)), Some(server))], Detail::Verbose);
        for name in crate::results::environment::names() {
            assert!(text.contains(&format!("\n    {name} ")), "{name}: {text}");
        }
        assert!(
            text.contains("    server.version             3.5.0\n"),
            "{text}"
        );
        assert!(text.contains("    unknown: _membership: status 401 (needs an admin)\n"));
    }
}
