//! Files no input can turn against sofabench (issue 13): devices, folders and huge files
//! given as inputs end at once with exit 2 and one message; result files are never
//! written two formats to one file, through a symlink, or in half on a full disk.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// An address where no server answers: the refusals here come before any connection.
const NOWHERE: &str = "--database_address=http://127.0.0.1:1";
const THRESHOLD: &str = "--threshold=error_rate < 50%";

/// Bad input, said quickly in one line that contains `words`.
fn assert_refused(run: &Run, words: &[&str]) {
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.took < Duration::from_secs(10), "took {:?}", run.took);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    for word in words {
        assert!(run.stderr.contains(word), "no {word:?} in {}", run.stderr);
    }
}

/// A file that claims `length` bytes without using the disk.
fn sparse(path: &Path, length: u64) {
    std::fs::File::create(path)
        .unwrap()
        .set_len(length)
        .unwrap();
}

#[test]
fn a_device_as_any_input_ends_at_once() {
    let device = "give a regular file or a pipe";
    let cases: [&[&str]; 4] = [
        &["check", THRESHOLD, "/dev/zero"],
        &["generate", "--schema=/dev/zero"],
        &["run", NOWHERE, "--config=/dev/zero"],
        &["run", NOWHERE, "--scenario=/dev/zero"],
    ];
    for args in cases {
        assert_refused(&sofabench(args), &["/dev/zero", "is a device", device]);
    }
}

#[test]
fn a_folder_as_an_input_is_refused() {
    let dir = scratch("files", "folder");
    let name = dir.display().to_string();
    let run = sofabench(&["check", THRESHOLD, &name]);
    assert_refused(&run, &[&name, "is a folder"]);
}

#[test]
fn inputs_over_their_limit_are_refused_without_reading_them() {
    let dir = scratch("files", "huge");
    let template = dir.join("huge.json");
    sparse(&template, 64 * 1024 * 1024 + 1);
    let schema = format!("--schema={}", template.display());
    let run = sofabench(&["generate", &schema]);
    assert_refused(
        &run,
        &["huge.json", "larger than 64 MiB", "give a smaller file"],
    );
    let result = dir.join("huge-result.json");
    sparse(&result, 1024 * 1024 * 1024 + 1);
    let run = sofabench(&["check", THRESHOLD, &result.display().to_string()]);
    assert_refused(&run, &["huge-result.json", "larger than 1024 MiB"]);
}

#[test]
fn merge_refuses_results_too_large_together_before_reading_any() {
    let dir = scratch("files", "merge-total");
    // Each under the 1 GiB of one result file, 3,000 MiB together; sparse, so they would
    // read as zeros: refused quickly means refused before reading.
    let names: Vec<String> = (0..3)
        .map(|i| {
            let path = dir.join(format!("node{i}.json"));
            sparse(&path, 1000 * 1024 * 1024);
            path.display().to_string()
        })
        .collect();
    let mut args = vec!["merge"];
    args.extend(names.iter().map(String::as_str));
    let run = sofabench(&args);
    assert_refused(
        &run,
        &[
            "the 3 results are 3000 MiB together: merge reads at most 2048 MiB",
            "merge fewer",
        ],
    );
    assert!(run.took < Duration::from_secs(2), "took {:?}", run.took);
}

/// A process killed while writing a result file leaves its temporary file; the next write
/// of that file on this machine removes it, since its process no longer runs.
#[test]
fn a_killed_writers_temporary_file_goes_at_the_next_write() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    let plain = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'));
    assert!(
        plain,
        "a host name the test spells as sofabench does: {host:?}"
    );
    let dir = scratch("files", "leftover");
    let mut ended = Command::new("true").spawn().unwrap();
    let pid = ended.id();
    ended.wait().unwrap();
    let leftover = dir.join(format!(".result.csv.sofabench-{host}-{pid}-0.tmp"));
    std::fs::write(&leftover, "half a CSV").unwrap();
    let unrelated = dir.join("notes.tmp");
    std::fs::write(&unrelated, "mine").unwrap();
    let fixture = repository().join("tests/fixtures/result-v2.json");
    let csv = format!("--csv={}", dir.join("result.csv").display());
    let run = sofabench(&["report", &fixture.display().to_string(), &csv]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(entries(&dir), ["notes.tmp", "result.csv"]);
}

