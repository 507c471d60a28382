//! What one device is: its name, what it replicates, and which client it behaves like.

use std::sync::Arc;
use std::time::Duration;

use crate::workload::changes::FeedKind;
use crate::workload::fleet::ClientProfile;

/// One device, as the fleet sets it up.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    /// Unique among the run's devices (it carries the client machine's `--node-index`):
    /// the device's replication ids and the revisions it makes derive from it.
    pub name: String,
    pub scope: Scope,
    pub profile: Profile,
    /// The size the bodies the device pushes are padded to, bytes.
    pub doc_bytes: u32,
}

/// What a device replicates.
#[derive(Clone, Debug, PartialEq)]
pub enum Scope {
    /// A whole database (its path below the node, e.g. `/userdb-3`).
    Database { path: String },
    /// Only these documents of the database (`_changes?filter=_doc_ids`).
    DocIds { path: String, ids: Arc<[String]> },
    /// The documents a Mango selector matches (`filter=_selector`; CouchDB only).
    Selector {
        path: String,
        selector: Arc<serde_json::Value>,
    },
}

impl Scope {
    /// The database's path below the node, e.g. `/userdb-3`.
    pub fn path(&self) -> &str {
        match self {
            Scope::Database { path }
            | Scope::DocIds { path, .. }
            | Scope::Selector { path, .. } => path,
        }
    }
}

/// When the replication log is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checkpointing {
    /// After every batch (PouchDB).
    EveryBatch,
    /// After a batch once this long has passed since the last write, and at a cycle's
    /// end once it has (CouchDB's replicator: 5 s).
    Every(Duration),
}

/// How a device replicates: the client it behaves like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Changes read per feed request, and so documents per `_bulk_get` and `_bulk_docs`.
    pub batch_size: u32,
    pub checkpoint: Checkpointing,
    /// The feed a pull that waits reads (a pull that does not wait reads `normal`).
    pub feed: FeedKind,
    /// How long a waiting feed read is held by the server (`timeout`), and the heartbeat
    /// of a continuous one.
    pub feed_timeout: Duration,
}

impl Profile {
    /// PouchDB's `replicate()`: batches of 100, a checkpoint after every batch, longpoll.
    pub fn pouchdb() -> Profile {
        Profile {
            batch_size: 100,
            checkpoint: Checkpointing::EveryBatch,
            feed: FeedKind::Longpoll,
            feed_timeout: Duration::from_secs(25),
        }
    }

    /// CouchDB's replicator: batches of 500, a checkpoint every 5 seconds.
    pub fn replicator() -> Profile {
        Profile {
            batch_size: 500,
            checkpoint: Checkpointing::Every(Duration::from_secs(5)),
            feed: FeedKind::Continuous,
            feed_timeout: Duration::from_secs(25),
        }
    }

    /// The profile of the client the fleet names, reading `feed`.
    pub fn of(client: ClientProfile, feed: FeedKind) -> Profile {
        let profile = match client {
            ClientProfile::PouchDb => Profile::pouchdb(),
            ClientProfile::Replicator => Profile::replicator(),
        };
        Profile { feed, ..profile }
    }
}

impl Default for Profile {
    fn default() -> Profile {
        Profile::pouchdb()
    }
}
