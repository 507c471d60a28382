//! `sofabench completions SHELL` and `sofabench man [SUBCOMMAND]`, run as a user would:
//! the built binary, its exit code and output, and the shells and roff tools that read it.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{printed, sofabench};

const BAD_INPUT: i32 = 2;

/// Every subcommand a user can type; the scripts and pages must offer each one.
const SUBCOMMANDS: [&str; 9] = [
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

/// Feeds `input` to a program; None when the program is not installed.
fn pipe_through(program: &str, args: &[&str], input: &str) -> Option<Output> {
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("start {program}: {e}"),
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    Some(child.wait_with_output().unwrap())
}

/// Says why a check was skipped where `cargo test` shows it (the harness captures only
/// the print macros).
fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "completions test: skipped: {why}");
}

#[test]
fn the_bash_script_is_valid_and_completes_every_subcommand_and_flag() {
    let script = printed(&["completions", "bash"]);
    let checked = pipe_through("bash", &["-n"], &script).expect("bash is installed");
    assert!(
        checked.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&checked.stderr)
    );
    for word in ["--database-address", "--retry-429", "--threshold", "--seed"] {
        assert!(script.contains(word), "{word} missing from the bash script");
    }
    for subcommand in SUBCOMMANDS {
        assert!(
            script.contains(&format!("sofabench,{subcommand})")),
            "{subcommand} missing from the bash script"
        );
    }
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = printed(&["completions", shell]);
        for subcommand in SUBCOMMANDS {
            assert!(
                script.contains(&format!("'{subcommand}'"))
                    || script.contains(&format!(" {subcommand} ")),
                "{shell}: {subcommand} missing"
            );
        }
        assert!(script.contains("database-address"), "{shell}: run's flags");
    }
    // A shell sofabench has no script for is a usage error that names the choices.
    let unknown = sofabench(&["completions", "tcsh"]);
    assert_eq!(unknown.code, BAD_INPUT);
    let message = &unknown.stderr;
    assert!(message.contains("tcsh") && message.contains("bash, elvish, fish"));
}

/// The page's first request, after clap_mangen's portable apostrophe string (`.ie`/`.el`),
/// is its title.
fn assert_titled(page: &str, title: &str) {
    let first = page
        .lines()
        .find(|line| !line.starts_with(".ie ") && !line.starts_with(".el "))
        .unwrap_or("");
    assert!(
        first.starts_with(&format!(".TH {title} 1 ")),
        "first request: {first:?}"
    );
}

#[test]
fn the_top_man_page_lists_a_page_for_each_subcommand() {
    let page = printed(&["man"]);
    assert_titled(&page, "sofabench");
    assert!(page.contains(".SH SUBCOMMANDS"));
    for subcommand in SUBCOMMANDS {
        assert!(
            page.contains(&format!("sofabench\\-{subcommand}(1)")),
            "{subcommand}"
        );
    }
    // clap's `help` subcommand has no page: none may be pointed to.
    assert!(!page.contains("sofabench\\-help(1)"));
}

#[test]
fn a_subcommand_page_documents_its_flags() {
    let page = printed(&["man", "run"]);
    assert_titled(&page, "sofabench-run");
    assert!(page.contains("\\fBsofabench run\\fR"), "synopsis");
    for flag in [
        "\\-\\-database\\-address",
        "\\-\\-retry\\-429",
        "\\-\\-rate",
    ] {
        assert!(page.contains(&format!("\\fB{flag}\\fR")), "{flag}");
    }
    assert!(page.contains("[default: http://127.0.0.1:5984]"));

    let unknown = sofabench(&["man", "nope"]);
    assert_eq!(unknown.code, BAD_INPUT);
    let message = &unknown.stderr;
    assert!(
        message.contains("\"nope\"") && message.contains("run, generate"),
        "{message}"
    );
}

#[test]
fn the_pages_render_without_warnings() {
    for args in [&["man"][..], &["man", "run"], &["man", "check"]] {
        let page = printed(args);
        // -k: the pages carry UTF-8 (…); -ww: every warning.
        let Some(rendered) =
            pipe_through("groff", &["-man", "-Tutf8", "-k", "-ww", "-P-cbou"], &page)
        else {
            skipped("groff is not installed, so the man pages were not rendered");
            return;
        };
        let warnings = String::from_utf8_lossy(&rendered.stderr);
        assert!(
            rendered.status.success() && warnings.is_empty(),
            "{args:?}: {warnings}"
        );
        let text = String::from_utf8_lossy(&rendered.stdout);
        let name = args
            .get(1)
            .map_or("sofabench".to_string(), |s| format!("sofabench-{s}"));
        assert!(text.contains(&format!("{name}(1)")), "{args:?}: header");
        if args.get(1) == Some(&"run") {
            assert!(text.contains("--database-address <URL> [default: http://127.0.0.1:5984]"));
        }
    }
}

