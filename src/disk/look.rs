//! One look at the database's sizes: `GET /db` on a connection of its own, bounded in
//! time, so that a server that stalls or answers garbage only makes the sizes unknown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::DiskSizes;
use crate::driver::{Call, Client, Endpoint, Method};

/// The longest one look is waited for, connecting included.
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// Asks one node for the database's information.
pub struct Looker {
    client: Client,
    path: String,
}

impl Looker {
    /// A looker at `database_path` (`/db`) on `endpoint`'s node, with its credentials.
    pub fn new(endpoint: Arc<Endpoint>, database_path: String) -> Looker {
        Looker {
            client: Client::new(endpoint, Some(LOOK_TIMEOUT)),
            path: database_path,
        }
    }

    /// The database's sizes now, timed from `phase_start`; `None` when the server did
    /// not answer 200 with a database's information within [`LOOK_TIMEOUT`].
    pub async fn look(&mut self, phase_start: Instant) -> Option<DiskSizes> {
        let call = Call {
            method: Method::Get,
            path: &self.path,
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
