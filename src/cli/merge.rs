//! `sofabench merge RESULT… --json OUT`: the results of several nodes as one (see
//! `analysis::merge`); prints the merged report.

use std::io::Write;

use super::MergeArgs;
use crate::analysis::merge::merge;
use crate::exit::Failed;
use crate::report;
use crate::results::RunResult;
use crate::run::output::OutputFiles;

pub fn execute(args: MergeArgs) -> Result<(), Failed> {
    let outputs = OutputFiles::new(None, args.json.as_deref(), None, None);
    outputs.check(args.overwrite)?;
    let mut inputs = Vec::new();
    for path in &args.results {
        let result = RunResult::read(path).map_err(Failed::bad_input)?;
        crate::results::tally::check_readable(&result.phases, &path.display().to_string())
            .map_err(Failed::bad_input)?;
        inputs.push((path.display().to_string(), result));
    }
    let merged = merge(&inputs).map_err(Failed::bad_input)?;
    for note in &merged.notes {
        eprintln!("sofabench: note: {note}");
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
        text.push_str(&report::phase_text(phase, result.interrupted));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failed::output)?;
    let written = outputs.write(&result);
    for path in &written.paths {
        let _ = writeln!(out, "wrote {}", path.display());
    }
    written.report_failures()
}
