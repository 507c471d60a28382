//! `GET /_node/_local/_system`: the Erlang VM under CouchDB: its memory, its run queue
//! (processes ready to run and waiting for a scheduler) and its message queues (a growing
//! queue is a process falling behind: `couch_server`, a database's `couch_file`).

use serde_json::Value;

/// The VM's state at one look.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemFigures {
    /// All the VM's memory, bytes (the sum of its kinds: processes, binaries, code, ETS,
    /// atoms and the rest).
    pub memory_bytes: Option<u64>,
    /// Processes waiting for a scheduler.
    pub run_queue: Option<u64>,
    pub process_count: Option<u64>,
    /// The longest message queue of any process, and whose it is.
    pub longest_queue: Option<(String, u64)>,
}

/// The memory kinds that add up to the whole (`atom_used` and `processes_used` are parts
/// of `atom` and `processes`).
const MEMORY_KINDS: [&str; 6] = ["other", "atom", "processes", "binary", "code", "ets"];

/// The figures of an answer; `None` when it is not CouchDB's shape.
pub fn read(answer: &Value) -> Option<SystemFigures> {
    let answer = answer.as_object()?;
    answer.get("uptime")?;
    let memory = answer
        .get("memory")
        .and_then(Value::as_object)
        .and_then(|m| {
            MEMORY_KINDS
                .iter()
                .try_fold(0u64, |sum, kind| sum.checked_add(m.get(*kind)?.as_u64()?))
        });
    Some(SystemFigures {
        memory_bytes: memory,
        run_queue: answer.get("run_queue").and_then(Value::as_u64),
        process_count: answer.get("process_count").and_then(Value::as_u64),
        longest_queue: answer.get("message_queues").and_then(longest_queue),
    })
}

/// The longest queue: a named process's length is a number; a kind with many processes
/// (`couch_file`, one per open file) is summarised as `{"count", "min", "max", …}`.
fn longest_queue(queues: &Value) -> Option<(String, u64)> {
    queues
        .as_object()?
        .iter()
        .filter_map(|(name, queue)| {
            let length = queue
                .as_u64()
                .or_else(|| queue.get("max").and_then(Value::as_u64))?;
            Some((name, length))
        })
        .max_by_key(|(_, length)| *length)
        .map(|(name, length)| (super::plain_name(name), length))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::fixture;

    #[test]
    fn a_recorded_answer_gives_memory_queues_and_processes() {
        let system = read(&fixture("node_system.json")).unwrap();
        let kinds = 11_211_369 + 639_193 + 52_625_752 + 7_313_120 + 14_578_350 + 1_417_152;
        assert_eq!(system.memory_bytes, Some(kinds));
        assert_eq!(system.run_queue, Some(1));
        assert_eq!(system.process_count, Some(442));
        let (name, length) = system.longest_queue.unwrap();
        assert!(length >= 2, "{name} {length}");
    }

    #[test]
    fn odd_answers_give_unknown_figures() {
        assert_eq!(read(&serde_json::json!({"error": "not_found"})), None);
        let odd = serde_json::json!({"uptime": 1, "memory": {"other": u64::MAX, "atom": 1},
            "run_queue": "x", "message_queues": {"a\nb": 3, "c": {"max": -1}}});
        let system = read(&odd).unwrap();
        assert_eq!(system.memory_bytes, None);
        assert_eq!(system.run_queue, None);
        assert_eq!(system.longest_queue, Some(("ab".to_string(), 3)));
    }
}
