//! `sofabench merge RESULT… --json OUT`: the results of several nodes as one (see
//! `analysis::merge`); prints the merged report.

use super::MergeArgs;
use crate::analysis::merge::merge;
use crate::exit::Failed;
use crate::files::{self, Kind};
use crate::report;
use crate::results::RunResult;
use crate::run::output::OutputFiles;

/// The most bytes of results one merge reads, all files together: it holds every result
/// at once, decoded. Twice the most sofabench reads of one result file.
const MOST_TOTAL: u64 = 2 * Kind::Result.limit();

/// Refuses results of `total` bytes together, `count` of them, past [`MOST_TOTAL`].
fn within_total(count: usize, total: u64) -> Result<(), Failed> {
    if total <= MOST_TOTAL {
        return Ok(());
    }
    const MIB: u64 = 1024 * 1024;
    Err(Failed::bad_input(format!(
        "the {count} results are {} MiB together: merge reads at most {} MiB of results (it holds them all in memory at once); merge fewer, or results with fewer intervals (a longer --interval)",
        total.div_ceil(MIB),
        MOST_TOTAL / MIB
    )))
}

pub fn execute(args: MergeArgs) -> Result<(), Failed> {
    let mut outputs = OutputFiles::new(None, args.json.as_deref(), None, None);
    outputs.check(args.overwrite)?;
    // The sizes of regular files are known before any is read; a pipe's is counted as
    // it is read (each no more than one result file's limit).
    let count = args.results.len();
    let sizes = args
        .results
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok());
    let known = sizes.filter(|m| m.is_file()).map(|m| m.len());
    within_total(count, known.fold(0, u64::saturating_add))?;
    let mut total: u64 = 0;
    let mut inputs = Vec::new();
    for path in &args.results {
        let file = path.display().to_string();
        let text =
            files::read_text(path, Kind::Result).map_err(|e| Failed::bad_input(e.to_string()))?;
        total = total.saturating_add(text.len() as u64);
        within_total(count, total)?;
        let result = RunResult::parse(&text, &file).map_err(Failed::bad_input)?;
        drop(text);
        crate::results::tally::check_readable(&result.phases, &file).map_err(Failed::bad_input)?;
        inputs.push((file, result));
    }
    let merged = merge(&inputs).map_err(Failed::bad_input)?;
    for note in &merged.notes {
        crate::text::sink::err(&format!("sofabench: note: {note}"));
    }
    let result = merged.result;
    let hosts: Vec<String> = result
        .nodes
        .iter()
        .map(|n| format!("{} ({})", n.index, n.host))
        .collect();
    let mut text = format!(
        "merged {} results; nodes: {}\n",
        inputs.len(),
        hosts.join(", ")
    );
    text.push_str(&report::run_warnings(&result.config));
    for phase in &result.phases {
        text.push_str(&report::phase_text(
            phase,
            result.interrupted,
            report::Detail::Verbose,
        ));
    }
    text.push_str(&report::ending::notes(&result));
    crate::text::sink::out(&text).map_err(Failed::output)?;
    let written = outputs.write(&result);
    let wrote: String = written
        .paths
        .iter()
        .map(|path| format!("wrote {}\n", path.display()))
        .collect();
    let _ = crate::text::sink::out(&wrote);
    written.report_failures()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_past_the_total_are_refused() {
        assert!(within_total(3, MOST_TOTAL).is_ok());
        let e = within_total(3, MOST_TOTAL + 1).unwrap_err().to_string();
        assert!(
            e.contains("the 3 results are 2049 MiB together: merge reads at most 2048 MiB"),
            "{e}"
        );
        assert!(within_total(2, u64::MAX).is_err());
    }
}
