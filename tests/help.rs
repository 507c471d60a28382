//! Help that reads like a map: `run -h` fits a screen under its headings, `--help` is
//! complete (every possible value, examples, exit statuses), every flag takes both its
//! spellings, and the man pages and completion scripts come from the same parser.
//! The binary is run as a user would; the parser is walked through `Cli::command()`.

mod common;

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use common::printed;
use sofabench::cli::Cli;

/// `run`'s headings, in the order help shows them.
const HEADINGS: [&str; 10] = [
    "Connection and TLS",
    "Login",
    "Workload",
    "Load model",
    "Scenario and phases",
    "Output and thresholds",
    "CouchDB database settings",
    "Queries and feeds",
    "Devices",
    "Existing data",
];

/// The most lines `-h` may print: a screen.
const SCREEN: usize = 60;

fn subcommand_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn run_short_help_fits_a_screen_under_every_heading_in_order() {
    let short = printed(&["run", "-h"]);
    let lines: Vec<&str> = short.lines().collect();
    assert!(lines.len() <= SCREEN, "{} lines:\n{short}", lines.len());
    let long = printed(&["run", "--help"]);
    for help in [&short, &long] {
        let places: Vec<usize> = HEADINGS
            .iter()
            .map(|h| {
                help.find(&format!("\n{h}:\n"))
                    .unwrap_or_else(|| panic!("heading {h:?} missing:\n{help}"))
            })
            .collect();
        assert!(places.is_sorted(), "headings out of order: {places:?}");
    }
    let last = lines.last().unwrap();
    assert!(last.contains("sofabench run --help"), "last line: {last}");
    assert!(
        long.lines().count() > 3 * lines.len(),
        "--help has every flag"
    );
}

#[test]
fn every_run_flag_is_under_a_heading_and_in_long_help() {
    let long = printed(&["run", "--help"]);
    let command = Cli::command();
    let run = command.find_subcommand("run").unwrap();
    for arg in run.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(flag) = arg.get_long() else { continue };
        if flag == "help" {
            continue;
        }
        let heading = arg.get_help_heading();
        assert!(
            heading.is_some_and(|h| HEADINGS.contains(&h)),
            "--{flag} is under {heading:?}"
        );
        assert!(
            long.contains(&format!("--{flag}")),
            "--{flag} not in --help"
        );
    }
}

#[test]
fn every_short_help_fits_a_screen_and_long_help_lists_every_possible_value() {
    for name in subcommand_names() {
        let short = printed(&[&name, "-h"]);
        assert!(short.lines().count() <= SCREEN, "{name} -h:\n{short}");
        let long = printed(&[&name, "--help"]);
        let command = Cli::command();
        let sub = command.find_subcommand(&name).unwrap();
        let takes_values = |a: &&clap::Arg| a.get_action().takes_values();
        for arg in sub.get_arguments().filter(takes_values) {
            for value in arg.get_possible_values() {
                let value = value.get_name();
                assert!(
                    long.contains(&format!("- {value}:")) || long.contains(value),
                    "{name} --help: {:?} leaves out {value}",
                    arg.get_id()
                );
            }
        }
    }
    let run = printed(&["run", "--help"]);
    for scheme in ["- sequential:", "- uuid:", "- server:"] {
        assert!(run.contains(scheme), "--id-scheme: {scheme}");
    }
    assert!(
        run.contains("Built-in: ironcushion, "),
        "--scenario's names"
    );
}

#[test]
fn top_level_help_does_not_require_a_command() {
    let help = printed(&["-h"]);
    assert!(
        help.contains("Usage: sofabench [COMMAND]\n       sofabench [RUN OPTIONS]"),
        "{help}"
    );
    assert!(!help.contains("<COMMAND>"), "{help}");
    let page = printed(&["man"]);
    assert!(!page.contains("<COMMAND>") && !page.contains("<command>"));
    // As the help says: Iron Cushion's flags alone run `run` (here only its help).
    let run = printed(&["--num_connections=3", "-h"]);
    assert!(run.contains("Usage: sofabench run [OPTIONS]"), "{run}");
}

/// A value `--flag=VALUE` takes, by the flag's value name (or its first possible value).
fn sample(arg: &clap::Arg) -> String {
    if let Some(value) = arg.get_possible_values().first() {
        return value.get_name().to_string();
    }
    let names = arg.get_value_names().unwrap_or_default();
    let name = names.first().map_or("", |n| n.as_str());
    let value = match name {
        "URL" => "http://127.0.0.1:5984",
        "TIME" => "5s",
        "N" | "W" | "MAX" | "Q" => "3",
        "I" => "0",
        "SIZE" | "SIZE[,SIZE…]" => "4KiB",
        "N,N,…" => "10,20",
        "PERCENT" => "5%",
        "LOW..HIGH" => "10..100",
        "LOW-HIGH" => "0-10",
        "OPS_PER_SEC|FROM..TO" => "50",
        "ADDR" => "9464",
        "EXPR" => "read.p99 < 20ms",
        "NAME=VALUE" => "server.version=3.5.0",
        "ROW" => "read.p99",
        "JSON" => "{\"type\":\"a\"}",
        "ROLE,ROLE" => "_admin",
        "NAME|FILE" => "scaling",
        "FILE" | "DIR" | "RESULT" | "RESULT.json" | "A.json" | "B.json" => "a.json",
        "NAME" | "TEXT" | "PASSWORD" => "some-name",
        "SUBCOMMAND" => "run",
        "live|TIME" => "30s",
        "PER_SEC" => "0.5",
        "NEW,OWN,SHARED" => "50,40,10",
        "SHARE%:FROM:LASTING" => "20%:10s:30s",
        "N[@TIME]" => "2@5s",
        "BYTES" => "256",
        other => panic!(
            "--{}: no sample value for {other:?}; add one here",
            arg.get_id()
        ),
    };
    value.to_string()
}

