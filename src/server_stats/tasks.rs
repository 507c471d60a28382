//! `GET /_active_tasks`: what the server is doing in the background, counted by kind
//! (`database_compaction`, `view_compaction`, `indexer`, `replication`, …): the answer to
//! "what was the server doing when latency jumped".

use std::collections::BTreeMap;

use serde_json::Value;

/// Tasks running at one look, by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskCounts {
    pub by_kind: BTreeMap<String, u64>,
}

/// The most kinds kept: a server cannot grow the result without end.
const MOST_KINDS: usize = 16;

/// The counts of an answer; `None` when it is not a list of tasks.
pub fn read(answer: &Value) -> Option<TaskCounts> {
    let mut counts = TaskCounts::default();
    for task in answer.as_array()? {
        let Some(kind) = task.get("type").and_then(Value::as_str) else {
            continue;
        };
        let kind = super::plain_name(kind);
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

    #[test]
    fn recorded_answers_count_tasks_by_kind() {
        let busy = read(&fixture("active_tasks_busy.json")).unwrap();
        assert_eq!(busy.by_kind["database_compaction"], 2);
        assert_eq!(busy.by_kind["indexer"], 2);
        let compacting = read(&fixture("active_tasks_compacting.json")).unwrap();
        assert_eq!(compacting.by_kind["replication"], 1);
        assert_eq!(read(&serde_json::json!([])), Some(TaskCounts::default()));
        assert_eq!(read(&serde_json::json!({"error": "x"})), None);
    }

    #[test]
    fn kinds_are_bounded() {
        let tasks: Vec<Value> = (0..100)
            .map(|i| serde_json::json!({"type": format!("kind{i}")}))
            .collect();
        assert_eq!(read(&Value::from(tasks)).unwrap().by_kind.len(), MOST_KINDS);
    }
}
