//! A phase's fleet of devices, as the user asks for it: how many devices, what each
//! replicates, how it writes and syncs, which go offline and which join cold. Plain
//! data; `crate::fleet` runs it and `crate::device` speaks the replication protocol.

use std::time::Duration;

use super::changes::FeedKind;

/// Which replication client a device behaves like.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientProfile {
    /// PouchDB's replicate(): batches of 100, a checkpoint after every batch.
    #[default]
    PouchDb,
    /// CouchDB's own replicator: batches of 500, a checkpoint on a timer (5 s).
    Replicator,
}

impl ClientProfile {
    pub const NAMES: [&'static str; 2] = ["pouchdb", "replicator"];

    pub fn parse(text: &str) -> Result<ClientProfile, String> {
        match text {
            "pouchdb" => Ok(ClientProfile::PouchDb),
            "replicator" => Ok(ClientProfile::Replicator),
            other => Err(format!(
                "{other:?} is not a device profile; use {}",
                ClientProfile::NAMES.join(" or ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ClientProfile::PouchDb => "pouchdb",
            ClientProfile::Replicator => "replicator",
        }
    }
}

/// What each device replicates.
#[derive(Clone, Debug, PartialEq)]
pub enum FleetScope {
    /// A database of its own (per-user databases): the run's `--databases` dealt out
    /// round robin, so several devices of one user share a database.
    OwnDatabase,
    /// The run's first database, each device following only its own documents and the
    /// shared ones (`_changes?filter=_doc_ids`).
    DocIds,
    /// The run's first database, each device following a `_selector` on a field its
    /// documents carry (CouchDB only: PouchDB Server crashes on selector feeds).
    Selector,
}

/// When a device syncs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncEvery {
    /// Always: a feed held open (longpoll or continuous), and a push after each write.
    Live,
    /// A push and a pull every so often (a phone waking up).
    Every(Duration),
}

/// The share of a device's writes of each kind, in percent (they sum to 100).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteMix {
    /// A new document of the device's own.
    pub create: u32,
    /// An edit of one of its own documents.
    pub edit_own: u32,
    /// An edit of a document every device shares: where conflicts come from.
    pub edit_shared: u32,
}

impl Default for WriteMix {
    fn default() -> WriteMix {
        WriteMix {
            create: 50,
            edit_own: 50,
            edit_shared: 0,
        }
    }
}

/// Devices that stop syncing for a while and keep writing locally.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offline {
    /// The share of the devices that goes offline, percent.
    pub share: u32,
    /// From the phase's start until they go offline.
    pub from: Duration,
    /// How long they stay offline: they come back together, with their backlogs.
    pub lasting: Duration,
}

/// Devices that join during the phase with nothing, and pull their whole scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColdJoin {
    /// How many of the fleet's devices join cold (the rest start in sync).
    pub devices: u64,
    /// From the phase's start until they join.
    pub at: Duration,
}

/// A phase's fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct Fleet {
    /// Devices of all client machines together (`--node-count` splits them).
    pub devices: u64,
    pub scope: FleetScope,
    pub profile: ClientProfile,
    /// The feed a live device holds, or the one a periodic device reads.
    pub feed: FeedKind,
    pub sync: SyncEvery,
    /// Local writes of each device per second (0: devices only read).
    pub writes_per_second: f64,
    pub mix: WriteMix,
    /// How many documents all devices share (their `edit_shared` writes pick among them).
    pub shared_documents: u64,
    pub offline: Option<Offline>,
    pub cold: Option<ColdJoin>,
    /// The size a device's documents are padded to, bytes.
    pub doc_bytes: u32,
    /// Each own database gets a user of its own, a member in its `_security`, and its
    /// devices log in as that user (`FleetScope::OwnDatabase` only).
    pub users: bool,
    /// The longest the final sync (every device's last push and pull, after writes
    /// stop) may take before the convergence check.
    pub last_sync: Duration,
}

impl Default for Fleet {
    fn default() -> Fleet {
        Fleet {
            devices: 100,
            scope: FleetScope::OwnDatabase,
            profile: ClientProfile::PouchDb,
            feed: FeedKind::Longpoll,
            sync: SyncEvery::Live,
            writes_per_second: 0.2,
            mix: WriteMix::default(),
            shared_documents: 0,
            offline: None,
            cold: None,
            doc_bytes: 256,
            users: false,
            last_sync: Duration::from_secs(120),
        }
    }
}
