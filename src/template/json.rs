//! Reading a JSON template.
//!
//! The JSON is compiled as serde_json reads it, with no tree in between (not even
//! `serde_json::Value`, whose maps cost many times the text): `true`/`false` become
//! generated booleans, numbers without fraction or exponent generated integers, other
//! numbers (`0.0`, `1e5`) generated floats, strings generated strings, except RFC 3339
//! timestamps, which become generated timestamps. `null`, arrays, objects, key names and
//! key order are kept, except that an object whose first key is `$integer`, `$float` or
//! `$string` is a value domain (`domain`). Duplicate keys in one object are an error (serde_json would
//! silently keep the last).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::domain::{self, Kind};
use super::error::{TemplateError, excerpt, line_column};
use super::schema::{Compiler, Generated, Key, Keys, Program, Refused};
use super::timestamp;

/// The compiled JSON template `text` (top-level `_id`, `_rev` removed).
pub(crate) fn parse(text: &str, source: &str) -> Result<Program, TemplateError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut compiler = Compiler::new();
    let mut reader = serde_json::Deserializer::from_str(text);
    let top = TopLevel {
        compiler: &mut compiler,
    }
    .deserialize(&mut reader)
    .and_then(|top| reader.end().map(|()| top));
    match top {
        Ok(Shape::Object) => compiler.finish().map_err(|_| {
            TemplateError::whole(
                source,
                format!("invalid JSON: {TOO_LARGE}"),
                TOO_LARGE_REMEDY,
            )
        }),
        Ok(Shape::Not(kind)) => {
            let start = text.len() - text.trim_start().len();
            let (line, column) = line_column(text, start);
            Err(TemplateError::at(
                source,
                line,
                column,
                format!("the top level is {kind}, not an object"),
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
    } else if problem.starts_with(domain::PROBLEM) {
        domain::REMEDY
    } else if problem.starts_with(TOO_LARGE) {
        TOO_LARGE_REMEDY
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
const TOO_LARGE: &str = "the template compiles to more than 4 GiB";
const TOO_LARGE_REMEDY: &str = "make the template smaller";

fn refused<E: de::Error>(refusal: Refused, name: &str) -> E {
    match refusal {
        Refused::Duplicate => E::custom(format_args!("{DUPLICATE} \"{}\"", excerpt(name))),
        Refused::TooLarge => E::custom(TOO_LARGE),
    }
}

/// What the top level turned out to be.
enum Shape {
    /// An object, compiled.
    Object,
    /// Something else, skipped: what it is, for the message.
    Not(&'static str),
}

/// The top level, whose members are the top-level values.
struct TopLevel<'c> {
    compiler: &'c mut Compiler,
}

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Not("null"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Not("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Not("an integer"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Not("an integer"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Not("a float"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Shape, E> {
        Ok(Shape::Not(if timestamp::parse(s).is_some() {
            "a timestamp string"
        } else {
            "a string"
        }))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Not("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let compiler = self.compiler;
        let mut keys = Keys::top_level();
        loop {
            let mark = compiler.mark();
            let key = map.next_key_seed(KeyOf {
                compiler: &mut *compiler,
                keys: &mut keys,
                comma: false,
            })?;
            let Some(key) = key else { break };
            map.next_value_seed(ValueOf {
                compiler: &mut *compiler,
            })?;
            match key {
                Key::Kept => compiler
                    .end_field(mark)
                    .map_err(|r| refused::<A::Error>(r, ""))?,
                Key::Reserved => compiler.rewind(mark),
            }
        }
        Ok(Shape::Object)
    }
}

/// A key, written with the comma before it when it is not its object's first.
struct KeyOf<'c, 'k> {
    compiler: &'c mut Compiler,
    keys: &'k mut Keys,
    comma: bool,
}

impl<'de> DeserializeSeed<'de> for KeyOf<'_, '_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyOf<'_, '_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
        write_key(self.compiler, self.keys, name, self.comma)
    }
}

fn write_key<E: de::Error>(
    compiler: &mut Compiler,
    keys: &mut Keys,
    name: &str,
    comma: bool,
) -> Result<Key, E> {
    if comma {
        compiler.fixed(b",");
    }
    compiler.key(keys, name, None).map_err(|r| refused(r, name))
}

/// Any value below the top level.
struct ValueOf<'c> {
    compiler: &'c mut Compiler,
}

impl<'de> DeserializeSeed<'de> for ValueOf<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueOf<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.compiler.fixed(b"null");
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.compiler.value(Generated::Bool);
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.compiler.value(Generated::default_int());
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.compiler.value(Generated::default_int());
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.compiler.value(Generated::default_float());
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.compiler.value(if timestamp::parse(s).is_some() {
            Generated::Timestamp
        } else {
            Generated::Str
        });
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let compiler = self.compiler;
        compiler.fixed(b"[");
        let mut first = true;
        while seq
            .next_element_seed(ElementOf {
                compiler: &mut *compiler,
                comma: !first,
            })?
            .is_some()
        {
            first = false;
        }
        compiler.fixed(b"]");
        Ok(())
    }

    /// An object, or a value domain (an object whose first key names one).
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let compiler = self.compiler;
        let first: Option<String> = map.next_key()?;
        if let Some(kind) = first.as_deref().and_then(Kind::named) {
            compiler.value(domain::read(kind, &mut map)?);
            return Ok(());
        }
        compiler.fixed(b"{");
        let mut keys = Keys::default();
        if let Some(name) = first {
            write_key::<A::Error>(compiler, &mut keys, &name, false)?;
            map.next_value_seed(ValueOf {
                compiler: &mut *compiler,
            })?;
            while map
                .next_key_seed(KeyOf {
                    compiler: &mut *compiler,
                    keys: &mut keys,
                    comma: true,
                })?
                .is_some()
            {
                map.next_value_seed(ValueOf {
                    compiler: &mut *compiler,
                })?;
            }
        }
        compiler.fixed(b"}");
        Ok(())
    }
}

