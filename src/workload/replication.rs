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
    /// `--replication-address`.
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
                problems.push(format!("{key}: {name:?} {problem}"));
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

/// Why `name` cannot be a replica's database name, if it cannot.
fn name_problem(name: &str, database: Option<&str>) -> Option<&'static str> {
    if name.starts_with("http://") || name.starts_with("https://") {
        // The replica's feed is read on the run's own server, where its lag is measured.
        return Some("is a URL; give a database name on the run's own server");
    }
    if name.is_empty() || name.starts_with('_') {
        return Some("is not a database name; give one such as \"bench-replica\"");
    }
    if database == Some(name) {
        return Some("is the run's own database; give another name");
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
    }

    #[test]
    fn every_problem_is_named() {
        let problems = names(&["http://h/x", "_users", "db", "a", "a"]).problems("r", Some("db"));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].contains("URL"));
        assert!(problems[3].contains("twice"));
        assert!(names(&[]).problems("r", None)[0].contains("0 replicas"));
        let mut long = names(&["a"]);
        long.grace = MAX_GRACE + Duration::from_secs(1);
        assert!(long.problems("r", None)[0].contains("grace"));
    }
}
