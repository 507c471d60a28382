//! One look at the database's sizes: `GET /db` on a connection of its own, bounded in
//! time, so that a server that stalls or answers garbage only makes the sizes unknown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::DiskSizes;
use crate::driver::{Call, Client, Endpoint, Method};

/// The longest one look is waited for, connecting included.
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// The largest `GET /db` answer taken: CouchDB's is under 1 KiB.
const INFO_LIMIT: u64 = 1024 * 1024;

/// Asks one node for the databases' information.
pub struct Looker {
    client: Client,
    paths: Vec<String>,
}

impl Looker {
    /// A looker at `database_paths` (`/db`, or the `--databases` of a spread run) on
    /// `endpoint`'s node, with its credentials.
    pub fn new(endpoint: Arc<Endpoint>, database_paths: Vec<String>) -> Looker {
        Looker {
            client: Client::new(endpoint.limited_to(INFO_LIMIT), Some(LOOK_TIMEOUT)),
            paths: database_paths,
        }
    }

    /// The databases' sizes now, summed, timed from `phase_start`; `None` when the
    /// server did not answer one of them with its information within [`LOOK_TIMEOUT`]
    /// (the rest are not asked then: a server that does not answer costs one timeout).
    pub async fn look(&mut self, phase_start: Instant) -> Option<DiskSizes> {
        let mut sum: Option<DiskSizes> = None;
        for at in 0..self.paths.len() {
            let sizes = self.look_at(at, phase_start).await?;
            sum = Some(match sum {
                Some(sum) => sum.plus(&sizes),
                None => sizes,
            });
        }
        sum
    }

    /// Database `at`'s sizes now.
    async fn look_at(&mut self, at: usize, phase_start: Instant) -> Option<DiskSizes> {
        let call = Call {
            method: Method::Get,
            path: &self.paths[at],
            body: None,
        };
        // The client's own timeout covers the exchange; this one covers the rest too.
        let answer = tokio::time::timeout(LOOK_TIMEOUT, self.client.send(&call)).await;
        let Ok(Ok(answer)) = answer else {
            // A connection that may carry a late answer is never reused.
            self.client.disconnect();
            return None;
        };
        if answer.status != 200 {
            return None;
        }
        let info: serde_json::Value = serde_json::from_slice(&answer.body).ok()?;
        let at = Instant::now().saturating_duration_since(phase_start);
        let sizes = DiskSizes::from_info(&info, at.as_secs_f64());
        (!sizes.is_empty()).then_some(sizes)
    }
}
