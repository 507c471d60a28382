//! `sofabench compare BASELINE CONTENDER…`: results side by side (see
//! `analysis::compare`).

use super::CompareArgs;
use crate::analysis::compare::{Options, compare};
use crate::exit::Failed;
use crate::results::RunResult;

pub fn execute(args: CompareArgs) -> Result<(), Failed> {
    let paths: Vec<&std::path::PathBuf> = std::iter::once(&args.baseline)
        .chain(&args.contenders)
        .collect();
    let mut results = Vec::with_capacity(paths.len());
    for path in &paths {
        results.push(RunResult::read(path).map_err(Failed::bad_input)?);
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let sides: Vec<(&str, &RunResult)> = names.iter().map(String::as_str).zip(&results).collect();
    let options = Options {
        test: args.test,
        judge: args.judge,
    };
    let text = compare(&sides, &options).map_err(Failed::bad_input)?;
    crate::text::sink::out(&text).map_err(Failed::output)
}
