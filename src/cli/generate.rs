//! `sofabench generate`: shows what a template produces, before any database is involved.

use std::io::Write;

use super::GenerateArgs;
use super::templates;
use crate::exit::Failed;
use crate::template::DocumentWriter;

pub fn execute(args: GenerateArgs) -> Result<(), Failed> {
    let template = templates::load_by_extension(&args.schema)?;
    let writer = DocumentWriter::new(template, args.seed);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = Vec::with_capacity(1024);
    for number in 0..args.count {
        line.clear();
        writer.write(&mut line, number, 1, None, None);
        line.push(b'\n');
        if let Err(e) = out.write_all(&line) {
            return Err(Failed::output(e));
        }
    }
    out.flush().map_err(Failed::output)
}