#[test]
fn a_template_can_come_from_a_pipe() {
    let started = Instant::now();
    let output = Command::new("bash")
        .args([
            "-c",
            r#"exec "$0" generate --schema=<(echo '{"a": "x"}') --count=2"#,
            env!("CARGO_BIN_EXE_sofabench"),
        ])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 2);
}

/// What `sofabench generate -n 0` needs of address space with a tiny template (it
/// needs 9–12 MiB here: the binary, its libraries, a thread's stack).
const BASELINE_KIB: u64 = 16 * 1024;

/// One record of a large template, as JSON: every kind of value, nesting, a timestamp.
const RECORD_JSON: &str = r#"{"array1":[[0.0,0.0],{},true,null],"boolean1":true,"integer1":0,"obj1":{"array2":[],"obj2":{"boolean2":true}},"string1":"","when":"2013-07-01T12:00:00Z","counts":[0,1,2,3,4,5,6,7,8,9]}"#;

/// The same record in XML.
fn record_xml() -> String {
    let entry = |name: &str, value: &str| {
        format!("<entry><name>{name}</name><value>{value}</value></entry>")
    };
    let element = |value: &str| format!("<element>{value}</element>");
    let array = |values: &[&str]| {
        let elements: Vec<String> = values.iter().map(|v| element(v)).collect();
        format!("<array>{}</array>", elements.concat())
    };
    let floats = array(&["<float/>", "<float/>"]);
    let obj2 = format!("<object>{}</object>", entry("boolean2", "<boolean/>"));
    let obj1 = format!(
        "<object>{}{}</object>",
        entry("array2", "<array/>"),
        entry("obj2", &obj2)
    );
    [
        entry(
            "array1",
            &array(&[&floats, "<object/>", "<boolean/>", "<null/>"]),
        ),
        entry("boolean1", "<boolean/>"),
        entry("integer1", "<integer/>"),
        entry("obj1", &obj1),
        entry("string1", "<string/>"),
        entry("when", "<timestamp/>"),
        entry("counts", &array(&["<integer/>"; 10])),
    ]
    .concat()
}

