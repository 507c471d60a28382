//! The disk cost lines under a phase: the database's sizes after it (CouchDB's file,
//! active and external; PouchDB Server's `disk_size` as the file), bytes per document,
//! and the file's growth per document the phase wrote. What the server did not say is
//! "unknown", never 0.

use std::fmt::Write as _;

use super::numbers::{grouped, grouped_decimal};
use crate::disk::DiskSizes;
use crate::results::PhaseResult;

fn bytes(value: Option<u64>) -> String {
    value.map_or("unknown".to_string(), |b| format!("{} B", grouped(b)))
}

fn per_document(value: Option<f64>) -> String {
    value.map_or("unknown".to_string(), |b| {
        format!("{} B", grouped_decimal(b, 1))
    })
}

fn sizes(look: Option<&DiskSizes>) -> String {
    let Some(look) = look else {
        return "unknown (GET /db gave no sizes within 2 s: no answer, an error status, or not a database's information)".to_string();
    };
    let documents = look.doc_count.map_or("unknown".to_string(), grouped);
    format!(
        "file {}, active {}, external {}, {documents} documents",
        bytes(look.file),
        bytes(look.active),
        bytes(look.external),
    )
}

/// The phase's disk lines; none for a result written before sofabench looked.
pub fn lines(phase: &PhaseResult, out: &mut String) {
    let Some(disk) = &phase.disk else {
        return;
    };
    let _ = writeln!(out, "  disk after     {}", sizes(disk.end.as_ref()));
    let _ = writeln!(
        out,
        "  disk per doc   {} (file / documents); grew {} per document written ({} written)",
        per_document(disk.bytes_per_document),
        per_document(disk.growth_per_document_written),
        grouped(disk.documents_written),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{DiskResult, PhaseResult};

    #[test]
    fn missing_sizes_say_unknown_and_never_zero() {
        let mut phase = PhaseResult::of_operations("load", 1.0, Vec::new());
        let mut out = String::new();
        lines(&phase, &mut out);
        assert_eq!(out, "", "an old result without looks shows nothing");
        phase.disk = Some(DiskResult {
            end: Some(DiskSizes {
                file: Some(4_864_000),
                doc_count: Some(1_000),
                ..DiskSizes::default()
            }),
            documents_written: 1_000,
            bytes_per_document: Some(4_864.0),
            ..DiskResult::default()
        });
        lines(&phase, &mut out);
        assert_eq!(
            out,
            "  disk after     file 4,864,000 B, active unknown, external unknown, 1,000 documents\n  \
             disk per doc   4,864.0 B (file / documents); grew unknown per document written (1,000 written)\n"
        );
        phase.disk = Some(DiskResult::default());
        let mut out = String::new();
        lines(&phase, &mut out);
        assert!(
            out.starts_with("  disk after     unknown (GET /db"),
            "{out}"
        );
        assert!(!out.contains(" 0 B"), "{out}");
    }
}
