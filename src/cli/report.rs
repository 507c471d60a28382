//! `sofabench report RESULT.json`: any format made again from a result's JSON, so a run
//! needs to keep only that file.

use super::ReportArgs;
use crate::exit::Failed;
use crate::results::RunResult;
use crate::run::output::OutputFiles;

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
        text.push_str(&crate::report::run_text(&result));
        if let Some(search) = &result.search {
            text.push_str(&crate::report::search::block(search));
        }
    }
    let written = outputs.write(&result);
    for path in &written.paths {
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    crate::text::sink::out(&text).map_err(Failed::output)?;
    written.report_failures()
}
