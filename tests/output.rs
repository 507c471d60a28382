//! What a run prints, against PouchDB Server on disk with an admin (as users run it): by
//! default the answer (Iron Cushion's blocks, a latency table and the histograms per phase,
//! the SUMMARY with its verdict) in a screenful; `-v` adds the detail and says each of the
//! server's notes once; `report` prints again what the run printed after its live lines;
//! piped, a live line per interval; on a terminal, the live line redrawn in place.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// Iron Cushion's two phases, small: 4 connections bulk inserting 2 × 50 documents, then
/// CRUD for `crud` (`--num_crud_operations=N` or `--duration=T`), the result in `json`.
fn two_phases(server: &PouchServer, db: &str, crud: &str, json: &Path, extra: &[&str]) -> Run {
    let address = format!("--database_address={}", server.admin_url);
    let name = format!("--database_name={db}");
    let json = format!("--json={}", json.display());
    let mut args = vec![
        "run",
        address.as_str(),
        name.as_str(),
        "--json_document_schema_filename=examples/ironcushion.json",
        "--num_connections=4",
        "--num_documents_per_bulk_insert=50",
        "--num_bulk_insert_operations=2",
        crud,
        "--seed=5",
        json.as_str(),
    ];
    args.extend_from_slice(extra);
    sofabench(&args)
}

/// What the run printed on stdout after its header: from the first phase's block on, the
/// part the live lines come before.
fn after_live(stdout: &str) -> &str {
    let start = stdout
        .find("BULK INSERT BENCHMARK RESULTS:\n")
        .unwrap_or_else(|| panic!("no bulk insert block:\n{stdout}"));
    &stdout[start..]
}

