//! Every command-line example in README.md and docs/*.md, checked as rustdoc checks doc
//! examples. An example is a line of a ```sh block whose command is `sofabench`. Each
//! such block starts with a marker that says how it is checked:
//!
//! - `# runs against the test server`: every `sofabench` line is run, in order, in a
//!   folder of its own, against a PouchDB Server with an admin started for the block,
//!   and must exit 0 (see [`shrunk`] for what is made smaller first);
//! - `# needs: WHAT` (Apache CouchDB, TLS certificates, several machines, …): parsed only.
//!
//! Every example must parse with the real command line, and every file of the repository
//! it names (a template, a scenario or config file, anything under `examples/`,
//! `deploy/`, …) must exist.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use common::{PouchServer, Storage};

/// The server every example assumes; replaced by the test server's address.
const EXAMPLE_ADDRESS: &str = "http://admin:password@127.0.0.1:5984";
const RUNS: &str = "# runs against the test server";
const NEEDS: &str = "# needs:";

/// A ```sh block of a page, with the line it starts on.
struct Block {
    page: String,
    line: usize,
    marker: String,
    /// The block's logical lines: continuations joined, in order.
    commands: Vec<String>,
}

impl Block {
    fn runs(&self) -> bool {
        self.marker.starts_with(RUNS)
    }

    fn examples(&self) -> Vec<Vec<String>> {
        self.commands
            .iter()
            .filter_map(|c| sofabench_args(c))
            .collect()
    }

    fn at(&self) -> String {
        format!("{}:{}", self.page, self.line)
    }
}

fn pages() -> Vec<PathBuf> {
    let root = common::repository();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The ```sh blocks of a Markdown text.
fn sh_blocks(page: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut pending = String::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.as_mut() {
            None if trimmed == "```sh" => {
                open = Some(Block {
                    page: page.to_string(),
                    line: number + 1,
                    marker: String::new(),
                    commands: Vec::new(),
                })
            }
            None => {}
            Some(_) if trimmed.starts_with("```") => blocks.push(open.take().unwrap()),
            Some(block) => {
                if block.commands.is_empty() && pending.is_empty() && trimmed.starts_with('#') {
                    if block.marker.is_empty() {
                        block.marker = trimmed.to_string();
                    }
                    continue;
                }
                match trimmed.strip_suffix('\\') {
                    Some(part) => pending.push_str(part),
                    None => {
                        pending.push_str(trimmed);
                        block.commands.push(std::mem::take(&mut pending));
                    }
                }
            }
        }
    }
    blocks
}

/// The arguments of a line whose command is sofabench (after any `NAME=value`
/// assignments), up to a redirection, pipe or `;`; None for any other line.
fn sofabench_args(line: &str) -> Option<Vec<String>> {
    let words = shlex::split(line).unwrap_or_else(|| panic!("unbalanced quotes: {line}"));
    let mut words = words
        .into_iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let program = words.next()?;
    if Path::new(&program).file_name()? != "sofabench" {
        return None;
    }
    let rest = words.take_while(|w| !matches!(w.as_str(), ">" | ">>" | "|" | ";" | "&&"));
    Some(
        std::iter::once("sofabench".to_string())
            .chain(rest)
            .collect(),
    )
}

fn all_blocks() -> Vec<Block> {
    let root = common::repository();
    pages()
        .iter()
        .flat_map(|path| {
            let page = path.strip_prefix(&root).unwrap().display().to_string();
            sh_blocks(&page, &std::fs::read_to_string(path).unwrap())
        })
        .collect()
}

/// The value of `--flag VALUE` or `--flag=VALUE` at `i`, for any of the flag's names.
fn value_of<'a>(args: &'a [String], i: usize, names: &[&str]) -> Option<&'a str> {
    let arg = args[i].as_str();
    names.iter().find_map(|name| {
        if arg == *name {
            args.get(i + 1).map(String::as_str)
        } else {
            arg.strip_prefix(name)?.strip_prefix('=')
        }
    })
}

/// Flags whose value is a file sofabench reads, which an example must take from the
/// repository (a certificate or a secret is the user's own: such examples say what they
/// need).
const INPUT_FILES: [&str; 7] = [
    "--json_document_schema_filename",
    "--json-document-schema-filename",
    "--xml_document_schema_filename",
    "--xml-document-schema-filename",
    "--config",
    "--schema",
    "--scenario",
];