/// A large template compiles within a small multiple of its size (issue 13): under an
/// address space of what sofabench needs anyway plus four times the file, a 12 MB template
/// of either format loads. Compiling one took 10 (XML) to 14 (JSON) times its size before
/// it was compiled as it is read (docs/PERFORMANCE.md, section 8), and this failed.
#[test]
fn a_large_template_compiles_within_four_times_its_size() {
    let dir = scratch("files", "large-template");
    // Named records, enough of them for 12.5 MB.
    let records = |record: &dyn Fn(usize) -> String| {
        let count = 12_500_000 / record(0).len() + 1;
        ((0..count).map(record).collect::<String>(), count)
    };
    let (members, _) = records(&|i| format!(",\"record{i:06}\":{RECORD_JSON}"));
    let json = format!("{{{}}}", &members[1..]);
    let xml_record = record_xml();
    let (entries, xml_records) = records(&|i| {
        format!(
            "<entry><name>record{i:06}</name><value><object>{xml_record}</object></value></entry>"
        )
    });
    let xml = format!("<object>{entries}</object>");
    for (name, text) in [("large.json", json), ("large.xml", xml)] {
        assert!(text.len() >= 12_500_000, "{name}: {} bytes", text.len());
        let path = dir.join(name);
        std::fs::write(&path, &text).unwrap();
        let schema = format!("--schema={}", path.display());
        let kib = BASELINE_KIB + 4 * text.len() as u64 / 1024;
        let run = bad_server::sofabench_within(kib, &["generate", &schema, "--count=0"]);
        assert_eq!(run.code, 0, "{name} under {kib} KiB: {}", run.stderr);
        assert!(run.stderr.is_empty(), "{}", run.stderr);
    }
    // The same templates generate documents (outside the limit: a document of a 12 MB
    // template is itself about that large).
    let schema = format!("--schema={}", dir.join("large.xml").display());
    let run = sofabench(&["generate", &schema, "--count=1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let document: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(document.as_object().map(|o| o.len()), Some(xml_records));
    assert_eq!(
        document["record000009"]["counts"]
            .as_array()
            .map(|a| a.len()),
        Some(10)
    );
}

#[test]
fn two_formats_in_one_file_are_refused_before_the_run() {
    let dir = scratch("files", "shared");
    let json = format!("--json={}", dir.join("r").display());
    let csv = format!("--csv={}/./r", dir.display());
    let run = sofabench(&["run", NOWHERE, &json, &csv]);
    assert_refused(&run, &["the JSON and CSV results would both be written to"]);
    assert!(entries(&dir).is_empty());
}

#[test]
fn a_dangling_symlink_is_not_written_through() {
    let dir = scratch("files", "symlink");
    let link = dir.join("result.json");
    std::os::unix::fs::symlink(dir.join("nowhere"), &link).unwrap();
    let json = format!("--json={}", link.display());
    let run = sofabench(&["run", NOWHERE, &json]);
    assert_refused(&run, &["result.json already exists", "--overwrite"]);
    assert_eq!(entries(&dir), ["result.json"]);
}

/// sofabench under `ulimit -f` (in KiB): writes past it fail as on a full disk.
fn sofabench_with_file_limit(kib: u32, args: &[&str]) -> Run {
    let started = Instant::now();
    let script = format!(r#"ulimit -f {kib}; exec "$0" "$@""#);
    let output = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_sofabench"))
        .args(args)
        .current_dir(repository())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: started.elapsed(),
    }
}

#[test]
fn a_full_disk_leaves_the_old_file_and_still_gives_the_verdict() {
    let server = PouchServer::start();
    let dir = scratch("files", "full");
    let result = dir.join("result.json");
    std::fs::write(&result, "old result").unwrap();
    let address = format!("--database_address={}", server.url);
    let json = format!("--json={}", result.display());
    let run = sofabench_with_file_limit(
        4,
        &[
            "run",
            &address,
            "--database_name=full",
            "--quiet",
            "--num_connections=2",
            "--num_documents_per_bulk_insert=50",
            "--num_bulk_insert_operations=2",
            "--num_crud_operations=50",
            "--interval=100ms",
            THRESHOLD,
            &json,
            "--overwrite",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("cannot write"), "{}", run.stderr);
    assert!(run.stderr.contains("result.json"), "{}", run.stderr);
    assert!(run.stdout.contains("THRESHOLDS:"), "{}", run.stdout);
    assert!(run.stdout.contains("PASS"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "old result");
    assert_eq!(entries(&dir), ["result.json"]);
}

#[test]
fn a_config_can_come_from_standard_input() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .args(["run", NOWHERE, "--config=-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"not_a_flag = 1\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-: unknown key \"not_a_flag\""), "{stderr}");
}

#[test]
fn a_run_killed_during_a_phase_keeps_the_phases_it_finished() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut child = spawn_sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=killed",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=2",
        "--num_documents_per_bulk_insert=10",
        "--duration=60s",
        "--json",
        json.to_str().unwrap(),
    ]);
    // The bulk insert phase ends within seconds; the CRUD phase would take a minute.
    assert!(
        wait_for(Duration::from_secs(30), || json.exists()),
        "no result file after the first phase"
    );
    child.kill().unwrap();
    let _ = child.wait();
    let result = sofabench::results::RunResult::read(&json).unwrap();
    assert!(
        result.interrupted,
        "a result written mid-run says it is not finished"
    );
    assert_eq!(result.phases.len(), 1);
    assert_eq!(result.phases[0].name, "bulk_insert");
    assert_eq!(result.phases[0].operations[0].documents, 40);
}

/// A server that takes connections and never answers them: a run against it stays at
/// its start for as long as its `--timeout`, and `connected` says whether anything came.
struct Silent {
    listener: std::net::TcpListener,
    address: String,
    /// The connections taken, held open: a closed one would end the run at once.
    taken: std::cell::RefCell<Vec<std::net::TcpStream>>,
}

impl Silent {
    fn start() -> Silent {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = format!(
            "--database_address=http://{}",
            listener.local_addr().unwrap()
        );
        Silent {
            listener,
            address,
            taken: Default::default(),
        }
    }

    /// Whether a client has connected since the last call (the kernel takes a connection
    /// before any accept).
    fn connected(&self) -> bool {
        let Ok((stream, _)) = self.listener.accept() else {
            return false;
        };
        self.taken.borrow_mut().push(stream);
        true
    }
}

