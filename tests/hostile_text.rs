//! What a hostile server sends back never takes over the user's terminal or gives away a
//! secret: a password made of awkward characters, quoted back in every encoding a server
//! may use (JSON-escaped, percent-encoded, inside JSON inside JSON), never appears in the
//! output, the result file, the CSV or the HTML page; control characters a server sends
//! (a window title, a cleared screen, a forged verdict line) are shown as escapes.

mod common;

use std::path::Path;

use base64::Engine as _;
use common::echo_server::EchoServer;
use common::{Run, scratch, sofabench};

/// Quotes, a backslash, `%`, `:`, `@` and non-ASCII around a word that survives every
/// encoding but base64, so that a leak in any form shows as `Zebra`.
const PASSWORD: &str = "Pa\"ss\\Zebra%42:@é";

/// Every form the password could leave in: the distinctive part of it (which JSON-,
/// percent- and HTML-escaping leave as it is), and a Basic header's base64.
fn leaked_forms() -> Vec<String> {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("admin:{PASSWORD}"));
    vec!["Zebra".to_string(), basic]
}

/// What a run showed and wrote, by name.
fn everything_shown(run: &Run, dir: &Path) -> Vec<(String, String)> {
    let mut shown = vec![
        ("stdout".to_string(), run.stdout.clone()),
        ("stderr".to_string(), run.stderr.clone()),
    ];
    for file in ["result.json", "result.csv", "report.html"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(file)) {
            shown.push((file.to_string(), text));
        }
    }
    shown
}

fn assert_no_secret(run: &Run, dir: &Path) {
    for (name, text) in everything_shown(run, dir) {
        for form in leaked_forms() {
            assert!(!text.contains(&form), "{form:?} in {name}:\n{text}");
        }
    }
}

/// No control character but line breaks and tabs in what reached the terminal, and no
/// line that starts with a forged verdict.
fn assert_terminal_untouched(run: &Run) {
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        let raw = text
            .chars()
            .find(|c| c.is_control() && *c != '\n' && *c != '\t');
        assert_eq!(raw, None, "a raw control character in {name}:\n{text}");
        assert!(
            !text.lines().any(|l| l.starts_with("verdict: PASSED")),
            "a forged line in {name}:\n{text}"
        );
    }
}

/// Runs creates and reads against `server` as `admin` with the awkward password, writing
/// every kind of output into `dir`.
fn run_against(server: &EchoServer, dir: &Path, extra: &[&str]) -> Run {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={}", server.url),
        "--database_name=hostile".to_string(),
        "--user=admin".to_string(),
        format!("--password={PASSWORD}"),
        "--num_connections=2".to_string(),
        "--num_bulk_insert_operations=0".to_string(),
        "--total-operations=40".to_string(),
        "--create_weight=1".to_string(),
        "--read_weight=1".to_string(),
        "--update_weight=0".to_string(),
        "--delete_weight=0".to_string(),
        "--seed=7".to_string(),
        format!("--json={}", path("result.json")),
        format!("--csv={}", path("result.csv")),
        format!("--html={}", path("report.html")),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sofabench(&args)
}

fn document_reads(line: &str) -> bool {
    common::bad_server::document_reads(line)
}

#[test]
fn failed_operations_quote_the_server_without_its_secrets_or_control_characters() {
    let dir = scratch("hostile_text", "operations");
    let server = EchoServer::start("500 Internal Server Error", document_reads);
    let run = run_against(&server, &dir, &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(server.echoed() > 0);
    assert_no_secret(&run, &dir);
    assert_terminal_untouched(&run);
    // The example is there, its secret hidden and its escapes visible.
    assert!(run.stdout.contains("decoded=admin:***"), "{}", run.stdout);
    assert!(run.stdout.contains("\\x1b]0;pwned"), "{}", run.stdout);
    let result = common::result_json(&dir.join("result.json"));
    assert_eq!(control_in(&result), None, "kept raw in the result");
    let csv = std::fs::read_to_string(dir.join("result.csv")).unwrap();
    assert!(!csv.contains('\u{1b}'), "kept raw in the CSV:\n{csv}");
}

/// The first string in `value` with a control character in it.
fn control_in(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) if s.chars().any(char::is_control) => Some(s.clone()),
        serde_json::Value::Array(items) => items.iter().find_map(control_in),
        serde_json::Value::Object(fields) => fields.values().find_map(control_in),
        _ => None,
    }
}

