//! Reading a JSON template.
//!
//! The JSON is deserialized straight into [`Node`]s (no intermediate
//! `serde_json::Value`): `true`/`false` become generated booleans, numbers
//! without fraction or exponent generated integers, other numbers (`0.0`,
//! `1e5`) generated floats, strings generated strings, except RFC 3339
//! timestamps, which become generated timestamps. `null`, arrays, objects,
//! key names and key order are kept. Duplicate keys in one object are an
//! error (serde_json would silently keep the last).

use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use super::error::{TemplateError, excerpt, line_column};
use super::schema::{Member, Node, without_reserved};
use super::timestamp;

/// The top-level members of the JSON template `text` (`_id`, `_rev` removed).
pub(crate) fn parse(text: &str, source: &str) -> Result<Vec<Member>, TemplateError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Node>(text) {
        Ok(Node::Object(members)) => Ok(without_reserved(members)),
        Ok(other) => {
            let start = text.len() - text.trim_start().len();
            let (line, column) = line_column(text, start);
            Err(TemplateError::at(
                source,
                line,
                column,
                format!("the top level is {}, not an object", other.kind()),
                "a JSON template must be one object, like {\"name\": \"\", \"count\": 0}",
            ))
        }
        Err(e) => Err(from_serde(&e, source)),
    }
}

fn from_serde(e: &serde_json::Error, source: &str) -> TemplateError {
    let full = e.to_string();
    let problem = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => &full[..],
    };
    let remedy = if problem.starts_with(DUPLICATE) {
        "keys in one object must be unique; remove or rename one of them"
    } else if problem.contains("recursion limit") {
        "nest objects and arrays at most 127 levels deep"
    } else if e.is_eof() {
        "the file ends before the JSON does; close every open string, array and object"
    } else {
        "fix the JSON at that position (a template is one JSON object, as stored in CouchDB)"
    };
    let problem = format!("invalid JSON: {problem}");
    let line = u32::try_from(e.line()).unwrap_or(u32::MAX);
    let column = u32::try_from(e.column()).unwrap_or(u32::MAX);
    if line == 0 {
        TemplateError::whole(source, problem, remedy)
    } else {
        TemplateError::at(source, line, column, problem, remedy)
    }
}

const DUPLICATE: &str = "duplicate key";

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Bool)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::default_int())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::default_int())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::default_float())
    }

    fn visit_str<E>(self, s: &str) -> Result<Node, E> {
        Ok(if timestamp::parse(s).is_some() {
            Node::Timestamp
        } else {
            Node::Str
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut elements = Vec::new();
        while let Some(element) = seq.next_element::<Node>()? {
            elements.push(element);
        }
        Ok(Node::Array(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members = Vec::new();
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                return Err(de::Error::custom(format_args!(
                    "{DUPLICATE} \"{}\"",
                    excerpt(&name)
                )));
            }
            let value = map.next_value::<Node>()?;
            members.push(Member::new(name, value));
        }
        Ok(Node::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Vec<Member> {
        parse(text, "t.json").unwrap()
    }

    fn error(text: &str) -> String {
        parse(text, "t.json").unwrap_err().to_string()
    }

    #[test]
    fn kinds_are_recognised() {
        let m = members(
            r#"{"b": false, "i": -5, "u": 18446744073709551615, "f": 0.0, "e": 1e3,
                "s": "", "t": "2013-07-01T12:00:00Z", "n": null, "a": [1, "x"], "o": {}}"#,
        );
        let kinds: Vec<(&str, Node)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.value.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("b", Node::Bool),
                ("i", Node::default_int()),
                ("u", Node::default_int()),
                ("f", Node::default_float()),
                ("e", Node::default_float()),
                ("s", Node::Str),
                ("t", Node::Timestamp),
                ("n", Node::Null),
                ("a", Node::Array(vec![Node::default_int(), Node::Str])),
                ("o", Node::Object(vec![])),
            ]
        );
    }

    #[test]
    fn key_order_is_kept() {
        let names: Vec<String> = members(r#"{"z": 1, "a": 2, "m": {"y": 1, "b": 2}}"#)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["z", "a", "m"]);
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        assert_eq!(members("\u{feff}{\"a\": 1}").len(), 1);
    }

    #[test]
    fn invalid_json_has_position_and_advice() {
        assert_eq!(
            error("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "t.json:3:7: invalid JSON: expected `:`; fix the JSON at that position \
             (a template is one JSON object, as stored in CouchDB)"
        );
        let e = error("{\"a\": [1, 2");
        assert!(
            e.starts_with("t.json:1:11: invalid JSON: EOF while parsing a list; the file ends"),
            "{e}"
        );
        let e = error("");
        assert!(
            e.starts_with("t.json:1:1: invalid JSON: EOF while parsing a value;"),
            "{e}"
        );
        let e = error("{} {}");
        assert!(
            e.starts_with("t.json:1:4: invalid JSON: trailing characters;"),
            "{e}"
        );
    }

    #[test]
    fn top_level_must_be_an_object() {
        assert_eq!(
            error("\n  [1, 2]"),
            "t.json:2:3: the top level is an array, not an object; a JSON template must be one \
             object, like {\"name\": \"\", \"count\": 0}"
        );
        assert!(error("\"x\"").contains("the top level is a string, not an object"));
        assert!(error("null").contains("the top level is null, not an object"));
        assert!(error("3").contains("the top level is an integer"));
    }

    #[test]
    fn duplicate_keys_are_reported() {
        let e = error("{\"a\": 1,\n \"b\": {\"x\": 1, \"x\": 2}}");
        assert!(e.starts_with("t.json:2:"), "{e}");
        assert!(
            e.contains("invalid JSON: duplicate key \"x\"; keys in one object must be unique"),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let e = error(&deep);
        assert!(
            e.contains("recursion limit exceeded; nest objects and arrays at most"),
            "{e}"
        );
        let fine = format!("{{\"a\": {}{}}}", "[".repeat(120), "]".repeat(120));
        assert_eq!(members(&fine).len(), 1);
    }
}
