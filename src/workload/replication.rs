//! Continuous replication during a phase, as the user asks for it: to which databases,
//! one-way or both ways, and how long the replicas get to catch up after the phase's
//! operations. Plain data; the engine starts and follows the replications.

use std::time::Duration;

use super::changes::MAX_GRACE;

/// The most replicas a phase may replicate to: each is a `_replicator` job (two when
/// two-way) and a feed connection of its own.
pub const MAX_REPLICAS: usize = 16;

/// How long the replicas get by default to show the phase's last writes: a replicator
/// batches and checkpoints, and PouchDB Server's takes seconds to notice a new job.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// A phase's continuous replications: from the run's database to each replica (and back
/// when `two_way`), started before its operations and removed after them.
#[derive(Clone, Debug, PartialEq)]
pub struct ContinuousReplication {
    /// Database names on the run's own server, reached by the server's replicator under
    /// `--replication-address`, or URLs of databases on other servers (see [`remote`]).
    pub replicas: Vec<String>,
    pub two_way: bool,
    /// How long after the operations the replicas' feeds are read for writes not yet
    /// replicated; those still missing then are counted as missing.
    pub grace: Duration,
}

impl ContinuousReplication {
    /// One-way replication to `replicas`, with the default grace.
    pub fn to(replicas: Vec<String>) -> ContinuousReplication {
        ContinuousReplication {
            replicas,
            two_way: false,
            grace: DEFAULT_GRACE,
        }
    }

    /// What is wrong with it, each problem naming `key` (e.g. `replication.to`).
    pub fn problems(&self, key: &str, database: Option<&str>) -> Vec<String> {
        let mut problems = Vec::new();
        if self.replicas.is_empty() || self.replicas.len() > MAX_REPLICAS {
            problems.push(format!(
                "{key}: {} replicas; give 1 to {MAX_REPLICAS} database names",
                self.replicas.len()
            ));
        }
        for (i, name) in self.replicas.iter().enumerate() {
            if let Some(problem) = name_problem(name, database) {
                let shown = crate::target::redact(name);
                problems.push(format!("{key}: {shown:?} {problem}"));
            } else if self.replicas[..i].contains(name) {
                problems.push(format!("{key}: {name:?} is given twice; each replica once"));
            }
        }
        if self.grace > MAX_GRACE {
            problems.push(format!(
                "{key}: a grace of {} s is longer than {} s; give a shorter one",
                self.grace.as_secs(),
                MAX_GRACE.as_secs()
            ));
        }
        problems
    }
}

/// A replica on another server, from its URL
/// `http(s)://[user:password@]host[:port][/base]/database`.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteReplica {
    /// The server's address, with the URL's credentials if it has them.
    pub server: String,
    /// The database's name (the URL's last path segment, percent-decoded).
    pub database: String,
}

/// The replica `given` names on another server; `None` when it is a database name on
/// the run's own server.
pub fn remote(given: &str) -> Option<Result<RemoteReplica, String>> {
    if !given.starts_with("http://") && !given.starts_with("https://") {
        return None;
    }
    let parsed = url::Url::parse(given).map_err(|e| format!("is not a URL ({e})"));
    Some(parsed.and_then(|mut url| {
        if url.host_str().is_none_or(str::is_empty) {
            return Err("has no host".to_string());
        }
        let mut segments: Vec<String> = url
            .path_segments()
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let database = segments
            .pop()
            .map(|s| crate::target::percent_decode(&s))
            .filter(|d| !d.starts_with('_'))
            .ok_or("names no database; end it with one, e.g. http://host:5984/replica")?;
        url.set_path(&segments.join("/"));
        url.set_query(None);
        url.set_fragment(None);
        Ok(RemoteReplica {
            server: url.as_str().trim_end_matches('/').to_string(),
            database,
        })
    }))
}

/// Why `name` cannot be a replica, if it cannot.
fn name_problem(name: &str, database: Option<&str>) -> Option<String> {
    if let Some(remote) = remote(name) {
        return remote.err();
    }
    if name.is_empty() || name.starts_with('_') {
        return Some("is not a database name; give one such as \"bench-replica\"".to_string());
    }
    if database == Some(name) {
        return Some("is the run's own database; give another name".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> ContinuousReplication {
        ContinuousReplication::to(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn good_replicas_have_no_problems() {
        assert!(names(&["a", "b"]).problems("r", Some("db")).is_empty());
        let elsewhere = names(&["http://u:p%40ss@h:5986/base/re%2Fplica", "https://h/db"]);
        assert!(elsewhere.problems("r", Some("db")).is_empty());
    }

    #[test]
    fn a_url_is_a_replica_on_another_server() {
        assert_eq!(remote("replica"), None);
        let at = remote("http://u:p%40ss@h:5986/base/re%2Fplica?x=1")
            .unwrap()
            .unwrap();
        assert_eq!(at.server, "http://u:p%40ss@h:5986/base");
        assert_eq!(at.database, "re/plica");
        let plain = remote("https://h/db").unwrap().unwrap();
        assert_eq!(
            (plain.server.as_str(), plain.database.as_str()),
            ("https://h", "db")
        );
        assert!(remote("http://h:5984/_users").unwrap().is_err());
        assert!(remote("http://:5984/db").unwrap().is_err());
    }

    #[test]
    fn every_problem_is_named() {
        let problems =
            names(&["http://h:5984", "_users", "db", "a", "a"]).problems("r", Some("db"));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].contains("names no database"), "{problems:?}");
        assert!(problems[3].contains("twice"));
        let secret = names(&["http://u:s3cret@h:5984/"]).problems("r", None);
        assert!(
            secret[0].contains("u:***@") && !secret[0].contains("s3cret"),
            "{secret:?}"
        );
        assert!(names(&[]).problems("r", None)[0].contains("0 replicas"));
        let mut long = names(&["a"]);
        long.grace = MAX_GRACE + Duration::from_secs(1);
        assert!(long.problems("r", None)[0].contains("grace"));
    }
}
