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

/// The reasons the run's own verdict gives, in its words: thresholds recorded in the
/// result and judged again (a result written before they were kept has none), then what
/// the run's verdict counts (`run::verdict`), then a rate search without an answer.
fn reasons(result: &RunResult) -> Vec<String> {
    let mut reasons = Vec::new();
    match crate::run::thresholds::recorded(result, "the result") {
        Ok(outcomes) => {
            let failed = crate::run::thresholds::failed(&outcomes);
            if failed > 0 {
                reasons.push(format!("{} failed", counted(failed as u64, "threshold")));
            }
        }
        Err(_) => reasons.push("its recorded thresholds cannot be read".to_string()),
    }
    let counts = crate::run::verdict::Counts::of_result(result);
    reasons.extend(crate::run::verdict::judge(&counts).reasons());
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
    let word = crate::report::closing::verdict_word(result.interrupted, &mut reasons);
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
    if result.search.is_none() && !result.config.contains_key("thresholds") {
        out.push_str("<p class=\"muted\">No thresholds were given (<code>--threshold</code>): <code>sofabench check result.json --threshold …</code> judges some later.</p>\n");
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
            op.failures.clear();
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

    #[test]
    fn thresholds_recorded_in_the_result_are_judged_again() {
        let mut result = crate::export::sample::result();
        for op in &mut result.phases[0].operations {
            op.failed = 0;
            op.failures.clear();
        }
        result.config.insert(
            "thresholds".to_string(),
            serde_json::json!(["error_rate < 50%", "p50 < 0.001ms"]),
        );
        let v = verdict(&result);
        assert_eq!(
            (v.word, v.reasons),
            ("FAILED", vec!["1 threshold failed".to_string()])
        );
        result.config.insert(
            "thresholds".to_string(),
            serde_json::json!(["error_rate < 50%"]),
        );
        assert_eq!(verdict(&result).word, "PASSED");
        result
            .config
            .insert("thresholds".to_string(), serde_json::json!(7));
        assert_eq!(
            verdict(&result).reasons,
            ["its recorded thresholds cannot be read"]
        );
    }
}
