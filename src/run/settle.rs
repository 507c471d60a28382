//! Waiting, before a phase that asks so (`fabric-bench`'s measured steps), until the
//! server shows no compaction of the database and no internal replication backlog:
//! what CouchDB's `fabric_bench` does inside the server (it turns compaction off for its
//! shards and waits for `mem3_sync`'s backlog to clear), as far as a client can see it.
//! The wait is bounded; a server that shows neither (PouchDB Server) is said so once per
//! phase and the phase runs at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::driver::Endpoint;
use crate::driver::admin::Admin;
use crate::exit::Failed;
use crate::results::{SettleOutcome, SettleResult};
use crate::target::Target;

/// The longest wait before a phase: `fabric_bench` waits without end, a run does not.
pub const MOST_WAIT: Duration = Duration::from_secs(120);

/// Between looks: `fabric_bench` looks every 4 s; a client's look costs the server two
/// small requests.
const BETWEEN_LOOKS: Duration = Duration::from_millis(500);

/// Task types whose work on the database would weigh on a measured step.
const COMPACTIONS: [&str; 2] = ["database_compaction", "view_compaction"];

/// What one look found; `None` where the server did not tell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    pub compactions: Option<u64>,
    pub backlog: Option<u64>,
}

impl Look {
    fn visible(self) -> bool {
        self.compactions.is_some() || self.backlog.is_some()
    }

    fn quiet(self) -> bool {
        self.compactions.unwrap_or(0) == 0 && self.backlog.unwrap_or(0) == 0
    }
}

/// True when an `_active_tasks` entry's `database` is `database` or one of its shards
/// (`shards/00000000-7fffffff/NAME.1700000000` in CouchDB 2 and later).
pub fn is_of(entry: &str, database: &str) -> bool {
    if entry == database {
        return true;
    }
    let Some(shard) = entry.strip_prefix("shards/") else {
        return false;
    };
    let name = shard.split_once('/').map_or("", |(_, name)| name);
    name.strip_prefix(database)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|suffix| !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()))
}

/// Compactions of `database` among an `_active_tasks` answer's entries; `None` when it
/// is not a list of tasks.
pub fn compactions(tasks: &serde_json::Value, database: &str) -> Option<u64> {
    let tasks = tasks.as_array()?;
    let of_database = |task: &&serde_json::Value| {
        let kind = task.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let on = task.get("database").and_then(|d| d.as_str()).unwrap_or("");
        COMPACTIONS.contains(&kind) && is_of(on, database)
    };
    Some(tasks.iter().filter(of_database).count() as u64)
}

/// `internal_replication_jobs` of a `_node/_local/_system` answer.
pub fn backlog(system: &serde_json::Value) -> Option<u64> {
    system.get("internal_replication_jobs")?.as_u64()
}

/// The most cluster nodes whose backlogs one look reads.
const MOST_NODES: usize = 64;

/// The cluster's nodes from a `_membership` answer, those whose names are safe in a
/// path (Erlang's `name@host`: letters, digits, `@._-`), at most [`MOST_NODES`];
/// `None` when it lists none.
pub fn members(membership: &serde_json::Value) -> Option<Vec<String>> {
    let plain = |name: &&str| {
        (1..=255).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"@._-".contains(&b))
    };
    let names: Vec<String> = membership
        .get("cluster_nodes")?
        .as_array()?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .filter(plain)
        .take(MOST_NODES)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Looks at the server for one database.
pub struct Settle {
    admin: Admin,
    database: String,
    /// The `_system` paths of the cluster's nodes (`_membership`, read at the first
    /// look): internal replication runs on every node, and `_active_tasks` is the
    /// cluster's but `_system` one node's. The setup node's alone where none are listed.
    systems: Option<Vec<String>>,
    /// Set once a wait ended at [`MOST_WAIT`] still busy: a server busy that long stays
    /// so, and each later step then looks once rather than adding 120 s more.
    gave_up: bool,
}

impl Settle {
    pub fn new(target: &Target, node: Arc<Endpoint>) -> Settle {
        Settle {
            admin: Admin::new(target, node),
            database: target.database.clone(),
            systems: None,
            gave_up: false,
        }
    }

    /// One look: `_active_tasks` and every node's `_system`, each read when it answers
    /// 200 with what CouchDB writes there. A server that stopped answering fails the run.
    pub async fn look(&mut self) -> Result<Look, Failed> {
        let tasks = self.json("/_active_tasks").await?;
        Ok(Look {
            compactions: tasks.and_then(|t| compactions(&t, &self.database)),
            backlog: self.backlog().await?,
        })
    }

