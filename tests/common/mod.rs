//! Shared test fixtures: a PouchDB Server of our own per test, the sofabench binary, and
//! a small HTTP client to look at the database afterwards.
#![allow(dead_code)]

pub mod auth_server;
pub mod bad_server;
pub mod capacity_server;
pub mod couch_like;
pub mod counting_proxy;
pub mod cut_proxy;
pub mod db_info_server;
pub mod delay_proxy;
pub mod delay_server;
pub mod echo_server;
pub mod feed_proxy;
pub mod hostile_proxy;
pub mod http_request;
pub mod limiting_server;
pub mod page;
pub mod rewriting_server;
pub mod tls;

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder of our own under Cargo's temporary folder for tests, made empty; `test`
/// names the test file, `name` the test.
pub fn scratch(test: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{test}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in a folder, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kills the child when the test process dies, however it dies.
pub(crate) fn die_with_parent(command: &mut Command) {
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// Where a PouchDB Server keeps its documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// `-m`: in memory; fast, but not what users run.
    Memory,
    /// LevelDB files under its data directory: its default, what users run. It answers
    /// some `_bulk_docs` rows out of request order, which in memory never happens.
    Disk,
}

/// The admin a secured server is started with: out of admin party, every request that
/// changes the server needs these credentials, as on a production CouchDB.
pub const ADMIN: (&str, &str) = ("admin", "s3cret-pw");

const QUIET: &str = r#""log":{"file":"/dev/null","level":"none"}"#;

/// A PouchDB Server (from the pinned npm package) on a free port, in its own temporary
/// directory; stopped when dropped.
pub struct PouchServer {
    child: Child,
    /// The server's address, without credentials.
    pub url: String,
    pub port: u16,
    storage: Storage,
    config_path: PathBuf,
    /// `http://admin:…@host:port` when the server has an admin, else the same as `url`.
    pub admin_url: String,
    dir: tempfile::TempDir,
}

impl PouchServer {
    /// In memory, in admin party: the quickest server, for tests of the tool itself.
    pub fn start() -> PouchServer {
        Self::start_with_config(&format!("{{{QUIET}}}"))
    }

    pub fn start_with_config(config: &str) -> PouchServer {
        Self::launch(Storage::Memory, config, None)
    }

    /// On LevelDB, in admin party.
    pub fn on_disk() -> PouchServer {
        Self::launch(Storage::Disk, &format!("{{{QUIET}}}"), None)
    }

    /// With [`ADMIN`] configured, as users run a server: anonymous requests that change
    /// anything are refused, and tests must send the credentials.
    pub fn secured(storage: Storage) -> PouchServer {
        Self::secured_with(storage, "")
    }

    /// With [`ADMIN`] and more configuration: `extra` is JSON members added to the
    /// config file, e.g. `"couch_httpd_auth":{"timeout":2}`.
    pub fn secured_with(storage: Storage, extra: &str) -> PouchServer {
        let (user, password) = ADMIN;
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!(",{extra}")
        };
        let config = format!(r#"{{{QUIET},"admins":{{"{user}":"{password}"}}{extra}}}"#);
        Self::launch(storage, &config, Some(ADMIN))
    }

    fn launch(storage: Storage, config: &str, admin: Option<(&str, &str)>) -> PouchServer {
        let dir = tempfile::tempdir().unwrap();
        let config_path = dir.path().join("config.json");
        std::fs::write(&config_path, config).unwrap();
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}");
        let admin_url = match admin {
            Some((user, password)) => format!("http://{user}:{password}@127.0.0.1:{port}"),
            None => url.clone(),
        };
        let child = spawn_server(storage, port, &config_path, dir.path());
        let server = PouchServer {
            child,
            url,
            port,
            storage,
            config_path,
            admin_url,
            dir,
        };
        server.wait_until_up();
        server
    }

    fn wait_until_up(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if get(&format!("{}/", self.url)).0 == 200 {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("PouchDB Server did not come up at {}", self.url);
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port and data (a restart, as after a crash);
    /// returns when it answers. Documents survive on disk, not in memory.
    pub fn restart(&mut self) {
        self.kill();
        self.child = spawn_server(self.storage, self.port, &self.config_path, self.dir.path());
        self.wait_until_up();
    }

    /// Stops the process without ending it (SIGSTOP): a frozen server.
    pub fn freeze(&self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGSTOP) };
    }

    pub fn thaw(&self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGCONT) };
    }

    pub fn db(&self, name: &str) -> String {
        format!("{}/{}", self.url, name)
    }

    /// The last lines the server wrote on its standard error: why it died, when it did.
    pub fn last_words(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("server.err")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The database's URL with the admin's credentials, for checking it afterwards.
    pub fn admin_db(&self, name: &str) -> String {
        format!("{}/{}", self.admin_url, name)
    }
}

fn spawn_server(storage: Storage, port: u16, config: &Path, dir: &Path) -> Child {
    let binary = repository().join("node_modules/.bin/pouchdb-server");
    assert!(
        binary.exists(),
        "PouchDB Server is not installed: run `npm ci --ignore-scripts` (make test does it)"
    );
    let mut command = Command::new(binary);
    command.args(["-o", "127.0.0.1", "-p", &port.to_string(), "-n"]);
    if storage == Storage::Memory {
        command.arg("-m");
    }
    command
        .arg("-c")
        .arg(config)
        .arg("-d")
        .arg(format!("{}/", dir.display()))
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(server_log(dir));
    die_with_parent(&mut command);
    command.spawn().expect("start pouchdb-server")
}

