//! `GET /_node/_local/_stats`: CouchDB's own statistics, of which sofabench keeps a chosen
//! set: requests by method and by status, reads and writes, open databases and files, and
//! the request-time histogram.
//!
//! Each statistic is an object `{"value": …, "type": "counter" | "gauge" | "histogram",
//! "desc": …}`. Counters only grow until the node restarts. A histogram's value covers
//! CouchDB's stats interval (`[stats] interval`, 10 s by default), not sofabench's.

use std::collections::BTreeMap;

use serde_json::Value;

/// The statistics kept from one answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStats {
    /// Counters, by sofabench's name for them (`requests`, `method.GET`, `status.201`, …).
    pub counters: BTreeMap<String, u64>,
    /// Levels that go up and down (`open_databases`, `open_os_files`), though CouchDB
    /// types them as counters.
    pub levels: BTreeMap<String, u64>,
    /// `couchdb.request_time`: time inside CouchDB per request, over its stats interval.
    pub request_time: Option<RequestTime>,
}

/// CouchDB's request-time histogram, milliseconds, over its own stats interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RequestTime {
    /// Requests the histogram covers.
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Counters read from single statistics: sofabench's name and CouchDB's path.
const COUNTERS: [(&str, &[&str]); 6] = [
    ("requests", &["couchdb", "httpd", "requests"]),
    ("bulk_requests", &["couchdb", "httpd", "bulk_requests"]),
    ("database_reads", &["couchdb", "database_reads"]),
    ("database_writes", &["couchdb", "database_writes"]),
    ("document_writes", &["couchdb", "document_writes"]),
    ("view_reads", &["couchdb", "httpd", "view_reads"]),
];

/// Statistics CouchDB types as counters that go down as well.
const LEVELS: [(&str, &[&str]); 2] = [
    ("open_databases", &["couchdb", "open_databases"]),
    ("open_os_files", &["couchdb", "open_os_files"]),
];

/// Groups of counters kept whole, under a prefix: one counter per method, per status.
const GROUPS: [(&str, &[&str]); 2] = [
    ("method", &["couchdb", "httpd_request_methods"]),
    ("status", &["couchdb", "httpd_status_codes"]),
];

/// The most counters one group may bring: a server cannot grow the result without end.
const MOST_IN_GROUP: usize = 32;

/// The kept statistics of an answer; `None` when the answer is not CouchDB's shape.
pub fn read(answer: &Value) -> Option<NodeStats> {
    // Anything without CouchDB's own group of statistics is not its answer.
    answer.get("couchdb")?.as_object()?;
    let mut stats = NodeStats::default();
    for (name, path) in COUNTERS {
        if let Some(n) = number(at(answer, path)) {
            stats.counters.insert(name.to_string(), n);
        }
    }
    for (name, path) in LEVELS {
        if let Some(n) = number(at(answer, path)) {
            stats.levels.insert(name.to_string(), n);
        }
    }
    for (prefix, path) in GROUPS {
        let Some(group) = at(answer, path).and_then(Value::as_object) else {
            continue;
        };
        for (key, stat) in group.iter().take(MOST_IN_GROUP) {
            if let Some(n) = number(Some(stat)) {
                stats
                    .counters
                    .insert(format!("{prefix}.{}", super::plain_name(key)), n);
            }
        }
    }
    stats.request_time = request_time(at(answer, &["couchdb", "request_time"]));
    Some(stats)
}

/// The statistic at `path`.
fn at<'a>(answer: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(answer, |value, key| value.get(key))
}

/// A counter's value: a whole number of its `value`.
fn number(stat: Option<&Value>) -> Option<u64> {
    stat?.get("value")?.as_u64()
}

fn request_time(stat: Option<&Value>) -> Option<RequestTime> {
    let value = stat?.get("value")?;
    let count = value.get("n")?.as_u64()?;
    let percentiles = value.get("percentile")?.as_array()?;
    let at = |wanted: u64| {
        percentiles.iter().find_map(|pair| {
            let pair = pair.as_array()?;
            (pair.first()?.as_u64()? == wanted)
                .then(|| pair.get(1)?.as_f64())
                .flatten()
        })
    };
    let finite = |x: Option<f64>| x.filter(|x| x.is_finite() && *x >= 0.0);
    Some(RequestTime {
        count,
        p50: finite(at(50))?,
        p90: finite(at(90))?,
        p99: finite(at(99))?,
        p999: finite(at(999))?,
        max: finite(value.get("max").and_then(Value::as_f64))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::fixture;

    #[test]
    fn a_recorded_answer_gives_the_chosen_statistics() {
        let stats = read(&fixture("node_stats.json")).unwrap();
        assert_eq!(stats.counters["requests"], 225);
        assert_eq!(stats.counters["method.POST"], 201);
        assert_eq!(stats.counters["status.201"], 92);
        assert_eq!(stats.counters["status.412"], 1);
        assert_eq!(stats.counters["document_writes"], 84_562);
        assert_eq!(stats.levels["open_databases"], 4);
        let time = stats.request_time.unwrap();
        assert_eq!(time.count, 205);
        assert!((time.p50 - 88.571).abs() < 0.001, "{time:?}");
        assert!((time.p999 - 5527.04).abs() < 0.01, "{time:?}");
        assert!((time.max - 5632.0).abs() < 0.01, "{time:?}");
    }

    #[test]
    fn odd_answers_give_unknown_figures_not_zeros() {
        assert_eq!(read(&serde_json::json!({"error": "not_found"})), None);
        assert_eq!(read(&serde_json::json!([1, 2])), None);
        let odd = serde_json::json!({"couchdb": {
            "httpd": {"requests": {"value": -3}},
            "database_reads": {"value": "many"},
            "request_time": {"value": {"n": 5, "percentile": [[50, 1.0]], "max": 2.0}},
            "httpd_status_codes": {"2\n00": {"value": 7}},
        }});
        let stats = read(&odd).unwrap();
        assert!(!stats.counters.contains_key("requests"));
        assert!(!stats.counters.contains_key("database_reads"));
        assert_eq!(stats.counters["status.200"], 7);
        assert_eq!(stats.request_time, None);
    }

    #[test]
    fn a_group_cannot_bring_more_than_its_share() {
        let codes: serde_json::Map<String, Value> = (0..1000)
            .map(|i| (format!("{i}"), serde_json::json!({"value": 1})))
            .collect();
        let answer = serde_json::json!({"couchdb": {"httpd_status_codes": codes}});
        assert_eq!(read(&answer).unwrap().counters.len(), MOST_IN_GROUP);
    }
}
