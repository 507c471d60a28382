//! Result files in every format, from one small run against a real PouchDB Server: each is
//! read back with the library that reads that format, `sofabench report` makes them again
//! from the JSON, and the HTML page is rendered in headless Chromium.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine as _;
use common::page::{chart_attribute, drawn, render_in_chromium};
use common::*;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use sofabench::results::{PhaseResult, RunResult, histogram};

const CSV_COLUMNS: [&str; 31] = [
    "phase",
    "end_ms",
    "elapsed_seconds",
    "operation",
    "succeeded",
    "failed",
    "timeouts",
    "throughput",
    "p50_ms",
    "p99_ms",
    "cpu",
    "late",
    "rate_limited",
    "retried_429",
    "server_requests",
    "server_request_p99_ms",
    "server_memory_bytes",
    "server_run_queue",
    "server_tasks",
    "changes_per_second",
    "changes_lag_seconds",
    "changes_open_feeds",
    "disk_file_bytes",
    "disk_active_bytes",
    "disk_external_bytes",
    "disk_doc_count",
    "bytes_sent",
    "bytes_received",
    "replication_docs_per_second",
    "replication_lag_seconds",
    "replication_jobs_docs_written",
];

/// The `--out` folder of one small run with both phases, shared by the tests here.
fn run_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let server = PouchServer::start();
        let out = scratch("export", "run").join("out");
        let address = format!("--database_address={}", server.url);
        let out_flag = format!("--out={}", out.display());
        let run = sofabench(&[
            "run",
            &address,
            "--database_name=export",
            "--quiet",
            "--seed=5",
            "--json_document_schema_filename=examples/ironcushion.json",
            "--num_connections=4",
            "--num_documents_per_bulk_insert=250",
            "--num_bulk_insert_operations=3",
            "--num_crud_operations=150",
            "--interval=100ms",
            &out_flag,
        ]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        out
    })
}

fn result() -> RunResult {
    RunResult::read(&run_dir().join("result.json")).unwrap()
}

/// The built-in read-ratio sweep, short, against a PouchDB Server on disk with an admin
/// (as users run one): its `--out` folder, and how many documents the database holds
/// afterwards.
fn sweep_dir() -> &'static (PathBuf, u64) {
    static DIR: OnceLock<(PathBuf, u64)> = OnceLock::new();
    DIR.get_or_init(|| {
        let server = PouchServer::secured(Storage::Disk);
        let out = scratch("export", "sweep").join("out");
        let run = sofabench(&[
            "run",
            &format!("--database_address={}", server.admin_url),
            "--database_name=sweep",
            "--quiet",
            "--seed=7",
            "--scenario=read-ratio-sweep",
            "--num_connections=2",
            "--total-operations=60",
            "--interval=100ms",
            &format!("--out={}", out.display()),
        ]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        let documents = doc_count(&server.admin_db("sweep"));
        (out, documents)
    })
}

fn hlog_names(dir: &Path) -> Vec<String> {
    let mut names = entries(dir);
    names.retain(|n| n.ends_with(".hlog"));
    names
}

/// Every histogram of an interval log, with its start (seconds after BaseTime).
fn read_hlog(path: &Path) -> Vec<(f64, Histogram<u64>)> {
    let bytes = std::fs::read(path).unwrap();
    let mut histograms = Vec::new();
    let mut base_times = 0;
    for entry in IntervalLogIterator::new(&bytes) {
        match entry.unwrap_or_else(|e| panic!("{}: {e:?}", path.display())) {
            LogEntry::Interval(interval) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .unwrap();
                let h: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut raw.as_slice())
                    .unwrap();
                // The max column is in milliseconds (MaxValueDivisor 1000).
                assert!(
                    (interval.max() - h.max() as f64 / 1000.0).abs() < 0.001,
                    "{}",
                    path.display()
                );
                histograms.push((interval.start_timestamp().as_secs_f64(), h));
            }
            LogEntry::BaseTime(_) => base_times += 1,
            LogEntry::StartTime(_) => {}
        }
    }
    assert_eq!(base_times, 1, "{}", path.display());
    histograms
}

