//! `GET /_active_tasks`: what the server is doing in the background, counted by kind
//! (`database_compaction`, `view_compaction`, `indexer`, `replication`, …): the answer to
//! "what was the server doing when latency jumped".

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// Tasks running at one look, by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskCounts {
    pub by_kind: BTreeMap<String, u64>,
}

/// The most kinds kept: a server cannot grow the result without end.
const MOST_KINDS: usize = 16;

/// One task as far as sofabench reads it: its kind, when it is a string; every other
/// member is skipped over.
#[derive(Deserialize)]
struct Task {
    #[serde(default, rename = "type")]
    kind: Option<Kind>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Kind {
    Named(String),
    Other(IgnoredAny),
}

/// The counts of an answer; `None` when it is not a list of tasks.
pub fn read(answer: &[u8]) -> Option<TaskCounts> {
    let tasks: Vec<Task> = serde_json::from_slice(answer).ok()?;
    let mut counts = TaskCounts::default();
    for task in tasks {
        let Some(Kind::Named(kind)) = task.kind else {
            continue;
        };
        let kind = super::plain_name(&kind);
        if counts.by_kind.len() < MOST_KINDS || counts.by_kind.contains_key(&kind) {
            *counts.by_kind.entry(kind).or_default() += 1;
        }
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::fixture;
    use serde_json::Value;

    #[test]
    fn recorded_answers_count_tasks_by_kind() {
        let busy = read(&fixture("active_tasks_busy.json")).unwrap();
        assert_eq!(busy.by_kind["database_compaction"], 2);
        assert_eq!(busy.by_kind["indexer"], 2);
        let compacting = read(&fixture("active_tasks_compacting.json")).unwrap();
        assert_eq!(compacting.by_kind["replication"], 1);
        assert_eq!(read(b"[]"), Some(TaskCounts::default()));
        assert_eq!(read(br#"{"error": "x"}"#), None);
    }

    #[test]
    fn kinds_are_bounded() {
        let tasks: Vec<Value> = (0..100)
            .map(|i| serde_json::json!({"type": format!("kind{i}")}))
            .collect();
        let tasks = Value::from(tasks).to_string();
        assert_eq!(read(tasks.as_bytes()).unwrap().by_kind.len(), MOST_KINDS);
    }
}
