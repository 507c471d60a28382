//! Document templates: reading a JSON or XML schema and generating random
//! documents from it, as Iron Cushion does, reproducibly.
//!
//! * [`Template`] is a loaded, checked and compiled schema.
//! * [`DocumentWriter`] writes document `n` at version `v` as compact JSON
//!   bytes, a pure function of (template, master seed, `n`, `v`).
//! * [`Dictionary`] holds the 32,768 words strings are drawn from.
//! * [`TemplateError`] says where a template is wrong and what to do.
//!
//! # Generated values
//!
//! | template value | generated value |
//! | --- | --- |
//! | `true`/`false`, `<boolean/>` | `true` or `false`, 50/50 |
//! | integer (`0`), `<integer/>` | uniform over the `i32` range |
//! | `<integer min=".." max=".."/>`, `{"$integer": {"min": .., "max": ..}}` | uniform over `[min, max]` (within `i64`) |
//! | float (`0.0`, `1e5`), `<float/>` | uniform `f32` in `[0, 1)` |
//! | `<float min=".." max=".."/>`, `{"$float": {"min": .., "max": ..}}` | uniform `f64` in `[min, max)` |
//! | string, `<string/>` | 1 to 5 dictionary words (uniform), single spaces |
//! | `<string distinct="N"/>`, `{"$string": {"distinct": N}}` | one of N distinct strings (uniform) |
//! | RFC 3339 string, `<timestamp/>` | UTC time, whole seconds, 2000-01-01 to 2029-12-31 |
//! | `null`, `<null/>` | `null` |
//! | array, object | same length, same keys in the same order |
//!
//! Top-level `_id` and `_rev` members of a template are dropped (nested ones
//! are kept); the writer adds its own. A JSON template and the XML template
//! describing the same tree generate byte-identical documents. Details of
//! each format are in the `json` and `xml` modules, the sampling arithmetic
//! in `values`, and the update rule on [`DocumentWriter`].

mod dictionary;
mod domain;
mod error;
mod json;
mod schema;
mod timestamp;
mod values;
mod writer;
mod xml;

use std::path::Path;

pub use dictionary::Dictionary;
pub use error::TemplateError;
pub use writer::DocumentWriter;

use schema::Program;

/// A compiled document template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    program: Program,
}

impl Template {
    /// Loads a JSON template file (any CouchDB document will do).
    pub fn load_json(path: &Path) -> Result<Template, TemplateError> {
        let source = path.display().to_string();
        Template::from_json_str(&read(path, &source)?, &source)
    }

    /// Loads an XML template file.
    pub fn load_xml(path: &Path) -> Result<Template, TemplateError> {
        let source = path.display().to_string();
        Template::from_xml_str(&read(path, &source)?, &source)
    }

    /// Reads a JSON template from `text`; `source` names it in errors.
    pub fn from_json_str(text: &str, source: &str) -> Result<Template, TemplateError> {
        json::parse(text, source).map(|program| Template { program })
    }

    /// Reads an XML template from `text`; `source` names it in errors.
    pub fn from_xml_str(text: &str, source: &str) -> Result<Template, TemplateError> {
        xml::parse(text, source).map(|program| Template { program })
    }

    /// Number of top-level values (the ones updates choose from).
    pub fn top_level_len(&self) -> usize {
        self.program.fields()
    }

    /// Key of top-level value `i`, e.g. to report
    /// [`DocumentWriter::updated_field`].
    pub fn top_level_name(&self, i: usize) -> Option<String> {
        self.program.name(i)
    }
}