/// A built-in scenario's name and a file, both offered for `--scenario`'s value.
const SCENARIO_NAME: &str = "scaling";
const SCENARIO_FILE: &str = "my-phases.toml";

/// A folder holding [`SCENARIO_FILE`] and the script for `shell`.
fn completion_folder(shell: &str, script_name: &str) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join(SCENARIO_FILE), "").unwrap();
    let script = printed(&["completions", shell]);
    std::fs::write(folder.path().join(script_name), script).unwrap();
    folder
}

fn assert_offers_names_and_files(shell: &str, offered: &str) {
    let list = printed(&["scenarios"]);
    let names: Vec<&str> = list
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(names.contains(&SCENARIO_NAME), "{names:?}");
    for name in names {
        assert!(
            offered.contains(name),
            "{shell}: {name} not offered:\n{offered}"
        );
    }
    assert!(
        offered.contains(SCENARIO_FILE),
        "{shell}: files not offered:\n{offered}"
    );
}

#[test]
fn bash_completes_scenario_names_and_files() {
    let folder = completion_folder("bash", "sofabench.bash");
    // The completion function as bash calls it: the words so far, the word completed.
    let program = "source ./sofabench.bash
        COMP_WORDS=(sofabench run --scenario ''); COMP_CWORD=3
        _sofabench sofabench '' --scenario; printf '%s\\n' \"${COMPREPLY[@]}\"
        COMP_WORDS=(sofabench run --scenario sca)
        _sofabench sofabench sca --scenario; printf 'prefix %s\\n' \"${COMPREPLY[@]}\"";
    let output = Command::new("bash")
        .args(["-c", program])
        .current_dir(folder.path())
        .output()
        .expect("bash is installed");
    let offered = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_offers_names_and_files("bash", &offered);
    let prefixed: Vec<&str> = offered
        .lines()
        .filter(|l| l.starts_with("prefix "))
        .collect();
    assert_eq!(
        prefixed,
        [format!("prefix {SCENARIO_NAME}")],
        "only what starts with sca"
    );
}

#[test]
fn fish_completes_scenario_names_and_files() {
    let folder = completion_folder("fish", "sofabench.fish");
    let program = "source sofabench.fish; complete -C 'sofabench run --scenario '";
    let output = match Command::new("fish")
        .args(["-c", program])
        .current_dir(folder.path())
        .output()
    {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            skipped("fish is not installed, so its script was not tried");
            return;
        }
        Err(e) => panic!("start fish: {e}"),
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_offers_names_and_files("fish", &String::from_utf8_lossy(&output.stdout));
}

/// zsh completes only in an interactive shell: one is run in a pseudo-terminal (zpty),
/// given `--scenario <TAB>`, and read until the command line is drawn again below the
/// listing, however long that takes (`timeout` bounds it).
#[test]
fn zsh_completes_scenario_names_and_files() {
    let folder = completion_folder("zsh", "_sofabench");
    let dir = folder.path().display();
    let program = format!(
        r#"zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PS1="> "; fpath=({dir} $fpath); autoload -U compinit; compinit -u -D; cd {dir}; source ./_sofabench; compdef _sofabench sofabench'
zpty -w -n z $'sofabench run --scenario \t'
zpty -r z out '*{SCENARIO_FILE}*sofabench run --scenario*'
print -r -- "$out"
zpty -d z"#
    );
    let Some(output) = pipe_through("timeout", &["120", "zsh", "-f", "-c", &program], "") else {
        skipped("timeout is not installed");
        return;
    };
    if output.status.code() == Some(127) {
        skipped("zsh is not installed, so its script was not tried");
        return;
    }
    let listing = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{listing}");
    for complaint in [
        "bad option",
        "unmatched",
        "command not found",
        "_arguments:",
    ] {
        assert!(!listing.contains(complaint), "zsh: {complaint}:\n{listing}");
    }
    assert_offers_names_and_files("zsh", &listing);
}
