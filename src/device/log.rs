//! Replication logs: the `_local/<replication id>` document on the server and the device's
//! own copy, written in PouchDB's shape (`session_id`, `last_seq`, and a history of the
//! last sessions), read in PouchDB's or CouchDB's (`source_last_seq`, `recorded_seq`).
//! Comparing the two sides' session histories finds where a replication can start.

use serde_json::{Map, Value, json};

use super::seq::Seq;

/// Sessions a written log remembers (PouchDB's `CHECKPOINT_HISTORY_SIZE`).
pub const HISTORY: usize = 5;

/// Sessions read from a log (CouchDB keeps up to 50); the rest are ignored.
pub const HISTORY_READ: usize = 50;

/// The longest session id taken from a log.
const MAX_SESSION_BYTES: usize = 256;

/// One session of a log's history, and how far it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub session_id: Box<str>,
    pub last_seq: Seq,
}

/// One side's replication log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log {
    pub session_id: Box<str>,
    pub last_seq: Seq,
    /// Newest first; the current session is its first entry.
    pub history: Vec<Entry>,
}

impl Log {
    /// A log as a server or a client wrote it; `None` when it has no session id and
    /// sequence (then it cannot be compared, as if there were none).
    pub fn parse(doc: &Value) -> Option<Log> {
        let session_id = session_of(doc.get("session_id")?)?;
        let last_seq = doc
            .get("last_seq")
            .or_else(|| doc.get("source_last_seq"))
            .and_then(Seq::of)?;
        let history = doc
            .get("history")
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .take(HISTORY_READ)
                    .filter_map(entry_of)
                    .collect()
            })
            .unwrap_or_default();
        Some(Log {
            session_id,
            last_seq,
            history,
        })
    }

    /// The log after session `session` reached `seq`, from this side's `previous` log:
    /// the session's entry first, then the others' (at most [`HISTORY`]).
    pub fn recorded(previous: Option<&Log>, session: &str, seq: Seq) -> Log {
        let mut history = vec![Entry {
            session_id: session.into(),
            last_seq: seq.clone(),
        }];
        if let Some(previous) = previous {
            history.extend(
                previous
                    .history
                    .iter()
                    .filter(|entry| &*entry.session_id != session)
                    .take(HISTORY - 1)
                    .cloned(),
            );
        }
        Log {
            session_id: session.into(),
            last_seq: seq,
            history,
        }
    }

    /// The `_local` document holding this log, with the revision it replaces.
    pub fn document(&self, id: &str, rev: Option<&str>) -> Value {
        let mut doc = Map::new();
        doc.insert("_id".into(), json!(format!("_local/{id}")));
        if let Some(rev) = rev {
            doc.insert("_rev".into(), json!(rev));
        }
        doc.insert("session_id".into(), json!(&*self.session_id));
        doc.insert("last_seq".into(), self.last_seq.json());
        let history: Vec<Value> = self
            .history
            .iter()
            .map(|entry| json!({"session_id": &*entry.session_id, "last_seq": entry.last_seq.json()}))
            .collect();
        doc.insert("history".into(), Value::Array(history));
        doc.insert("replicator".into(), json!("sofabench"));
        doc.insert("version".into(), json!(1));
        Value::Object(doc)
    }

    /// Bytes the log takes in memory, roughly.
    pub fn bytes(&self) -> usize {
        let entries: usize = self
            .history
            .iter()
            .map(|e| size_of::<Entry>() + e.session_id.len() + e.last_seq.text_len())
            .sum();
        size_of::<Log>() + self.session_id.len() + self.last_seq.text_len() + entries
    }
}

fn session_of(value: &Value) -> Option<Box<str>> {
    let text = value.as_str()?;
    (!text.is_empty() && text.len() <= MAX_SESSION_BYTES).then(|| text.into())
}

fn entry_of(entry: &Value) -> Option<Entry> {
    Some(Entry {
        session_id: session_of(entry.get("session_id")?)?,
        last_seq: entry
            .get("last_seq")
            .or_else(|| entry.get("recorded_seq"))
            .and_then(Seq::of)?,
    })
}

