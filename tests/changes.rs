//! `_changes` consumers against PouchDB Server on disk with an admin: every write the
//! run made is seen on every feed kind, with its latency; and against a proxy whose
//! feeds misbehave: each trouble is counted, the consumer reconnects from where it
//! stood, nothing hangs and memory stays bounded.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::feed_proxy::{FeedProxy, Trouble};
use common::result_json as result;
use common::*;
use serde_json::Value;

const CONSUMERS: u64 = 2;

fn field(changes: &Value, name: &str) -> u64 {
    changes[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} in {changes}"))
}

/// The sum of a figure over the phases' consumers.
fn total(result: &Value, name: &str) -> u64 {
    phases(result).iter().map(|c| field(c, name)).sum()
}

fn phases(result: &Value) -> Vec<&Value> {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["changes"])
        .collect()
}

/// Iron Cushion's two steps with consumers; returns the result and the text.
fn run_with(address: &str, database: &str, extra: &[&str], json: &Path) -> (Value, String) {
    let mut args = vec![
        "run".to_string(),
        format!("--database_address={address}"),
        format!("--database_name={database}"),
        "--quiet".to_string(),
        "--num_connections=2".to_string(),
        "--num_bulk_insert_operations=1".to_string(),
        "--num_documents_per_bulk_insert=20".to_string(),
        "--num_crud_operations=40".to_string(),
        "--changes-grace=30s".to_string(),
        "--json".to_string(),
        json.to_str().unwrap().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = sofabench(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    (result(json), run.stdout)
}

fn every_write_is_seen(feed: &str) {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let database = format!("changes-{feed}");
    let consumers = CONSUMERS.to_string();
    let (result, text) = run_with(
        &server.admin_url,
        &database,
        &["--changes-consumers", &consumers, "--changes-feed", feed],
        &json,
    );
    let made = writes_in(&server.admin_db(&database));
    assert!(made > 60, "{made} writes");
    assert_eq!(total(&result, "writes_tracked"), made, "{text}");
    for changes in phases(&result) {
        assert_eq!(changes["feed"], feed);
        let tracked = field(changes, "writes_tracked");
        let seen = changes["latency"]["count"].as_u64().unwrap();
        // Every (write, consumer) pair: seen with its latency, or through a later
        // revision of its document (a feed names only the latest).
        assert_eq!(
            seen + field(changes, "superseded"),
            tracked * CONSUMERS,
            "{changes}"
        );
        assert!(seen > 0);
        for none in [
            "missing_writes",
            "missing_sightings",
            "writes_untracked",
            "unmatched",
        ] {
            assert_eq!(field(changes, none), 0, "{none}: {changes}");
        }
        assert_eq!(changes["troubles"]["reconnects"], 0, "{changes}");
        assert!(changes["latency"]["max_ms"].as_f64().unwrap() > 0.0);
        assert!(
            changes["latency"]["histogram"]
                .as_str()
                .is_some_and(|h| !h.is_empty())
        );
    }
    assert!(
        text.contains(&format!("changes feed: 2 {feed} consumers")),
        "{text}"
    );
    assert!(text.contains("none missing"), "{text}");
}

#[test]
fn every_write_is_seen_on_a_continuous_feed() {
    every_write_is_seen("continuous");
}

#[test]
fn every_write_is_seen_on_a_longpoll_feed() {
    every_write_is_seen("longpoll");
}

#[test]
fn every_write_is_seen_on_a_normal_feed() {
    every_write_is_seen("normal");
}

/// The largest resident set of `pid` seen so far, in KiB.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn misbehaving_feeds_are_counted_and_followed_again_from_the_last_sequence() {
    let server = PouchServer::secured(Storage::Disk);
    let endless = 256 * 1024 * 1024;
    let proxy = FeedProxy::start(
        server.port,
        &[
            Trouble::Stall(Duration::from_secs(10)),
            Trouble::ResetMidLine,
            Trouble::EndlessLine(endless),
            Trouble::Garbage,
        ],
    );
    let (user, password) = ADMIN;
    let address = proxy
        .url
        .replace("http://", &format!("http://{user}:{password}@"));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let database = "changes-troubles";
    let started = Instant::now();
    let child = spawn_sofabench(&[
        "run",
        &format!("--database_address={address}"),
        &format!("--database_name={database}"),
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=20",
        "--num_crud_operations=40",
        "--changes-consumers=1",
        "--changes-heartbeat=200ms",
        "--changes-grace=30s",
        "--json",
        json.to_str().unwrap(),
    ]);
    let pid = child.id();
    let mut peak = 0;
    while std::fs::metadata(format!("/proc/{pid}/status")).is_ok()
        && started.elapsed() < Duration::from_secs(120)
    {
        peak = peak.max(resident_kib(pid).unwrap_or(0));
        if std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z ")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = finish(child);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The stall alone takes 1.4 s to be seen (twice the heartbeat and a second): no
    // trouble made the run wait for its end.
    assert!(started.elapsed() < Duration::from_secs(60), "it hung");
    assert_eq!(proxy.left(), 0, "every trouble was met");
    let result = result(&json);
    let troubles: Vec<&Value> = phases(&result).iter().map(|c| &c["troubles"]).collect();
    let count = |name: &str| -> u64 { troubles.iter().map(|t| t[name].as_u64().unwrap()).sum() };
    assert_eq!(count("stalls"), 1, "{troubles:?}");
    assert_eq!(count("resets"), 1, "{troubles:?}");
    assert_eq!(count("too_long"), 1, "{troubles:?}");
    assert_eq!(count("bad_answers"), 1, "{troubles:?}");
    assert_eq!(count("reconnects"), 4, "{troubles:?}");
    // The consumer gave up on the endless line at its bound, not at its end.
    let sent = *proxy.endless_sent.lock().unwrap();
    assert!(sent < endless / 4, "{sent} bytes of one line were read");
    eprintln!("peak resident set: {peak} KiB; endless line cut after {sent} bytes");
    assert!(
        peak > 0 && peak < 160 * 1024,
        "peak resident set {peak} KiB"
    );
    // Reconnecting from the last sequence lost nothing.
    let made = writes_in(&server.admin_db(database));
    assert_eq!(total(&result, "writes_tracked"), made);
    assert_eq!(total(&result, "missing_writes"), 0, "{}", run.stdout);
    assert!(
        run.stdout.contains("1 stalls (no heartbeat)"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_scenario_phase_takes_its_own_consumers_with_documents() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("changes.toml");
    std::fs::write(
        &scenario,
        r#"
[[phase]]
name = "writes"
mix = { create = 3, update = 1 }
total = 60
connections = 2
changes = { consumers = 1, feed = "longpoll", include_docs = true, heartbeat = "500ms", grace = "30s" }

[[phase]]
name = "reads"
mix = { read = 1 }
total = 10
connections = 1
"#,
    )
    .unwrap();
    let json = dir.path().join("result.json");
    let database = "changes-scenario";
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={database}"),
        "--quiet",
        "--scenario",
        scenario.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);
    let writes = &result["phases"][0]["changes"];
    assert_eq!(
        (&writes["include_docs"], &writes["feed"]),
        (&Value::Bool(true), &Value::from("longpoll"))
    );
    assert_eq!(writes["heartbeat_ms"], 500);
    assert_eq!(
        field(writes, "writes_tracked"),
        writes_in(&server.admin_db(database))
    );
    assert_eq!(field(writes, "missing_writes"), 0, "{writes}");
    assert!(result["phases"][1].get("changes").is_none());
    assert!(
        run.stdout
            .contains("longpoll consumer, heartbeat 500 ms, include_docs"),
        "{}",
        run.stdout
    );
}

/// PouchDB Server takes `filter=_selector` for a design document's name, and 4.2.0 dies
/// of an uncaught error when asked: the run stops with a message before asking, and the
/// server lives on.
#[test]
fn a_selector_the_server_cannot_filter_by_stops_the_run_clearly() {
    let server = PouchServer::secured(Storage::Disk);
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=changes-selector",
        "--quiet",
        "--num_connections=1",
        "--num_bulk_insert_operations=1",
        "--num_crud_operations=5",
        "--changes-consumers=1",
        "--changes-selector",
        r#"{"kind":"order"}"#,
    ]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("PouchDB Server does not filter changes feeds by selector"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(ADMIN.1), "{}", run.stderr);
    std::thread::sleep(Duration::from_millis(500));
    let (status, _) = get(&server.admin_url);
    assert_eq!(status, 200, "the server did not survive the run");
}

#[test]
fn bad_changes_flags_are_refused_before_anything_is_sent() {
    let cases: [(&[&str], &str); 4] = [
        (&["--changes-consumers", "0"], "--changes-consumers"),
        (
            &["--changes-consumers", "1", "--changes-feed", "sse"],
            "is not a feed kind",
        ),
        (&["--changes-heartbeat", "1ms"], "--changes-heartbeat"),
        (
            &["--changes-include-docs"],
            "give --changes-consumers N too",
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["run", "--database_address=http://127.0.0.1:1", "--quiet"];
        args.extend_from_slice(flags);
        let run = sofabench(&args);
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{flags:?}: {}", run.stderr);
    }
}

#[test]
fn the_built_in_scenario_follows_its_writes_with_the_flags_feed() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let database = "changes-builtin";
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        &format!("--database_name={database}"),
        "--quiet",
        "--scenario=changes",
        "--duration=3s",
        "--rate=100",
        "--num_connections=2",
        "--num_documents_per_bulk_insert=20",
        "--changes-feed=normal",
        "--csv",
        dir.path().join("result.csv").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&json);
    assert!(
        result["phases"][0].get("changes").is_none(),
        "the load has none"
    );
    let writes = &result["phases"][1]["changes"];
    assert_eq!(
        (&writes["feed"], &writes["consumers"]),
        (&Value::from("normal"), &Value::from(2))
    );
    // The load's 40 documents were written before the consumers started.
    // How many writes the server took in 3 s depends on the machine (300 at the rate,
    // about 130 beside busy loops, 18 with other builds beside them too); each must be
    // followed.
    let made = writes_in(&server.admin_db(database)) - 40;
    assert!(made > 0, "{made}");
    assert_eq!(field(writes, "writes_tracked"), made);
    assert_eq!(field(writes, "missing_writes"), 0, "{writes}");
    let intervals = writes["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2, "{writes}");
    assert!(
        intervals
            .iter()
            .any(|i| i["changes_per_second"].as_f64().unwrap() > 0.0),
        "{writes}"
    );
    let csv = std::fs::read_to_string(dir.path().join("result.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let open = header
        .iter()
        .position(|c| *c == "changes_open_feeds")
        .unwrap();
    assert_eq!(
        header[open - 2..=open],
        [
            "changes_per_second",
            "changes_lag_seconds",
            "changes_open_feeds"
        ]
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("changes,") && l.split(',').nth(open) == Some("2")),
        "{csv}"
    );
}

/// How many of a phase's drawn intervals (not shorter than half its longest) have a
/// consumers' sample within half an interval of their end, and how many sizes (file,
/// active) their disk looks gave.
fn drawn_beside(phase: &Value) -> (u64, u64) {
    let intervals = phase["intervals"].as_array().unwrap();
    let number = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let longest = intervals
        .iter()
        .map(|i| number(i, "length_seconds"))
        .fold(0.0, f64::max);
    let drawn: Vec<&Value> = intervals
        .iter()
        .filter(|i| number(i, "length_seconds") >= longest / 2.0)
        .collect();
    let samples = phase["changes"]["intervals"].as_array().unwrap();
    let sampled = drawn
        .iter()
        .filter(|i| {
            let end = number(i, "elapsed_seconds");
            let half = number(i, "length_seconds") / 2.0;
            samples
                .iter()
                .any(|s| (number(s, "elapsed_seconds") - end).abs() < half)
        })
        .count();
    let sizes = drawn
        .iter()
        .map(|i| {
            ["file", "active"]
                .iter()
                .filter(|k| i["disk"][k].is_u64())
                .count()
        })
        .sum::<usize>();
    (sampled as u64, sizes as u64)
}

#[test]
fn the_html_page_charts_the_consumers_and_the_disk_on_the_phases_time_axis_in_chromium() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.admin_url),
        "--database_name=changes-page",
        "--quiet",
        "--num_connections=2",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=20",
        "--duration=2s",
        "--interval=250ms",
        "--changes-consumers=2",
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = result(&out.join("result.json"));
    let crud = &result["phases"][1];
    let (sampled, sizes) = drawn_beside(crud);
    assert!(sampled >= 4 && sizes >= 4, "{sampled} {sizes}: {crud}");

    let dom = page::render_in_chromium(&out.join("result.html"), "report-changes");
    let crud = |kind: &str| page::drawn_in_phase(&dom, 1, kind);
    // Each sampled interval draws the rate and the lag; each look, the sizes it gave
    // (PouchDB Server gives the file's, not the active size).
    assert_eq!(crud("changes"), Some(2 * sampled));
    assert_eq!(crud("disk"), Some(sizes));
    // PouchDB Server has `_active_tasks` (none running), not `_node/_local/_system`: a
    // point for each drawn interval a look at it landed beside (a busy machine makes
    // fewer looks than the 8 intervals).
    let looked = looked_at_tasks(&result["phases"][1]);
    assert!(looked >= 1, "{}", result["phases"][1]);
    assert_eq!(crud("server-work"), Some(looked));
    assert_eq!(crud("server-memory"), None);
    assert!(!dom.contains("data-chart=\"server-memory\""));
}

/// The phase's drawn intervals (at least half the longest) that carry a look at the
/// server's tasks.
fn looked_at_tasks(phase: &Value) -> u64 {
    let intervals = phase["intervals"].as_array().unwrap();
    let length = |i: &Value| i["length_seconds"].as_f64().unwrap();
    let longest = intervals.iter().map(length).fold(0.0, f64::max);
    intervals
        .iter()
        .filter(|i| length(i) >= longest / 2.0)
        .filter(|i| {
            i["server"]
                .as_array()
                .is_some_and(|nodes| nodes.iter().any(|n| n.get("tasks").is_some()))
        })
        .count() as u64
}

/// Writes a result says its node made: documents of the writing operations.
fn writes_made(result: &Value) -> u64 {
    let writing = ["bulk_insert", "create", "update", "delete"];
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["operations"].as_array().unwrap())
        .filter(|o| writing.contains(&o["operation"].as_str().unwrap()))
        .map(|o| o["documents"].as_u64().unwrap())
        .sum()
}