/// An array element, written with the comma before it when it is not the first.
struct ElementOf<'c> {
    compiler: &'c mut Compiler,
    comma: bool,
}

impl<'de> DeserializeSeed<'de> for ElementOf<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.comma {
            self.compiler.fixed(b",");
        }
        deserializer.deserialize_any(ValueOf {
            compiler: self.compiler,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Vec<String> {
        parse(text, "t.json").unwrap().shape()
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
        assert_eq!(
            m,
            [
                "\"b\":<bool>",
                "\"i\":<int>",
                "\"u\":<int>",
                "\"f\":<float>",
                "\"e\":<float>",
                "\"s\":<str>",
                "\"t\":<time>",
                "\"n\":null",
                "\"a\":[<int>,<str>]",
                "\"o\":{}",
            ]
        );
    }

    #[test]
    fn key_order_and_nesting_are_kept() {
        assert_eq!(
            members(r#"{"z": 1, "a": [[], {}, [null, true]], "m": {"y": 1, "b": {"c": ""}}}"#),
            [
                "\"z\":<int>",
                "\"a\":[[],{},[null,<bool>]]",
                "\"m\":{\"y\":<int>,\"b\":{\"c\":<str>}}"
            ]
        );
    }

    #[test]
    fn reserved_members_go_only_at_the_top_level() {
        assert_eq!(
            members(r#"{"_id": {"x": [1]}, "a": {"_id": 1, "_rev": 2}, "_rev": "1-x", "b": 0}"#),
            ["\"a\":{\"_id\":<int>,\"_rev\":<int>}", "\"b\":<int>"]
        );
        let e = error(r#"{"_id": 1, "a": 2, "_id": 3}"#);
        assert!(e.contains("invalid JSON: duplicate key \"_id\""), "{e}");
        let e = error(r#"{"_id": {"x": 1, "x": 2}}"#);
        assert!(e.contains("duplicate key \"x\""), "{e}");
    }

    #[test]
    fn value_domains_compile_to_generated_values() {
        let m = members(
            r#"{"a": {"$integer": {"min": 1, "max": 5}}, "b": {"$float": {"min": -1.5, "max": 2}},
                "c": {"$string": {"distinct": 7}}, "d": {"$integer": {}}, "e": {"$float": {}},
                "f": {"x": {"$string": {"distinct": 1}}}, "g": [{"$float": {"max": 3}}],
                "h": {"$integer": {"min": -9223372036854775808, "max": 9223372036854775807}}}"#,
        );
        assert_eq!(
            m,
            [
                "\"a\":<int 1..=5>",
                "\"b\":<float -1.5..2>",
                "\"c\":<str one of 7>",
                "\"d\":<int>",
                "\"e\":<float>",
                "\"f\":{\"x\":<str one of 1>}",
                "\"g\":[<float 0..3>]",
                "\"h\":<int -9223372036854775808..=9223372036854775807>",
            ]
        );
    }

    #[test]
    fn other_objects_are_kept_as_they_are() {
        assert_eq!(
            members(r#"{"a": {"$other": 1}, "b": {"x": "", "$integer": {}}, "c": {}}"#),
            [
                "\"a\":{\"$other\":<int>}",
                "\"b\":{\"x\":<str>,\"$integer\":{}}",
                "\"c\":{}"
            ]
        );
        let e = error(r#"{"a": {"x": 1, "x": 2}}"#);
        assert!(e.contains("duplicate key \"x\""), "{e}");
    }

    #[test]
    fn wrong_value_domains_say_what_to_write() {
        let remedy = "write a value domain as the only member of its object";
        for (text, problem) in [
            (
                r#"{"a": {"$integer": {"min": 10, "max": 5}}}"#,
                "value domain $integer has min 10 greater than max 5",
            ),
            (
                r#"{"a": {"$integer": {"min": 1.5}}}"#,
                "value domain $integer has min 1.5, not a whole number in the 64-bit range",
            ),
            (
                r#"{"a": {"$integer": {"max": 9223372036854775808}}}"#,
                "value domain $integer has max 9223372036854775808, not a whole number",
            ),
            (
                r#"{"a": {"$float": {"min": 2}}}"#,
                "value domain $float has min 2 greater than max 1",
            ),
            (
                r#"{"a": {"$string": {"distinct": 0}}}"#,
                "value domain $string has distinct 0 outside 1 to 4294967296",
            ),
            (
                r#"{"a": {"$string": {"distinct": -3}}}"#,
                "value domain $string has distinct -3, not a whole number",
            ),
            (
                r#"{"a": {"$string": {}}}"#,
                "value domain $string: missing field `distinct`",
            ),
            (
                r#"{"a": {"$integer": {"step": 1}}}"#,
                "value domain $integer: unknown field `step`",
            ),
            (
                r#"{"a": {"$float": 3}}"#,
                "value domain $float: invalid type: integer `3`, expected an object of min and max",
            ),
            (
                r#"{"a": {"$string": {"distinct": 5}, "b": 1}}"#,
                "value domain $string shares its object with another member",
            ),
        ] {
            let e = error(text);
            assert!(e.starts_with("t.json:1:"), "{e}");
            assert!(e.contains(&format!("invalid JSON: {problem}")), "{e}");
            assert!(e.contains(remedy), "{e}");
        }
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