/// Folders of the repository: a word that starts with one names a file of it.
const REPOSITORY_FOLDERS: [&str; 7] = [
    "examples/",
    "deploy/",
    "docs/",
    "scripts/",
    "tests/",
    "bench/",
    "assets/",
];

/// The repository's files an example names.
fn named_files(args: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    for i in 0..args.len() {
        if let Some(value) = value_of(args, i, &INPUT_FILES) {
            let builtin = sofabench::scenario::builtin(value).is_some();
            if !builtin && value != "-" {
                files.push(value.to_string());
            }
        }
        let word = args[i].rsplit('=').next().unwrap();
        if REPOSITORY_FOLDERS.iter().any(|f| word.starts_with(f)) {
            files.push(word.to_string());
        }
    }
    files
}

#[test]
fn every_example_block_says_how_it_is_checked() {
    let unmarked: Vec<String> = all_blocks()
        .iter()
        .filter(|b| !b.examples().is_empty())
        .filter(|b| !b.runs() && !b.marker.starts_with(NEEDS))
        .map(|b| format!("{}: first line {:?}", b.at(), b.marker))
        .collect();
    assert!(
        unmarked.is_empty(),
        "these ```sh blocks hold sofabench examples but start with neither \
         `{RUNS}` nor `{NEEDS} WHAT`:\n{}",
        unmarked.join("\n")
    );
}