#[test]
fn a_setup_error_quotes_the_server_without_its_secrets_or_control_characters() {
    let dir = scratch("hostile_text", "setup");
    let server = EchoServer::start("500 Internal Server Error", |line| {
        line.starts_with("PUT /hostile ")
    });
    let run = run_against(&server, &dir, &[]);
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(server.echoed(), 1, "{}", run.stderr);
    assert_no_secret(&run, &dir);
    assert_terminal_untouched(&run);
    assert!(run.stderr.contains("decoded=admin:***"), "{}", run.stderr);
}

#[test]
fn a_refused_cookie_login_is_quoted_without_the_password_it_was_sent() {
    let dir = scratch("hostile_text", "cookie");
    let server = EchoServer::start("401 Unauthorized", |line| {
        line.starts_with("POST /_session ")
    });
    let run = run_against(&server, &dir, &["--auth", "cookie"]);
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(server.echoed() >= 1, "{}", run.stderr);
    assert_no_secret(&run, &dir);
    assert_terminal_untouched(&run);
    assert!(
        run.stderr.contains("\"password\\\":\\\"***"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_replication_error_that_quotes_its_request_keeps_the_password_hidden() {
    let dir = scratch("hostile_text", "replication");
    let scenario = dir.join("replicate.toml");
    std::fs::write(
        &scenario,
        "[[phase]]\nname = \"copy\"\nmix = { create = 1 }\ntotal = 20\nconnections = 2\nreplicate_at = \"60s\"\nreplicate_to = \"copy\"\n",
    )
    .unwrap();
    let server = EchoServer::start("500 Internal Server Error", |line| {
        line.starts_with("POST /_replicate ")
    });
    let run = run_against(&server, &dir, &["--scenario", scenario.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(server.echoed() >= 1, "{}\n{}", run.stdout, run.stderr);
    assert_no_secret(&run, &dir);
    assert_terminal_untouched(&run);
}

#[test]
fn a_short_password_is_warned_of_at_the_start() {
    let dir = scratch("hostile_text", "short");
    let server = EchoServer::start("500 Internal Server Error", |_| false);
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=short",
        "--user=admin",
        "--password=pw1",
        "--num_bulk_insert_operations=0",
        "--total-operations=4",
        "--create_weight=1",
        "--read_weight=0",
        "--update_weight=0",
        "--delete_weight=0",
        "--quiet",
        "--json",
        dir.join("result.json").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the password is shorter than 6 characters"),
        "{}",
        run.stderr
    );
}

/// A path is the user's, but not always chosen by them (a result file someone else named,
/// picked by a glob): `check` names it in what it prints without its control characters
/// acting on the terminal, and `merge` names the files it wrote the same way.
#[test]
fn a_result_file_named_with_control_characters_is_named_escaped() {
    let dir = scratch("hostile_text", "named");
    let server = EchoServer::start("500 Internal Server Error", |_| false);
    let run = run_against(&server, &dir, &["--node-count=2", "--node-index=0"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let mut result = common::result_json(&dir.join("result.json"));
    result["interrupted"] = serde_json::Value::Bool(true);
    let named = dir.join("r\u{1b}]0;pwned\u{7}\u{1b}[2J.json");
    std::fs::write(&named, result.to_string()).unwrap();
    let named = named.to_str().unwrap();
    // Refused as interrupted (exit 1), then judged anyway and passed (exit 0).
    for (extra, code) in [(None, 1), (Some("--allow-interrupted"), 0)] {
        let mut args = vec!["check", named, "--threshold", "errors < 1"];
        args.extend(extra);
        let run = sofabench(&args);
        assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
        assert_terminal_untouched(&run);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(said.contains("r\\x1b]0;pwned\\x07\\x1b[2J.json"), "{said}");
    }
    let second = run_against(
        &server,
        &dir,
        &["--node-count=2", "--node-index=1", "--overwrite"],
    );
    assert_eq!(second.code, 0, "{}", second.stderr);
    std::fs::rename(dir.join("result.json"), dir.join("second.json")).unwrap();
    let merged = dir.join("m\u{1b}[2J.json");
    let run = sofabench(&[
        "merge",
        named,
        dir.join("second.json").to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_terminal_untouched(&run);
    assert!(run.stdout.contains("wrote "), "{}", run.stdout);
}
