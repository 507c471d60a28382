//! Deciding when a CouchDB compaction has finished, from what the server shows.
//!
//! `POST /db/_compact` answers 202 before the shards' compactions start, so the first
//! `compact_running: false` after it means nothing. A compaction counts as running while
//! the database says `compact_running: true` or `_active_tasks` lists a
//! `database_compaction` of one of its shards. It has finished once the server has shown
//! it idle for [`SETTLE`] without a break; it finished when that idle stretch began.

use std::time::{Duration, Instant};

use serde_json::Value;

/// How long the server must show no compaction before it counts as finished. Shards start
/// compacting within milliseconds of the 202; a stretch this long without any sign of
/// one is not a shard that has yet to start.
pub const SETTLE: Duration = Duration::from_secs(2);

/// The end of a compaction, as far as the server showed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished {
    /// The first look of the final idle stretch.
    pub at: Instant,
    /// False when no look ever showed it running: it ended before the first look, or the
    /// server does not show compactions at all.
    pub seen_running: bool,
}

/// The looks at the server so far.
#[derive(Debug)]
pub struct Follow {
    settle: Duration,
    seen_running: bool,
    idle_since: Option<Instant>,
}

impl Follow {
    pub fn new(settle: Duration) -> Follow {
        Follow {
            settle,
            seen_running: false,
            idle_since: None,
        }
    }

    /// One look: was a compaction of the database running at `at`? Looks that could not
    /// be made are not passed in (they show nothing either way).
    pub fn look(&mut self, at: Instant, running: bool) -> Option<Finished> {
        if running {
            self.seen_running = true;
            self.idle_since = None;
            return None;
        }
        let since = *self.idle_since.get_or_insert(at);
        (at.saturating_duration_since(since) >= self.settle).then_some(Finished {
            at: since,
            seen_running: self.seen_running,
        })
    }
}

/// How many of `_active_tasks`' entries are compactions of database `name`: CouchDB 3.x
/// names a shard `shards/00000000-7fffffff/NAME.1700000000`; a single node before 2.0
/// names the database itself.
pub fn compactions_of(tasks: &Value, name: &str) -> Option<usize> {
    let tasks = tasks.as_array()?;
    Some(
        tasks
            .iter()
            .filter(|t| t["type"] == "database_compaction")
            .filter_map(|t| t["database"].as_str())
            .filter(|database| names(database, name))
            .count(),
    )
}

fn names(database: &str, name: &str) -> bool {
    if database == name {
        return true;
    }
    let Some(shard) = database.strip_prefix("shards/") else {
        return false;
    };
    // Names may hold '/', the range never does: split at the first one.
    let Some((_range, file)) = shard.split_once('/') else {
        return false;
    };
    file.rsplit_once('.').is_some_and(|(db, suffix)| {
        db == name && !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(start: Instant, ms: u64) -> Instant {
        start + Duration::from_millis(ms)
    }

    #[test]
    fn an_idle_look_right_after_the_answer_is_not_the_end() {
        let t = Instant::now();
        let mut f = Follow::new(SETTLE);
        // The 202's first look: idle, the shards have not started yet.
        assert_eq!(f.look(at(t, 0), false), None);
        assert_eq!(f.look(at(t, 200), true), None);
        assert_eq!(f.look(at(t, 5_000), true), None);
        assert_eq!(f.look(at(t, 5_200), false), None);
        assert_eq!(f.look(at(t, 6_000), false), None);
        assert_eq!(
            f.look(at(t, 7_200), false),
            Some(Finished {
                at: at(t, 5_200),
                seen_running: true
            })
        );
    }

    #[test]
    fn a_break_in_the_idle_stretch_starts_it_again() {
        let t = Instant::now();
        let mut f = Follow::new(SETTLE);
        assert_eq!(f.look(at(t, 0), true), None);
        assert_eq!(f.look(at(t, 100), false), None);
        // A second shard starts after the first finished.
        assert_eq!(f.look(at(t, 1_000), true), None);
        assert_eq!(f.look(at(t, 1_100), false), None);
        assert_eq!(f.look(at(t, 2_000), false), None);
        let done = f.look(at(t, 3_100), false).unwrap();
        assert_eq!(done.at, at(t, 1_100));
    }

    #[test]
    fn never_seen_running_ends_after_the_settle_time_and_says_so() {
        let t = Instant::now();
        let mut f = Follow::new(SETTLE);
        assert_eq!(f.look(at(t, 10), false), None);
        assert_eq!(f.look(at(t, 1_000), false), None);
        let done = f.look(at(t, 2_010), false).unwrap();
        assert_eq!(done.at, at(t, 10));
        assert!(!done.seen_running);
    }

    #[test]
    fn shards_of_the_database_are_told_from_others() {
        let tasks = json!([
            {"type": "database_compaction", "database": "shards/00000000-7fffffff/db.1700000000"},
            {"type": "database_compaction", "database": "shards/80000000-ffffffff/db.1700000000"},
            {"type": "database_compaction", "database": "shards/00000000-7fffffff/db2.1700000000"},
            {"type": "database_compaction", "database": "shards/00000000-7fffffff/a/db.1700000000"},
            {"type": "view_compaction", "database": "shards/00000000-7fffffff/db.1700000000"},
            {"type": "replication", "database": "db"},
            {"type": "database_compaction", "database": "db"},
            {"type": "database_compaction"},
        ]);
        assert_eq!(compactions_of(&tasks, "db"), Some(3));
        assert_eq!(compactions_of(&tasks, "a/db"), Some(1));
        assert_eq!(compactions_of(&tasks, "d"), Some(0));
        assert_eq!(
            compactions_of(&json!({"error": "unauthorized"}), "db"),
            None
        );
    }
}
