//! Every long flag in both spellings. Help shows kebab-case (`--num-connections`); the
//! snake_case spelling (`--num_connections`, Iron Cushion's) is a hidden alias of each
//! flag, made here once for every flag of every subcommand, so that no flag added later
//! can miss it.
//!
//! Aliases rather than rewriting `--a_b` to `--a-b` before clap reads the command line:
//! clap's errors then quote what the user typed, and its "a similar argument exists"
//! suggestions follow the user's spelling.

use clap::{Arg, Command};

/// `command` and its subcommands, each long flag spelled with `-` also taking `_`.
pub fn snake_case_too(command: Command) -> Command {
    command
        .mut_args(with_snake_aliases)
        .mut_subcommands(snake_case_too)
}

/// `arg` with a hidden alias for the snake_case spelling of each of its long names.
fn with_snake_aliases(arg: Arg) -> Arg {
    let names: Vec<&str> = arg
        .get_long()
        .into_iter()
        .chain(arg.get_all_aliases().into_iter().flatten())
        .collect();
    let snake: Vec<String> = names
        .iter()
        .filter(|name| name.contains('-'))
        .map(|name| name.replace('-', "_"))
        .filter(|spelled| !names.contains(&spelled.as_str()))
        .collect();
    arg.aliases(snake)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

    fn error(line: &str) -> String {
        let args = line.split_whitespace();
        Cli::command()
            .try_get_matches_from(args)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_quote_what_was_typed_and_suggest_in_its_spelling() {
        let snake = error("sofabench run --num_conections=3");
        assert!(
            snake.contains("'--num_conections'") && snake.contains("'--num_connections'"),
            "{snake}"
        );
        let kebab = error("sofabench run --num-conections=3");
        assert!(
            kebab.contains("'--num-conections'") && kebab.contains("'--num-connections'"),
            "{kebab}"
        );
        // A value error names the flag as help spells it, whichever spelling was typed.
        let value = error("sofabench run --id_scheme=nope");
        assert!(
            value.contains("--id-scheme <SCHEME>") && value.contains("sequential, uuid or server"),
            "{value}"
        );
    }

    #[test]
    fn help_shows_only_the_kebab_spelling() {
        let mut command = Cli::command();
        let run = command.find_subcommand_mut("run").unwrap();
        let help = run.render_long_help().to_string();
        assert!(help.contains("--num-connections <N>"), "{help}");
        assert!(!help.contains("num_connections <N>"), "{help}");
        assert!(!help.contains("[aliases: --num"), "{help}");
    }
}