fn read(path: &Path, source: &str) -> Result<String, TemplateError> {
    let bytes = crate::files::read(path, crate::files::Kind::Template)
        .map_err(|e| TemplateError::whole(source, e.problem, e.remedy))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let problem = "the file is not valid UTF-8 text";
        let remedy = "save the template as UTF-8";
        match std::str::from_utf8(&e.as_bytes()[..valid]) {
            Ok(prefix) => TemplateError::at_offset(source, prefix, valid, problem, remedy),
            Err(_) => TemplateError::whole(source, problem, remedy),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};
    use std::path::PathBuf;

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name)
    }

    fn json(text: &str) -> Template {
        Template::from_json_str(text, "t.json").unwrap()
    }

    fn xml(text: &str) -> Template {
        Template::from_xml_str(text, "t.xml").unwrap()
    }

    fn doc(writer: &DocumentWriter, number: u64, version: u32) -> Vec<u8> {
        let mut out = Vec::new();
        writer.write(&mut out, number, version, None, None);
        out
    }

    fn parsed(writer: &DocumentWriter, number: u64, version: u32) -> Map<String, Value> {
        match serde_json::from_slice(&doc(writer, number, version)).unwrap() {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    const EVERYTHING_JSON: &str = r#"{
        "_id": "drop me", "_rev": "1-abc",
        "b": true, "i": 7, "f": 0.5, "s": "x", "t": "2013-07-01T12:00:00.5+01:00", "n": null,
        "a": [[0.0, 1], {}, [], {"_id": "kept", "_rev": "kept"}],
        "o": {"z": false, "y": {"x": "2000-01-01T00:00:00Z"}}
    }"#;

    const EVERYTHING_XML: &str = r#"<object>
        <entry><name>_id</name><value><string/></value></entry>
        <entry><name>b</name><value><boolean/></value></entry>
        <entry><name>i</name><value><integer/></value></entry>
        <entry><name>f</name><value><float/></value></entry>
        <entry><name>s</name><value><string/></value></entry>
        <entry><name>t</name><value><timestamp/></value></entry>
        <entry><name>n</name><value><null/></value></entry>
        <entry><name>_rev</name><value><integer/></value></entry>
        <entry><name>a</name><value><array>
            <element><array><element><float/></element><element><integer/></element></array></element>
            <element><object/></element>
            <element><array></array></element>
            <element><object>
                <entry><name>_id</name><value><string/></value></entry>
                <entry><name>_rev</name><value><string/></value></entry>
            </object></element>
        </array></value></entry>
        <entry><name>o</name><value><object>
            <entry><name>z</name><value><boolean/></value></entry>
            <entry><name>y</name><value><object>
                <entry><name>x</name><value><timestamp/></value></entry>
            </object></value></entry>
        </object></value></entry>
    </object>"#;

    #[test]
    fn example_files_load_and_match() {
        let from_json = Template::load_json(&example("ironcushion.json")).unwrap();
        let from_xml = Template::load_xml(&example("ironcushion.xml")).unwrap();
        assert_eq!(from_json, from_xml);
        assert_eq!(from_json.top_level_len(), 5);
        let a = DocumentWriter::new(from_json, 42);
        let b = DocumentWriter::new(from_xml, 42);
        for number in 0..1000 {
            for version in [1, 2, 7] {
                assert_eq!(doc(&a, number, version), doc(&b, number, version));
            }
        }
        let account = Template::load_json(&example("account.json")).unwrap();
        let writer = DocumentWriter::new(account, 1);
        let d = parsed(&writer, 0, 1);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["Id", "Name", "LastLogin"]);
        assert!(d["Id"].is_i64() && d["Name"].is_string());
        assert!(timestamp::parse(d["LastLogin"].as_str().unwrap()).is_some());
    }

    #[test]
    fn domain_examples_match_and_keep_to_their_domains() {
        let from_json = Template::load_json(&example("domains.json")).unwrap();
        let from_xml = Template::load_xml(&example("domains.xml")).unwrap();
        assert_eq!(from_json, from_xml);
        let a = DocumentWriter::new(from_json, 5);
        let b = DocumentWriter::new(from_xml, 5);
        let mut countries = std::collections::HashSet::new();
        for number in 0..2000 {
            for version in [1, 4] {
                assert_eq!(doc(&a, number, version), doc(&b, number, version));
            }
            let d = parsed(&a, number, 1);
            let age = d["age"].as_i64().unwrap();
            assert!((18..=99).contains(&age), "{age}");
            let score = d["score"].as_f64().unwrap();
            assert!((0.0..100.0).contains(&score), "{score}");
            countries.insert(d["country"].as_str().unwrap().to_owned());
            assert!(d["name"].is_string() && d["joined"].is_string());
        }
        assert_eq!(countries.len(), 50);
    }

    #[test]
    fn iron_cushion_example_shape() {
        let writer = DocumentWriter::new(
            Template::load_json(&example("ironcushion.json")).unwrap(),
            7,
        );
        let text = String::from_utf8(doc(&writer, 3, 1)).unwrap();
        let d: Value = serde_json::from_str(&text).unwrap();
        let array1 = d["array1"].as_array().unwrap();
        assert_eq!(array1.len(), 4);
        assert!(array1[0].as_array().unwrap().iter().all(|f| f.is_f64()));
        assert_eq!(array1[1], Value::Object(Map::new()));
        assert!(array1[2].is_boolean() && array1[3].is_null());
        assert!(d["boolean1"].is_boolean() && d["integer1"].is_i64());
        assert_eq!(d["obj1"]["array2"], Value::Array(vec![]));
        assert!(d["obj1"]["obj2"]["boolean2"].is_boolean());
        assert!(d["string1"].is_string());
        assert!(
            !text.contains(' ') || text.contains("\"string1\":\""),
            "compact: {text}"
        );
    }

    #[test]
    fn json_and_xml_generate_identical_bytes() {
        let from_json = json(EVERYTHING_JSON);
        let from_xml = xml(EVERYTHING_XML);
        assert_eq!(from_json, from_xml);
        let a = DocumentWriter::new(from_json, 9);
        let b = DocumentWriter::new(from_xml, 9);
        for number in 0..500 {
            for version in 1..6 {
                let mut x = Vec::new();
                let mut y = Vec::new();
                a.write(&mut x, number, version, Some("id"), Some("1-r"));
                b.write(&mut y, number, version, Some("id"), Some("1-r"));
                assert_eq!(x, y);
            }
        }
    }

    #[test]
    fn reserved_members_removed_only_at_top_level() {
        let writer = DocumentWriter::new(json(EVERYTHING_JSON), 1);
        let d = parsed(&writer, 0, 1);
        assert_eq!(
            d.keys().collect::<Vec<_>>(),
            ["b", "i", "f", "s", "t", "n", "a", "o"]
        );
        let nested = d["a"][3].as_object().unwrap();
        assert_eq!(nested.keys().collect::<Vec<_>>(), ["_id", "_rev"]);
        assert_eq!(writer.template().top_level_len(), 8);
        assert_eq!(writer.template().top_level_name(0).as_deref(), Some("b"));
        assert_eq!(writer.template().top_level_name(8), None);
    }

    #[test]
    fn values_keep_their_kind() {
        let writer = DocumentWriter::new(json(EVERYTHING_JSON), 2);
        for number in 0..200 {
            let d = parsed(&writer, number, 1);
            assert!(d["b"].is_boolean());
            assert!(d["i"].is_i64());
            assert!(d["f"].is_f64());
            assert!(d["s"].is_string());
            assert!(d["n"].is_null());
            assert!(d["a"][0][0].is_f64() && d["a"][0][1].is_i64());
            for t in [&d["t"], &d["o"]["y"]["x"]] {
                let secs = timestamp::parse(t.as_str().unwrap()).unwrap();
                assert!((timestamp::START..timestamp::END).contains(&secs));
            }
        }
    }

    #[test]
    fn key_order_follows_the_template() {
        let writer = DocumentWriter::new(
            json(r#"{"zeta": 1, "alpha": {"b": 1, "a": 2, "c": 3}, "mid": 1}"#),
            3,
        );
        let text = String::from_utf8(doc(&writer, 0, 1)).unwrap();
        let positions: Vec<usize> = [
            "\"zeta\"",
            "\"alpha\"",
            "\"b\"",
            "\"a\"",
            "\"c\"",
            "\"mid\"",
        ]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        let d = parsed(&writer, 0, 1);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["zeta", "alpha", "mid"]);
    }

    #[test]
    fn id_and_rev_come_first_and_are_escaped() {
        let writer = DocumentWriter::new(json(r#"{"a": 1}"#), 4);
        let mut out = b"prefix".to_vec();
        writer.write(&mut out, 5, 1, Some("doc \"5\"\\\n"), Some("2-x"));
        assert!(
            out.starts_with(b"prefix{\"_id\":\"doc \\\"5\\\"\\\\\\n\",\"_rev\":\"2-x\",\"a\":")
        );
        let d: Map<String, Value> = serde_json::from_slice(&out[6..]).unwrap();
        assert_eq!(d.keys().collect::<Vec<_>>(), ["_id", "_rev", "a"]);
        assert_eq!(d["_id"], "doc \"5\"\\\n");
        let mut only_rev = Vec::new();
        writer.write(&mut only_rev, 5, 1, None, Some("2-x"));
        assert!(only_rev.starts_with(b"{\"_rev\":\"2-x\",\"a\":"));
        let empty = DocumentWriter::new(json("{}"), 4);
        let mut out = Vec::new();
        empty.write(&mut out, 0, 1, None, None);
        empty.write(&mut out, 0, 3, Some("x"), None);
        empty.write(&mut out, 0, 1, Some("x"), Some("y"));
        assert_eq!(out, b"{}{\"_id\":\"x\"}{\"_id\":\"x\",\"_rev\":\"y\"}");
    }

    #[test]
    fn awkward_keys_are_escaped() {
        let template = json(
            r#"{"quote\"": 1, "back\\slash": {"ctl\u0001\n\t": [true]}, "üñí ✓ 😀 \u2028": "", "": null}"#,
        );
        let writer = DocumentWriter::new(template, 5);
        for number in 0..100 {
            let d = parsed(&writer, number, 1);
            assert_eq!(
                d.keys().collect::<Vec<_>>(),
                ["quote\"", "back\\slash", "üñí ✓ 😀 \u{2028}", ""]
            );
            assert!(d["back\\slash"]["ctl\u{1}\n\t"][0].is_boolean());
        }
        let x = xml(
            "<object><entry><name>a\"b\\c&#9;é&#x1F600;</name><value><null/></value></entry></object>",
        );
        let writer = DocumentWriter::new(x, 5);
        assert_eq!(
            doc(&writer, 0, 1),
            "{\"a\\\"b\\\\c\\té😀\":null}".as_bytes()
        );
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = DocumentWriter::new(json(EVERYTHING_JSON), 11);
        let b = DocumentWriter::new(json(EVERYTHING_JSON), 11);
        let c = DocumentWriter::new(json(EVERYTHING_JSON), 12);
        let mut same_as_other_seed = 0;
        let mut distinct = std::collections::HashSet::new();
        for number in 0..1000 {
            let x = doc(&a, number, 1);
            assert_eq!(x, doc(&b, number, 1));
            assert_eq!(x, doc(&a, number, 1));
            if x == doc(&c, number, 1) {
                same_as_other_seed += 1;
            }
            distinct.insert(x);
        }
        assert_eq!(same_as_other_seed, 0);
        assert_eq!(
            distinct.len(),
            1000,
            "documents must differ from each other"
        );
        assert_ne!(a.dictionary(), c.dictionary());
        // Golden bytes: changing them breaks reproducibility across versions.
        let golden = DocumentWriter::new(
            Template::load_json(&example("ironcushion.json")).unwrap(),
            42,
        );
        assert_eq!(String::from_utf8(doc(&golden, 0, 1)).unwrap(), GOLDEN_0);
    }

    const GOLDEN_0: &str = "{\"array1\":[[0.49690622,0.14288282],{},false,null],\"boolean1\":false,\"integer1\":1653385612,\"obj1\":{\"array2\":[],\"obj2\":{\"boolean2\":false}},\"string1\":\"N9zD41plMGT7 apJSo56 hrtTpssU4vQdF\"}";

    #[test]
    fn an_update_regenerates_exactly_one_top_level_value() {
        // Integers and strings: a regenerated value equals the old one with
        // negligible probability, so "exactly one differs" is checkable.
        let template =
            json(r#"{"a": 1, "b": "", "c": {"x": 1, "y": ""}, "d": [1, 2], "e": 1, "f": ""}"#);
        let writer = DocumentWriter::new(template, 13);
        let mut chosen = [0u32; 6];
        for number in 0..3000 {
            assert_eq!(writer.updated_field(number, 1), None);
            assert_eq!(writer.updated_field(number, 0), None);
            let mut previous = parsed(&writer, number, 1);
            for version in 2..=6 {
                let current = parsed(&writer, number, version);
                let changed: Vec<usize> = previous
                    .values()
                    .zip(current.values())
                    .enumerate()
                    .filter(|(_, (p, c))| p != c)
                    .map(|(i, _)| i)
                    .collect();
                let field = writer.updated_field(number, version).unwrap();
                assert_eq!(changed, [field], "document {number} version {version}");
                assert_eq!(
                    previous.keys().collect::<Vec<_>>(),
                    current.keys().collect::<Vec<_>>()
                );
                chosen[field] += 1;
                previous = current;
            }
        }
        // The choice is uniform over the top-level values.
        for c in chosen {
            let share = f64::from(c) / 15_000.0;
            assert!((share - 1.0 / 6.0).abs() < 0.015, "{chosen:?}");
        }
        // Version 1 of a template with no top-level values has nothing to update.
        assert_eq!(DocumentWriter::new(json("{}"), 1).updated_field(0, 5), None);
    }

    #[test]
    fn versions_are_random_access() {
        // Writing version 9 directly equals applying updates 2..=9 to version 1.
        let template = json(r#"{"a": 1, "b": "", "c": 0.5, "d": true}"#);
        let writer = DocumentWriter::new(template, 14);
        for number in 0..200 {
            let mut expected = parsed(&writer, number, 1);
            let keys: Vec<String> = expected.keys().cloned().collect();
            for version in 2..=9 {
                let field = writer.updated_field(number, version).unwrap();
                let fresh = parsed(&writer, number, version);
                expected.insert(keys[field].clone(), fresh[&keys[field]].clone());
            }
            assert_eq!(parsed(&writer, number, 9), expected);
        }
    }

    #[test]
    fn many_top_level_values_update_correctly() {
        // More than one chunk of 64 top-level values.
        let fields: Vec<String> = (0..150).map(|i| format!("\"k{i}\": {i}")).collect();
        let template = json(&format!("{{{}}}", fields.join(",")));
        let writer = DocumentWriter::new(template, 15);
        for number in 0..50 {
            let mut previous = parsed(&writer, number, 1);
            assert_eq!(previous.len(), 150);
            for version in 2..=40 {
                let current = parsed(&writer, number, version);
                let changed: Vec<usize> = previous
                    .values()
                    .zip(current.values())
                    .enumerate()
                    .filter(|(_, (p, c))| p != c)
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(changed, [writer.updated_field(number, version).unwrap()]);
                previous = current;
            }
        }
    }

    #[test]
    fn statistics_through_the_writer() {
        // 100 values of each kind per document, 2,000 documents: 200,000 each.
        let body: Vec<String> = ["true", "0", "0.0", "\"\""]
            .iter()
            .enumerate()
            .map(|(i, kind)| format!("\"k{i}\": [{}]", vec![*kind; 100].join(",")))
            .collect();
        let writer = DocumentWriter::new(json(&format!("{{{}}}", body.join(","))), 16);
        let (mut trues, mut negative, mut float_sum, mut extremes) =
            (0u32, 0u32, 0.0f64, (0u32, 0u32));
        let mut word_counts = [0u32; 6];
        let samples = 200_000.0;
        for number in 0..2000 {
            let d = parsed(&writer, number, 1);
            for v in d["k0"].as_array().unwrap() {
                trues += u32::from(v.as_bool().unwrap());
            }
            for v in d["k1"].as_array().unwrap() {
                let n = v.as_i64().unwrap();
                assert!((i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&n));
                negative += u32::from(n < 0);
                extremes.0 += u32::from(n < -2_000_000_000);
                extremes.1 += u32::from(n > 2_000_000_000);
            }
            for v in d["k2"].as_array().unwrap() {
                let f = v.as_f64().unwrap();
                assert!((0.0..1.0).contains(&f));
                float_sum += f;
            }
            for v in d["k3"].as_array().unwrap() {
                let s = v.as_str().unwrap();
                let words: Vec<&str> = s.split(' ').collect();
                word_counts[words.len()] += 1;
                for w in words {
                    assert!((3..=15).contains(&w.len()));
                    assert!(
                        w.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'?' || b == b'!')
                    );
                }
            }
        }
        assert!((f64::from(trues) / samples - 0.5).abs() < 0.005, "{trues}");
        assert!(
            (f64::from(negative) / samples - 0.5).abs() < 0.005,
            "{negative}"
        );
        // P(n < -2e9) = P(n > 2e9) = 147,483,648 / 2^32 = 3.43%.
        for e in [extremes.0, extremes.1] {
            assert!(
                (f64::from(e) / samples - 0.0343).abs() < 0.002,
                "{extremes:?}"
            );
        }
        assert!((float_sum / samples - 0.5).abs() < 0.003, "{float_sum}");
        assert_eq!(word_counts[0], 0);
        for c in &word_counts[1..] {
            assert!(
                (f64::from(*c) / samples - 0.2).abs() < 0.005,
                "{word_counts:?}"
            );
        }
    }

    #[test]
    fn xml_ranges_are_honoured_through_the_writer() {
        let writer = DocumentWriter::new(
            xml(
                "<object><entry><name>i</name><value><integer min=\"-2\" max=\"2\"/></value></entry>\
                 <entry><name>f</name><value><float min=\"10\" max=\"20\"/></value></entry>\
                 <entry><name>c</name><value><float min=\"3\" max=\"3\"/></value></entry></object>",
            ),
            17,
        );
        let mut seen = [0u32; 5];
        for number in 0..20_000 {
            let d = parsed(&writer, number, 1);
            let i = d["i"].as_i64().unwrap();
            assert!((-2..=2).contains(&i));
            seen[(i + 2) as usize] += 1;
            let f = d["f"].as_f64().unwrap();
            assert!((10.0..20.0).contains(&f));
            assert_eq!(d["c"].as_f64(), Some(3.0));
        }
        assert!(seen.iter().all(|&s| (3600..4400).contains(&s)), "{seen:?}");
    }

    #[test]
    fn load_errors_name_the_file() {
        let missing = Template::load_json(Path::new("/nonexistent/x.json"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("/nonexistent/x.json: cannot read the template file: "),
            "{missing}"
        );
        assert!(
            missing.ends_with("; check the file name and that the file is readable"),
            "{missing}"
        );
        let missing = Template::load_xml(Path::new("/nonexistent/x.xml")).unwrap_err();
        assert_eq!(missing.line(), None);
        let dir =
            std::env::temp_dir().join(format!("sofabench-template-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, b"{\"a\":\n \"\xff\"}").unwrap();
        let e = Template::load_json(&bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}:2:3: the file is not valid UTF-8 text; save the template as UTF-8",
                bad.display()
            )
        );
        let bad = dir.join("bad.xml");
        std::fs::write(
            &bad,
            "<object><entry><value><null/></value></entry></object>",
        )
        .unwrap();
        let e = Template::load_xml(&bad).unwrap_err();
        assert_eq!(e.file(), bad.display().to_string());
        assert_eq!((e.line(), e.column()), (Some(1), Some(9)));
        assert_eq!(e.problem(), "<entry> has no <name>");
        std::fs::remove_dir_all(&dir).unwrap();
        let e = Template::load_json(&dir).unwrap_err().to_string();
        assert!(e.contains("cannot read the template file"), "{e}");
    }

    #[test]
    fn garbage_never_panics() {
        // Every prefix of valid templates, and some byte noise.
        for text in [EVERYTHING_JSON, EVERYTHING_XML] {
            for end in (0..text.len()).filter(|&e| text.is_char_boundary(e)) {
                let _ = Template::from_json_str(&text[..end], "t");
                let _ = Template::from_xml_str(&text[..end], "t");
            }
        }
        const NOISE: &[u8] = b"{}[]<>/\"\\:,=01e.-ntruefalsobjcyagi ";
        let mut rng = crate::seed::rng(1);
        for _ in 0..2000 {
            use rand_xoshiro::rand_core::Rng as _;
            let bytes: Vec<u8> = (0..(rng.next_u64() % 64))
                .map(|_| NOISE[(rng.next_u64() % NOISE.len() as u64) as usize])
                .collect();
            let text = String::from_utf8(bytes).unwrap();
            for result in [
                Template::from_json_str(&text, "t"),
                Template::from_xml_str(&text, "t"),
            ] {
                if let Err(e) = result {
                    let shown = e.to_string();
                    assert!(shown.starts_with("t:") && !shown.contains('\n'), "{shown}");
                    assert!(shown.contains("; "), "{shown}");
                }
            }
        }
    }

    #[test]
    fn types_are_shareable() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Template>();
        check::<DocumentWriter>();
        check::<Dictionary>();
        check::<TemplateError>();
    }
}
