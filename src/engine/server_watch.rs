//! Looks at what each node says about itself (`server_stats`) once per interval while a
//! phase runs, on connections of its own: never the workers', so the operations' figures
//! do not pay for it, and never holding up the interval lines, which do not wait for it.
//!
//! Each node has a task, and each endpoint a connection, asked at once: a node or an
//! endpoint that stalls costs only its own figures, and only until its answer is given up
//! after half an interval (at most [`LOOK_TIMEOUT`]), so that every look ends before the
//! next is due, and the look at a phase's last full interval before the phase ends. An endpoint a node does not have
//! (PouchDB Server has no `_node/_local/_stats`) or will not show is asked once, noted,
//! and not asked again.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::stop::Signal;
use crate::driver::{Call, Client, Endpoint, Method};
use crate::server_stats::{NodeLooks, ServerLook, node_stats, system, tasks};

/// The longest an answer is waited for.
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(5);

/// The looks of a phase so far, and what could not be asked.
#[derive(Debug, Default)]
pub struct Watched {
    pub nodes: Vec<NodeLooks>,
    /// Each endpoint a node lacked or refused, said once: `http://a:5984: GET
    /// /_node/_local/_stats gave 404`.
    pub notes: Vec<String>,
}

/// Reads an answer's body into its part of a look; false when it is not the answer.
type Reader = fn(&[u8], &mut ServerLook) -> bool;

/// The three endpoints, each read by its parser into its part of a look.
const ENDPOINTS: [(&str, Reader); 3] = [
    ("/_node/_local/_stats", |body, look| {
        look.stats = node_stats::read(body);
        look.stats.is_some()
    }),
    ("/_node/_local/_system", |body, look| {
        look.system = system::read(body);
        look.system.is_some()
    }),
    ("/_active_tasks", |body, look| {
        look.tasks = tasks::read(body);
        look.tasks.is_some()
    }),
];

/// The largest answer of an endpoint read: CouchDB's `_stats` is about 26 KB, and a
/// thousand tasks under 1 MB. A larger answer makes that look's figures unknown, and
/// costs the client no more than this.
pub const ANSWER_LIMIT: u64 = 4 << 20;

/// A watcher at work.
pub struct Watch {
    watched: Arc<Mutex<Watched>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Watch {
    /// Where the looks land as they are taken.
    pub fn landed(&self) -> Arc<Mutex<Watched>> {
        self.watched.clone()
    }

    /// Stops looking (looks under way are given up) and gives the looks taken.
    pub fn stop(self) -> Watched {
        for task in &self.tasks {
            task.abort();
        }
        let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *watched)
    }
}

/// Starts looking at every node each `every`, from `started`, until stopped, or until
/// `stop` (Ctrl-C: nothing more is sent).
pub fn spawn(
    endpoints: &[Arc<Endpoint>],
    every: Duration,
    started: Instant,
    stop: &Signal,
) -> Watch {
    let watched = Arc::new(Mutex::new(Watched {
        nodes: endpoints
            .iter()
            .map(|e| NodeLooks {
                node: e.node.to_string(),
                looks: Vec::new(),
            })
            .collect(),
        notes: Vec::new(),
    }));
    let wait = (every / 2).min(LOOK_TIMEOUT);
    let tasks = endpoints
        .iter()
        .enumerate()
        .map(|(index, endpoint)| {
            let node = NodeWatch {
                index,
                clients: std::array::from_fn(|_| {
                    Client::new(endpoint.limited_to(ANSWER_LIMIT), Some(wait))
                }),
                asking: [true; ENDPOINTS.len()],
            };
            tokio::spawn(node.run(every, started, watched.clone(), stop.clone()))
        })
        .collect();
    Watch { watched, tasks }
}

/// One node's watcher: a connection per endpoint, and the endpoints it still asks.
struct NodeWatch {
    index: usize,
    clients: [Client; ENDPOINTS.len()],
    asking: [bool; ENDPOINTS.len()],
}

impl NodeWatch {
    async fn run(
        mut self,
        every: Duration,
        started: Instant,
        into: Arc<Mutex<Watched>>,
        stop: Signal,
    ) {
        let first = crate::time::duration::after(started, every);
        let mut ticks = tokio::time::interval_at(first.into(), every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            ticks.tick().await;
            if stop.is_raised() {
                return;
            }
            let at = started.elapsed();
            let (look, notes) = self.look().await;
            let mut watched = into.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(look) = look {
                watched.nodes[self.index].looks.push((at, look));
            }
            watched.notes.extend(notes);
        }
    }

    /// Asks each endpoint still asked, all at once; `None` when none answered.
    async fn look(&mut self) -> (Option<ServerLook>, Vec<String>) {
        let [stats, system, tasks] = &mut self.clients;
        let [a, b, c] = self.asking;
        let answers = tokio::join!(
            ask(stats, ENDPOINTS[0].0, a),
            ask(system, ENDPOINTS[1].0, b),
            ask(tasks, ENDPOINTS[2].0, c),
        );
        let mut look = ServerLook::default();
        let mut answered = false;
        let mut notes = Vec::new();
        for (i, answer) in [answers.0, answers.1, answers.2].into_iter().enumerate() {
            match answer {
                Answer::Body(body) => answered |= (ENDPOINTS[i].1)(&body, &mut look),
                Answer::Refused(note) => {
                    self.asking[i] = false;
                    notes.push(note);
                }
                Answer::Nothing => {}
            }
        }
        (answered.then_some(look), notes)
    }
}

/// What asking one endpoint gave.
enum Answer {
    /// A 200's body, to be read.
    Body(bytes::Bytes),
    /// The node lacks it or will not show it: not asked again.
    Refused(String),
    /// Not asked, or no usable answer this time (a timeout, a 5xx, garbage).
    Nothing,
}

async fn ask(client: &mut Client, path: &str, asking: bool) -> Answer {
    if !asking {
        return Answer::Nothing;
    }
    let call = Call {
        method: Method::Get,
        path,
        body: None,
    };
    match client.send(&call).await {
        Ok(answer) if answer.status == 200 => Answer::Body(answer.body),
        // Missing (404), not allowed (401, 403) or not understood (400, 405): asking
        // again each interval would only say it again. A 408 or 429 may pass next time.
        Ok(answer)
            if (400..500).contains(&answer.status) && !matches!(answer.status, 408 | 429) =>
        {
            Answer::Refused(format!(
                "{}: GET {path} gave {}",
                client.endpoint().node,
                answer.status
            ))
        }
        _ => Answer::Nothing,
    }
}