#[test]
fn with_two_client_machines_the_first_follows_the_feed_for_its_own_writes() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = |i: u64| dir.path().join(format!("node{i}.json"));
    let database = "changes-nodes";
    let address = format!("--database_address={}", server.admin_url);
    let children: Vec<_> = (0..2)
        .map(|i| {
            let json = format!("--json={}", json(i).display());
            let index = format!("--node-index={i}");
            let args = [
                "run",
                &address,
                "--database_name=changes-nodes",
                "--quiet",
                "--reuse",
                "--node-count=2",
                &index,
                "--num_connections=2",
                "--num_bulk_insert_operations=1",
                "--num_documents_per_bulk_insert=20",
                "--num_crud_operations=40",
                "--changes-consumers=2",
                "--changes-grace=30s",
                &json,
            ];
            spawn_sofabench(&args)
        })
        .collect();
    let runs: Vec<Run> = children.into_iter().map(finish).collect();
    for run in &runs {
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    }
    let (first, second) = (result(&json(0)), result(&json(1)));
    // The second machine wrote and followed nothing.
    assert!(phases(&second).iter().all(|c| c.is_null()), "{second}");
    let (mine, theirs) = (writes_made(&first), writes_made(&second));
    assert!(mine > 60 && theirs > 60, "{mine} {theirs}");
    assert_eq!(writes_in(&server.admin_db(database)), mine + theirs);
    // The first tracked exactly its own writes, and saw every one of them.
    assert_eq!(total(&first, "writes_tracked"), mine);
    assert_eq!(total(&first, "missing_writes"), 0);
    for changes in phases(&first) {
        assert_eq!(changes["client_nodes"], 2, "{changes}");
    }
    assert!(
        runs[0].stdout.contains("(1 of 2 client machines"),
        "{}",
        runs[0].stdout
    );

    // The merge keeps the first machine's feed figures.
    let merged = dir.path().join("merged.json");
    let merge = sofabench(&[
        "merge",
        json(0).to_str().unwrap(),
        json(1).to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(merge.code, 0, "{}\n{}", merge.stdout, merge.stderr);
    let merged = result(&merged);
    assert_eq!(phases(&merged), phases(&first));
    assert!(
        merge.stdout.contains("1 of 2 client machines"),
        "{}",
        merge.stdout
    );
}
