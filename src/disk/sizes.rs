//! The sizes a database reports, read from an untrusted `GET /db` answer: a field that is
//! missing, negative, fractional or of another type is unknown, never 0.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A database's sizes in bytes and its documents, each where the server said.
///
/// Apache CouchDB reports `sizes.file` (the files on disk), `sizes.active` (the live
/// data in them) and `sizes.external` (the documents' uncompressed size); PouchDB Server
/// reports only `disk_size`, taken as `file`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskSizes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<u64>,
    /// Live documents (`doc_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_count: Option<u64>,
    /// Seconds from the phase's start to the answer.
    pub at_seconds: f64,
}

impl DiskSizes {
    /// The sizes in a `GET /db` answer, answered `at_seconds` into the phase.
    pub fn from_info(info: &Value, at_seconds: f64) -> DiskSizes {
        let sizes = &info["sizes"];
        DiskSizes {
            file: sizes["file"]
                .as_u64()
                .or_else(|| info["disk_size"].as_u64()),
            active: sizes["active"].as_u64(),
            external: sizes["external"].as_u64(),
            doc_count: info["doc_count"].as_u64(),
            at_seconds,
        }
    }

    /// True when the answer held none of the figures: not a database's information.
    pub fn is_empty(&self) -> bool {
        self.file.is_none()
            && self.active.is_none()
            && self.external.is_none()
            && self.doc_count.is_none()
    }

    /// These sizes and `other`'s together (another database of a run over several): a
    /// figure stays known only where both knew it, since a sum missing a part is wrong.
    pub fn plus(&self, other: &DiskSizes) -> DiskSizes {
        let sum = |a: Option<u64>, b: Option<u64>| a?.checked_add(b?);
        DiskSizes {
            file: sum(self.file, other.file),
            active: sum(self.active, other.active),
            external: sum(self.external, other.external),
            doc_count: sum(self.doc_count, other.doc_count),
            at_seconds: self.at_seconds.max(other.at_seconds),
        }
    }

    /// The file's bytes per live document; unknown without both, or without documents.
    pub fn bytes_per_document(&self) -> Option<f64> {
        let (file, docs) = (self.file?, self.doc_count?);
        (docs > 0).then(|| file as f64 / docs as f64)
    }
}

/// How much the file grew from `start` to `end` per document written between them
/// (negative when it shrank, as after a compaction); unknown without both sizes or when
/// nothing was written.
pub fn growth_per_document(start: &DiskSizes, end: &DiskSizes, written: u64) -> Option<f64> {
    let grown = end.file? as f64 - start.file? as f64;
    (written > 0).then(|| grown / written as f64)
}

/// A phase's looks at the database's sizes before its operations began and after they
/// ended; `None` where the look failed or timed out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseDisk {
    pub start: Option<DiskSizes>,
    pub end: Option<DiskSizes>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_databases_keep_only_what_every_database_told() {
        let a = DiskSizes::from_info(&json!({"doc_count": 4, "sizes": {"file": 100}}), 1.0);
        let b = DiskSizes::from_info(&json!({"doc_count": 6, "disk_size": 50}), 1.5);
        let both = a.plus(&b);
        assert_eq!(
            (both.doc_count, both.file, both.active),
            (Some(10), Some(150), None)
        );
        assert_eq!(both.at_seconds, 1.5);
        let huge = DiskSizes {
            file: Some(u64::MAX),
            ..DiskSizes::default()
        };
        assert_eq!(huge.plus(&a).file, None);
    }
    use serde_json::json;

    #[test]
    fn couchdb_sizes_and_pouchdb_disk_size_are_read_and_the_rest_is_unknown() {
        let couch =
            json!({"doc_count": 4, "sizes": {"file": 40_000, "active": 3_000, "external": 2_000}});
        let sizes = DiskSizes::from_info(&couch, 1.5);
        assert_eq!(
            (sizes.file, sizes.active, sizes.external, sizes.doc_count),
            (Some(40_000), Some(3_000), Some(2_000), Some(4))
        );
        assert_eq!(sizes.bytes_per_document(), Some(10_000.0));
        let pouch = json!({"doc_count": 2, "disk_size": 4_864, "adapter": "leveldb"});
        let sizes = DiskSizes::from_info(&pouch, 0.0);
        assert_eq!(
            (sizes.file, sizes.active, sizes.external),
            (Some(4_864), None, None)
        );
    }

    #[test]
    fn odd_fields_are_unknown_never_zero() {
        for odd in [
            json!({"sizes": {"file": -1, "active": 1.5, "external": "9"}, "doc_count": null}),
            json!({"sizes": 7, "disk_size": [1], "doc_count": -3}),
            json!("not an object"),
            json!(null),
        ] {
            let sizes = DiskSizes::from_info(&odd, 0.0);
            assert!(sizes.is_empty(), "{odd}: {sizes:?}");
            assert_eq!(sizes.bytes_per_document(), None);
        }
        let empty = DiskSizes::from_info(&json!({"doc_count": 0, "disk_size": 100}), 0.0);
        assert_eq!(empty.bytes_per_document(), None, "no documents: no ratio");
    }

    #[test]
    fn growth_is_per_document_written_and_may_be_negative() {
        let at = |file| DiskSizes {
            file,
            ..DiskSizes::default()
        };
        assert_eq!(
            growth_per_document(&at(Some(1_000)), &at(Some(5_000)), 8),
            Some(500.0)
        );
        assert_eq!(
            growth_per_document(&at(Some(5_000)), &at(Some(1_000)), 4),
            Some(-1_000.0)
        );
        assert_eq!(growth_per_document(&at(None), &at(Some(5_000)), 8), None);
        assert_eq!(growth_per_document(&at(Some(1)), &at(Some(5)), 0), None);
    }
}
