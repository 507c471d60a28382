//! One device that replicates with the database over CouchDB's replication protocol, both
//! ways, keeping only what replicating correctly needs: per document its leaf revisions
//! and the chains of local edits not yet pushed, and per direction where it stands.
//!
//! - [`spec`]: what a device is (its scope and the client profile it behaves like);
//! - [`replica`] and [`chain`]: the documents it holds and the revisions it makes;
//! - [`http`]: the seam to the server (a trait over the driver's client);
//! - [`replication_id`], [`log`] and [`session`]: which replication is which, the logs
//!   on both sides, and where a replication starts;
//! - [`feed`], [`fetch`], `pull` and `push`: the two directions of the protocol;
//! - [`cycle`] and [`error`]: what a push or pull did, and why one stopped.

pub mod chain;
pub mod cycle;
pub mod error;
pub mod feed;
pub mod fetch;
pub mod http;
pub mod log;
mod pull;
mod push;
pub mod replica;
pub mod replication_id;
pub mod seq;
pub mod session;
pub mod spec;

pub use cycle::{Cycle, StartedFrom, ZeroBecause};
pub use error::{Step, SyncError};
pub use http::{Answer, DeviceHttp};
pub use pull::FeedAsk;
pub use replica::DocumentState;
pub use spec::{Checkpointing, DeviceSpec, Profile, Scope};

use std::time::Instant;

use chain::RevMaker;
use replica::Replica;
use replication_id::{Direction, replication_id};
use session::Replication;

use crate::workload::Rev;

/// One device: its documents, and where it stands in each direction.
pub struct Device {
    spec: DeviceSpec,
    replica: Replica,
    pulling: Replication,
    pushing: Replication,
    /// Set once the server refused `_bulk_get`: later pulls use `open_revs` at once.
    no_bulk_get: bool,
}

impl Device {
    /// A device holding nothing; `seed` (with its name) makes its revisions.
    pub fn new(spec: DeviceSpec, seed: u64) -> Device {
        let replica = Replica::new(RevMaker::new(seed, &spec.name));
        let pulling = Replication::new(
            Direction::Pull,
            replication_id(&spec.name, &spec.scope, Direction::Pull),
        );
        let pushing = Replication::new(
            Direction::Push,
            replication_id(&spec.name, &spec.scope, Direction::Push),
        );
        Device {
            spec,
            replica,
            pulling,
            pushing,
            no_bulk_get: false,
        }
    }

    pub fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    /// A local write: a new document `id` (or a new revision of the one it holds).
    /// `None` only at a bound of the replica (see [`replica`]).
    pub fn create(&mut self, id: &str) -> Option<Rev> {
        self.replica.write(id)
    }

    /// A local edit of the winner the device holds of `id`; `None` when it holds no live
    /// document `id`.
    pub fn edit(&mut self, id: &str) -> Option<Rev> {
        self.replica.edit(id, false)
    }

    /// A local deletion of `id`; `None` when it holds no live document `id`.
    pub fn delete(&mut self, id: &str) -> Option<Rev> {
        self.replica.edit(id, true)
    }

    /// Documents with edits not yet pushed.
    pub fn unpushed(&self) -> usize {
        self.replica.unpushed()
    }

    /// Sends the local edits not yet pushed; nothing at all when there are none. On a
    /// failure the session ends: the next push reads the server's log again.
    pub async fn push(&mut self, http: &mut impl DeviceHttp) -> Result<Cycle, SyncError> {
        let mut cycle = Cycle::begin(StartedFrom::Continuing);
        if self.replica.unpushed() > 0
            && let Err(error) = self.push_batches(http, &mut cycle).await
        {
            self.pushing.end();
            return Err(error);
        }
        cycle.finished = Instant::now();
        Ok(cycle)
    }

    /// Takes what the server has that the device lacks; `wait` asks the profile's feed to
    /// wait for changes when there are none. [`Device::feed_ask`] then
    /// [`Device::pull_answer`], the feed read sent between them on `http`.
    pub async fn pull(
        &mut self,
        http: &mut impl DeviceHttp,
        wait: bool,
    ) -> Result<Cycle, SyncError> {
        let ask = self.feed_ask(http, wait).await?;
        let request = &ask.request;
        let answer = http
            .send(request.method, &request.path, request.body.as_deref())
            .await;
        self.pull_answer(http, ask, answer).await
    }

    /// Every document the device holds, in id order.
    pub fn documents(&self) -> impl Iterator<Item = DocumentState<'_>> {
        self.replica.documents()
    }

    /// The document `id`, if the device holds it.
    pub fn document(&self, id: &str) -> Option<DocumentState<'_>> {
        self.replica.document(id)
    }

    /// The bytes the device's per-document state takes.
    pub fn state_bytes(&self) -> usize {
        self.replica.state_bytes()
    }

    /// The bytes the device takes beside its documents: itself, its spec and its
    /// replications' logs and sessions.
    pub fn fixed_bytes(&self) -> usize {
        size_of::<Device>() + self.spec.name.len() + self.pulling.bytes() + self.pushing.bytes()
    }

    /// The replication ids of its pull and its push (the server's logs are
    /// `_local/<id>`).
    pub fn replication_ids(&self) -> (&str, &str) {
        (&self.pulling.id, &self.pushing.id)
    }
}

#[cfg(test)]
mod tests;
