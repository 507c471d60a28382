//! Result files whose recorded environment (issue 29's `nodes[].server` and
//! `nodes[].client`) is built to flood what reads it: 1 MB strings in every field, 20,000
//! client machines that all differ, escapes and bidirectional overrides. A server's
//! strings are bounded when a run captures them; a file's are as long and as many as its
//! writer chose, so `report`, `check --expect`, `compare` and the HTML page bound them
//! again where they show them, and escape them there.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, repository, scratch, sofabench};
use serde_json::{Value, json};

/// The most a command's whole output may be for these files: the fixture's own report
/// is a few KB; an environment fact shown in full would be megabytes.
const MOST_OUTPUT: usize = 64 * 1024;

/// The longest line: 64 machines' values of 200 characters, joined.
const MOST_LINE: usize = 16 * 1024;

fn fixture() -> Value {
    let path = repository().join("tests/fixtures/result-v2.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &Path, value: &Value) -> PathBuf {
    std::fs::write(path, serde_json::to_vec(value).unwrap()).unwrap();
    path.to_path_buf()
}

/// A client machine and the server as it found them, each string `text`, the client's
/// CPU told apart by `index`; `items` features and reasons.
fn node(index: usize, count: usize, text: &str, items: usize) -> Value {
    json!({
        "index": index, "count": count, "host": format!("h{index}"),
        "client": {"sofabench": text, "cpu": format!("{index} {text}"), "os": text, "cores": index},
        "server": {
            "product": text,
            "nodes": [{"address": text, "answered": text, "vendor": text, "version": text,
                       "git_sha": text, "features": vec![text; items]}],
            "javascript_engine": text,
            "unknown_because": vec![text; items],
        }
    })
}

fn with_nodes(count: usize, text: &str, items: usize) -> Value {
    let mut result = fixture();
    result["nodes"] = (0..count).map(|i| node(i, count, text, items)).collect();
    result
}

fn assert_bounded(run: &Run, what: &str) {
    let longest = run.stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(
        run.stdout.len() <= MOST_OUTPUT && longest <= MOST_LINE,
        "{what}: {} bytes out, longest line {longest}; starts {:?}",
        run.stdout.len(),
        &run.stdout[..run.stdout.len().min(300)]
    );
    for raw in ['\u{1b}', '\u{202e}'] {
        assert!(!run.stdout.contains(raw), "{what}: raw {raw:?}");
    }
}

#[test]
fn huge_environment_strings_and_many_machines_are_shown_bounded() {
    let dir = scratch("hostile_environment", "bounded");
    let long = format!("\u{202e}\u{1b}[2J{}", "v".repeat(1 << 20));
    let huge = write(&dir.join("huge.json"), &with_nodes(1, &long, 3));
    let many = write(&dir.join("many.json"), &with_nodes(20_000, "x", 2));
    let plain = write(&dir.join("plain.json"), &with_nodes(1, "3.5.0", 1));
    for file in [&huge, &many] {
        let name = file.display().to_string();
        let p = plain.display().to_string();
        let runs = [
            ("report -v", vec!["report", "-v", &name]),
            (
                "check --expect",
                vec!["check", "--expect", "server.version=3.5.0", &name],
            ),
            ("compare", vec!["compare", &p, &name]),
            ("compare of 3", vec!["compare", &p, &name, &name]),
        ];
        for (what, args) in runs {
            let run = sofabench(&args);
            assert!(run.code == 0 || run.code == 1, "{what}: {}", run.stderr);
            assert_bounded(&run, &format!("{what} of {name}"));
        }
        let html = dir.join("page.html");
        let run = sofabench(&[
            "report",
            "--overwrite",
            "--html",
            html.to_str().unwrap(),
            &name,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let page = std::fs::read_to_string(&html).unwrap();
        let start = page.find("<section id=\"environment\"").unwrap();
        let section = &page[start..start + page[start..].find("</section>").unwrap()];
        assert!(section.len() <= 4 * MOST_OUTPUT, "{} bytes", section.len());
        assert!(!section.contains('\u{202e}') && !section.contains('\u{1b}'));
    }
}
