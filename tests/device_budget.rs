//! A fleet of idle live devices sends exactly its budget: once a device holds its feed,
//! nothing but feed reads (a longpoll at most once per feed timeout, plus the reconnects
//! the report counts) until its last sync. Counted by a proxy in front of PouchDB Server
//! on disk with an admin; the databases are checked afterwards (no device wrote).

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::counting_proxy::{CountingProxy, Seen};
use common::{ADMIN, PouchServer, Storage, get, result_json, sofabench};

/// The database a request is about (the first path segment), unless it is the server's.
fn database_of(target: &str) -> Option<&str> {
    let path = target.split('?').next()?.strip_prefix('/')?;
    let database = path.split('/').next()?;
    (!database.is_empty() && !database.starts_with('_')).then_some(database)
}

/// A feed read held open: `_changes` with `feed=longpoll` or `feed=continuous`.
fn is_held_feed(seen: &Seen) -> bool {
    let (path, query) = seen.target.split_once('?').unwrap_or((&seen.target, ""));
    path.ends_with("/_changes")
        && query
            .split('&')
            .any(|p| p == "feed=longpoll" || p == "feed=continuous")
}

/// What one device (its database) sent while live.
#[derive(Debug, Default)]
struct Live {
    /// Held feed reads, the first included.
    feeds: u64,
    /// From its first held feed to its last.
    span: Duration,
    /// Requests other than held feed reads in that span: the budget says none.
    others: Vec<String>,
}

/// Each database's live traffic: from its first held feed read to its last (before it
/// the device's first sync, after it the last sync and the convergence check).
fn live_traffic(seen: &[Seen]) -> BTreeMap<String, Live> {
    let mut by_database: BTreeMap<String, Vec<&Seen>> = BTreeMap::new();
    for s in seen {
        if let Some(db) = database_of(&s.target) {
            by_database.entry(db.to_string()).or_default().push(s);
        }
    }
    by_database
        .into_iter()
        .map(|(db, requests)| {
            let feeds: Vec<Instant> = requests
                .iter()
                .filter(|s| is_held_feed(s))
                .map(|s| s.at)
                .collect();
            let live = match (feeds.first(), feeds.last()) {
                (Some(&first), Some(&last)) => Live {
                    feeds: feeds.len() as u64,
                    span: last - first,
                    others: requests
                        .iter()
                        .filter(|s| s.at > first && s.at < last && !is_held_feed(s))
                        .map(|s| format!("{} {}", s.method, s.target))
                        .collect(),
                },
                _ => Live::default(),
            };
            (db, live)
        })
        .collect()
}

#[test]
fn the_budget_check_sees_a_request_between_feeds_and_a_feed_read_too_often() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let seen = |ms, method: &str, target: &str| Seen {
        at: at(ms),
        method: method.to_string(),
        target: target.to_string(),
    };
    let trace = vec![
        seen(0, "GET", "/u1"),
        seen(1, "GET", "/u1/_local/abc"),
        seen(2, "GET", "/u1/_changes?style=all_docs&since=0"),
        seen(
            3,
            "GET",
            "/u1/_changes?style=all_docs&feed=longpoll&since=0",
        ),
        seen(1003, "PUT", "/u1/_local/abc"),
        seen(1004, "GET", "/u1/_changes?feed=longpoll&since=0"),
        seen(2004, "POST", "/u1/_changes?feed=continuous&filter=_doc_ids"),
        seen(2500, "GET", "/u1/_changes?since=0"),
        seen(0, "GET", "/_session"),
    ];
    let live = live_traffic(&trace);
    assert_eq!(live.len(), 1);
    let u1 = &live["u1"];
    assert_eq!(u1.feeds, 3);
    assert_eq!(u1.span, Duration::from_millis(2001));
    assert_eq!(u1.others, vec!["PUT /u1/_local/abc".to_string()]);
}

const DEVICES: usize = 6;
/// How long a device's longpoll is held (PouchDB's profile: 25 s): a longpoll with
/// nothing to answer comes back at its end, and the device reads its feed again.
const FEED_TIMEOUT_MS: u64 = 25_000;
/// Room for every device's initial sync and at least one timeout after it (the second
/// feed read of each device, between which nothing else may be sent).
const SECONDS: u64 = 45;

#[test]
#[ignore = "needs the fleet's flags (branch fleetcli), merged next"]
fn idle_live_devices_send_nothing_but_their_feed_reads() {
    let server = PouchServer::secured(Storage::Disk);
    let proxy = CountingProxy::start(server.port);
    let (user, password) = ADMIN;
    let address = proxy
        .url
        .replace("http://", &format!("http://{user}:{password}@"));
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result.json");
    let run = sofabench(&[
        "run",
        &format!("--database_address={address}"),
        "--database_name=budget",
        "--quiet",
        "--scenario=steady-fleet",
        &format!("--databases={DEVICES}"),
        &format!("--devices={DEVICES}"),
        "--device-scope=own-database",
        "--device-sync=live",
        "--device-feed=longpoll",
        "--device-writes=0",
        &format!("--duration={SECONDS}s"),
        &format!("--result={}", result.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let devices = &result_json(&result)["phases"][0]["devices"];
    let reconnects = devices["reconnects"].as_u64().unwrap_or(0);

    let live = live_traffic(&proxy.seen());
    assert_eq!(live.len(), DEVICES, "{live:?}");
    let mut feeds_allowed = reconnects;
    let mut feeds = 0;
    for (db, traffic) in &live {
        assert!(
            traffic.others.is_empty(),
            "{db}: beyond its feed reads it sent {:?}",
            traffic.others
        );
        assert!(
            traffic.feeds >= 2,
            "{db} held its feed {} times",
            traffic.feeds
        );
        // A longpoll with nothing to answer ends at its timeout, no sooner: one read per
        // timeout, and the first.
        feeds_allowed += traffic.span.as_millis() as u64 / FEED_TIMEOUT_MS + 1;
        feeds += traffic.feeds;
        // Nothing was written: no device pushed anything.
        let (status, info) = get(&server.admin_db(db));
        assert_eq!(status, 200, "{db}: {info}");
        assert_eq!(info["doc_count"], 0, "{db}: {info}");
    }
    assert!(
        feeds <= feeds_allowed,
        "{feeds} feed reads where at most {feeds_allowed} fit the timeouts ({reconnects} reconnects reported)"
    );
}