/// Where a replication whose source logged `source` and target logged `target` starts:
/// the source's sequence when both were last written by one session, else the sequence
/// of the newest session both histories hold; `None` when they share none (then from 0).
/// CouchDB's `compare_replication_logs`, as PouchDB ported it.
pub fn start_from(source: &Log, target: &Log) -> Option<Seq> {
    if source.session_id == target.session_id {
        return Some(source.last_seq.clone());
    }
    let (mut s, mut t) = (&source.history[..], &target.history[..]);
    while let (Some(first_s), Some(first_t)) = (s.first(), t.first()) {
        if holds(t, &first_s.session_id) {
            return Some(first_s.last_seq.clone());
        }
        if holds(&s[1..], &first_t.session_id) {
            return Some(first_t.last_seq.clone());
        }
        (s, t) = (&s[1..], &t[1..]);
    }
    None
}

fn holds(history: &[Entry], session: &str) -> bool {
    history.iter().any(|entry| &*entry.session_id == session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(session: &str, seq: u64) -> Entry {
        Entry {
            session_id: session.into(),
            last_seq: Seq::of_number(seq),
        }
    }

    fn log(session: &str, seq: u64, history: &[(&str, u64)]) -> Log {
        Log {
            session_id: session.into(),
            last_seq: Seq::of_number(seq),
            history: history.iter().map(|(s, n)| entry(s, *n)).collect(),
        }
    }

    #[test]
    fn the_same_session_starts_from_the_source_sequence() {
        let source = log("s1", 9, &[("s1", 9)]);
        let target = log("s1", 7, &[("s1", 7)]);
        assert_eq!(start_from(&source, &target), Some(Seq::of_number(9)));
    }

    #[test]
    fn the_newest_common_session_gives_the_start() {
        // The source was written by s3 later, the target last by s2; both know s2.
        let source = log("s3", 30, &[("s3", 30), ("s2", 20), ("s1", 10)]);
        let target = log("s2", 20, &[("s2", 20), ("s1", 10)]);
        assert_eq!(start_from(&source, &target), Some(Seq::of_number(20)));
        // The target's newest session found deeper in the source.
        let target = log("t9", 25, &[("t9", 25), ("s1", 10)]);
        assert_eq!(start_from(&source, &target), Some(Seq::of_number(10)));
    }

    #[test]
    fn no_common_session_starts_from_zero() {
        let source = log("a", 5, &[("a", 5)]);
        let target = log("b", 5, &[("b", 5)]);
        assert_eq!(start_from(&source, &target), None);
        assert_eq!(start_from(&source, &log("c", 1, &[])), None);
    }

    #[test]
    fn a_recorded_log_keeps_the_last_sessions_and_round_trips() {
        let mut previous: Option<Log> = None;
        for n in 0..8u64 {
            let next = Log::recorded(previous.as_ref(), &format!("s{n}"), Seq::of_number(n));
            previous = Some(next);
        }
        let last = previous.unwrap();
        assert_eq!(last.history.len(), HISTORY);
        assert_eq!(&*last.history[0].session_id, "s7");
        assert_eq!(&*last.history[4].session_id, "s3");
        let again = Log::recorded(Some(&last), "s7", Seq::of_number(70));
        assert_eq!(again.history.len(), HISTORY);
        assert_eq!(again.history[0], entry("s7", 70));
        let doc = again.document("abc", Some("0-3"));
        assert_eq!(doc["_id"], "_local/abc");
        assert_eq!(doc["_rev"], "0-3");
        assert_eq!(doc["last_seq"], 70);
        assert_eq!(Log::parse(&doc), Some(again));
    }

    #[test]
    fn couchdb_shaped_logs_are_read() {
        let doc = json!({"session_id": "x", "source_last_seq": "5-g1A",
            "history": [{"session_id": "x", "recorded_seq": "5-g1A"}, {"bad": 1}]});
        let log = Log::parse(&doc).unwrap();
        assert_eq!(log.last_seq.json(), json!("5-g1A"));
        assert_eq!(log.history.len(), 1);
        assert!(Log::parse(&json!({"last_seq": 1})).is_none());
        assert!(Log::parse(&json!("text")).is_none());
    }
}
