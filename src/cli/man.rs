//! `sofabench man [SUBCOMMAND]`: the roff man page, made from the same clap `Command` the
//! parser uses, so it can never disagree with the flags; with the command's EXAMPLES (the
//! ones its `--help` ends with) and the EXIT STATUS.

use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use super::{Cli, ManArgs, examples};
use crate::exit::{Failed, STATUSES};

/// The name the pages are titled with.
const BIN_NAME: &str = "sofabench";

pub fn man(args: ManArgs) -> Result<(), Failed> {
    let page = match &args.subcommand {
        None => top_level(),
        Some(name) => subcommand(name)?,
    };
    let mut roff = Vec::new();
    render(page, &mut roff).map_err(|e| Failed::run(format!("cannot render the man page: {e}")))?;
    super::completions::print(&roff)
}

/// clap_mangen's sections, with EXAMPLES and EXIT STATUS in place of its EXTRA section
/// (`--help`'s closing text, which holds the same examples).
fn render(page: clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let examples = examples::of(page.get_name());
    let has_options = page.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = page.get_subcommands().any(|c| !c.is_hide_set());
    let has_version = page.get_version().or(page.get_long_version()).is_some();
    let man = Man::new(page).source(format!("{BIN_NAME} {}", env!("CARGO_PKG_VERSION")));
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    if has_options {
        man.render_options_section(out)?;
    }
    if has_subcommands {
        man.render_subcommands_section(out)?;
    }
    let mut roff = Roff::new();
    examples_section(&mut roff, examples);
    exit_status_section(&mut roff);
    roff.to_writer(out)?;
    if has_version {
        man.render_version_section(out)?;
    }
    Ok(())
}

fn examples_section(roff: &mut Roff, examples: &[examples::Example]) {
    if examples.is_empty() {
        return;
    }
    roff.control("SH", ["EXAMPLES"]);
    for example in examples {
        roff.control("PP", []);
        roff.text([roman(format!("{}:", example.what))]);
        roff.control("RS", ["4"]);
        roff.control("nf", []);
        roff.text([bold(example.line)]);
        roff.control("fi", []);
        roff.control("RE", []);
    }
}

fn exit_status_section(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in STATUSES {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(meaning)]);
    }
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
