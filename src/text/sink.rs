//! Where sofabench's text meets the terminal: every report on standard output and every
//! line on standard error goes through [`printable`], the last guard against a control
//! character that came from a server or a file by a path nobody thought of.

use std::io::Write;

use super::printable;

/// Writes `text` to standard output, as [`printable`].
pub fn out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(printable(text).as_bytes())?;
    out.flush()
}

/// Writes `line` and a line break to standard error, as [`printable`]; a failure to write
/// there has nowhere to be told.
pub fn err(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", printable(line));
}
