//! Reading the feed's answers: one change per line of a continuous feed, or a whole
//! `{"results":[…],"last_seq":…}` answer of a longpoll or normal one. Documents that come
//! with `include_docs` are skipped over, never kept.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::workload::Rev;

/// Where a feed stands, as the server wrote it: sent back as `since` to go on from there.
/// A number (PouchDB Server) or an opaque string (CouchDB 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seq(pub String);

impl Seq {
    fn of(value: &Value) -> Option<Seq> {
        match value {
            Value::Number(n) => Some(Seq(n.to_string())),
            Value::String(s) if !s.is_empty() => Some(Seq(s.clone())),
            _ => None,
        }
    }
}

/// One change: a document's id and the leaf revisions the feed names for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub seq: Option<Seq>,
    pub id: String,
    pub revs: Vec<Rev>,
}

/// One line of a continuous feed.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// An empty line: the server is alive.
    Heartbeat,
    Change(Change),
    /// The feed's end (a continuous feed ends only with a `timeout`, which is not asked).
    LastSeq(Option<Seq>),
}

/// The line, or why it is not one the feed can send.
pub type Parsed<T> = Result<T, &'static str>;

#[derive(Deserialize)]
struct RawChange {
    #[serde(default)]
    seq: Option<Value>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    changes: Option<Vec<RawRev>>,
    #[serde(default)]
    last_seq: Option<Value>,
    #[serde(default, rename = "doc")]
    _doc: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct RawRev {
    rev: String,
}

#[derive(Deserialize)]
struct RawAnswer {
    results: Vec<RawChange>,
    #[serde(default)]
    last_seq: Option<Value>,
}

fn change(raw: RawChange) -> Parsed<Change> {
    let id = raw.id.ok_or("a change without an id")?;
    let revs = raw
        .changes
        .ok_or("a change without its revisions")?
        .into_iter()
        .map(|r| Rev::parse(&r.rev).ok_or("a change with a revision that is not one"))
        .collect::<Parsed<Vec<Rev>>>()?;
    Ok(Change {
        seq: raw.seq.as_ref().and_then(Seq::of),
        id,
        revs,
    })
}

/// One line of a continuous feed (without its newline).
pub fn line(bytes: &[u8]) -> Parsed<Line> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Line::Heartbeat);
    }
    let raw: RawChange = serde_json::from_slice(bytes).map_err(|_| "a line that is not JSON")?;
    if raw.id.is_none()
        && let Some(last) = &raw.last_seq
    {
        return Ok(Line::LastSeq(Seq::of(last)));
    }
    change(raw).map(Line::Change)
}

/// A whole answer of a longpoll or normal feed: its changes and where it ends.
pub fn answer(bytes: &[u8]) -> Parsed<(Vec<Change>, Option<Seq>)> {
    let raw: RawAnswer =
        serde_json::from_slice(bytes).map_err(|_| "an answer that is not a changes list")?;
    let last = raw.last_seq.as_ref().and_then(Seq::of);
    let changes = raw.results.into_iter().map(change).collect::<Parsed<_>>()?;
    Ok((changes, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REV: &str = "1-967a00dff5e02add41819138abb3284d";

    #[test]
    fn couchdb_and_pouchdb_lines_read() {
        let couch = format!(
            r#"{{"seq":"12-g1AAAA","id":"d1","changes":[{{"rev":"{REV}"}}],"deleted":true}}"#
        );
        let Line::Change(c) = line(couch.as_bytes()).unwrap() else {
            panic!("not a change")
        };
        assert_eq!(c.seq, Some(Seq("12-g1AAAA".to_string())));
        assert_eq!((c.id.as_str(), c.revs.len()), ("d1", 1));
        let pouch = format!(
            r#"{{"id":"d2","changes":[{{"rev":"{REV}"}}],"doc":{{"_id":"d2","a":[1,{{"b":2}}]}},"seq":7}}"#
        );
        let Line::Change(c) = line(pouch.as_bytes()).unwrap() else {
            panic!("not a change")
        };
        assert_eq!(c.seq, Some(Seq("7".to_string())));
        assert_eq!(line(b"").unwrap(), Line::Heartbeat);
        assert_eq!(line(b"  \t").unwrap(), Line::Heartbeat);
        assert_eq!(
            line(br#"{"last_seq":9}"#).unwrap(),
            Line::LastSeq(Some(Seq("9".to_string())))
        );
    }

    #[test]
    fn garbage_is_named_not_taken() {
        assert!(line(b"<html>").is_err());
        assert!(line(br#"{"seq":1}"#).is_err());
        assert!(line(br#"{"seq":1,"id":"x","changes":[{"rev":"nodash"}]}"#).is_err());
        assert!(line(br#"[1,2]"#).is_err());
    }

    #[test]
    fn whole_answers_read() {
        let body = format!(
            "\n{{\"results\":[\n{{\"seq\":3,\"id\":\"a\",\"changes\":[{{\"rev\":\"{REV}\"}}]}}\n],\n\"last_seq\":3,\"pending\":0}}\n"
        );
        let (changes, last) = answer(body.as_bytes()).unwrap();
        assert_eq!((changes.len(), last), (1, Some(Seq("3".to_string()))));
        assert!(answer(b"{\"results\":5}").is_err());
    }
}