/// A command line of `subcommand` with `flag` (and a value if it takes one), after what
/// the subcommand requires.
fn line(subcommand: &clap::Command, flag: &str, arg: &clap::Arg) -> Vec<OsString> {
    let mut words = vec!["sofabench".to_string(), subcommand.get_name().to_string()];
    for required in subcommand
        .get_arguments()
        .filter(|a| a.is_required_set() && a.get_id() != arg.get_id())
    {
        match required.get_long() {
            Some(long) => words.push(format!("--{long}={}", sample(required))),
            None => words.push(sample(required)),
        }
    }
    if arg.get_action().takes_values() {
        words.push(format!("--{flag}={}", sample(arg)));
    } else {
        words.push(format!("--{flag}"));
    }
    words.into_iter().map(OsString::from).collect()
}

/// What a command line parses to: the typed flags, and whether the one checked was read
/// from it. Checks between flags (`requires`, `conflicts_with`) are left out, so that each
/// flag can be given alone.
fn parsed(words: Vec<OsString>, subcommand: &str, id: &str) -> (String, bool) {
    // The subcommand's errors are ignored by the top command's setting.
    let matches = Cli::command()
        .ignore_errors(true)
        .mut_subcommands(|c| c.ignore_errors(true))
        .try_get_matches_from(words.clone())
        .unwrap_or_else(|e| panic!("{words:?}: {e}"));
    let given = matches
        .subcommand_matches(subcommand)
        .and_then(|m| m.value_source(id))
        == Some(ValueSource::CommandLine);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    (format!("{cli:?}"), given)
}

#[test]
fn every_flag_of_every_subcommand_takes_its_snake_case_spelling_to_the_same_value() {
    let command = Cli::command();
    let mut checked = 0;
    for subcommand in command.get_subcommands() {
        let name = subcommand.get_name();
        for arg in subcommand.get_arguments() {
            let Some(kebab) = arg.get_long().filter(|l| l.contains('-')) else {
                continue;
            };
            let snake = kebab.replace('-', "_");
            let id = arg.get_id().as_str();
            let (as_kebab, kebab_given) = parsed(line(subcommand, kebab, arg), name, id);
            let (as_snake, snake_given) = parsed(line(subcommand, &snake, arg), name, id);
            assert!(kebab_given && snake_given, "{name} --{kebab} / --{snake}");
            assert_eq!(as_kebab, as_snake, "{name} --{kebab} / --{snake}");
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} flags with a '-'");
}

#[test]
fn iron_cushion_flags_and_issue_examples_keep_working() {
    // Refused before: only some flags took both spellings.
    for line in [
        "sofabench run --id_scheme server",
        "sofabench run --id-scheme server",
        "sofabench --database_address=http://127.0.0.1:1 --num_connections=2 --num_crud_operations=5",
        "sofabench run --doc_size=4KiB --changes_consumers=2 --max_response_size=1MiB",
    ] {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut args: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        if args[1].starts_with("--") {
            args.insert(1, "run".to_string());
        }
        if let Err(e) = Cli::command().try_get_matches_from(&args) {
            panic!("{line}: {e}");
        }
    }
}

#[test]
fn every_man_page_has_examples_and_exit_statuses() {
    let mut pages = vec![printed(&["man"])];
    for name in subcommand_names() {
        pages.push(printed(&["man", &name]));
    }
    for page in pages {
        let title = page.lines().find(|l| l.starts_with(".TH ")).unwrap_or("");
        assert!(page.contains("\n.SH EXAMPLES\n"), "{title}: EXAMPLES");
        assert!(
            page.contains("\n.SH \"EXIT STATUS\"\n"),
            "{title}: EXIT STATUS"
        );
        assert!(!page.contains(".SH EXTRA"), "{title}: the examples once");
        let statuses = &page[page.find("EXIT STATUS").unwrap()..];
        for code in [0, sofabench::exit::RUN_FAILED, sofabench::exit::BAD_INPUT] {
            assert!(
                statuses.contains(&format!("\\fB{code}\\fR")),
                "{title}: {code}"
            );
        }
        assert!(statuses.contains(&format!("\\fB{}\\fR", sofabench::exit::INTERRUPTED)));
    }
    let run = printed(&["man", "run"]);
    for heading in HEADINGS {
        let section = format!(".SH \"{}\"", heading.to_uppercase());
        let single = format!(".SH {}", heading.to_uppercase());
        assert!(run.contains(&section) || run.contains(&single), "{heading}");
    }
    assert!(run.contains("\\fBsofabench run \\-\\-scenario mango \\-\\-out results\\fR"));
}

#[test]
fn the_examples_in_help_are_those_of_the_man_page() {
    for name in subcommand_names() {
        let help = printed(&[&name, "--help"]);
        let page = printed(&["man", &name]);
        let examples = &help[help.find("Examples:\n").expect(&name)..];
        for line in examples.lines().filter(|l| l.starts_with("    sofabench")) {
            let roff = line.trim().replace('-', "\\-").replace('\'', "\\*(Aq");
            assert!(page.contains(&roff), "{name}: {line} not in the man page");
        }
    }
}

/// Every flag of every subcommand has an id of its own: two flags of one id set each
/// other's value silently (clap's own check of it runs in debug builds only, and the
/// tests' profile is a release one).
#[test]
fn every_flag_has_an_id_of_its_own() {
    for command in Cli::command().get_subcommands() {
        let mut seen = std::collections::HashSet::new();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(seen.insert(id), "{}: id {id:?} twice", command.get_name());
        }
    }
}
