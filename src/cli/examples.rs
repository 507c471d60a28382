//! The examples each command's `--help` ends with, and its man page's EXAMPLES section:
//! one list, so the two never differ. A test parses every line with the parser.

use crate::exit::STATUSES;

/// A command line and what it does.
pub struct Example {
    pub what: &'static str,
    pub line: &'static str,
}

const fn example(what: &'static str, line: &'static str) -> Example {
    Example { what, line }
}

const TOP: [Example; 3] = [
    example(
        "A first run against a local server (scripts/pouchdb-server.sh starts one)",
        "sofabench run --database-address http://admin:password@127.0.0.1:5984",
    ),
    example(
        "Iron Cushion's command line, unchanged: without a command, its flags run `run`",
        "sofabench --database_address=http://admin:password@127.0.0.1:5984 --num_connections=100 --num_documents_per_bulk_insert=1000 --num_bulk_insert_operations=20 --num_crud_operations=20000",
    ),
    example(
        "The HTML report of a saved result",
        "sofabench report results/result.json --html report.html",
    ),
];

const RUN: [Example; 6] = [
    example(
        "A first run against a local server (scripts/pouchdb-server.sh starts one)",
        "sofabench run --database-address http://admin:password@127.0.0.1:5984",
    ),
    example(
        "Iron Cushion's command line, unchanged (`run` may be left out)",
        "sofabench run --database_address=http://admin:password@127.0.0.1:5984 --num_connections=100 --num_documents_per_bulk_insert=1000 --num_bulk_insert_operations=20 --num_crud_operations=20000",
    ),
    example(
        "A built-in scenario, every result file kept in a folder",
        "sofabench run --scenario mango --out results",
    ),
    example(
        "500 operations per second for a minute; exit 1 unless reads stay fast",
        "sofabench run --rate 500 --duration 1m --threshold 'read.p99 < 20ms'",
    ),
    example(
        "The highest rate at which reads stay under 20 ms",
        "sofabench run --search-rate 100..5000 --threshold 'read.p99 < 20ms'",
    ),
    example(
        "Over TLS with a private CA, the password from the environment",
        "SOFABENCH_PASSWORD=password sofabench run --database-address https://127.0.0.1:6984 --cacert ca.pem --user admin",
    ),
];

const GENERATE: [Example; 1] = [example(
    "Three documents from a template, the same every time",
    "sofabench generate --schema template.json -n 3",
)];

const SCENARIOS: [Example; 1] = [example(
    "The built-in scenarios, to give to run --scenario",
    "sofabench scenarios",
)];

const REPORT: [Example; 2] = [
    example(
        "The text report of a saved result, as the run printed it",
        "sofabench report results/result.json",
    ),
    example(
        "An HTML page and the interval series as CSV",
        "sofabench report results/result.json --html report.html --csv intervals.csv",
    ),
];

const COMPARE: [Example; 3] = [
    example(
        "Throughput and latency of two runs side by side",
        "sofabench compare before.json after.json",
    ),
    example(
        "Three server versions against the first, each run with --runs 6",
        "sofabench compare couchdb-3.3.json couchdb-3.4.json couchdb-3.5.json",
    ),
    example(
        "Judge only reads' p99 and throughput (fewer rows need fewer repetitions)",
        "sofabench compare a.json b.json --judge crud.read.p99,crud.read.throughput",
    ),
];

const MERGE: [Example; 1] = [example(
    "The whole run of two client machines, from their result files",
    "sofabench merge node0.json node1.json --json all.json",
)];

const CHECK: [Example; 2] = [
    example(
        "Exit 1 unless reads stayed fast and nothing failed",
        "sofabench check result.json --threshold 'read.p99 < 20ms' --threshold 'error_rate < 0.1%'",
    ),
    example(
        "Exit 1 unless the run was against CouchDB 3.5.0 with 2 shards (in CI, before compare)",
        "sofabench check result.json --expect server.version=3.5.0 --expect database.q=2",
    ),
];

const COMPLETIONS: [Example; 2] = [
    example(
        "Completions for bash, in the folder bash-completion reads",
        "sofabench completions bash > ~/.local/share/bash-completion/completions/sofabench",
    ),
    example(
        "Completions for zsh, in a folder of $fpath",
        "sofabench completions zsh > ~/.zfunc/_sofabench",
    ),
];

const MAN: [Example; 2] = [
    example("Read run's page", "sofabench man run | man -l -"),
    example(
        "The top page, to install where man finds it",
        "sofabench man > ~/.local/share/man/man1/sofabench.1",
    ),
];

/// The examples of a command: `sofabench`, or a subcommand's name.
pub fn of(command: &str) -> &'static [Example] {
    match command {
        "sofabench" => &TOP,
        "run" => &RUN,
        "generate" => &GENERATE,
        "scenarios" => &SCENARIOS,
        "report" => &REPORT,
        "compare" => &COMPARE,
        "merge" => &MERGE,
        "check" => &CHECK,
        "completions" => &COMPLETIONS,
        "man" => &MAN,
        _ => &[],
    }
}

/// Whether a command's `--help` ends with the exit statuses: those that run, judge or
/// need them most.
fn shows_exit_statuses(command: &str) -> bool {
    matches!(command, "sofabench" | "run" | "check")
}

/// The text `--help` ends with: the command's examples, and for some the exit statuses.
pub fn after_long_help(command: &str) -> String {
    let mut text = String::from("Examples:\n");
    for Example { what, line } in of(command) {
        text.push_str(&format!("  {what}:\n    {line}\n"));
    }
    if shows_exit_statuses(command) {
        text.push_str("\nExit status:\n");
        for (code, meaning) in STATUSES {
            text.push_str(&format!("  {code:<3}  {meaning}\n"));
        }
    }
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// The words of an example's sofabench command: after any `VAR=value`, before any
    /// `|` or `>`, with 'quoted words' kept whole.
    fn words(line: &str) -> Vec<OsString> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => words.push(std::mem::take(&mut word)),
                '|' | '>' if !quoted => break,
                c => word.push(c),
            }
        }
        words.push(word);
        words
            .into_iter()
            .filter(|w| !w.is_empty())
            .skip_while(|w| w.contains('=') && !w.starts_with('-'))
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn every_example_parses() {
        let commands = [
            "sofabench",
            "run",
            "generate",
            "scenarios",
            "report",
            "compare",
            "merge",
            "check",
            "completions",
            "man",
        ];
        for command in commands {
            assert!(!of(command).is_empty(), "{command} has no examples");
            for example in of(command) {
                let args = words(example.line);
                assert_eq!(args[0], "sofabench", "{}", example.line);
                if let Err(e) = super::super::parse(args) {
                    panic!("{}: {e}", example.line);
                }
            }
        }
    }

    #[test]
    fn help_ends_with_the_examples_and_run_with_the_exit_statuses() {
        let run = after_long_help("run");
        assert!(run.starts_with("Examples:\n  A first run"), "{run}");
        assert!(run.contains("\n  130  interrupted"), "{run}");
        assert!(!after_long_help("generate").contains("Exit status"));
    }
}