#[test]
fn every_example_parses_with_the_real_command_line() {
    let mut examples = 0;
    let mut wrong = Vec::new();
    for block in all_blocks() {
        for args in block.examples() {
            examples += 1;
            let os: Vec<OsString> = args.iter().map(OsString::from).collect();
            if let Err(e) = sofabench::cli::parses(os) {
                wrong.push(format!("{}: {}\n  {e}", block.at(), args.join(" ")));
            }
        }
    }
    assert!(
        examples >= 40,
        "only {examples} examples found: is the parser right?"
    );
    assert!(
        wrong.is_empty(),
        "examples that do not parse:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_file_an_example_names_exists() {
    let root = common::repository();
    let mut missing = Vec::new();
    for block in all_blocks() {
        let words = block.commands.iter().map(|c| {
            let words = shlex::split(c).unwrap_or_default();
            match sofabench_args(c) {
                Some(args) => named_files(&args),
                // Other commands (docker, kubectl, …): the repository's files they name.
                None => named_files(&words)
                    .into_iter()
                    .filter(|w| REPOSITORY_FOLDERS.iter().any(|f| w.starts_with(f)))
                    .collect(),
            }
        });
        for file in words.flatten() {
            if !root.join(&file).is_file() {
                missing.push(format!("{}: {file}", block.at()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "examples name files the repository does not have:\n{}",
        missing.join("\n")
    );
}

/// The example made small enough for a test, and pointed at the test server: the
/// address replaced; bulk inserts of at most 50 documents, one per connection; at most 4
/// connections, 50 CRUD operations each (these four given when the example leaves them
/// at their defaults), 200 operations in total per phase, 2
/// repetitions, 3 steps of a rate search and 2 s per phase or step. What judges the
/// machine's speed is loosened, since a test must not: latency thresholds to an hour,
/// speed thresholds to more than nothing, a rate search's lowest rate to 1/s, and a
/// request's timeout to 300 s unless the example sets one. What is left is what the example says.
fn shrunk(args: &[String], address: &str) -> Vec<String> {
    const CAPS: [(&str, &str, u64); 7] = [
        (
            "--num_documents_per_bulk_insert",
            "--num-documents-per-bulk-insert",
            50,
        ),
        (
            "--num_bulk_insert_operations",
            "--num-bulk-insert-operations",
            1,
        ),
        ("--num_connections", "--num-connections", 4),
        ("--num_crud_operations", "--num-crud-operations", 50),
        ("--total-operations", "--total_operations", 200),
        ("--runs", "--runs", 2),
        ("--search-steps", "--search_steps", 3),
    ];
    let mut out: Vec<String> = args
        .iter()
        .map(|a| a.replace(EXAMPLE_ADDRESS, address))
        .collect();
    let mut i = 0;
    while i < out.len() {
        if let Some(v) = value_of(&out, i, &["--threshold"]) {
            let loose = loosened(v);
            set(&mut out, i, "--threshold", &loose);
        }
        if let Some(v) = value_of(&out, i, &["--search-rate", "--search_rate"]) {
            let high = v.split_once("..").map_or(v, |(_, high)| high).to_string();
            set(&mut out, i, "--search-rate", &format!("1..{high}"));
        }
        i += 1;
    }
    let is_run = match out.get(1).map(String::as_str) {
        Some("run") => true,
        Some("-h" | "--help" | "-V" | "--version") => false,
        Some(first) => first.starts_with('-'),
        None => false,
    };
    if !is_run {
        return out;
    }
    i = 0;
    while i < out.len() {
        for (name, other, cap) in CAPS {
            if let Some(v) = value_of(&out, i, &[name, other]) {
                let small = v.parse::<u64>().map_or(cap, |n| n.min(cap)).to_string();
                set(&mut out, i, name, &small);
            }
        }
        for name in ["--duration", "--step-duration"] {
            if value_of(&out, i, &[name]).is_some() {
                set(&mut out, i, name, "2s");
            }
        }
        i += 1;
    }
    for (name, _, cap) in &CAPS[..4] {
        if !out.iter().any(|a| a.starts_with(name)) {
            out.push(format!("{name}={cap}"));
        }
    }
    if !out.iter().any(|a| a.starts_with("--timeout")) {
        out.push("--timeout=300s".to_string());
    }
    out
}

/// Gives the flag at `i` (`--flag=V`, or `--flag V`) another value, as `--flag=VALUE`.
fn set(args: &mut Vec<String>, i: usize, name: &str, value: &str) {
    if !args[i].contains('=') {
        args.remove(i + 1);
    }
    args[i] = format!("{name}={value}");
}

/// A threshold on speed (`read.p99 < 20ms`, `throughput > 1000`) loosened to an hour or
/// to more than nothing; others (errors) as they are.
fn loosened(threshold: &str) -> String {
    const LATENCY: [&str; 7] = ["p50", "p90", "p99", "p999", "p99.9", "max", "mean"];
    const SPEED: [&str; 2] = ["throughput", "docs_per_sec"];
    let metric_of = |left: &str| {
        left.trim()
            .rsplit(['.', ':'])
            .next()
            .unwrap_or("")
            .to_string()
    };
    if let Some((left, _)) = threshold.split_once('<')
        && LATENCY.contains(&metric_of(left).as_str())
    {
        return format!("{} < 3600s", left.trim());
    }
    if let Some((left, _)) = threshold.split_once('>')
        && SPEED.contains(&metric_of(left).as_str())
    {
        return format!("{} > 0", left.trim());
    }
    threshold.to_string()
}

#[test]
fn shrinking_keeps_what_the_example_says_and_makes_it_small() {
    let args: Vec<String> = [
        "sofabench",
        "run",
        "--database_address=http://admin:password@127.0.0.1:5984",
        "--num_connections",
        "50",
        "--duration",
        "8h",
        "--threshold",
        "read.p99 < 20ms",
        "--threshold=error_rate < 0.1%",
        "--seed=42",
        "--search-rate",
        "50..5000",
    ]
    .map(String::from)
    .to_vec();
    let small = shrunk(&args, "http://u:p@127.0.0.1:9");
    assert_eq!(
        small,
        [
            "sofabench",
            "run",
            "--database_address=http://u:p@127.0.0.1:9",
            "--num_connections=4",
            "--duration=2s",
            "--threshold=read.p99 < 3600s",
            "--threshold=error_rate < 0.1%",
            "--seed=42",
            "--search-rate=1..5000",
            "--num_documents_per_bulk_insert=50",
            "--num_bulk_insert_operations=1",
            "--num_crud_operations=50",
            "--timeout=300s",
        ]
    );
}

#[test]
fn the_examples_marked_to_run_run_against_the_test_server() {
    let blocks: Vec<Block> = all_blocks().into_iter().filter(Block::runs).collect();
    assert!(
        blocks.len() >= 5,
        "only {} blocks marked to run",
        blocks.len()
    );
    // Three blocks at a time, each with a server of its own: most of a block's time is
    // spent waiting on its server.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(block) = blocks.get(n) else { break };
                    let started = std::time::Instant::now();
                    let outcome = run_block(n, block);
                    let took = started.elapsed().as_secs_f64();
                    outcomes.lock().unwrap().push((n, took, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|(n, _, _)| *n);
    let took: String = outcomes
        .iter()
        .map(|(n, took, _)| format!("{took:6.1} s  {}\n", blocks[*n].at()))
        .collect();
    let failed: Vec<String> = outcomes
        .into_iter()
        .filter_map(|(_, _, o)| o.err())
        .collect();
    // How long each block took, for whoever makes the suite quicker.
    let timings = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs_examples-timings.txt");
    std::fs::write(timings, took).unwrap();
    assert!(
        failed.is_empty(),
        "{} of {} blocks failed:\n{}",
        failed.len(),
        blocks.len(),
        failed.join("\n")
    );
}

/// Runs a block's examples in order, in a folder of its own, against a server of its
/// own; the first that does not exit 0 ends the block, and says why.
fn run_block(n: usize, block: &Block) -> Result<(), String> {
    let server = PouchServer::secured(Storage::Memory);
    let dir = common::scratch("docs_examples", &n.to_string());
    std::os::unix::fs::symlink(common::repository().join("examples"), dir.join("examples"))
        .unwrap();
    for args in block.examples() {
        let small = shrunk(&args, &server.admin_url);
        let words: Vec<&str> = small[1..].iter().map(String::as_str).collect();
        let run = common::sofabench_in(&dir, &words);
        if run.code != 0 {
            // What failed, and how the run ended.
            let tail = |text: &str| {
                let lines: Vec<&str> = text.lines().collect();
                let failures = lines
                    .iter()
                    .filter(|l| l.trim_start().starts_with("failed"));
                let end = &lines[lines.len().saturating_sub(15)..];
                failures.chain(end).copied().collect::<Vec<_>>().join("\n")
            };
            return Err(format!(
                "{}: exit {}: {}\nrun as: {}\nstdout (end):\n{}\nstderr (end):\n{}\n",
                block.at(),
                run.code,
                args.join(" "),
                small.join(" "),
                tail(&run.stdout),
                tail(&run.stderr)
            ));
        }
    }
    Ok(())
}

/// A scenario file a page shows whole, under a line naming it (`` `examples/X.toml`: ``),
/// is shown as the repository has it.
#[test]
fn the_scenario_files_a_page_shows_are_the_repositorys() {
    let root = common::repository();
    let mut shown = 0;
    let mut differ = Vec::new();
    for path in pages() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = line
                .strip_prefix('`')
                .and_then(|l| l.strip_suffix("`:"))
                .filter(|n| n.starts_with("examples/"))
            else {
                continue;
            };
            assert_eq!(
                lines.get(i + 2),
                Some(&"```toml"),
                "{}:{}",
                path.display(),
                i + 1
            );
            let body: Vec<&str> = lines[i + 3..]
                .iter()
                .take_while(|l| **l != "```")
                .copied()
                .collect();
            let file = std::fs::read_to_string(root.join(name)).unwrap();
            shown += 1;
            if body.join("\n") != file.trim_end() {
                differ.push(format!("{}:{}: {name}", path.display(), i + 1));
            }
        }
    }
    assert!(shown >= 6, "only {shown} scenario files shown");
    assert!(
        differ.is_empty(),
        "pages show these files otherwise than they are:\n{}",
        differ.join("\n")
    );
}

/// The anchor GitHub gives a heading: lower case, spaces to hyphens, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// A link from one page to another, or to a heading, leads to one that is there: the
/// guide's pages were cut from one README, and text placed later must keep them whole.
#[test]
fn every_link_between_pages_leads_somewhere() {
    let mut links = 0;
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            links += 1;
            let (path, heading) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            let ok = file.exists()
                && (heading.is_empty()
                    || anchors(&std::fs::read_to_string(&file).unwrap_or_default())
                        .iter()
                        .any(|a| a == heading));
            if !ok {
                let shown = page.strip_prefix(common::repository()).unwrap_or(&page);
                broken.push(format!("{}: {target}", shown.display()));
            }
        }
    }
    assert!(links >= 50, "only {links} links found");
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

/// The targets of the Markdown links `[text](target)` of a text.
fn link_targets(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = &rest[..end];
            if !target.contains(char::is_whitespace) && !target.is_empty() {
                found.push(target.to_string());
            }
        }
    }
    found
}
