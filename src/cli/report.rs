//! `sofabench report RESULT.json`: any format made again from a result's JSON, so a run
//! needs to keep only that file. Its text is what the run printed after its live lines,
//! made by the same code from the result.

use super::ReportArgs;
use crate::exit::Failed;
use crate::report::closing::Closing;
use crate::results::RunResult;
use crate::run::output::OutputFiles;
use crate::run::verdict::{Counts, judge};

pub fn execute(args: ReportArgs) -> Result<(), Failed> {
    let result = RunResult::read(&args.result).map_err(Failed::bad_input)?;
    let file = args.result.display().to_string();
    crate::results::tally::check_readable(&result.phases, &file).map_err(Failed::bad_input)?;
    for repetition in &result.repetitions {
        crate::results::tally::check_readable(&repetition.phases, &file)
            .map_err(Failed::bad_input)?;
    }
    let mut outputs = OutputFiles::new(None, None, args.csv.as_deref(), args.html.as_deref());
    outputs.hlog_dir = args.hlog_dir;
    outputs.check(args.overwrite)?;
    let mut text = String::new();
    if args.text || outputs.is_empty() {
        text.push_str(&as_run_printed(
            &result,
            &file,
            super::setup::detail(args.verbose),
        )?);
    }
    let written = outputs.write(&result);
    for path in &written.paths {
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    crate::text::sink::out(&text).map_err(Failed::output)?;
    written.report_failures()
}

/// What the run printed after its live lines, but for the lines on the files it wrote:
/// its phases, and its ending with the thresholds it was given judged again.
fn as_run_printed(
    result: &RunResult,
    file: &str,
    detail: crate::report::Detail,
) -> Result<String, Failed> {
    let thresholds = match result.search {
        Some(_) => Vec::new(),
        None => crate::run::thresholds::recorded(result, file)?,
    };
    let problems = judge(&Counts::of_result(result)).reasons();
    let closing = Closing {
        result,
        thresholds: &thresholds,
        files: None,
        problems: &problems,
    };
    let mut text = crate::report::run_text(result, detail);
    text.push_str(&crate::report::ending::text(&closing, detail));
    Ok(text)
}