    /// The internal replication jobs waiting on all the nodes that tell theirs.
    async fn backlog(&mut self) -> Result<Option<u64>, Failed> {
        if self.systems.is_none() {
            let names = self.json("/_membership").await?.and_then(|m| members(&m));
            let paths = names.map_or_else(
                || vec!["/_node/_local/_system".to_string()],
                |names| {
                    names
                        .iter()
                        .map(|n| format!("/_node/{n}/_system"))
                        .collect()
                },
            );
            self.systems = Some(paths);
        }
        let mut total: Option<u64> = None;
        for path in self.systems.clone().unwrap_or_default() {
            if let Some(jobs) = self.json(&path).await?.and_then(|s| backlog(&s)) {
                total = Some(total.unwrap_or(0).saturating_add(jobs));
            }
        }
        Ok(total)
    }

    async fn json(&mut self, path: &str) -> Result<Option<serde_json::Value>, Failed> {
        let answer = self
            .admin
            .look(path)
            .await
            .map_err(super::runner::setup_failed)?;
        Ok((answer.status == 200)
            .then(|| serde_json::from_slice(&answer.body).ok())
            .flatten())
    }

    /// Looks until the server is quiet, shows nothing, or `MOST_WAIT` has passed (after
    /// a wait that ended so, one look).
    pub async fn wait(&mut self) -> Result<SettleResult, Failed> {
        let started = Instant::now();
        let bound = if self.gave_up {
            Duration::ZERO
        } else {
            MOST_WAIT
        };
        let mut result = SettleResult {
            outcome: SettleOutcome::Settled,
            seconds: 0.0,
            looks: 0,
            compactions: None,
            replication_backlog: None,
            shows_tasks: false,
            shows_backlog: false,
            compactions_at_end: 0,
        };
        loop {
            let look = self.look().await?;
            result.looks += 1;
            result.shows_tasks = look.compactions.is_some();
            result.shows_backlog = look.backlog.is_some();
            result.compactions = most(result.compactions, look.compactions);
            result.replication_backlog = most(result.replication_backlog, look.backlog);
            let outcome = if !look.visible() {
                Some(SettleOutcome::NotVisible)
            } else if look.quiet() {
                Some(SettleOutcome::Settled)
            } else if started.elapsed() + BETWEEN_LOOKS > bound {
                self.gave_up = true;
                Some(SettleOutcome::TimedOut)
            } else {
                None
            };
            if let Some(outcome) = outcome {
                result.outcome = outcome;
                result.seconds = started.elapsed().as_secs_f64();
                return Ok(result);
            }
            tokio::time::sleep(BETWEEN_LOOKS).await;
        }
    }

    /// Compactions of the database running now (at a phase's end).
    pub async fn compactions_now(&mut self) -> Result<u64, Failed> {
        Ok(self.look().await?.compactions.unwrap_or(0))
    }
}

/// The larger of two figures where either was seen.
fn most(before: Option<u64>, now: Option<u64>) -> Option<u64> {
    match (before, now) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The line the run prints before the phase: what the wait found, and what the server
/// does not show, so that nothing unseen reads as nothing there.
pub fn line(phase: &str, settled: &SettleResult) -> String {
    let unseen = match (settled.shows_tasks, settled.shows_backlog) {
        (true, false) => {
            "; this server shows no internal replication backlog (no _node/_local/_system: CouchDB 2 and later have it), so none was waited for"
        }
        (false, true) => {
            "; this server shows these credentials no _active_tasks (an admin's), so compactions were not waited for"
        }
        _ => "",
    };
    format!("{}{unseen}\n", said(phase, settled))
}

/// What the looks saw, naming only what the server showed: the most at one look, or
/// (`quiet`, settled at the first look) that there was none.
fn what_was_seen(settled: &SettleResult, quiet: bool) -> String {
    let compactions = settled.compactions.map(|c| match quiet {
        true => "no compaction of the database running".to_string(),
        false => format!("at most {c} compactions of the database"),
    });
    let backlog = settled.replication_backlog.map(|b| match quiet {
        true => "no internal replication backlog".to_string(),
        false => format!("an internal replication backlog of at most {b}"),
    });
    [compactions, backlog]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" and ")
}

