//! An interval's server figures from two looks at a node: counters as what they grew by,
//! everything else as the later look saw it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{RequestTime, ServerLook};

/// What one node said about itself over one interval, as the result file keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInterval {
    /// Counters' growth over the interval (`requests`, `method.GET`, `status.201`, …);
    /// a counter that did not grow is left out. Empty when the node has no statistics,
    /// and for a phase's first look, which has no look before it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, u64>,
    /// Levels at the interval's end (`open_databases`, `open_os_files`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub levels: BTreeMap<String, u64>,
    /// CouchDB's request times, milliseconds, over its own stats interval (10 s by
    /// default), not this interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_time_ms: Option<RequestTimeFigures>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_queue: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_count: Option<u64>,
    /// The longest message queue, and whose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_queue: Option<Queue>,
    /// Background tasks running at the interval's end, by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<BTreeMap<String, u64>>,
    /// Some counter went down since the look before: the node restarted (or its counters
    /// were reset), and the interval's growth is unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counters_reset: bool,
}

impl ServerInterval {
    /// Takes in the interval right after this one: counters' growth adds up; what held at
    /// the end (levels, request times, memory, queues, tasks) is the later one's.
    pub fn absorb(&mut self, later: ServerInterval) {
        for (name, grew) in later.counts {
            *self.counts.entry(name).or_default() += grew;
        }
        self.levels = later.levels;
        self.request_time_ms = later.request_time_ms;
        self.memory_bytes = later.memory_bytes;
        self.run_queue = later.run_queue;
        self.process_count = later.process_count;
        self.longest_queue = later.longest_queue;
        self.tasks = later.tasks;
        self.counters_reset |= later.counters_reset;
    }
}

/// [`RequestTime`] as the result file writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestTimeFigures {
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    pub process: String,
    pub length: u64,
}

impl From<RequestTime> for RequestTimeFigures {
    fn from(t: RequestTime) -> Self {
        RequestTimeFigures {
            count: t.count,
            p50: t.p50,
            p90: t.p90,
            p99: t.p99,
            p999: t.p999,
            max: t.max,
        }
    }
}

/// The interval that ends with `now`, after `before` (the previous look, if any).
pub fn between(before: Option<&ServerLook>, now: &ServerLook) -> ServerInterval {
    let mut interval = ServerInterval::default();
    if let Some(stats) = &now.stats {
        interval.levels.clone_from(&stats.levels);
        interval.request_time_ms = stats.request_time.map(Into::into);
        if let Some(earlier) = before.and_then(|b| b.stats.as_ref()) {
            match growth(&earlier.counters, &stats.counters) {
                Some(counts) => interval.counts = counts,
                None => interval.counters_reset = true,
            }
        }
    }
    if let Some(system) = &now.system {
        interval.memory_bytes = system.memory_bytes;
        interval.run_queue = system.run_queue;
        interval.process_count = system.process_count;
        interval.longest_queue = system
            .longest_queue
            .clone()
            .map(|(process, length)| Queue { process, length });
    }
    interval.tasks = now.tasks.as_ref().map(|t| t.by_kind.clone());
    interval
}

/// Each counter's growth from `before` to `now`; a counter new in `now` grew from 0.
/// `None` when one went down.
fn growth(
    before: &BTreeMap<String, u64>,
    now: &BTreeMap<String, u64>,
) -> Option<BTreeMap<String, u64>> {
    now.iter()
        .map(|(name, n)| {
            let was = before.get(name).copied().unwrap_or(0);
            Some((name.clone(), n.checked_sub(was)?))
        })
        .filter(|grown| !matches!(grown, Some((_, 0))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::{fixture, node_stats, system, tasks};

    fn look(stats: &str) -> ServerLook {
        ServerLook {
            stats: node_stats::read(&fixture(stats)),
            system: system::read(&fixture("node_system.json")),
            tasks: tasks::read(&fixture("active_tasks_busy.json")),
        }
    }

    #[test]
    fn two_recorded_looks_give_the_growth_between_them() {
        let first = look("node_stats.json");
        let later = look("node_stats_later.json");
        let interval = between(Some(&first), &later);
        assert_eq!(interval.counts["requests"], 311 - 225);
        assert_eq!(interval.counts["method.GET"], 50 - 25);
        assert!(!interval.counts.contains_key("method.DELETE"));
        assert_eq!(interval.tasks.as_ref().unwrap()["indexer"], 2);
        assert!(interval.memory_bytes.unwrap() > 0);
        assert!(!interval.counters_reset);
        // The first look has levels but no growth yet.
        let opening = between(None, &first);
        assert!(opening.counts.is_empty());
        assert_eq!(opening.levels["open_databases"], 4);
    }

    #[test]
    fn a_counter_going_down_is_a_reset_not_a_huge_number() {
        let interval = between(
            Some(&look("node_stats_later.json")),
            &look("node_stats.json"),
        );
        assert!(interval.counters_reset);
        assert!(interval.counts.is_empty());
    }

    #[test]
    fn a_node_without_statistics_gives_an_empty_interval() {
        let pouchdb = ServerLook {
            tasks: tasks::read(b"[]"),
            ..ServerLook::default()
        };
        let interval = between(Some(&pouchdb), &pouchdb);
        assert_eq!(interval.tasks, Some(BTreeMap::new()));
        assert_eq!(interval.request_time_ms, None);
        let text = serde_json::to_string(&interval).unwrap();
        assert_eq!(text, r#"{"tasks":{}}"#);
    }
}
