//! The HTML report as a browser shows it: headless Chromium runs the page's script, and
//! the tests read what each chart drew.

use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Headless Chromium on a page: its standard error, and standard output.
fn chromium(page: &Path, profile: &Path, action: &[&str]) -> (String, String) {
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(action)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("start chromium");
    (
        String::from_utf8_lossy(&output.stderr).into_owned(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Where the page's screenshots are kept: `test-artifacts/` in Cargo's target folder
/// (`target/`, or `$CARGO_TARGET_DIR`), beside the tests' temporary folder.
pub fn artifacts() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// How many values each chart box of `kind` drew, as the page's script marks it.
pub fn drawn(dom: &str, kind: &str) -> Vec<u64> {
    let marker = format!("data-chart=\"{kind}\"");
    dom.match_indices(&marker)
        .map(|(at, _)| {
            let tag = &dom[at..at + dom[at..].find('>').unwrap()];
            let points = tag
                .split("data-points=\"")
                .nth(1)
                .unwrap_or_else(|| panic!("{kind} was not drawn: {tag}"));
            points[..points.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// An attribute the page's script set on each chart box of `kind` (`data-scale`: its y
/// axis, "log" or "linear"); empty for a box that has none.
pub fn chart_attribute(dom: &str, kind: &str, name: &str) -> Vec<String> {
    let marker = format!("data-chart=\"{kind}\"");
    let attribute = format!("{name}=\"");
    dom.match_indices(&marker)
        .map(|(at, _)| {
            let start = dom[..at].rfind('<').unwrap();
            let tag = &dom[start..at + dom[at..].find('>').unwrap()];
            tag.split(&attribute)
                .nth(1)
                .map_or(String::new(), |v| v[..v.find('"').unwrap()].to_string())
        })
        .collect()
}

/// The page in headless Chromium: its DOM after the script ran (no script error), and a
/// screenshot kept as `name`.png among the test artifacts. A test that calls it ends its
/// name in `_in_chromium`, which `make test-quick` skips (it installs no Chromium).
pub fn render_in_chromium(page: &Path, name: &str) -> String {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: the HTML report test needs headless Chromium; run scripts/test.sh (make test), which installs Debian's chromium package; make test-quick leaves out the tests that need it"
    );
    let page = page.canonicalize().unwrap();
    let profile = tempfile::tempdir().unwrap();
    let (stderr, dom) = chromium(&page, profile.path(), &["--dump-dom"]);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(
        !stderr.contains("Uncaught"),
        "script errors in the page:\n{}",
        console.join("\n")
    );
    assert!(
        dom.contains("sofabench result"),
        "no page dumped:\n{stderr}"
    );
    let png = artifacts().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let (stderr, _) = chromium(
        &page,
        profile.path(),
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,3200",
            "--hide-scrollbars",
        ],
    );
    assert!(!stderr.contains("Uncaught"), "{stderr}");
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot: {e}\n{stderr}"));
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
    dom
}

/// How many values phase `index`'s chart of `kind` drew; `None` when it has none.
pub fn drawn_in_phase(dom: &str, index: usize, kind: &str) -> Option<u64> {
    let marker = format!("data-phase=\"{index}\" data-chart=\"{kind}\"");
    let at = dom.find(&marker)?;
    let tag = &dom[at..at + dom[at..].find('>')?];
    let points = tag.split("data-points=\"").nth(1)?;
    points[..points.find('"')?].parse().ok()
}
