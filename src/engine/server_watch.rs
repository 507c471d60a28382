//! Looks at what each node says about itself (`server_stats`) once per interval while a
//! phase runs, on connections of its own: never the workers', so the operations' figures
//! do not pay for it, and never blocking the interval line, which does not wait for it.
//!
//! A look that takes longer than [`LOOK_TIMEOUT`] is given up and counted as missed. An
//! endpoint a node does not have (PouchDB Server has no `_node/_local/_stats`) is asked
//! once, noted, and not asked again.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinHandle;

use crate::driver::{Call, Client, Endpoint, Method};
use crate::server_stats::{ServerLook, node_stats, system, tasks};

/// The longest a look at one endpoint may take.
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(5);

/// One look at every node, `at` after the phase's start.
#[derive(Clone, Debug)]
pub struct Looks {
    pub at: Duration,
    /// In node order; `None` for a node that answered none of the endpoints in time.
    pub nodes: Vec<Option<ServerLook>>,
}

/// The looks of a phase so far, and what could not be asked.
#[derive(Debug, Default)]
pub struct Watched {
    pub looks: Vec<Looks>,
    /// Each endpoint a node lacked or refused, said once: `http://a:5984: GET
    /// /_node/_local/_stats gave 404`.
    pub notes: Vec<String>,
}

/// The three endpoints, each read by its parser.
const ENDPOINTS: [(&str, Reader); 3] = [
    ("/_node/_local/_stats", |v, look| {
        look.stats = node_stats::read(v)
    }),
    ("/_node/_local/_system", |v, look| {
        look.system = system::read(v)
    }),
    ("/_active_tasks", |v, look| look.tasks = tasks::read(v)),
];

type Reader = fn(&Value, &mut ServerLook);

/// One node's watcher: its own client, and the endpoints it still asks.
struct NodeWatch {
    client: Client,
    asking: [bool; ENDPOINTS.len()],
}

/// Starts looking at every node each `every`, from `started`; the looks gather in the
/// returned [`Watched`] until the task is aborted.
pub fn spawn(
    endpoints: &[Arc<Endpoint>],
    every: Duration,
    started: Instant,
) -> (Arc<Mutex<Watched>>, JoinHandle<()>) {
    let watched = Arc::new(Mutex::new(Watched::default()));
    let mut nodes: Vec<NodeWatch> = endpoints
        .iter()
        .map(|e| NodeWatch {
            client: Client::new(e.clone(), Some(LOOK_TIMEOUT)),
            asking: [true; ENDPOINTS.len()],
        })
        .collect();
    let into = watched.clone();
    let task = tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at((started + every).into(), every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            ticks.tick().await;
            let at = started.elapsed();
            let mut looks = Vec::with_capacity(nodes.len());
            let mut notes = Vec::new();
            for node in &mut nodes {
                looks.push(node.look(&mut notes).await);
            }
            let mut watched = into.lock().unwrap_or_else(|p| p.into_inner());
            watched.looks.push(Looks { at, nodes: looks });
            watched.notes.extend(notes);
        }
    });
    (watched, task)
}

impl NodeWatch {
    /// Asks each endpoint still asked; `None` when none answered.
    async fn look(&mut self, notes: &mut Vec<String>) -> Option<ServerLook> {
        let mut look = ServerLook::default();
        let mut answered = false;
        for (i, (path, read)) in ENDPOINTS.iter().enumerate() {
            if !self.asking[i] {
                continue;
            }
            let call = Call {
                method: Method::Get,
                path,
                body: None,
            };
            let node = self.client.endpoint().node.to_string();
            match self.client.send(&call).await {
                Ok(answer) if answer.status == 200 => {
                    if let Ok(value) = serde_json::from_slice::<Value>(&answer.body) {
                        read(&value, &mut look);
                        answered = true;
                    }
                }
                // Missing (404), not allowed (401, 403) or not understood (400, 405):
                // asking again each interval would only say it again.
                Ok(answer) if (400..500).contains(&answer.status) => {
                    self.asking[i] = false;
                    notes.push(format!("{node}: GET {path} gave {}", answer.status));
                }
                // A busy or failing server may answer the next look: ask again.
                _ => {}
            }
        }
        answered.then_some(look)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_endpoint_has_its_reader() {
        let mut look = ServerLook::default();
        let tasks = serde_json::json!([{"type": "indexer"}]);
        (ENDPOINTS[2].1)(&tasks, &mut look);
        assert_eq!(look.tasks.unwrap().by_kind["indexer"], 1);
    }
}
