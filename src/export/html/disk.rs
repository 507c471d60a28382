//! A phase's disk cost table: the database's sizes before and after the phase, the
//! smallest and largest file seen in its intervals, and bytes per document. What the
//! server did not say is "unknown", never 0.

use std::fmt::Write as _;

use super::markup::escape;
use crate::disk::DiskSizes;
use crate::report::numbers::{grouped, grouped_decimal};
use crate::results::PhaseResult;

fn cell(value: Option<u64>) -> String {
    value.map_or("unknown".to_string(), grouped)
}

fn row(out: &mut String, name: &str, look: Option<&DiskSizes>) {
    let look = look.cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        escape(name),
        cell(look.file),
        cell(look.active),
        cell(look.external),
        cell(look.doc_count),
    );
}

/// The table, for a phase whose result holds looks at the database.
pub fn disk_table(out: &mut String, phase: &PhaseResult) {
    let Some(disk) = &phase.disk else {
        return;
    };
    out.push_str("<h3>Disk</h3>\n<table>\n<tr><th>GET /db</th><th class=\"num\">file bytes</th><th class=\"num\">active bytes</th><th class=\"num\">external bytes</th><th class=\"num\">documents</th></tr>\n");
    row(out, "before the phase", disk.start.as_ref());
    let files = phase.intervals.iter().filter_map(|i| i.disk.as_ref()?.file);
    if let (Some(least), Some(most)) = (files.clone().min(), files.max()) {
        let _ = writeln!(
            out,
            "<tr><td>file in the intervals</td><td class=\"num\">{} – {}</td><td></td><td></td><td></td></tr>",
            grouped(least),
            grouped(most)
        );
    }
    row(out, "after the phase", disk.end.as_ref());
    out.push_str("</table>\n");
    let per = |v: Option<f64>| v.map_or("unknown".to_string(), |b| grouped_decimal(b, 1));
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} bytes per document (file / documents after the phase); the file grew {} bytes per document written ({} written).</p>",
        per(disk.bytes_per_document),
        per(disk.growth_per_document_written),
        grouped(disk.documents_written)
    );
}