/// Where the server's standard error goes: a file in its folder, appended to across
/// restarts, so that a test whose server died can say what it said last.
fn server_log(dir: &Path) -> Stdio {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.err"))
        .map_or_else(|_| Stdio::null(), Stdio::from)
}

impl Drop for PouchServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One HTTP request; returns the status and the JSON body (`Null` if it is not JSON).
pub fn request(method: &str, url: &str, body: Option<&Value>) -> (u16, Value) {
    let request = ureq::request(method, url)
        .timeout(Duration::from_secs(20))
        .set("Accept", "application/json");
    let result = match body {
        Some(body) => request.send_json(body.clone()),
        None => request.call(),
    };
    let response = match result {
        Ok(response) => response,
        Err(ureq::Error::Status(_, response)) => response,
        Err(error) => return (0, Value::String(error.to_string())),
    };
    let status = response.status();
    let text = response.into_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub fn get(url: &str) -> (u16, Value) {
    request("GET", url, None)
}

pub fn doc_count(db_url: &str) -> u64 {
    let (status, info) = get(db_url);
    assert_eq!(status, 200, "GET {db_url}: {info}");
    info["doc_count"].as_u64().unwrap()
}

/// Writes the database holds a trace of: each document's latest generation counts its
/// create, updates and delete.
pub fn writes_in(db_url: &str) -> u64 {
    changes(db_url).iter().map(|(_, g, _)| u64::from(*g)).sum()
}

/// A result file, as JSON.
pub fn result_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every document the database has seen, live or deleted: id → (latest generation, deleted).
pub fn changes(db_url: &str) -> Vec<(String, u32, bool)> {
    let (status, body) = get(&format!("{db_url}/_changes?style=all_docs"));
    assert_eq!(status, 200, "{body}");
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            let rev = change["changes"][0]["rev"].as_str().unwrap();
            let generation = rev.split('-').next().unwrap().parse().unwrap();
            let deleted = change["deleted"].as_bool().unwrap_or(false);
            (
                change["id"].as_str().unwrap().to_string(),
                generation,
                deleted,
            )
        })
        .collect()
}

/// The result of running the sofabench binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    /// The `count` column of an operation's rows in the service-time latency tables.
    pub fn count(&self, operation: &str) -> u64 {
        latency_rows(&self.stdout, "latency(ms)", operation)
            .iter()
            .map(|r| r[0] as u64)
            .sum()
    }

    pub fn errors(&self, operation: &str) -> u64 {
        latency_rows(&self.stdout, "latency(ms)", operation)
            .iter()
            .map(|r| r[1] as u64)
            .sum()
    }

    /// The value of an Iron Cushion field, e.g. `totalJsonBytesSent`, in each block.
    pub fn fields(&self, name: &str) -> Vec<String> {
        let prefix = format!("  {name}=");
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
            .collect()
    }
}

pub fn sofabench_in(dir: &Path, args: &[&str]) -> Run {
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_sofabench"));
    command.args(args).current_dir(dir).env("NO_COLOR", "1");
    // A developer's own login and node settings must not reach a test's runs (or help,
    // which shows an environment variable's value).
    for variable in [
        "SOFABENCH_USER",
        "SOFABENCH_PASSWORD",
        "SOFABENCH_NODE_COUNT",
        "JOB_COMPLETION_INDEX",
    ] {
        command.env_remove(variable);
    }
    die_with_parent(&mut command);
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("run sofabench");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took: started.elapsed(),
    }
}

pub fn sofabench(args: &[&str]) -> Run {
    sofabench_in(&repository(), args)
}

/// Standard output of a command line that must succeed.
pub fn printed(args: &[&str]) -> String {
    let run = sofabench(args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run.stdout
}

/// Starts sofabench without waiting for it.
pub fn spawn_sofabench(args: &[&str]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sofabench"));
    command
        .args(args)
        .current_dir(repository())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(&mut command);
    command.spawn().unwrap()
}

/// Starts sofabench with extra environment variables, without waiting for it.
pub fn spawn_sofabench_with_env(args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sofabench"));
    command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repository())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(&mut command);
    command.spawn().unwrap()
}

pub fn finish(child: Child) -> Run {
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took: started.elapsed(),
    }
}

/// Waits until `condition` holds, up to `limit`.
pub fn wait_for(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The rows of an operation in every latency table titled `title` (`latency(ms)` for
/// service time, `response(ms)`): [count, errors, mean, p50, p90, p99, p99.9, max].
pub fn latency_rows(stdout: &str, title: &str, operation: &str) -> Vec<Vec<f64>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let first = words.next();
        if first.is_some_and(|w| w.ends_with("(ms)")) {
            in_table = first == Some(title);
            continue;
        }
        // A table's rows are indented and end at the next line that is not a row.
        let is_row = line.starts_with("  ") && line.split_whitespace().count() == 9;
        if in_table && !is_row {
            in_table = false;
        }
        if in_table && first == Some(operation) {
            rows.push(
                words
                    .map(|w| w.replace(',', "").parse().unwrap_or(f64::NAN))
                    .collect(),
            );
        }
    }
    rows
}

/// The single row of an operation under `title`.
pub fn latency_row(stdout: &str, title: &str, operation: &str) -> Vec<f64> {
    let rows = latency_rows(stdout, title, operation);
    assert_eq!(
        rows.len(),
        1,
        "one {operation} row under {title} expected:\n{stdout}"
    );
    rows.into_iter().next().unwrap()
}