#[test]
fn every_format_is_written_and_reads_back() {
    let dir = run_dir();
    let result = result();
    assert_eq!(result.phases.len(), 2);
    let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["bulk_insert", "crud"]);
    assert!(result.phases.iter().all(|p| p.intervals.len() >= 2));

    // CSV: the header, then one row per interval and operation of its phase.
    let mut reader = csv::Reader::from_path(dir.join("result.csv")).unwrap();
    assert_eq!(reader.headers().unwrap(), CSV_COLUMNS.as_slice());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut expected = 0;
    // Rows come in the result's order: phase, interval, operation. Taken in turn, not
    // looked up by end time, which two intervals may share (a last sample within the
    // millisecond of the tick before it).
    let mut next_row = rows.iter();
    for phase in &result.phases {
        let operations: Vec<&str> = phase
            .operations
            .iter()
            .map(|o| o.operation.as_str())
            .collect();
        expected += phase.intervals.len() * operations.len();
        for interval in &phase.intervals {
            for name in &operations {
                let row = next_row
                    .next()
                    .unwrap_or_else(|| panic!("no row for {} {name}", phase.name));
                assert_eq!(
                    (&row[0], &row[1], &row[3]),
                    (
                        phase.name.as_str(),
                        interval.end_ms.to_string().as_str(),
                        *name
                    )
                );
                let op = interval.operations.iter().find(|o| o.operation == *name);
                let succeeded = op.map_or(0, |o| o.succeeded);
                assert_eq!(row[4].parse::<u64>().unwrap(), succeeded);
                assert_eq!(row[5].parse::<u64>().unwrap(), op.map_or(0, |o| o.failed));
                assert_eq!(row[11].parse::<u64>().unwrap(), interval.late);
                assert_eq!(&row[12], "0", "no 429 from PouchDB Server");
                assert_eq!(&row[13], "0");
                // The database's sizes as the interval looked at them; empty where
                // unknown (PouchDB Server has no active or external size).
                let file = interval.disk.as_ref().and_then(|d| d.file);
                assert_eq!(
                    row[22].to_string(),
                    file.map_or(String::new(), |f| f.to_string())
                );
                assert_eq!((&row[23], &row[24]), ("", ""));
                // No changes consumers in this run.
                assert_eq!((&row[19], &row[20], &row[21]), ("", "", ""));
                if succeeded > 0 {
                    let p99: f64 = row[9].parse().unwrap();
                    assert!((p99 - op.unwrap().p99_ms).abs() < 0.001);
                }
            }
        }
    }
    assert_eq!(rows.len(), expected);
    let total: u64 = rows.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    let succeeded: u64 = result
        .phases
        .iter()
        .flat_map(|p| &p.operations)
        .map(|o| o.succeeded)
        .sum();
    assert_eq!(total, succeeded, "the intervals add up to the phases");
    // Each operation's bytes over the intervals add up to its phase's.
    for phase in &result.phases {
        for op in &phase.operations {
            let of_op = rows
                .iter()
                .filter(|r| &r[0] == phase.name.as_str() && &r[3] == op.operation.as_str());
            let (sent, received) = of_op.fold((0, 0), |(s, r), row| {
                (
                    s + row[26].parse::<u64>().unwrap(),
                    r + row[27].parse::<u64>().unwrap(),
                )
            });
            assert_eq!((sent, received), (op.bytes_sent, op.bytes_received));
            assert!(received > 0, "{}", op.operation);
        }
    }

    // One interval log per operation, each interval's histogram as the JSON has it.
    assert_eq!(
        hlog_names(dir),
        [
            "result.bulk_insert.hlog",
            "result.create.hlog",
            "result.delete.hlog",
            "result.read.hlog",
            "result.update.hlog"
        ]
    );
    for phase in &result.phases {
        for op in &phase.operations {
            let path = dir.join(format!("result.{}.hlog", op.operation));
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains("microseconds"), "{text}");
            let logged = read_hlog(&path);
            assert_eq!(logged.len(), phase.intervals.len(), "{}", path.display());
            for ((start, h), interval) in logged.iter().zip(&phase.intervals) {
                let in_json = interval
                    .operations
                    .iter()
                    .find(|o| o.operation == op.operation);
                assert_eq!(h.len(), in_json.map_or(0, |o| o.succeeded));
                if let Some(in_json) = in_json {
                    assert_eq!(h, &histogram::decode(&in_json.histogram).unwrap());
                }
                let expected_start = interval.elapsed_seconds - interval.length_seconds;
                assert!(
                    (start - expected_start).abs() < 0.002,
                    "{start} {expected_start}"
                );
            }
            let all: u64 = logged.iter().map(|(_, h)| h.len()).sum();
            assert_eq!(all, op.succeeded, "{}", op.operation);
        }
    }

    // Each interval keeps the documents its bulk inserts stored; they add up.
    let bulk = &result.phases[0];
    let in_intervals: u64 = bulk
        .intervals
        .iter()
        .flat_map(|i| &i.operations)
        .map(|o| o.documents.expect("bulk inserts keep their documents"))
        .sum();
    assert_eq!(
        in_intervals,
        4 * 3 * 250,
        "3 bulk inserts of 250 per connection"
    );
    assert_eq!(in_intervals, bulk.operations[0].documents);

    // The page holds its data and the charts' library; no address outside it.
    let page = std::fs::read_to_string(dir.join("result.html")).unwrap();
    assert!(page.contains("id=\"sofabench-data\"") && page.contains("uPlot"));
    assert!(!page.contains("<script src") && !page.contains("<link "));
    // The run: throughput, documents, latency, failures, CPU; no late starts without a
    // rate. The bulk phase adds documents to the three charts every phase has.
    assert_eq!(page.matches("data-run=").count(), 5);
    // (Charts of the server's figures and the disk's sizes beside them come and go with
    // what the server told in the phase's intervals; tests/changes.rs checks those.)
    let phase_charts = [
        ("0", &["throughput", "documents", "latency", "spectrum"][..]),
        ("1", &["throughput", "latency", "spectrum"][..]),
    ];
    for (phase, kinds) in phase_charts {
        for kind in [
            "throughput",
            "documents",
            "latency",
            "spectrum",
            "failures",
            "late",
        ] {
            let chart = format!("data-phase=\"{phase}\" data-chart=\"{kind}\"");
            assert_eq!(page.contains(&chart), kinds.contains(&kind), "{chart}");
        }
    }
    assert!(!page.contains("data-chart=\"run-late\""));
    // A closed-model run: its latency over time is from sending, not a response time
    // from a schedule it did not have; the interval log says the same.
    assert!(page.contains("successful operations only: the latency from sending to the answer"));
    assert!(!page.contains("the response time (from each operation's scheduled start)"));
    let log = std::fs::read_to_string(dir.join("result.read.hlog")).unwrap();
    assert!(log.contains("from the scheduled start under --rate and from sending otherwise"));
}

