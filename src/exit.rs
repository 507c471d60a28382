//! How sofabench ends: one message and an exit code, never a panic.
//!
//! Exit codes: 0 all went well; 1 the run went wrong (operations failed, the server could
//! not be reached or broke down, a result file could not be written); 2 bad input (flags,
//! files, a database sofabench may not touch); 130 interrupted.

use std::fmt;
use std::process::ExitCode;

pub const RUN_FAILED: u8 = 1;
pub const BAD_INPUT: u8 = 2;
pub const INTERRUPTED: u8 = 130;

/// Every exit code and what it means: the man pages' EXIT STATUS and `--help` print these.
pub const STATUSES: [(u8, &str); 4] = [
    (
        0,
        "success: the command did what it was asked; for a run, nothing failed and every threshold held",
    ),
    (
        RUN_FAILED,
        "the run went wrong: operations failed, a threshold failed (or a rate search found no rate that met them), the server could not be reached or broke down, or a result file could not be written; for check, a threshold or an expectation failed",
    ),
    (
        BAD_INPUT,
        "bad input: a flag, a file, a scenario or template, or a database sofabench may not touch",
    ),
    (
        INTERRUPTED,
        "interrupted (Ctrl-C): what was printed covers what was done",
    ),
];

/// A reason to stop, with what to tell the user.
#[derive(Debug)]
pub enum Failed {
    /// clap's own error, help or version text, printed as clap formats it.
    Clap(clap::Error),
    /// One message for standard error, and the exit code.
    Message { text: String, code: u8 },
    /// Everything was said already (e.g. a report with failed operations).
    Quiet { code: u8 },
}

impl Failed {
    pub fn bad_input(text: impl Into<String>) -> Failed {
        Failed::Message {
            text: text.into(),
            code: BAD_INPUT,
        }
    }

    pub fn run(text: impl Into<String>) -> Failed {
        Failed::Message {
            text: text.into(),
            code: RUN_FAILED,
        }
    }

    pub fn from_clap(error: clap::Error) -> Failed {
        Failed::Clap(error)
    }

    /// Writing to standard output failed; a closed pipe (`| head`) is not an error.
    pub fn output(error: std::io::Error) -> Failed {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Failed::Quiet { code: 0 }
        } else {
            Failed::run(format!("cannot write the output: {error}"))
        }
    }

    /// Prints the message, if any, and gives the exit code.
    pub fn report(self) -> ExitCode {
        match self {
            Failed::Clap(error) => {
                let _ = error.print();
                ExitCode::from(error.exit_code().clamp(0, 255) as u8)
            }
            Failed::Message { text, code } => {
                crate::text::sink::err(&format!("sofabench: error: {text}"));
                ExitCode::from(code)
            }
            Failed::Quiet { code } => ExitCode::from(code),
        }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failed::Clap(error) => write!(f, "{error}"),
            Failed::Message { text, .. } => f.write_str(text),
            Failed::Quiet { code } => write!(f, "exit code {code}"),
        }
    }
}