/// `text` without the lines about the files the run wrote, which only the run knows.
fn without_files(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("wrote ") && !l.starts_with("  result files"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `sofabench report` of `json`, with `extra` flags.
fn report(json: &Path, extra: &[&str]) -> Run {
    let json = json.display().to_string();
    let mut args = vec!["report", json.as_str()];
    args.extend_from_slice(extra);
    sofabench(&args)
}

/// The lines that say why the server's figures were not asked again.
fn notes(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains("server figures not asked again"))
        .collect()
}

#[test]
fn a_two_phase_run_leads_with_the_answer_and_report_prints_it_again() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let crud = "--num_crud_operations=50";
    let run = two_phases(&server, "brief", crud, &json, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let printed = after_live(&run.stdout);
    let lines = printed.lines().count();
    assert!(
        lines <= 60,
        "{lines} lines after the live lines:\n{printed}"
    );
    // Iron Cushion's blocks whole, then the answer.
    assert_eq!(run.fields("timeTaken").len(), 2, "{printed}");
    assert_eq!(run.fields("remoteReadProcessingRate").len(), 1, "{printed}");
    assert!(printed.contains("\nSUMMARY:\n"), "{printed}");
    assert!(printed.contains("\n  verdict: PASSED\n"), "{printed}");
    assert_eq!(printed.matches("  latency(ms) ").count(), 2, "{printed}");
    assert_eq!(printed.matches("\n  statuses: ").count(), 2, "{printed}");
    // The detail waits for -v; PouchDB Server's missing statistics are not told here.
    for detail in ["achieved in", "  bytes ", "disk after", "connections: "] {
        assert!(!printed.contains(detail), "{detail}:\n{printed}");
    }
    assert!(notes(printed).is_empty(), "{printed}");

    // The header's one line of what the run measured against and from: this machine.
    let header = &run.stdout[..run.stdout.len() - printed.len()];
    let against = header
        .lines()
        .find(|l| l.starts_with("  against: "))
        .unwrap_or_else(|| panic!("no environment line:\n{header}"));
    let cores: u64 = std::thread::available_parallelism().unwrap().get() as u64;
    let client = format!(", client: sofabench {} (", env!("CARGO_PKG_VERSION"));
    let on = if cores == 1 {
        " on 1 core, load ".to_string()
    } else {
        format!(" on {cores} cores, load ")
    };
    assert!(
        against.contains(&client) && against.contains(&on),
        "{against}"
    );

    // `report` prints it again, then what the run printed after its live lines.
    let again = report(&json, &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        again.stdout,
        format!("{against}\n{}", without_files(printed))
    );
}

#[test]
fn verbose_adds_the_detail_and_says_each_server_note_once() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    // CRUD for 3 s: long enough for the server's statistics to be asked (each interval).
    let run = two_phases(&server, "verbose", "--duration=3s", &json, &["-v"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let printed = after_live(&run.stdout);
    for detail in ["achieved in", "  bytes ", "disk after"] {
        assert_eq!(printed.matches(detail).count(), 2, "{detail}:\n{printed}");
    }
    // The connections are opened once, in the first phase.
    assert_eq!(
        printed.matches("\n  connections: 4 opened").count(),
        1,
        "{printed}"
    );
    assert!(printed.contains("\n  verdict: PASSED\n"), "{printed}");
    // PouchDB Server has no _stats nor _system: each is said once for the run.
    let notes = notes(printed);
    assert_eq!(notes.len(), 2, "{printed}");
    assert!(
        notes.iter().any(|n| n.contains("/_stats gave 404")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("/_system gave 404")),
        "{notes:?}"
    );

    // The header names every fact of the environment; `report -v` too, then what the
    // run printed after its live lines.
    let header = &run.stdout[..run.stdout.len() - printed.len()];
    let facts = "\n  environment (names for check --expect):\n    server.product ";
    assert!(header.contains(facts), "{header}");
    let again = report(&json, &["--verbose"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let after = without_files(printed);
    assert!(again.stdout.ends_with(&after), "{}", again.stdout);
    let environment = &again.stdout[..again.stdout.len() - after.len()];
    assert!(environment.starts_with("  against: "), "{environment}");
    assert!(environment.contains(facts), "{environment}");
    // The threads it names are those the header's client line says.
    let threads: u64 = header
        .lines()
        .find_map(|l| {
            l.strip_prefix("  client: ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no client line:\n{header}"));
    let named = format!("\n    {:<26} {threads}\n", "client.threads");
    assert!(environment.contains(&named), "{environment}");
    // And the file read again at the default says what a default run says.
    let brief = report(&json, &[]);
    assert!(
        brief.stdout.lines().count() < again.stdout.lines().count(),
        "{}",
        brief.stdout
    );
    assert!(!brief.stdout.contains("disk after"), "{}", brief.stdout);
}

/// Whether `line` is a live line: `   2.0s  create(…` or `   2.4s  last 0.40s: …`.
fn is_live(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words
        .next()
        .and_then(|w| w.strip_suffix('s'))
        .is_some_and(|seconds| seconds.parse::<f64>().is_ok())
        && line.contains("err=")
}

#[test]
fn piped_a_live_line_per_interval() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = two_phases(&server, "piped", "--duration=3s", &json, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stderr.contains('\r') && !run.stderr.contains('\u{1b}'),
        "nothing is redrawn when standard error is not a terminal: {:?}",
        run.stderr
    );
    let live = run.stderr.lines().filter(|l| is_live(l)).count();
    let result = result_json(&json);
    // Every interval the result keeps but the stub a phase's end leaves (under 50 ms).
    let intervals = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["intervals"].as_array().unwrap())
        .filter(|i| i["length_seconds"].as_f64().unwrap() > 0.05)
        .count();
    assert!(intervals >= 3, "{result}");
    assert_eq!(live, intervals, "{}", run.stderr);
}

/// A terminal as wide as `width`, enough of one for what sofabench draws: text that wraps
/// at the right edge, carriage return, line feed, cursor up and down, and clearing a line
/// (other escapes, such as hiding the cursor, change nothing on it).
struct Screen {
    width: usize,
    rows: Vec<Vec<char>>,
    row: usize,
    column: usize,
}

impl Screen {
    fn new(width: usize) -> Screen {
        Screen {
            width,
            rows: vec![Vec::new()],
            row: 0,
            column: 0,
        }
    }

    fn line(&mut self) -> &mut Vec<char> {
        while self.rows.len() <= self.row {
            self.rows.push(Vec::new());
        }
        &mut self.rows[self.row]
    }

    fn put(&mut self, c: char) {
        if self.column >= self.width {
            self.row += 1;
            self.column = 0;
        }
        let column = self.column;
        let line = self.line();
        if line.len() <= column {
            line.resize(column + 1, ' ');
        }
        line[column] = c;
        self.column += 1;
    }

    fn escape(&mut self, parameters: &str, command: char) {
        let n = parameters.parse::<usize>().unwrap_or(1).max(1);
        match command {
            'A' => self.row = self.row.saturating_sub(n),
            'B' => self.row += n,
            'K' if parameters == "2" => self.line().clear(),
            'K' => {
                let column = self.column;
                self.line().truncate(column);
            }
            _ => {}
        }
    }

    fn feed(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => self.column = 0,
                '\n' => self.row += 1,
                '\u{1b}' if chars.peek() == Some(&'[') => {
                    chars.next();
                    let mut parameters = String::new();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            self.escape(&parameters, c);
                            break;
                        }
                        parameters.push(c);
                    }
                }
                c if c.is_control() => {}
                c => self.put(c),
            }
        }
    }

    /// The lines on the screen, blank ones left out.
    fn shown(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|l| l.iter().collect::<String>().trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }
}

