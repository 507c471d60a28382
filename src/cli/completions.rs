//! `sofabench completions SHELL`: the shell completion script, generated from the same
//! clap `Command` the parser uses, so it can never disagree with the flags; `--scenario`
//! then completes the built-in scenarios' names as well as files.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, CompletionsArgs};
use crate::exit::Failed;

/// The name the scripts complete.
const BIN_NAME: &str = "sofabench";

pub fn completions(args: CompletionsArgs) -> Result<(), Failed> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, BIN_NAME, &mut script);
    let script = String::from_utf8_lossy(&script);
    print(with_scenario_names(args.shell, &script).as_bytes())
}

/// The script with `--scenario`'s value completed from the built-in names too: clap
/// completes a value either from a list or as a file, and `--scenario` takes both. Only
/// bash, zsh and fish complete values; the other scripts are left as they are.
fn with_scenario_names(shell: Shell, script: &str) -> String {
    let names: Vec<&str> = crate::scenario::BUILTINS.iter().map(|b| b.name).collect();
    let names = names.join(" ");
    match shell {
        // `--scenario)` is followed by the line that completes files.
        Shell::Bash => replace_after(
            script,
            |line| line.trim() == "--scenario)",
            r#"COMPREPLY=($(compgen -f "${cur}"))"#,
            &format!(
                r#"COMPREPLY=($(compgen -W "{names}" -- "${{cur}}") $(compgen -f "${{cur}}"))"#
            ),
        ),
        // '--scenario=[help]:NAME|FILE:_default': the action becomes both. Its leading
        // space keeps _arguments from adding compadd's options; its colons are escaped
        // from _arguments, which splits the spec at them.
        Shell::Zsh => replace_in(
            script,
            |line| line.starts_with("'--scenario=["),
            ":_default'",
            &format!(
                r#": _alternative "scenarios\:built-in scenario\:({names})" "files\:scenario file\:_files"'"#
            ),
        ),
        // fish adds the names to the files it offers for an option that takes a value.
        Shell::Fish => replace_in(
            script,
            |line| line.contains(" -l scenario "),
            " -r",
            &format!(" -r -a \"{names}\""),
        ),
        _ => script.to_string(),
    }
}

/// `script` with `from` replaced by `to` in the line after each line that `marks`.
fn replace_after(script: &str, marks: impl Fn(&str) -> bool, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut marked = false;
    for line in script.split_inclusive('\n') {
        if marked {
            out.push_str(&line.replace(from, to));
        } else {
            out.push_str(line);
        }
        marked = marks(line);
    }
    out
}

/// `script` with the last `from` of each line that `marks` replaced by `to`.
fn replace_in(script: &str, marks: impl Fn(&str) -> bool, from: &str, to: &str) -> String {
    script
        .split_inclusive('\n')
        .map(|line| match line.rfind(from) {
            Some(at) if marks(line) => format!("{}{to}{}", &line[..at], &line[at + from.len()..]),
            _ => line.to_string(),
        })
        .collect()
}

pub(super) fn print(bytes: &[u8]) -> Result<(), Failed> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(Failed::output)
}
