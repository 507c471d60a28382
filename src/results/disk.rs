//! A phase's disk cost as the result keeps it: the database's sizes before and after the
//! phase, and the bytes per document that follow.

use serde::{Deserialize, Serialize};

use super::OperationResult;
use crate::disk::{DiskSizes, PhaseDisk, growth_per_document};
use crate::workload::Operation;

/// The operations that write a document revision (and so grow the database's file).
const WRITES: [Operation; 4] = [
    Operation::BulkInsert,
    Operation::Create,
    Operation::Update,
    Operation::Delete,
];

/// The database's sizes around one phase; a figure the server did not give is absent.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskResult {
    /// Looked at just before the phase's operations began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<DiskSizes>,
    /// Looked at just after they ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<DiskSizes>,
    /// Documents the phase's successful writes stored: bulk-inserted, created, updated
    /// and deleted (each a new revision).
    pub documents_written: u64,
    /// `end.file / end.doc_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_document: Option<f64>,
    /// `(end.file - start.file) / documents_written`; negative when the file shrank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_per_document_written: Option<f64>,
}

/// The disk cost of a phase whose operations are `operations`.
pub fn disk_result(disk: &PhaseDisk, operations: &[OperationResult]) -> DiskResult {
    let documents_written = operations
        .iter()
        .filter(|o| Operation::named(&o.operation).is_some_and(|op| WRITES.contains(&op)))
        .map(|o| o.documents)
        .sum();
    let bytes_per_document = disk.end.as_ref().and_then(DiskSizes::bytes_per_document);
    let growth_per_document_written = disk
        .start
        .as_ref()
        .zip(disk.end.as_ref())
        .and_then(|(start, end)| growth_per_document(start, end, documents_written));
    DiskResult {
        start: disk.start.clone(),
        end: disk.end.clone(),
        documents_written,
        bytes_per_document,
        growth_per_document_written,
    }
}

impl DiskResult {
    /// The looks, to build the result again (`merge`).
    pub fn looks(&self) -> PhaseDisk {
        PhaseDisk {
            start: self.start.clone(),
            end: self.end.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_documents_are_the_writes_and_reads_do_not_count() {
        let op = |name: &str, documents| OperationResult {
            operation: name.to_string(),
            documents,
            ..OperationResult::unmeasured()
        };
        let sizes = |file, doc_count| DiskSizes {
            file: Some(file),
            doc_count: Some(doc_count),
            ..DiskSizes::default()
        };
        let disk = PhaseDisk {
            start: Some(sizes(1_000, 10)),
            end: Some(sizes(41_000, 50)),
        };
        let operations = [op("bulk_insert", 30), op("read", 500), op("update", 10)];
        let result = disk_result(&disk, &operations);
        assert_eq!(result.documents_written, 40);
        assert_eq!(result.bytes_per_document, Some(820.0));
        assert_eq!(result.growth_per_document_written, Some(1_000.0));
        let unknown = disk_result(&PhaseDisk::default(), &operations);
        assert_eq!(
            (
                unknown.bytes_per_document,
                unknown.growth_per_document_written
            ),
            (None, None)
        );
    }
}
