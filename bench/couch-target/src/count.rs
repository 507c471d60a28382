//! `--count-every S`: requests counted by kind (what a replicating client asks: feeds by
//! their kind, `_local` reads and writes, `_revs_diff`, `_bulk_get`, ...), and the
//! connections and feeds held, printed as one JSON line per interval on stdout. It is how
//! bench/devices.py holds a fleet's traffic against its budget. Off, it costs nothing.

use std::cell::Cell;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::http::{Method, params};

static ENABLED: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Welcome,
    Server,
    DbInfo,
    DbCreate,
    DbDelete,
    Changes,
    ChangesLongpoll,
    ChangesContinuous,
    LocalRead,
    LocalWrite,
    RevsDiff,
    BulkGet,
    BulkDocs,
    Security,
    Query,
    DocRead,
    DocWrite,
}

const KINDS: usize = 17;
const NAMES: [&str; KINDS] = [
    "welcome",
    "server",
    "db_info",
    "db_create",
    "db_delete",
    "changes",
    "changes_longpoll",
    "changes_continuous",
    "local_read",
    "local_write",
    "revs_diff",
    "bulk_get",
    "bulk_docs",
    "security",
    "query",
    "doc_read",
    "doc_write",
];

thread_local! {
    static REQUESTS: [Cell<u64>; KINDS] = Default::default();
    static CONNECTIONS: Cell<u64> = const { Cell::new(0) };
    static FEEDS: Cell<u64> = const { Cell::new(0) };
}

pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Counts one request (`target` is its path and query).
pub fn request(method: Method, target: &[u8]) {
    if enabled() {
        let kind = kind(method, target) as usize;
        REQUESTS.with(|r| r[kind].set(r[kind].get() + 1));
    }
}

/// What a request asks, by its method and path.
pub fn kind(method: Method, target: &[u8]) -> Kind {
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    let path = path.strip_prefix(b"/").unwrap_or(path);
    let (database, rest) = match path.iter().position(|&b| b == b'/') {
        Some(slash) => (&path[..slash], &path[slash + 1..]),
        None => (path, &b""[..]),
    };
    match (method, rest) {
        _ if database.is_empty() => Kind::Welcome,
        _ if database.starts_with(b"_") => Kind::Server,
        (Method::Get | Method::Head, b"") => Kind::DbInfo,
        (Method::Put, b"") => Kind::DbCreate,
        (Method::Delete, b"") => Kind::DbDelete,
        (_, b"_changes") => match params(query).find(|(n, _)| n == "feed").map(|(_, v)| v) {
            Some(v) if v == "longpoll" => Kind::ChangesLongpoll,
            Some(v) if v == "continuous" => Kind::ChangesContinuous,
            _ => Kind::Changes,
        },
        (Method::Get | Method::Head, _) if rest.starts_with(b"_local/") => Kind::LocalRead,
        _ if rest.starts_with(b"_local/") => Kind::LocalWrite,
        (_, b"_revs_diff") => Kind::RevsDiff,
        (_, b"_bulk_get") => Kind::BulkGet,
        (_, b"_bulk_docs") => Kind::BulkDocs,
        (_, b"_security") => Kind::Security,
        _ if rest.starts_with(b"_") => Kind::Query,
        (Method::Get | Method::Head, _) => Kind::DocRead,
        _ => Kind::DocWrite,
    }
}

/// Counts a connection or a held feed while it lives.
pub struct Held(&'static std::thread::LocalKey<Cell<u64>>);

impl Held {
    pub fn connection() -> Held {
        Held::of(&CONNECTIONS)
    }

    pub fn feed() -> Held {
        Held::of(&FEEDS)
    }

    fn of(gauge: &'static std::thread::LocalKey<Cell<u64>>) -> Held {
        gauge.with(|g| g.set(g.get() + 1));
        Held(gauge)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.with(|g| g.set(g.get().saturating_sub(1)));
    }
}

/// Prints, every `period`, the requests of the interval by kind (kinds with none left
/// out) and the connections and feeds held at its end:
/// `{"t":10.0,"connections":N,"feeds":N,"requests":{"changes_longpoll":N,...}}`.
pub async fn report_every(period: Duration) {
    let started = Instant::now();
    let mut next = tokio::time::Instant::now() + period;
    loop {
        tokio::time::sleep_until(next).await;
        next += period;
        let mut line = Vec::with_capacity(256);
        let _ = write!(
            line,
            "{{\"t\":{:.3},\"connections\":{},\"feeds\":{},\"requests\":{{",
            started.elapsed().as_secs_f64(),
            CONNECTIONS.with(Cell::get),
            FEEDS.with(Cell::get)
        );
        REQUESTS.with(|requests| {
            let mut first = true;
            for (name, count) in NAMES.iter().zip(requests) {
                let n = count.replace(0);
                if n > 0 {
                    let _ = write!(line, "{}\"{name}\":{n}", if first { "" } else { "," });
                    first = false;
                }
            }
        });
        line.extend_from_slice(b"}}\n");
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&line);
        let _ = stdout.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let k = |m, t: &str| kind(m, t.as_bytes());
        assert_eq!(k(Method::Get, "/"), Kind::Welcome);
        assert_eq!(k(Method::Get, "/db"), Kind::DbInfo);
        assert_eq!(
            k(Method::Get, "/db/_changes?style=all_docs&feed=longpoll"),
            Kind::ChangesLongpoll
        );
        assert_eq!(
            k(Method::Post, "/db/_changes?feed=continuous&filter=_doc_ids"),
            Kind::ChangesContinuous
        );
        assert_eq!(k(Method::Get, "/db/_changes?since=3"), Kind::Changes);
        assert_eq!(k(Method::Get, "/db/_local/abc"), Kind::LocalRead);
        assert_eq!(k(Method::Put, "/db/_local/abc"), Kind::LocalWrite);
        assert_eq!(k(Method::Post, "/db/_bulk_get?revs=true"), Kind::BulkGet);
        assert_eq!(k(Method::Get, "/db/doc"), Kind::DocRead);
        assert_eq!(k(Method::Post, "/_session"), Kind::Server);
        assert_eq!(NAMES.len(), Kind::DocWrite as usize + 1);
    }
}
