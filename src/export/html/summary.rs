//! The page's first section, what a reader wants before any chart: the verdict, as the
//! run judged its operations (from what the result records), and a line per phase.

use std::fmt::Write as _;

use super::markup::escape;
use super::tables;
use crate::report::numbers::grouped;
use crate::results::RunResult;
use crate::words::counted;

/// The verdict of a result: `PASSED`, `FAILED` or `INTERRUPTED`, and why.
#[derive(Debug, PartialEq)]
pub struct Verdict {
    pub word: &'static str,
    /// Plain text, one part each.
    pub reasons: Vec<String>,
}

/// Failure counts of the whole run, as the run's own verdict counts them.
#[derive(Default)]
struct Counts {
    operations: u64,
    /// Documents a bulk insert's answer refused (`doc:*`).
    documents: u64,
    /// Bulk answer rows for documents never sent.
    unknown_rows: u64,
    unknown: u64,
    not_run: u64,
}

fn counts(result: &RunResult) -> Counts {
    let mut counts = Counts::default();
    for op in result.phases.iter().flat_map(|p| &p.operations) {
        counts.operations = counts.operations.saturating_add(op.failed);
        for (kind, n) in &op.failures {
            if kind == "unknown_row" {
                counts.unknown_rows = counts.unknown_rows.saturating_add(*n);
            } else if kind.starts_with("doc:") {
                counts.documents = counts.documents.saturating_add(*n);
            }
        }
        counts.unknown = counts.unknown.saturating_add(op.unknown_outcomes);
        counts.not_run = counts.not_run.saturating_add(op.not_run);
    }
    counts
}

/// The same reasons, in the same words, as the run's verdict (`run::verdict`) gives.
fn reasons(result: &RunResult) -> Vec<String> {
    let c = counts(result);
    let parts = [
        (c.operations, "operations failed"),
        (c.documents, "documents failed in bulk insert answers"),
        (
            c.unknown_rows,
            "bulk insert answer rows were for documents never sent (unknown_row)",
        ),
        (c.unknown, "documents have an unknown outcome"),
        (c.not_run, "planned operations were not run"),
    ];
    let mut reasons: Vec<String> = parts
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", grouped(n)))
        .collect();
    if result.phases.iter().any(|p| !p.aborted.is_empty()) {
        reasons.push("connections stopped early".to_string());
    }
    for phase in &result.phases {
        if let Some(action) = &phase.action
            && let Some(error) = &action.error
        {
            reasons.push(format!(
                "background action {} of phase {} failed: {error}",
                action.kind, phase.name
            ));
        }
    }
    if let Some(search) = &result.search
        && search.answer.is_none()
    {
        reasons.push("the rate search found no rate of its range that met".to_string());
    }
    reasons
}

/// The verdict the result supports: interrupted, failed for any reason the run fails
/// on, or passed.
pub fn verdict(result: &RunResult) -> Verdict {
    let mut reasons = reasons(result);
    let word = if result.interrupted {
        reasons.insert(0, "the figures cover what was done".to_string());
        "INTERRUPTED"
    } else if reasons.is_empty() {
        "PASSED"
    } else {
        "FAILED"
    };
    Verdict { word, reasons }
}

/// The summary: the verdict, the run's totals, the table of phases.
pub fn summary_section(out: &mut String, result: &RunResult, seconds: f64) {
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    let verdict = verdict(result);
    let reasons = if verdict.reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", escape(&verdict.reasons.join("; ")))
    };
    let _ = writeln!(
        out,
        "<p class=\"verdict {}\">verdict: <strong>{}</strong>{reasons}</p>",
        verdict.word.to_lowercase(),
        verdict.word
    );
    // The thresholds a run checked are printed, not kept in the result.
    if result.search.is_none() {
        out.push_str("<p class=\"muted\">Thresholds (<code>--threshold</code>) are not kept in the result: <code>sofabench check result.json --threshold …</code> judges them.</p>\n");
    }
    let ops = result.phases.iter().flat_map(|p| &p.operations);
    let succeeded: u64 = ops.clone().map(|o| o.succeeded).sum();
    let failed: u64 = ops.map(|o| o.failed).sum();
    let _ = writeln!(
        out,
        "<p>{} over {seconds:.1} s: {} operations succeeded, {} failed.</p>",
        counted(result.phases.len() as u64, "phase"),
        grouped(succeeded),
        grouped(failed)
    );
    tables::phases_table(out, result);
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_gives_the_runs_reasons_in_its_words() {
        let mut result = crate::export::sample::result();
        // The sample: a create and a read failed (404s).
        let v = verdict(&result);
        assert_eq!(v.word, "FAILED");
        assert_eq!(v.reasons, ["2 operations failed"]);
        for op in &mut result.phases[0].operations {
            op.failed = 0;
        }
        assert_eq!(verdict(&result).word, "PASSED");
        result.phases[0].operations[0].unknown_outcomes = 2;
        result.phases[0].aborted.push("gave up".to_string());
        assert_eq!(
            verdict(&result).reasons,
            [
                "2 documents have an unknown outcome",
                "connections stopped early"
            ]
        );
        result.interrupted = true;
        let v = verdict(&result);
        assert_eq!(v.word, "INTERRUPTED");
        assert_eq!(v.reasons[0], "the figures cover what was done");
    }
}
