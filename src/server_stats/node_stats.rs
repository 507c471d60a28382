//! `GET /_node/_local/_stats`: CouchDB's own statistics, of which sofabench keeps a chosen
//! set: requests by method and by status, reads and writes, open databases and files, and
//! the request-time histogram.
//!
//! Each statistic is an object `{"value": …, "type": "counter" | "gauge" | "histogram",
//! "desc": …}`. Counters only grow until the node restarts. A histogram's value covers
//! CouchDB's stats interval (`[stats] interval`, 10 s by default), not sofabench's.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::figure::Figure;

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

/// The answer as far as sofabench reads it: every other member, of any size, is skipped
/// over without being kept. Anything without CouchDB's own group of statistics is not its
/// answer.
#[derive(Deserialize)]
struct Answer {
    couchdb: Couch,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Couch {
    httpd: Httpd,
    database_reads: Stat,
    database_writes: Stat,
    document_writes: Stat,
    open_databases: Stat,
    open_os_files: Stat,
    httpd_request_methods: Group,
    httpd_status_codes: Group,
    request_time: TimeStat,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Httpd {
    requests: Stat,
    bulk_requests: Stat,
    view_reads: Stat,
}

/// One statistic: `{"value": …, "type": …, "desc": …}`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Stat {
    value: Figure,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct TimeStat {
    value: Option<TimeValue>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct TimeValue {
    n: Figure,
    percentile: Vec<Vec<Figure>>,
    max: Figure,
}

/// The first [`MOST_IN_GROUP`] counters of a group, in the answer's order; the rest are
/// skipped over.
#[derive(Default)]
struct Group(Vec<(String, Stat)>);

/// The most counters one group may bring: a server cannot grow the result without end.
const MOST_IN_GROUP: usize = 32;

impl<'de> Deserialize<'de> for Group {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Group, D::Error> {
        deserializer.deserialize_map(GroupVisitor)
    }
}

struct GroupVisitor;

impl<'de> Visitor<'de> for GroupVisitor {
    type Value = Group;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of statistics")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Group, A::Error> {
        let mut kept = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            if kept.len() < MOST_IN_GROUP {
                kept.push((super::plain_name(&key), map.next_value()?));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Group(kept))
    }
}

/// The kept statistics of an answer; `None` when the answer is not CouchDB's shape.
pub fn read(answer: &[u8]) -> Option<NodeStats> {
    let couch = serde_json::from_slice::<Answer>(answer).ok()?.couchdb;
    let mut stats = NodeStats::default();
    let counters = [
        ("requests", &couch.httpd.requests),
        ("bulk_requests", &couch.httpd.bulk_requests),
        ("database_reads", &couch.database_reads),
        ("database_writes", &couch.database_writes),
        ("document_writes", &couch.document_writes),
        ("view_reads", &couch.httpd.view_reads),
    ];
    for (name, stat) in counters {
        if let Some(n) = stat.value.whole() {
            stats.counters.insert(name.to_string(), n);
        }
    }
    let levels = [
        ("open_databases", &couch.open_databases),
        ("open_os_files", &couch.open_os_files),
    ];
    for (name, stat) in levels {
        if let Some(n) = stat.value.whole() {
            stats.levels.insert(name.to_string(), n);
        }
    }
    let groups = [
        ("method", &couch.httpd_request_methods),
        ("status", &couch.httpd_status_codes),
    ];
    for (prefix, group) in groups {
        for (key, stat) in &group.0 {
            if let Some(n) = stat.value.whole() {
                stats.counters.insert(format!("{prefix}.{key}"), n);
            }
        }
    }
    stats.request_time = couch.request_time.value.as_ref().and_then(request_time);
    Some(stats)
}

fn request_time(value: &TimeValue) -> Option<RequestTime> {
    let at = |wanted: u64| {
        value
            .percentile
            .iter()
            .find_map(|pair| match pair.as_slice() {
                [key, time] if key.whole() == Some(wanted) => time.real(),
                _ => None,
            })
    };
    let finite = |x: Option<f64>| x.filter(|x| x.is_finite() && *x >= 0.0);
    Some(RequestTime {
        count: value.n.whole()?,
        p50: finite(at(50))?,
        p90: finite(at(90))?,
        p99: finite(at(99))?,
        p999: finite(at(999))?,
        max: finite(value.max.real())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::fixture;
    use serde_json::Value;

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
        assert_eq!(read(br#"{"error": "not_found"}"#), None);
        assert_eq!(read(b"[1, 2]"), None);
        let odd = serde_json::json!({"couchdb": {
            "httpd": {"requests": {"value": -3}},
            "database_reads": {"value": "many"},
            "request_time": {"value": {"n": 5, "percentile": [[50, 1.0]], "max": 2.0}},
            "httpd_status_codes": {"2\n00": {"value": 7}},
        }});
        let stats = read(odd.to_string().as_bytes()).unwrap();
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
        let answer = answer.to_string();
        assert_eq!(
            read(answer.as_bytes()).unwrap().counters.len(),
            MOST_IN_GROUP
        );
    }
}