#[test]
fn the_screen_model_wraps_redraws_and_clears() {
    let mut screen = Screen::new(10);
    screen.feed("header\r\n0123456789abc\x1b[1A\r\x1b[2Klive 1\r\x1b[2Klive 2");
    assert_eq!(screen.shown(), ["header", "live 2", "abc"]);
    screen.feed("\r\x1b[2K\x1b[1B\r\x1b[2K\x1b[1Adone\r\n");
    assert_eq!(screen.shown(), ["header", "done"]);
}

/// `word` quoted for the shell.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[test]
fn on_a_terminal_the_live_line_is_redrawn_in_place() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let stdout = dir.path().join("stdout.txt");
    let args = [
        env!("CARGO_BIN_EXE_sofabench").to_string(),
        "run".to_string(),
        format!("--database_address={}", server.admin_url),
        "--database_name=terminal".to_string(),
        "--json_document_schema_filename=examples/ironcushion.json".to_string(),
        "--num_connections=4".to_string(),
        "--num_documents_per_bulk_insert=50".to_string(),
        "--num_bulk_insert_operations=2".to_string(),
        "--duration=3s".to_string(),
    ];
    let command: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    // Standard error on a terminal (script's), standard output to a file.
    let shell = format!(
        "stty cols 160 rows 40; exec {} > {}",
        command.join(" "),
        quoted(&stdout.display().to_string())
    );
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &shell, "/dev/null"])
        .current_dir(repository())
        .env("NO_COLOR", "1")
        .output()
        .expect("script (util-linux) runs a command on a terminal of its own");
    let drawn = String::from_utf8_lossy(&output.stdout);
    let printed = std::fs::read_to_string(&stdout).unwrap();
    assert!(output.status.success(), "{drawn}\n{printed}");
    assert!(printed.contains("\n  verdict: PASSED\n"), "{printed}");
    // The live lines were drawn, one after the other on one line, and none stays.
    assert!(drawn.matches("err=").count() >= 3, "{drawn:?}");
    let mut screen = Screen::new(160);
    screen.feed(&drawn);
    let shown = screen.shown();
    assert!(
        shown
            .iter()
            .all(|l| !l.contains("err=") && !l.contains(" ops")),
        "{shown:#?}\n{drawn:?}"
    );
    assert!(!printed.contains('\u{1b}'), "{printed}");
}