fn said(phase: &str, settled: &SettleResult) -> String {
    let waited = format!("{:.1} s, {} looks", settled.seconds, settled.looks);
    let seen = what_was_seen(settled, false);
    match settled.outcome {
        SettleOutcome::Settled if settled.looks == 1 => {
            format!(
                "  {phase}: the server was settled ({})",
                what_was_seen(settled, true)
            )
        }
        SettleOutcome::Settled => {
            format!("  {phase}: waited for the server to settle ({waited}; {seen})")
        }
        SettleOutcome::TimedOut if settled.looks == 1 => format!(
            "  {phase}: the server was still busy ({seen}); an earlier step waited {} s for it in vain, so this one runs at once and its figures include that work",
            MOST_WAIT.as_secs()
        ),
        SettleOutcome::TimedOut => format!(
            "  {phase}: the server did not settle in {} s ({seen}); the phase runs anyway and its figures include that work",
            MOST_WAIT.as_secs()
        ),
        SettleOutcome::NotVisible => format!(
            "  {phase}: the server shows neither _active_tasks nor _node/_local/_system (not to these credentials, or not at all): compaction and internal replication not waited for"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_database_s_shards_and_views_are_its_own() {
        assert!(is_of("shards/00000000-7fffffff/bench.1700000000", "bench"));
        assert!(is_of("bench", "bench"));
        assert!(!is_of(
            "shards/00000000-7fffffff/bench2.1700000000",
            "bench"
        ));
        assert!(!is_of("shards/00000000-7fffffff/bench.", "bench"));
        assert!(!is_of("shards/00000000-7fffffff/other.1700000000", "bench"));
        let tasks = json!([
            {"type": "database_compaction", "database": "shards/00000000-7fffffff/bench.17"},
            {"type": "view_compaction", "database": "shards/80000000-ffffffff/bench.17"},
            {"type": "database_compaction", "database": "shards/00000000-ffffffff/other.17"},
            {"type": "replication", "database": "shards/00000000-7fffffff/bench.17"},
            {"type": "indexer"}
        ]);
        assert_eq!(compactions(&tasks, "bench"), Some(2));
        assert_eq!(compactions(&json!([]), "bench"), Some(0));
        assert_eq!(compactions(&json!({"error": "not_found"}), "bench"), None);
    }

    #[test]
    fn the_backlog_is_the_system_s_internal_replication_jobs() {
        assert_eq!(
            backlog(&json!({"internal_replication_jobs": 3, "uptime": 9})),
            Some(3)
        );
        assert_eq!(backlog(&json!({"uptime": 9})), None);
        let quiet = Look {
            compactions: Some(0),
            backlog: None,
        };
        assert!(quiet.visible() && quiet.quiet());
        let busy = Look {
            backlog: Some(2),
            ..quiet
        };
        assert!(!busy.quiet());
        assert!(!Look::default().visible(), "a server that shows neither");
    }

    fn settled(compactions: Option<u64>, backlog: Option<u64>) -> SettleResult {
        SettleResult {
            outcome: SettleOutcome::Settled,
            seconds: 0.0,
            looks: 1,
            compactions,
            replication_backlog: backlog,
            shows_tasks: compactions.is_some(),
            shows_backlog: backlog.is_some(),
            compactions_at_end: 0,
        }
    }

    #[test]
    fn the_line_names_what_the_server_showed_and_what_it_could_not() {
        let couchdb = line("read", &settled(Some(0), Some(0)));
        assert_eq!(
            couchdb,
            "  read: the server was settled (no compaction of the database running and no internal replication backlog)\n"
        );
        let pouchdb = line("read", &settled(Some(0), None));
        assert!(
            pouchdb.starts_with("  read: the server was settled (no compaction of the database running); this server shows no internal replication backlog"),
            "{pouchdb}"
        );
        assert!(pouchdb.contains("none was waited for"), "{pouchdb}");
        let waited = SettleResult {
            looks: 3,
            seconds: 1.0,
            ..settled(Some(2), Some(5))
        };
        assert!(
            line("read", &waited).contains("at most 2 compactions of the database and an internal replication backlog of at most 5"),
            "{}",
            line("read", &waited)
        );
    }

    #[test]
    fn a_step_after_a_wait_in_vain_says_it_did_not_wait() {
        let busy = SettleResult {
            outcome: SettleOutcome::TimedOut,
            ..settled(Some(1), Some(0))
        };
        let said = line("read", &busy);
        assert!(
            said.contains("an earlier step waited 120 s for it in vain"),
            "{said}"
        );
        let waited = SettleResult {
            looks: 240,
            seconds: 120.0,
            ..busy
        };
        assert!(line("read", &waited).contains("did not settle in 120 s"));
    }

    #[test]
    fn the_cluster_s_nodes_are_those_safe_in_a_path() {
        let membership = json!({"all_nodes": ["a@h"], "cluster_nodes": [
            "node1@127.0.0.1", "node2@127.0.0.1", "../_config", "x?y", "", 7, "n-3_x@h.local"
        ]});
        assert_eq!(
            members(&membership),
            Some(vec![
                "node1@127.0.0.1".to_string(),
                "node2@127.0.0.1".to_string(),
                "n-3_x@h.local".to_string()
            ])
        );
        assert_eq!(members(&json!({"cluster_nodes": []})), None);
        assert_eq!(members(&json!({"error": "not_found"})), None);
        let many: Vec<String> = (0..1000).map(|i| format!("n{i}@h")).collect();
        let listed = members(&json!({"cluster_nodes": many})).unwrap();
        assert_eq!(listed.len(), MOST_NODES);
    }
}
