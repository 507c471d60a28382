//! Replication ids: one per device, database, direction and filter, so that each
//! replication finds its own logs. SHA-256 rather than the MD5 CouchDB and PouchDB use
//! (the id only has to be stable and distinct; nothing else computes it).

use sha2::{Digest, Sha256};

use super::spec::Scope;

/// Which way a replication goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the server to the device.
    Pull,
    /// From the device to the server.
    Push,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Pull => "pull",
            Direction::Push => "push",
        }
    }
}

/// The replication id (32 hex digits, as long as CouchDB's) of `device` replicating
/// `scope` in `direction`: the name of its `_local` log document.
pub fn replication_id(device: &str, scope: &Scope, direction: Direction) -> String {
    let mut hash = Sha256::new();
    for part in [
        "sofabench-device-replication",
        device,
        scope.path(),
        direction.name(),
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    let filter = match scope {
        Scope::Database { .. } => String::new(),
        Scope::DocIds { ids, .. } => format!("_doc_ids:{}", serde_json::json!(ids.as_ref())),
        Scope::Selector { selector, .. } => format!("_selector:{selector}"),
    };
    hash.update((filter.len() as u64).to_le_bytes());
    hash.update(filter.as_bytes());
    hash.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn ids_differ_by_device_database_direction_and_filter() {
        let db = Scope::Database { path: "/db".into() };
        let id = replication_id("a", &db, Direction::Pull);
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(id, replication_id("a", &db, Direction::Pull));
        let ids = Scope::DocIds {
            path: "/db".into(),
            ids: Arc::from(vec!["x".to_string()]),
        };
        let other_ids = Scope::DocIds {
            path: "/db".into(),
            ids: Arc::from(vec!["y".to_string()]),
        };
        for other in [
            replication_id("b", &db, Direction::Pull),
            replication_id(
                "a",
                &Scope::Database {
                    path: "/db2".into(),
                },
                Direction::Pull,
            ),
            replication_id("a", &db, Direction::Push),
            replication_id("a", &ids, Direction::Pull),
            replication_id("a", &other_ids, Direction::Pull),
        ] {
            assert_ne!(id, other);
        }
        assert_ne!(
            replication_id("a", &ids, Direction::Pull),
            replication_id("a", &other_ids, Direction::Pull)
        );
    }
}
