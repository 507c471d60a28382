//! A fleet of idle live devices sends exactly its budget: while the phase runs, nothing
//! but feed reads (a longpoll at most once per feed timeout, plus the reconnects the
//! report counts); the run's own disk look (`GET /db` once per interval) aside. Counted by a proxy in front of PouchDB Server
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

/// The run's own look at a database's size (`GET /db`, once per interval), not a device's.
fn is_disk_look(seen: &Seen) -> bool {
    seen.method == "GET" && !seen.target.trim_start_matches('/').contains(['/', '?'])
}

/// What one device (its database) sent while live.
#[derive(Debug, Default)]
struct Live {
    /// Held feed reads begun in the window.
    feeds: u64,
    /// Whether it held its feed before the window's end.
    held: bool,
    /// Requests other than held feed reads in the window: the budget says none.
    others: Vec<String>,
}

/// Each database's traffic from `from` to `to` (the phase, less its edges: the warm sync
/// is before it, the last sync and the convergence check after).
fn live_traffic(seen: &[Seen], from: Instant, to: Instant) -> BTreeMap<String, Live> {
    let mut by_database: BTreeMap<String, Live> = BTreeMap::new();
    for s in seen {
        let Some(db) = database_of(&s.target) else {
            continue;
        };
        let live = by_database.entry(db.to_string()).or_default();
        if is_held_feed(s) && s.at < to {
            live.held = true;
        }
        if s.at < from || s.at > to || is_disk_look(s) {
            continue;
        }
        if is_held_feed(s) {
            live.feeds += 1;
        } else {
            live.others.push(format!("{} {}", s.method, s.target));
        }
    }
    by_database
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
        seen(1500, "GET", "/u1"),
        seen(2004, "POST", "/u1/_changes?feed=continuous&filter=_doc_ids"),
        seen(2500, "GET", "/u1/_changes?since=0"),
        seen(0, "GET", "/_session"),
        seen(5, "GET", "/u2/_changes?feed=longpoll"),
    ];
    let live = live_traffic(&trace, at(3), at(2100));
    assert_eq!(live.len(), 2);
    let u1 = &live["u1"];
    assert_eq!(u1.feeds, 3);
    assert!(u1.held);
    assert_eq!(u1.others, vec!["PUT /u1/_local/abc".to_string()]);
    let u2 = &live["u2"];
    assert!(u2.held && u2.feeds == 1 && u2.others.is_empty());
}

const DEVICES: usize = 6;
/// How long a device's longpoll is held (PouchDB's profile: 25 s): a longpoll with
/// nothing to answer comes back at its end, and the device reads its feed again.
const FEED_TIMEOUT_MS: u64 = 25_000;
/// Room for every device's initial sync and at least one timeout after it (the second
/// feed read of each device, between which nothing else may be sent).
const SECONDS: u64 = 45;

#[test]
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
        &format!("--json={}", result.display()),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Feed reads the devices began again: after a failed pull, or given up at the end.
    let counts = &result_json(&result)["phases"][0]["devices"]["counts"];
    let reconnects = counts["failed_pulls"].as_u64().unwrap_or(0)
        + counts["feeds_given_up"].as_u64().unwrap_or(0);

    // The phase starts when the first device holds its feed (every device synced before
    // it); it ends SECONDS later, when the last sync begins.
    let seen = proxy.seen();
    let first_feed = seen
        .iter()
        .filter(|s| is_held_feed(s))
        .map(|s| s.at)
        .min()
        .expect("no device held a feed");
    let from = first_feed + Duration::from_secs(2);
    let to = first_feed + Duration::from_secs(SECONDS - 5);
    let live = live_traffic(&seen, from, to);
    assert_eq!(live.len(), DEVICES, "{live:?}");
    let window = to - from;
    let mut feeds_allowed = reconnects;
    let mut feeds = 0;
    for (db, traffic) in &live {
        assert!(
            traffic.others.is_empty(),
            "{db}: beyond its feed reads it sent {:?}",
            traffic.others
        );
        assert!(traffic.held, "{db} never held its feed");
        // A longpoll with nothing to answer ends at its timeout, no sooner: one read per
        // timeout, and one more begun at the window's start.
        feeds_allowed += window.as_millis() as u64 / FEED_TIMEOUT_MS + 1;
        feeds += traffic.feeds;
        // Each document the run put there before the phase was written once: no device
        // pushed an edit (PouchDB Server's update_seq counts every write).
        let (status, info) = get(&server.admin_db(db));
        assert_eq!(status, 200, "{db}: {info}");
        assert_eq!(info["update_seq"], info["doc_count"], "{db}: {info}");
    }
    assert!(
        feeds <= feeds_allowed,
        "{feeds} feed reads where at most {feeds_allowed} fit the timeouts ({reconnects} reconnects reported)"
    );
}
