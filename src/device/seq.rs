//! A sequence of the changes feed, kept as the server wrote it (a number for PouchDB
//! Server, an opaque string for CouchDB 2+), so that it goes back into a replication log
//! with its own JSON type.

use serde_json::Value;

/// The longest sequence kept (CouchDB's grow with the shards: a few hundred bytes).
pub const MAX_SEQ_BYTES: usize = 16 * 1024;

/// A feed's sequence, as JSON text (`42` or `"42-g1AAAA…"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seq(Box<str>);

impl Seq {
    /// The start of every feed.
    pub fn zero() -> Seq {
        Seq("0".into())
    }

    pub fn of_number(n: u64) -> Seq {
        Seq(n.to_string().into())
    }

    /// A sequence a server wrote: a number or a non-empty string within the bound.
    pub fn of(value: &Value) -> Option<Seq> {
        let fits = match value {
            Value::Number(_) => true,
            Value::String(text) => !text.is_empty() && text.len() <= MAX_SEQ_BYTES,
            _ => false,
        };
        fits.then(|| Seq(value.to_string().into()))
    }

    /// The sequence as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// The sequence as a number, for the device's own (push) sequences.
    pub fn number(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The sequence as a `since=` query value (percent-encoded).
    pub fn query_value(&self) -> String {
        let text = match self.json() {
            Value::String(text) => text,
            _ => self.0.to_string(),
        };
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    pub fn text_len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sequences_keep_their_json_type_and_go_into_queries_encoded() {
        let number = Seq::of(&json!(42)).unwrap();
        assert_eq!(
            (number.json(), number.query_value()),
            (json!(42), "42".to_string())
        );
        let text = Seq::of(&json!("12-g1A+/=")).unwrap();
        assert_eq!(text.json(), json!("12-g1A+/="));
        assert_eq!(text.query_value(), "12-g1A%2B%2F%3D");
        assert_eq!(number.number(), Some(42));
        assert_eq!(text.number(), None);
        for bad in [
            json!(""),
            json!(null),
            json!([1]),
            json!("x".repeat(MAX_SEQ_BYTES + 1)),
        ] {
            assert!(Seq::of(&bad).is_none(), "{bad}");
        }
    }
}
