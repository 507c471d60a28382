//! Replication on PouchDB Server: one-shot `_replicator` jobs, one after the other.
//!
//! PouchDB Server 4.2's replicator cannot stop a continuous job without crashing: a
//! running job's document cannot be edited (only the replicator may edit a `triggered`
//! document), and deleting it cancels the job, whose end then updates the deleted
//! document, an unhandled rejection that ends the server process. A one-shot job ends on
//! its own (`completed`), after which its document can be deleted safely. So each
//! direction runs one-shot jobs back to back under one document id, each resuming from
//! the last one's checkpoint, until the phase ends; the lag measured includes the gap
//! between jobs, as it would with a replicator that polls.

use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::document;
use crate::driver::{Client, Method};
use crate::engine::actions::request;
use crate::engine::stop::Signal;
use crate::target::encode_path_segment;

/// How often a job's document is looked at for its end.
const LOOK: Duration = Duration::from_millis(50);

/// How long a job's document is left after its job has said `completed`: the replicator
/// may still write to it, and a write to a deleted document is an unhandled rejection
/// that ends PouchDB Server 4.2 (seen 1 time in 7 when the document was deleted at once).
const SETTLE: Duration = Duration::from_secs(1);

/// How long the last job gets to end once the phase has ended.
const LAST_JOB_WAIT: Duration = Duration::from_secs(60);

/// One direction's jobs, running.
pub struct OneShots {
    stop: Signal,
    task: JoinHandle<Result<u64, String>>,
}

impl OneShots {
    /// Starts jobs of `body` (a one-shot replication) under document `id`.
    pub fn start(client: Client, id: String, body: Value) -> OneShots {
        let stop = Signal::default();
        let task = tokio::spawn(run(client, id, body, stop.clone()));
        OneShots { stop, task }
    }

    /// Lets the running job end, deletes its document, and gives how many jobs ran.
    pub async fn finish(self) -> Result<u64, String> {
        self.stop.raise();
        self.task
            .await
            .unwrap_or_else(|e| Err(format!("the replication task failed: {e}")))
    }
}

async fn run(mut client: Client, id: String, body: Value, stop: Signal) -> Result<u64, String> {
    let mut jobs = 0;
    loop {
        document::put(&mut client, &id, &body).await?;
        jobs += 1;
        // Deleted only once its job has ended: a restarted job is waited for again.
        loop {
            ended(&mut client, &id, &stop).await?;
            tokio::time::sleep(SETTLE).await;
            if document::remove_ended(&mut client, &id).await? == document::Removal::Gone {
                break;
            }
        }
        if stop.is_raised() {
            return Ok(jobs);
        }
    }
}

/// Waits until the job of document `id` has ended (`completed` or `error`); once `stop`
/// is raised, for at most [`LAST_JOB_WAIT`].
async fn ended(client: &mut Client, id: &str, stop: &Signal) -> Result<(), String> {
    let path = format!("/_replicator/{}", encode_path_segment(id));
    let mut waited = Duration::ZERO;
    loop {
        let answer = request(client, Method::Get, &path, None).await?;
        if answer.status != 200 {
            return Err(format!(
                "GET {path} was answered {}: {}",
                answer.status,
                answer.reason()
            ));
        }
        match answer.json["_replication_state"].as_str() {
            Some("completed") => return Ok(()),
            Some("error") => {
                return Err(format!(
                    "the replication failed: {}",
                    answer.json["_replication_state_reason"]
                        .as_str()
                        .unwrap_or("no reason given")
                ));
            }
            _ => {}
        }
        if stop.is_raised() {
            if waited >= LAST_JOB_WAIT {
                return Err(format!(
                    "its last job had not ended {} s after the phase; its document is left in place (deleting a running job's document stops PouchDB Server)",
                    LAST_JOB_WAIT.as_secs()
                ));
            }
            waited += LOOK;
        }
        tokio::time::sleep(LOOK).await;
    }
}