#[test]
fn report_makes_the_same_files_from_the_json() {
    let dir = run_dir();
    let again = scratch("export", "report");
    let json = dir.join("result.json");
    let csv = again.join("again.csv");
    let html = again.join("again.html");
    let logs = again.join("logs");
    let run = sofabench(&[
        "report",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--hlog-dir",
        logs.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("wrote "), "{}", run.stdout);
    assert!(!run.stdout.contains("CRUD BENCHMARK RESULTS"));
    let same = |a: &Path, b: &Path| {
        let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        if let Some(at) = (0..x.len().max(y.len())).find(|&i| x.get(i) != y.get(i)) {
            let around = |v: &[u8]| {
                String::from_utf8_lossy(&v[at.saturating_sub(80)..(at + 80).min(v.len())])
                    .into_owned()
            };
            panic!(
                "{} and {} differ at byte {at}:\n{}\n---\n{}",
                a.display(),
                b.display(),
                around(&x),
                around(&y)
            );
        }
    };
    same(&dir.join("result.csv"), &csv);
    same(&dir.join("result.html"), &html);
    assert_eq!(hlog_names(&logs), hlog_names(dir));
    for name in hlog_names(dir) {
        same(&dir.join(&name), &logs.join(&name));
    }

    // The text report, as the run printed it.
    let text = sofabench(&["report", json.to_str().unwrap(), "--text"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("BULK INSERT BENCHMARK RESULTS:"));
    assert!(text.stdout.contains("CRUD BENCHMARK RESULTS:"));
    let reads = result().phases[1]
        .operations
        .iter()
        .find(|o| o.operation == "read")
        .unwrap()
        .succeeded;
    assert_eq!(text.count("read"), reads);
    let bare = sofabench(&["report", json.to_str().unwrap()]);
    assert_eq!(bare.stdout, text.stdout, "text is the default");
}

#[test]
fn existing_files_are_refused_without_overwrite() {
    let dir = scratch("export", "refuse");
    let json = run_dir().join("result.json");
    // No server listens here: the check comes before anything is sent.
    let address = format!("--database_address=http://127.0.0.1:{}", free_port());
    for existing in ["result.csv", "result.html", "result.read.hlog"] {
        let out = dir.join(existing.replace('.', "_"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(existing), "keep").unwrap();
        let out_flag = format!("--out={}", out.display());
        let run = sofabench(&["run", &address, "--quiet", &out_flag]);
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(existing) && run.stderr.contains("--overwrite"),
            "{}",
            run.stderr
        );
        assert_eq!(std::fs::read_to_string(out.join(existing)).unwrap(), "keep");
    }
    let html = dir.join("page.html");
    std::fs::write(&html, "keep").unwrap();
    let run = sofabench(&[
        "run",
        &address,
        "--quiet",
        &format!("--html={}", html.display()),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);

    let report = |extra: &[&str]| {
        let mut args = vec![
            "report",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        sofabench(&args)
    };
    let refused = report(&[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("--overwrite"), "{}", refused.stderr);
    assert_eq!(std::fs::read_to_string(&html).unwrap(), "keep");
    let replaced = report(&["--overwrite"]);
    assert_eq!(replaced.code, 0, "{}", replaced.stderr);
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );

    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("result.create.hlog"), "keep").unwrap();
    let hlog = |extra: &[&str]| {
        let mut args = vec![
            "report",
            json.to_str().unwrap(),
            "--hlog-dir",
            logs.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        sofabench(&args)
    };
    assert_eq!(hlog(&[]).code, 2);
    assert_eq!(hlog(&["--overwrite"]).code, 0);
    assert_ne!(
        std::fs::read_to_string(logs.join("result.create.hlog")).unwrap(),
        "keep"
    );
}

#[test]
fn report_refuses_what_is_not_a_result() {
    let dir = scratch("export", "bad");
    let missing = dir.join("missing.json");
    let run = sofabench(&["report", missing.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("missing.json"), "{}", run.stderr);

    let invalid = dir.join("invalid.json");
    std::fs::write(&invalid, r#"{"schema": "sofabench-result/1", "phases": 3}"#).unwrap();
    let run = sofabench(&["report", invalid.to_str().unwrap(), "--csv", "x.csv"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("not a sofabench result"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("x.csv").exists() && !repository().join("x.csv").exists());
}

/// How many intervals the charts over time draw: each phase's intervals but those shorter
/// than half its longest (its cut-short last one), as every such chart's caption says.
fn drawable(phases: &[PhaseResult]) -> u64 {
    let drawn = |p: &PhaseResult| {
        let longest = p
            .intervals
            .iter()
            .map(|i| i.length_seconds)
            .fold(0.0, f64::max);
        let long = p
            .intervals
            .iter()
            .filter(|i| i.length_seconds >= longest / 2.0);
        long.count() as u64
    };
    phases.iter().map(drawn).sum()
}

#[test]
fn the_html_page_renders_its_charts_in_chromium() {
    let page = run_dir().join("result.html");
    let dom = render_in_chromium(&page, "report-run");
    // Two phases: every section open, every chart drawn, each with a canvas.
    let charts = std::fs::read_to_string(&page)
        .unwrap()
        .matches("data-chart=")
        .count();
    assert_eq!(dom.matches("class=\"uplot").count(), charts, "{dom}");
    assert_eq!(dom.matches("<canvas").count(), charts, "{dom}");
    // The run's overview, with data: a value per step point of both phases.
    let result = result();
    let all = drawable(&result.phases);
    assert!(all > 2, "a few intervals in each of the two phases");
    assert_eq!(drawn(&dom, "run-throughput"), [all]);
    assert_eq!(
        drawn(&dom, "run-documents"),
        [drawable(&result.phases[..1])]
    );
    for kind in ["run-latency", "run-cpu"] {
        let points = drawn(&dom, kind);
        assert!(points.len() == 1 && points[0] >= all, "{kind}: {points:?}");
    }
    assert!(drawn(&dom, "throughput").iter().all(|&n| n > 0));
    assert!(!dom.contains("elapsed"), "no placeholder in a legend");
    the_answer_comes_first_and_is_explained_once(&dom);
    captions_are_computed_from_each_phase(&dom, &result);
    // The run's latency is on a log scale exactly when its caption says its values span
    // more than tenfold (how far they span is the machine's; the rule is not).
    let caption_says_log = {
        let at = dom.find("data-chart=\"run-latency\"").unwrap();
        dom[dom[..at].rfind("<figure").unwrap()..at].contains("log scale")
    };
    let expected = if caption_says_log { "log" } else { "linear" };
    assert_eq!(
        chart_attribute(&dom, "run-latency", "data-scale"),
        [expected]
    );
}

/// The verdict and the table of phases before any chart; what every chart shares said
/// once, in the page's one note.
fn the_answer_comes_first_and_is_explained_once(dom: &str) {
    let verdict = dom
        .find("verdict: <strong>PASSED</strong>")
        .expect("a verdict");
    let phases = dom.find("<table class=\"phases\">").unwrap();
    let note = dom.find("class=\"legend-note\"").unwrap();
    let chart = dom.find("class=\"chart-box\"").unwrap();
    assert!(verdict < phases && phases < note && note < chart, "{dom}");
    assert_eq!(dom.matches("class=\"legend-note\"").count(), 1);
    assert_eq!(dom.matches("is left out rather than drawn").count(), 1);
    assert_eq!(
        dom.matches("each step to the right is one more nine")
            .count(),
        1
    );
}

/// Each phase's chart by percentile says where its lines end, from its own counts.
fn captions_are_computed_from_each_phase(dom: &str, result: &RunResult) {
    let captions: Vec<&str> = dom
        .match_indices("data-chart=\"spectrum\"")
        .map(|(at, _)| &dom[dom[..at].rfind("<figure").unwrap()..at])
        .collect();
    assert_eq!(captions.len(), 2);
    assert_ne!(captions[0], captions[1]);
    // 4 connections of 3 bulk inserts: 12, whose line ends at 100 - 100/12 %.
    assert!(
        captions[0].contains("bulk_insert 12 operations, 91.67 %"),
        "{}",
        captions[0]
    );
    for op in &result.phases[1].operations {
        let said = format!("{} {} operations", op.operation, op.latency.count);
        assert!(captions[1].contains(&said), "{said}: {}", captions[1]);
    }
}

/// Each interval's operations of `phase` timed anew: every one `ms` milliseconds.
fn all_timed(phase: &mut PhaseResult, ms: u64) {
    for op in phase.intervals.iter_mut().flat_map(|i| &mut i.operations) {
        let mut h = sofabench::metrics::recorder::new_histogram();
        h.record_n(ms * 1_000, op.succeeded).unwrap();
        op.p50_ms = ms as f64;
        op.p99_ms = ms as f64;
        op.histogram = histogram::encode(&h);
    }
}

/// The run's latency as Chromium draws it: linear while both phases' operations take
/// about as long, log once the bulk inserts take a hundred times the CRUD operations'.
#[test]
fn the_run_latency_goes_logarithmic_when_phases_differ_a_hundredfold_in_chromium() {
    let dir = scratch("export", "log-scale");
    let mut result = result();
    let scale_drawn = |result: &RunResult, name: &str| {
        let page = dir.join(format!("{name}.html"));
        std::fs::write(&page, sofabench::export::html::render(result)).unwrap();
        let dom = render_in_chromium(&page, &format!("report-{name}"));
        chart_attribute(&dom, "run-latency", "data-scale")
    };
    all_timed(&mut result.phases[0], 3);
    all_timed(&mut result.phases[1], 2);
    assert_eq!(scale_drawn(&result, "linear"), ["linear"]);
    all_timed(&mut result.phases[0], 200);
    assert_eq!(scale_drawn(&result, "log"), ["log"]);
}

#[test]
fn a_sweep_page_draws_the_swept_setting_and_the_reference_lines_in_chromium() {
    let (dir, documents) = sweep_dir();
    let result = RunResult::read(&dir.join("result.json")).unwrap();
    // Each phase knows its place in the sweep, and the database holds what it wrote.
    let ratios: Vec<u64> = result
        .phases
        .iter()
        .map(|p| {
            let point = p.sweep.as_ref().expect("a phase of the sweep");
            assert_eq!(point.series, "RR");
            point.value
        })
        .collect();
    assert_eq!(ratios, [0, 10, 25, 50, 75, 90, 95]);
    let created: u64 = result
        .phases
        .iter()
        .flat_map(|p| &p.operations)
        .filter(|o| o.operation == "create")
        .map(|o| o.documents)
        .sum();
    assert_eq!(*documents, created);

    let page = dir.join("result.html");
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.contains("<h3>titan-loadtest's result lines</h3>"));
    assert!(text.contains("<td>RR_50</td>"));
    let dom = render_in_chromium(&page, "report-sweep");
    // Seven phases: their sections start folded, so only the run's and the sweep's
    // charts are drawn (the run's five: no bulk inserts, no rate).
    assert_eq!(dom.matches("<canvas").count(), 4 + 2, "{dom}");
    assert_eq!(dom.matches("data-chart=\"throughput\"").count(), 7);
    assert_eq!(dom.matches("<details>").count(), 7);
    // A point per phase against the read ratio; the run's charts hold every phase.
    assert_eq!(drawn(&dom, "sweep-throughput"), [7]);
    let latency = drawn(&dom, "sweep-latency");
    assert!(latency.len() == 1 && latency[0] >= 7, "{latency:?}");
    // The run's throughput holds every interval the captions' rule draws. How many
    // intervals a phase of 60 operations takes is timing; the rule is not.
    let drawable = drawable(&result.phases);
    assert!(drawable >= 7, "every phase has an interval to draw");
    assert_eq!(drawn(&dom, "run-throughput"), [drawable]);
}

/// A phase named like a formula (`=HYPERLINK(...)`) ran as one when the CSV was opened in
/// a spreadsheet. Text cells that start with `=`, `+`, `-`, `@`, a tab or a carriage
/// return get a leading `'`; numbers stay numbers, and the JSON keeps the names as given.
#[test]
fn names_a_spreadsheet_would_run_are_written_as_text_in_the_csv() {
    let server = PouchServer::start();
    let dir = scratch("export", "formula");
    let scenario = dir.join("formula.toml");
    std::fs::write(
        &scenario,
        r#"
[[phase]]
name = '=HYPERLINK("http://x","y")'
mix = { bulk_insert = 1 }
batch_size = 10
total = 4
[[phase]]
name = "-crud"
mix = { create = 1, read = 1 }
total = 20
"#,
    )
    .unwrap();
    let csv = dir.join("result.csv");
    let json = dir.join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={}", server.url),
        "--database_name=formula",
        "--quiet",
        "--num_connections=2",
        "--interval=100ms",
        &format!("--scenario={}", scenario.display()),
        &format!("--csv={}", csv.display()),
        &format!("--json={}", json.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let phases: std::collections::BTreeSet<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(
        phases.into_iter().collect::<Vec<_>>(),
        [r#"'-crud"#, r#"'=HYPERLINK("http://x","y")"#]
    );
    for row in &rows {
        assert!(
            ["bulk_insert", "create", "read"].contains(&&row[3]),
            "{row:?}"
        );
        for (column, cell) in row.iter().enumerate().filter(|(c, _)| ![0, 3].contains(c)) {
            assert!(
                cell.is_empty() || cell.parse::<f64>().is_ok(),
                "{}: {cell:?} is not a number",
                CSV_COLUMNS[column]
            );
        }
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.lines()
            .all(|l| !l.starts_with(['=', '-']) && !l.starts_with("\"=")),
        "{text}"
    );
    // The result keeps the names as they were given.
    let names: Vec<String> = RunResult::read(&json)
        .unwrap()
        .phases
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, [r#"=HYPERLINK("http://x","y")"#, "-crud"]);
    // `report` makes the same file from the JSON.
    let again = dir.join("again.csv");
    let report = sofabench(&[
        "report",
        &json.display().to_string(),
        &format!("--csv={}", again.display()),
    ]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
}
