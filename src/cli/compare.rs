//! `sofabench compare A.json B.json`: two results side by side (see `analysis::compare`).

use super::CompareArgs;
use crate::analysis::compare::compare;
use crate::exit::Failed;
use crate::results::RunResult;

pub fn execute(args: CompareArgs) -> Result<(), Failed> {
    let a = RunResult::read(&args.a).map_err(Failed::bad_input)?;
    let b = RunResult::read(&args.b).map_err(Failed::bad_input)?;
    let text = compare(
        (&args.a.display().to_string(), &a),
        (&args.b.display().to_string(), &b),
    );
    crate::text::sink::out(&text).map_err(Failed::output)
}
