//! `GET /_node/_local/_system`: the Erlang VM under CouchDB: its memory, its run queue
//! (processes ready to run and waiting for a scheduler) and its message queues (a growing
//! queue is a process falling behind: `couch_server`, a database's `couch_file`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::figure::Figure;

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

/// The answer as far as sofabench reads it; every other member is skipped over. Without
/// `uptime` it is not CouchDB's.
#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "uptime")]
    _uptime: IgnoredAny,
    #[serde(default)]
    memory: Option<Memory>,
    #[serde(default)]
    run_queue: Figure,
    #[serde(default)]
    process_count: Figure,
    #[serde(default)]
    message_queues: BTreeMap<String, Queue>,
}

/// The memory kinds that add up to the whole (`atom_used` and `processes_used` are parts
/// of `atom` and `processes`).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Memory {
    other: Figure,
    atom: Figure,
    processes: Figure,
    binary: Figure,
    code: Figure,
    ets: Figure,
}

/// A named process's queue length is a number; a kind with many processes
/// (`couch_file`, one per open file) is summarised as `{"count", "min", "max", …}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Queue {
    // First: a length takes any value, a summary only an object.
    Summary {
        #[serde(default)]
        max: Figure,
    },
    Length(Figure),
}

impl Queue {
    fn length(&self) -> Option<u64> {
        match self {
            Queue::Length(n) | Queue::Summary { max: n } => n.whole(),
        }
    }
}

/// The figures of an answer; `None` when it is not CouchDB's shape.
pub fn read(answer: &[u8]) -> Option<SystemFigures> {
    let answer: Answer = serde_json::from_slice(answer).ok()?;
    let memory = answer.memory.and_then(|m| {
        [m.other, m.atom, m.processes, m.binary, m.code, m.ets]
            .iter()
            .try_fold(0u64, |sum, kind| sum.checked_add(kind.whole()?))
    });
    let longest_queue = answer
        .message_queues
        .iter()
        .filter_map(|(name, queue)| Some((name, queue.length()?)))
        .max_by_key(|(_, length)| *length)
        .map(|(name, length)| (super::plain_name(name), length));
    Some(SystemFigures {
        memory_bytes: memory,
        run_queue: answer.run_queue.whole(),
        process_count: answer.process_count.whole(),
        longest_queue,
    })
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
        assert_eq!(read(br#"{"error": "not_found"}"#), None);
        let odd = serde_json::json!({"uptime": 1, "memory": {"other": u64::MAX, "atom": 1},
            "run_queue": "x", "message_queues": {"a\nb": 3, "c": {"max": -1}}});
        let system = read(odd.to_string().as_bytes()).unwrap();
        assert_eq!(system.memory_bytes, None);
        assert_eq!(system.run_queue, None);
        assert_eq!(system.longest_queue, Some(("ab".to_string(), 3)));
    }
}
