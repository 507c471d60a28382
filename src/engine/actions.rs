//! Background actions a phase starts on the server while its operations run: compaction
//! (`POST /db/_compact`) and replication (`POST /_replicate`, one-way or two-way), as the
//! CouchDB benchmark report measured throughput during them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::driver::{Call, Client, Endpoint, Method};
use crate::target::Target;
use crate::workload::Action;

/// Actions may run long (a big compaction); the limit only ends a hung server.
const ACTION_TIMEOUT: Duration = Duration::from_secs(3600);

/// What an action did, with times in seconds from the phase's start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActionReport {
    /// `compact`, `replicate` or `replicate (two-way)`.
    pub kind: String,
    pub started: Option<f64>,
    pub finished: Option<f64>,
    /// The database file's size before and after, in bytes, when the server says.
    pub size_before: Option<u64>,
    pub size_after: Option<u64>,
    /// Which field gave the size (`sizes.file` on CouchDB, `disk_size` on PouchDB Server).
    pub size_field: Option<String>,
    pub error: Option<String>,
}

impl ActionReport {
    pub fn failed(error: String) -> ActionReport {
        ActionReport {
            error: Some(error),
            ..ActionReport::default()
        }
    }
}

/// Starts `action` at its moment after `phase_start`.
pub fn spawn(
    action: Action,
    target: &Target,
    endpoint: Arc<Endpoint>,
    phase_start: Instant,
) -> JoinHandle<ActionReport> {
    let database_path = target.database_path();
    let source_url = database_url(target, &endpoint);
    tokio::spawn(async move {
        let mut client = Client::new(endpoint, Some(ACTION_TIMEOUT));
        let since = |at: Instant| at.duration_since(phase_start).as_secs_f64();
        match action {
            Action::Compact { at } => {
                tokio::time::sleep_until((phase_start + at).into()).await;
                compact(&mut client, &database_path, since).await
            }
            Action::Replicate {
                at,
                target,
                two_way,
            } => {
                tokio::time::sleep_until((phase_start + at).into()).await;
                replicate(&mut client, &source_url, &target, two_way, since).await
            }
        }
    })
}

/// The database's URL as the server itself should use it for replication (with the
/// run's credentials, which the server needs and never prints back).
fn database_url(target: &Target, endpoint: &Endpoint) -> String {
    let credentials = target.credentials.as_ref().map_or(String::new(), |c| {
        format!(
            "{}:{}@",
            crate::target::encode_path_segment(&c.user),
            crate::target::encode_path_segment(&c.password)
        )
    });
    format!(
        "http://{credentials}{}{}{}",
        endpoint.node.host_header,
        endpoint.node.base_path,
        target.database_path()
    )
}

async fn request(
    client: &mut Client,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Result<(u16, Value), String> {
    let body = body.map(|b| b.to_string());
    let call = Call {
        method,
        path,
        body: body.as_deref().map(str::as_bytes),
    };
    let answer = client.send(&call).await.map_err(|e| e.to_string())?;
    let value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    Ok((answer.status, value))
}

/// The database file's size and the field that gave it.
async fn file_size(
    client: &mut Client,
    database_path: &str,
) -> (Option<u64>, Option<String>, Option<bool>) {
    let Ok((200, info)) = request(client, Method::Get, database_path, None).await else {
        return (None, None, None);
    };
    let running = info["compact_running"].as_bool();
    if let Some(size) = info["sizes"]["file"].as_u64() {
        (Some(size), Some("sizes.file".to_string()), running)
    } else if let Some(size) = info["disk_size"].as_u64() {
        (Some(size), Some("disk_size".to_string()), running)
    } else {
        (None, None, running)
    }
}

async fn compact(
    client: &mut Client,
    database_path: &str,
    since: impl Fn(Instant) -> f64,
) -> ActionReport {
    let (size_before, size_field, _) = file_size(client, database_path).await;
    let started = Instant::now();
    let path = format!("{database_path}/_compact");
    let mut report = ActionReport {
        kind: "compact".to_string(),
        started: Some(since(started)),
        size_before,
        size_field,
        ..ActionReport::default()
    };
    match request(client, Method::Post, &path, Some(json!({}))).await {
        Ok((200..=202, _)) => {}
        Ok((status, body)) => {
            report.error = Some(format!("_compact answered {status}: {body}"));
            return report;
        }
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    }
    // CouchDB compacts in the background and says so in `compact_running`; a server
    // without the field has finished when it answered.
    loop {
        let (_, _, running) = file_size(client, database_path).await;
        if running != Some(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    report.finished = Some(since(Instant::now()));
    let (size_after, _, _) = file_size(client, database_path).await;
    report.size_after = size_after;
    report
}

async fn replicate(
    client: &mut Client,
    source: &str,
    target: &str,
    two_way: bool,
    since: impl Fn(Instant) -> f64,
) -> ActionReport {
    let started = Instant::now();
    let mut report = ActionReport {
        kind: if two_way {
            "replicate (two-way)"
        } else {
            "replicate"
        }
        .to_string(),
        started: Some(since(started)),
        ..ActionReport::default()
    };
    let mut directions = vec![(source.to_string(), target.to_string())];
    if two_way {
        directions.push((target.to_string(), source.to_string()));
    }
    let mut errors = Vec::new();
    // One-shot replications, one after the other when two-way: `_replicate` answers when
    // a one-shot replication is done.
    for (from, to) in directions {
        let body = json!({"source": from, "target": to, "create_target": true});
        match request(client, Method::Post, "/_replicate", Some(body)).await {
            Ok((200..=202, _)) => {}
            Ok((status, answer)) => errors.push(format!(
                "_replicate answered {status}: {}",
                answer["reason"]
            )),
            Err(e) => errors.push(e),
        }
    }
    report.finished = Some(since(Instant::now()));
    if !errors.is_empty() {
        report.error = Some(errors.join("; "));
    }
    report
}
