//! `sofabench completions SHELL` and `sofabench man [SUBCOMMAND]`: the shell completion
//! script and the roff man pages, generated from the same clap `Command` the parser uses,
//! so they can never disagree with the flags.

use std::io::Write;

use clap::CommandFactory;

use super::{Cli, CompletionsArgs, ManArgs};
use crate::exit::Failed;

/// The name the scripts complete and the pages are titled with.
const BIN_NAME: &str = "sofabench";

pub fn completions(args: CompletionsArgs) -> Result<(), Failed> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, BIN_NAME, &mut script);
    print(&script)
}

pub fn man(args: ManArgs) -> Result<(), Failed> {
    let page = match &args.subcommand {
        None => top_level(),
        Some(name) => subcommand(name)?,
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .source(format!("{BIN_NAME} {}", env!("CARGO_PKG_VERSION")))
        .render(&mut roff)
        .map_err(|e| Failed::run(format!("cannot render the man page: {e}")))?;
    print(&roff)
}

/// The whole command, built: building gives each subcommand its page name
/// (`sofabench-run`) and the synopsis its full invocation (`sofabench run`). clap's own
/// `help` subcommand is left out, so the top page names no page that does not exist.
fn top_level() -> clap::Command {
    let mut command = Cli::command()
        .bin_name(BIN_NAME)
        .disable_help_subcommand(true);
    command.build();
    command
}

fn subcommand(name: &str) -> Result<clap::Command, Failed> {
    let top = top_level();
    if let Some(found) = top.find_subcommand(name) {
        return Ok(found.clone());
    }
    let names: Vec<&str> = top.get_subcommands().map(clap::Command::get_name).collect();
    Err(Failed::bad_input(format!(
        "no subcommand {name:?} to make a man page of; give one of {}, or none for the top page",
        names.join(", ")
    )))
}

fn print(bytes: &[u8]) -> Result<(), Failed> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(Failed::output)
}
