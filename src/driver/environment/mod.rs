//! The server a run measures, captured at setup into its result: each node as it
//! answered `GET /` (read by [`crate::driver::admin::Admin::check_server`]), then from
//! the node that sets up, the cluster's membership, the JavaScript engine, the
//! compactions running and the database's shape. Each of these is one request, bounded
//! in time and in size; one the server refuses, lacks or garbles leaves its fact unknown
//! and says why ([`ServerEnvironment::unknown_because`]), and never stops the run.

pub mod answers;

use std::sync::Arc;
use std::time::Duration;

use self::answers::{read_compactions, read_javascript_engine, read_layout, read_membership};
use super::connection::{Call, Client, Endpoint, TransportError};
use super::http1::Method;
use crate::results::environment::{DatabaseShape, ServerEnvironment, ServerNode, bounded};
use crate::target::Target;
use crate::text::Quoted;

/// How long one look may take: a server that holds it leaves its fact unknown rather
/// than the run waiting.
const LOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// The server as the run found it: `nodes`, each as it answered `GET /`, in the order
/// given; the rest asked of `setup`, the node that sets the database up.
pub async fn capture(setup: &Arc<Endpoint>, nodes: Vec<ServerNode>) -> ServerEnvironment {
    let mut client = Client::new(setup.clone(), Some(LOOK_TIMEOUT));
    let mut server = ServerEnvironment {
        product: nodes.iter().find_map(|n| n.product.clone()),
        nodes,
        ..ServerEnvironment::default()
    };
    match look(&mut client, "/_membership", read_membership).await {
        Ok((cluster, all)) => (server.cluster_nodes, server.all_nodes) = (cluster, all),
        Err(why) => server.unknown_because.push(why),
    }
    let secrets = setup.credential.clone();
    let engine = |body: &[u8]| read_javascript_engine(body, &secrets);
    match look(&mut client, "/_node/_local/_versions", engine).await {
        Ok(engine) => server.javascript_engine = Some(engine),
        Err(why) => server.unknown_because.push(why),
    }
    match look(&mut client, "/_active_tasks", read_compactions).await {
        Ok(running) => server.compactions_running = Some(running),
        Err(why) => server.unknown_because.push(why),
    }
    server
}

/// A node that gave no answer at the start (`--failover` went on without it).
pub fn down(endpoint: &Endpoint) -> ServerNode {
    ServerNode {
        address: answers::kept(&endpoint.node.to_string(), &endpoint.credential),
        answered: "no answer".to_string(),
        ..ServerNode::default()
    }
}

/// The database of `target` as the run found or made it (`created`), from `GET /{db}`
/// on `node`; with why its shape is unknown, when it is.
pub async fn database(
    node: &Arc<Endpoint>,
    target: &Target,
    created: bool,
) -> (DatabaseShape, Option<String>) {
    let mut client = Client::new(node.clone(), Some(LOOK_TIMEOUT));
    let mut shape = DatabaseShape {
        name: bounded(&target.database),
        created,
        ..DatabaseShape::default()
    };
    let path = target.database_path();
    match look(&mut client, &path, read_layout).await {
        Ok(layout) => {
            (shape.q, shape.n) = layout.shards.unzip();
            shape.partitioned = layout.partitioned;
            (shape, None)
        }
        Err(why) => (shape, Some(why.replacen(&path, "GET /{db}", 1))),
    }
}

/// `GET path`, its answer read by `read`; else why not, as one line naming the path.
async fn look<T>(
    client: &mut Client,
    path: &str,
    read: impl FnOnce(&[u8]) -> Option<T>,
) -> Result<T, String> {
    let call = Call {
        method: Method::Get,
        path,
        body: None,
    };
    let why = match client.send(&call).await {
        Ok(answer) if answer.status == 200 => match read(&answer.body) {
            Some(value) => return Ok(value),
            None => "not the answer expected".to_string(),
        },
        Ok(answer) => refused(answer.status),
        Err(e) if matches!(e.error, TransportError::Timeout) => {
            format!("no answer within {} s", LOOK_TIMEOUT.as_secs())
        }
        Err(e) => format!("no answer ({e})"),
    };
    let secrets = &client.endpoint().credential;
    Err(Quoted::message(&format!("{path}: {why}"), secrets))
}

/// Why a look got `status` instead of its answer.
fn refused(status: u16) -> String {
    match status {
        401 | 403 => format!("status {status} (needs a server admin's credentials)"),
        404 => format!("status {status} (not on this server)"),
        _ => format!("status {status}"),
    }
}