/// sofabench with at most 60 s of wall-clock time.
fn bounded(args: &[&str]) -> Run {
    bad_server::sofabench_within(4 * 1024 * 1024, args)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// `--overwrite` once replaced a character device with a regular file (as root, `--json
/// /dev/null --overwrite` replaced /dev/null). Devices, FIFOs and sockets are refused as
/// any result file, with or without the flag, before anything is sent.
#[test]
fn a_device_fifo_or_socket_is_never_replaced_by_a_result() {
    let dir = scratch("files", "special");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let socket = dir.join("socket");
    let _socket = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    mkfifo(&out.join("result.read.hlog"));
    let server = Silent::start();
    let name = |p: &Path| p.display().to_string();
    let cases: [(Vec<String>, &str, &str); 5] = [
        (
            vec!["--json=/dev/null".into(), "--overwrite".into()],
            "/dev/null",
            "a character device",
        ),
        (
            vec!["--json=/dev/null".into()],
            "/dev/null",
            "a character device",
        ),
        (
            vec![format!("--csv={}", name(&fifo)), "--overwrite".into()],
            "fifo",
            "a FIFO",
        ),
        (
            vec![format!("--html={}", name(&socket)), "--overwrite".into()],
            "socket",
            "a socket",
        ),
        (
            vec![format!("--out={}", name(&out)), "--overwrite".into()],
            "result.read.hlog",
            "a FIFO",
        ),
    ];
    for (flags, path, what) in &cases {
        let mut args = vec!["run", &server.address, "--timeout=2s", "--quiet"];
        args.extend(flags.iter().map(String::as_str));
        let run = bounded(&args);
        assert_refused(
            &run,
            &[path, what, "never replaces a device, FIFO or socket"],
        );
        assert!(!server.connected(), "{flags:?}: the run sent something");
    }
    let fixture = repository().join("tests/fixtures/result-v2.json");
    let csv = format!("--csv={}", name(&fifo));
    let run = bounded(&["report", &name(&fixture), &csv, "--overwrite"]);
    assert_refused(&run, &["fifo", "a FIFO"]);
    use std::os::unix::fs::FileTypeExt;
    let kind = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
    assert!(kind(&fifo).is_fifo() && kind(&out.join("result.read.hlog")).is_fifo());
    assert!(kind(&socket).is_socket());
    assert!(kind(Path::new("/dev/null")).is_char_device());
    assert_eq!(entries(&dir), ["fifo", "out", "socket"]);
    assert_eq!(entries(&out), ["result.read.hlog"]);
}

/// Two runs started apart with one `--json` both said they wrote it, and one result was
/// lost. The first holds its files for its whole run (it rewrites them after each
/// phase), so the second is refused at its start, before it sends anything.
#[test]
fn a_second_run_given_a_file_another_run_writes_is_refused_at_its_start() {
    let dir = scratch("files", "two-runs");
    let json = dir.join("result.json");
    let json_flag = format!("--json={}", json.display());
    // The first run waits for the server's first answer with its files held.
    let first_server = Silent::start();
    let first = spawn_sofabench(&[
        "run",
        &first_server.address,
        "--timeout=50s",
        "--quiet",
        &json_flag,
    ]);
    assert!(
        wait_for(Duration::from_secs(30), || first_server.connected()),
        "the first run never reached its server"
    );
    let second_server = Silent::start();
    for extra in [&[][..], &["--overwrite"][..]] {
        let mut args = vec!["run", &second_server.address, "--timeout=2s", "--quiet"];
        args.push(&json_flag);
        args.extend(extra);
        let run = bounded(&args);
        assert_refused(
            &run,
            &[&json.display().to_string(), "another sofabench run"],
        );
        assert!(!second_server.connected(), "the second run sent something");
    }
    // Killed, the first run lets go of the file (the kernel ends its lock); the next run
    // takes it over, and leaves nothing behind.
    let mut first = first;
    first.kill().unwrap();
    let _ = first.wait();
    let run = bounded(&["run", NOWHERE, "--quiet", &json_flag]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        !run.stderr.contains("another sofabench run"),
        "{}",
        run.stderr
    );
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}
