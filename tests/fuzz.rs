//! Property tests with generated and mutated input for every parser of untrusted text:
//! templates (JSON and XML), scenario files, `--config` files (TOML and JSON, through
//! everything `run` checks before it sends), threshold expressions, result files and the
//! histograms inside them (and `compare` of what they hold), HTTP/1.1 responses, a 429's `Retry-After`, CouchDB's
//! answers, and `_changes` feeds cut into chunks anywhere. None may panic, whatever it is given.
//!
//! CI runs proptest's default number of cases per property (256). To search longer:
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz`. A failure prints the input
//! that broke it (proptest shrinks it first); it then becomes a regression test here.

use std::time::{Duration, SystemTime};

use bytes::BytesMut;
use proptest::prelude::*;
use sofabench::analysis::compare::{Options, compare};
use sofabench::analysis::thresholds::Threshold;
use sofabench::driver::Method;
use sofabench::driver::http1::{BadResponse, Response, ResponseReader};
use sofabench::driver::lines::Lines;
use sofabench::driver::responses;
use sofabench::engine::changes::parse;
use sofabench::engine::rate_limit;
use sofabench::metrics::histogram;
use sofabench::report::run_text;
use sofabench::results::{RepetitionResult, RunResult, tally, upgrade};
use sofabench::scenario::{Layers, file};
use sofabench::template::{DocumentWriter, Template};

const JSON_TEMPLATE: &str = include_str!("../examples/ironcushion.json");
const XML_TEMPLATE: &str = include_str!("../examples/ironcushion.xml");

const SCENARIO: &str = r#"
description = "load, then reads"
rate = 100
[[phase]]
name = "load"
mix = { bulk_insert = 1 }
batch_size = 50
total = 20
[[phase]]
name = "reads"
mix = { read = 9, update = 1 }
duration = "3s"
keys = { zipfian = 0.9 }
sweep = { connections = [1, 10] }
compact_at = "1s"
"#;

/// A `--config` file that sets most kinds of flag: numbers, durations, sizes, a rate,
/// switches, repeated thresholds, an address with credentials.
const CONFIG_TOML: &str = r#"
database_address = "http://user:pw@127.0.0.1:1"
database_name = "fuzz"
num_connections = 4
num_documents_per_bulk_insert = 100
num_bulk_insert_operations = 2
num_crud_operations = 50
create_weight = 2
read_weight = 3
update_weight = 2
delete_weight = 1
timeout = "2s"
rate = 100.5
late-threshold = "5ms"
max-response-size = "8MB"
interval = "1s"
threshold = ["read.p99 < 20ms", "error_rate < 1%"]
seed = 7
quiet = true
id-prefix = "fz"
node-count = 2
node-index = 1
"#;

/// The same as JSON, with a scenario and its flags instead of Iron Cushion's.
const CONFIG_JSON: &str = r#"{"database_address": "http://127.0.0.1:1", "database_name": "fuzz",
 "scenario": "scaling", "writes": 10, "reads": 20, "batch-sizes": [1, 10], "duration": "3s",
 "num_connections": 2, "reconnect-for": "1s", "action-timeout": "1m", "failover": true,
 "total-operations": 1000, "threshold": "create.p50 < 1s", "recreate": true}"#;

/// Everything `run` checks before it sends, for a config file of `text` named `name`.
fn check_config(name: &str, text: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let args = ["sofabench", "run", "--config"].map(std::ffi::OsString::from);
    let mut args = args.to_vec();
    args.push(path.into_os_string());
    sofabench::cli::check_run(args).map_err(|e| e.to_string())
}

/// The configs the mutations start from pass, so that mutated ones get past the first
/// check.
#[test]
fn the_config_files_to_mutate_are_valid() {
    assert_eq!(check_config("base.toml", CONFIG_TOML), Ok(()));
    assert_eq!(check_config("base.json", CONFIG_JSON), Ok(()));
}

/// `text` with a few bytes replaced, inserted or removed: close enough to valid to get
/// deep into a parser, wrong enough to find its corners.
fn mutated(text: &'static str) -> impl Strategy<Value = String> {
    let edits = prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..8);
    edits.prop_map(move |edits| {
        let mut bytes = text.as_bytes().to_vec();
        for (at, kind, byte) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let at = at.index(bytes.len());
            match kind {
                0 => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ => {
                    bytes.remove(at);
                }
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// A template that compiles must write documents that are JSON.
fn writes_json(template: Template) {
    let writer = DocumentWriter::new(template, 7);
    for number in 0..3 {
        let mut out = Vec::new();
        writer.write(&mut out, number, 2, Some("id"), Some("1-a"));
        let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&out);
        assert!(parsed.is_ok(), "{}", String::from_utf8_lossy(&out));
    }
}

proptest! {
    #[test]
    fn json_templates_compile_or_say_why(text in mutated(JSON_TEMPLATE)) {
        if let Ok(template) = Template::from_json_str(&text, "fuzz.json") {
            writes_json(template);
        }
    }

    #[test]
    fn xml_templates_compile_or_say_why(text in mutated(XML_TEMPLATE)) {
        if let Ok(template) = Template::from_xml_str(&text, "fuzz.xml") {
            writes_json(template);
        }
    }

    #[test]
    fn scenario_files_parse_or_say_why(text in mutated(SCENARIO)) {
        let _ = file::parse(&text, "fuzz.toml", &Layers::default());
    }

    #[test]
    fn toml_config_files_check_or_say_why(text in mutated(CONFIG_TOML)) {
        let _ = check_config("fuzz.toml", &text);
    }

    #[test]
    fn json_config_files_check_or_say_why(text in mutated(CONFIG_JSON)) {
        let _ = check_config("fuzz.json", &text);
    }

    #[test]
    fn threshold_expressions_parse_or_say_why(text in "[a-z_*:.#<>=! 0-9%/sumx-]{0,40}") {
        let _ = Threshold::parse(&text);
    }

    #[test]
    fn histograms_decode_or_say_why(text in "[A-Za-z0-9+/=]{0,200}") {
        let _ = histogram::decode(&text);
    }

    #[test]
    fn mutated_histograms_decode_or_say_why(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in [1, 10, 1_000, 250_000] {
            h.record(v).unwrap();
        }
        let encoded = histogram::encode(&h);
        let mut bytes = base64_decode(&encoded);
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        let _ = histogram::decode(&base64_encode(&bytes));
    }

    #[test]
    fn couchdb_answers_parse_or_say_why(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = responses::read_rev(&bytes);
        let _ = responses::written_rev(&bytes);
        let _ = responses::bulk_rows(&bytes);
    }

    #[test]
    fn mutated_bulk_answers_parse_or_say_why(text in mutated(r#"[{"ok":true,"id":"a-0000000001","rev":"1-0123456789abcdef0123456789abcdef"},{"id":"a-0000000002","error":"conflict","reason":"Document update conflict."}]"#)) {
        let _ = responses::bulk_rows(text.as_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn result_files_read_or_say_why(text in mutated(Box::leak(a_result_file().into_boxed_str()))) {
        if let Ok(result) = serde_json::from_str::<RunResult>(&text)
            && let Ok(result) = upgrade(result)
        {
            for phase in &result.phases {
                let _ = tally::of_phase(phase);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `compare` reads results unchecked: whatever figures a result with repetitions holds,
    /// it compares them (and the report reads what `report` lets through).
    #[test]
    fn results_with_repetitions_compare_and_report_or_say_why(
        text in mutated(Box::leak(a_repeated_result_file().into_boxed_str()))
    ) {
        if let Ok(result) = serde_json::from_str::<RunResult>(&text)
            && let Ok(result) = upgrade(result)
        {
            let sides = [("a.json", &result), ("b.json", &result), ("c.json", &result)];
            let _ = compare(&sides, &Options::default());
            let readable = tally::check_readable(&result.phases, "r").is_ok()
                && result
                    .repetitions
                    .iter()
                    .all(|r| tally::check_readable(&r.phases, "r").is_ok());
            if readable {
                let _ = run_text(&result, sofabench::report::Detail::Verbose);
            }
        }
    }
}

/// The real run's result as one with three repetitions of it (`--runs 3`).
fn a_repeated_result_file() -> String {
    let mut result = RunResult::parse(&a_result_file(), "result-v2.json").unwrap();
    result
        .config
        .insert("runs".to_string(), serde_json::json!(3));
    result.repetitions = (1..=3)
        .map(|index| RepetitionResult {
            index,
            database_name: format!("db-run{index}"),
            id_prefix: format!("p-r{index}"),
            started_at: result.started_at.clone(),
            ended_at: result.ended_at.clone(),
            interrupted: index == 3,
            database_deleted: false,
            phases: result.phases.clone(),
        })
        .collect();
    result.to_json()
}

/// A result file of a real run (10 connections against PouchDB Server, schema 2).
fn a_result_file() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/result-v2.json"
    ))
    .expect("tests/fixtures/result-v2.json")
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Feeds `pieces` to a response reader one read at a time, as a socket would deliver
/// them; then the server closes. The read buffer never holds more than was sent.
fn read_pieces(pieces: &[Vec<u8>], limit: u64) -> Result<Option<Response>, BadResponse> {
    let mut reader = ResponseReader::new(Method::Get, limit);
    let mut buf = BytesMut::new();
    let mut sent = 0;
    for piece in pieces {
        buf.extend_from_slice(piece);
        sent += piece.len();
        if let Some(response) = reader.read(&mut buf)? {
            return Ok(Some(response));
        }
        assert!(buf.len() <= sent);
    }
    Ok(reader.end(&mut buf))
}

/// `bytes` cut at `cuts` (positions taken modulo its length).
fn split(bytes: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect()
}

/// A response carrying `body`: with a length, or in chunks of the given sizes; after an
/// interim `100 Continue` when `interim`.
fn response(body: &[u8], chunks: Option<&[usize]>, interim: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if interim {
        out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    out.extend_from_slice(b"HTTP/1.1 201 Created\r\nServer: fuzz\r\n");
    match chunks {
        None => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(body);
        }
        Some(sizes) => {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            let mut rest = body;
            let mut sizes = sizes.iter().cycle();
            while !rest.is_empty() {
                let n = (*sizes.next().unwrap()).clamp(1, rest.len());
                out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                out.extend_from_slice(&rest[..n]);
                out.extend_from_slice(b"\r\n");
                rest = &rest[n..];
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
    out
}

proptest! {
    #[test]
    fn any_bytes_in_any_pieces_read_or_say_why(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let _ = read_pieces(&split(&bytes, &cuts), 1 << 20);
    }

    #[test]
    fn mutated_responses_read_or_say_why(
        text in mutated("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n"),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let _ = read_pieces(&split(text.as_bytes(), &cuts), 64);
    }

    /// Whatever the framing and however the bytes arrive, the body read is the body sent,
    /// and a body over the limit is refused as too large.
    #[test]
    fn a_body_reads_back_whole_however_it_arrives(
        body in prop::collection::vec(any::<u8>(), 0..2_000),
        chunked in any::<bool>(),
        sizes in prop::collection::vec(1usize..700, 1..5),
        interim in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let bytes = response(&body, chunked.then_some(&sizes[..]), interim);
        let pieces = split(&bytes, &cuts);
        let read = read_pieces(&pieces, 2_000).unwrap().expect("a whole response");
        prop_assert_eq!(read.status, 201);
        prop_assert_eq!(&read.body[..], &body[..]);
        if !body.is_empty() {
            let refused = read_pieces(&pieces, body.len() as u64 - 1).unwrap_err();
            prop_assert!(refused.is_too_large(), "{}", refused);
        }
    }
}

/// The longest wait any `Retry-After` can make: the cap on a delay, or the longest backoff.
fn longest_wait() -> Duration {
    rate_limit::MOST_WAIT.max(rate_limit::MOST_BACKOFF)
}

/// Unix seconds `secs` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), from its RFC
/// 3339 form; the day's name is not checked by a reader, so any will do.
fn imf_fixdate(secs: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let text = sofabench::time::rfc3339::format(secs);
    let month: usize = text[5..7].parse().unwrap();
    format!(
        "Mon, {} {} {} {} GMT",
        &text[8..10],
        MONTHS[month - 1],
        &text[..4],
        &text[11..19]
    )
}

proptest! {
    #[test]
    fn any_retry_after_gives_a_bounded_wait(
        text in "\\PC{0,40}",
        retries in any::<u32>(),
        jitter in any::<f64>(),
        now in 0u64..1 << 40,
    ) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
        let wait = rate_limit::wait(Some(&text), retries, now, jitter);
        prop_assert!(wait.length <= longest_wait(), "{text:?}: {wait:?}");
    }

    #[test]
    fn mutated_http_dates_give_a_bounded_wait(
        text in mutated("Sun, 06 Nov 1994 08:49:37 GMT"),
        now in 0u64..1 << 40,
    ) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
        let wait = rate_limit::wait(Some(&text), 0, now, 0.5);
        prop_assert!(wait.length <= longest_wait(), "{text:?}: {wait:?}");
    }

    /// Every second from 1970 to 9999 written as an HTTP date reads back as itself.
    #[test]
    fn http_dates_read_back(secs in 0i64..253_402_300_800) {
        let text = imf_fixdate(secs);
        prop_assert_eq!(sofabench::time::http_date::parse(&text), Some(secs), "{}", text);
    }
}

/// A continuous feed as CouchDB sends it: changes, a heartbeat, a deletion.
const FEED: &str = "{\"seq\":\"1-g1AAAA\",\"id\":\"a\",\"changes\":[{\"rev\":\"1-0123456789abcdef0123456789abcdef\"}]}\n\n{\"seq\":2,\"id\":\"b\",\"changes\":[{\"rev\":\"2-x\"}],\"deleted\":true,\"doc\":{\"_id\":\"b\"}}\n";

proptest! {
    /// Whatever bytes come, in whatever chunks: no line handed on is over the bound, and
    /// reading a line as a change never panics.
    #[test]
    fn changes_feeds_cut_anywhere_read_or_say_why(
        text in mutated(FEED),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        limit in 1usize..200,
    ) {
        let bytes = text.as_bytes();
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut lines = Lines::new(limit);
        let mut start = 0;
        for end in at.into_iter().chain([bytes.len()]) {
            lines.feed(bytes::Bytes::copy_from_slice(&bytes[start..end]));
            let mut longest = 0;
            let cut = loop {
                match lines.cut() {
                    Ok(true) => {
                        longest = longest.max(lines.line().len());
                        let _ = parse::line(lines.line());
                    }
                    done => break done,
                }
            };
            prop_assert!(longest <= limit);
            if cut.is_err() {
                break;
            }
            start = end;
        }
        let _ = parse::answer(bytes);
    }
}

/// Any JSON value, nested a few levels, with strings that hold quotes, backslashes,
/// brackets and the row keys themselves.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "(rows|docs|[\\[\\]{},:\"\\\\ a-z]){0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map("(rows|docs|[a-z\"]{0,5})", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// A query's answer, pretty or compact, cut anywhere into two pieces, gives the
    /// number of elements of its top-level rows array.
    #[test]
    fn row_counts_match_the_rows_array(
        rows in prop::collection::vec(json_value(), 0..20),
        before in json_value(),
        key in "(rows|docs)",
        pretty in any::<bool>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let answer = serde_json::json!({ "a": before, key.as_str(): rows });
        let text = if pretty {
            serde_json::to_vec_pretty(&answer).unwrap()
        } else {
            serde_json::to_vec(&answer).unwrap()
        };
        let at = cut.index(text.len() + 1);
        let mut counter = sofabench::driver::rows::RowCounter::new();
        counter.feed(&text[..at]);
        counter.feed(&text[at..]);
        prop_assert_eq!(counter.rows(), Some(rows.len() as u64), "{}", String::from_utf8_lossy(&text));
    }

    /// Any bytes give a count or none, never a panic.
    #[test]
    fn row_counts_of_any_bytes_do_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let _ = sofabench::driver::rows::count(&bytes);
    }
}

/// A secret of the characters that need escaping in JSON, URLs and HTML, and plain ones.
fn awkward_secret() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "\"", "\\", "%", ":", "@", "&", ";", "+", " ", "/", "é", "😀", "\u{1b}", "a", "Z", "4",
            "%41", "\\u0041", "&amp;",
        ]),
        6..14,
    )
    .prop_map(|parts| parts.concat())
}

/// `secret` as a server may quote it: as it is, JSON-escaped, percent-encoded, HTML-escaped,
/// or two of these one inside the other.
fn encoded(secret: &str, ways: &[u8]) -> String {
    ways.iter()
        .fold(secret.to_string(), |text, way| match way % 4 {
            0 => text,
            1 => {
                let json = serde_json::to_string(&text).unwrap();
                json[1..json.len() - 1].to_string()
            }
            2 => sofabench::target::encode_path_segment(&text),
            _ => text
                .replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('<', "&lt;")
                .replace('é', "&#233;"),
        })
}

proptest! {
    /// A secret quoted back in any encoding, up to two deep, amid any text, is hidden: the
    /// quote shows no form of it that hiding once more would find. (Text that ends in half
    /// an escape just before the secret, `%4` before `1…`, is read as one escape: servers
    /// quote a value after a delimiter, as here.)
    #[test]
    fn a_quoted_secret_is_hidden_in_any_encoding(
        secret in awkward_secret(),
        ways in prop::collection::vec(any::<u8>(), 0..3),
        before in "([ -~]{0,40}[=: ])?",
        after in "[ -~]{0,40}",
    ) {
        struct Secret(String);
        impl sofabench::text::Redact for Secret {
            fn secret_forms(&self, forms: &mut Vec<String>) {
                forms.push(self.0.clone());
            }
        }
        let said = format!("{before}{}{after}", encoded(&secret, &ways));
        let quoted = sofabench::text::Quoted::of_text(&said, &Secret(secret.clone()), 300);
        let shown = quoted.as_str();
        prop_assert!(shown.contains("***"), "{said:?} → {shown:?}");
        let again = sofabench::text::hide(shown, std::slice::from_ref(&secret));
        prop_assert_eq!(&again, shown, "{:?}", said);
    }

    /// Any bytes quote to one line without control characters, of bounded length, without
    /// a panic.
    #[test]
    fn any_answer_quotes_to_one_safe_bounded_line(
        bytes in prop::collection::vec(any::<u8>(), 0..3000),
        most in 1usize..400,
    ) {
        let quoted = sofabench::text::Quoted::new(&bytes, &(), most);
        let shown = quoted.as_str();
        prop_assert!(!shown.chars().any(char::is_control), "{shown:?}");
        prop_assert!(shown.chars().count() <= most * 8 + 1, "{shown:?}");
    }
}
