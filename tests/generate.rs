//! Functional tests of `sofabench generate --schema FILE [-n N] [--seed S]`, run as a
//! user would run it: the built binary, its exit code, standard output and standard error.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};
use tempfile::TempDir;

const BAD_INPUT: i32 = 2;

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn generate(schema: &Path, extra: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .arg("generate")
        .arg("--schema")
        .arg(schema)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("sofabench starts");
    Output {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs `generate` and checks it succeeded quietly; returns its output lines parsed.
fn documents(schema: &Path, extra: &[&str]) -> (String, Vec<Map<String, Value>>) {
    let out = generate(schema, extra);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stderr, "", "nothing on stderr when all goes well");
    assert!(
        out.stdout.ends_with('\n'),
        "every line ends: {:?}",
        out.stdout
    );
    let parsed = out
        .stdout
        .lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => map,
            Ok(other) => panic!("not a JSON object: {other}"),
            Err(e) => panic!("not valid JSON ({e}): {line}"),
        })
        .collect();
    (out.stdout, parsed)
}

/// Writes `text` as `name` into `dir` and returns its path.
fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A bad input: exit code 2, nothing on stdout, exactly one line on stderr naming the
/// file (followed by `:line:column` when `position` is given), and no panic.
fn assert_bad_input(schema: &Path, position: Option<(u32, u32)>, about: &str) -> String {
    let out = generate(schema, &["-n", "3"]);
    assert_eq!(
        out.code,
        Some(BAD_INPUT),
        "exit code; stderr: {}",
        out.stderr
    );
    assert_eq!(out.stdout, "", "nothing on stdout");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "exactly one line on stderr: {:?}",
        out.stderr
    );
    let line = lines[0];
    let file = schema.display().to_string();
    let named = match position {
        Some((l, c)) => format!("{file}:{l}:{c}: "),
        None => format!("{file}: "),
    };
    assert!(line.contains(&named), "{line:?} should contain {named:?}");
    assert!(
        line.to_lowercase().contains(&about.to_lowercase()),
        "{line:?} should say {about:?}"
    );
    line.to_string()
}

#[test]
fn prints_n_lines_of_json_objects() {
    let (_, docs) = documents(&example("ironcushion.json"), &["-n", "25", "--seed", "7"]);
    assert_eq!(docs.len(), 25);
    for doc in &docs {
        let keys: Vec<&str> = doc.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["array1", "boolean1", "integer1", "obj1", "string1"],
            "key names and order of the template are kept"
        );
        assert!(doc["boolean1"].is_boolean());
        let integer = doc["integer1"].as_i64().expect("integer1 is an integer");
        assert!(
            i32::try_from(integer).is_ok(),
            "{integer} is a 32-bit integer"
        );
        let string = doc["string1"].as_str().expect("string1 is a string");
        let words = string.split(' ').count();
        assert!((1..=5).contains(&words), "1 to 5 words: {string:?}");
        let array = doc["array1"].as_array().expect("array1 is an array");
        assert_eq!(array.len(), 4);
        let floats = array[0].as_array().expect("array of two floats");
        assert_eq!(floats.len(), 2);
        for f in floats {
            let f = f.as_f64().expect("a float");
            assert!((0.0..1.0).contains(&f), "{f} in [0, 1)");
        }
        assert_eq!(array[1], Value::Object(Map::new()));
        assert!(array[2].is_boolean());
        assert!(array[3].is_null());
        assert_eq!(doc["obj1"]["array2"], Value::Array(vec![]));
        assert!(doc["obj1"]["obj2"]["boolean2"].is_boolean());
    }
    // Generated, not copied from the template: the values differ between documents.
    let integers: std::collections::HashSet<i64> = docs
        .iter()
        .map(|d| d["integer1"].as_i64().unwrap())
        .collect();
    assert!(integers.len() > 20, "{integers:?}");
}

#[test]
fn count_defaults_to_one_and_zero_prints_nothing() {
    let (_, docs) = documents(&example("ironcushion.json"), &[]);
    assert_eq!(docs.len(), 1);
    let out = generate(&example("ironcushion.json"), &["-n", "0"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let schema = example("ironcushion.json");
    let (first, docs) = documents(&schema, &["-n", "50", "--seed", "1"]);
    let (again, _) = documents(&schema, &["-n", "50", "--seed", "1"]);
    let (other, _) = documents(&schema, &["-n", "50", "--seed", "2"]);
    assert_eq!(docs.len(), 50);
    assert_eq!(first, again, "the same seed gives the same documents");
    assert_ne!(first, other, "another seed gives other documents");
    // Not just one field: most documents differ between the two seeds.
    let differing = first
        .lines()
        .zip(other.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert!(differing >= 45, "{differing} of 50 documents differ");
    // The first documents of a longer run are the documents of a shorter one.
    let (short, _) = documents(&schema, &["-n", "10", "--seed", "1"]);
    assert!(first.starts_with(&short));
}

#[test]
fn json_and_xml_examples_generate_identical_documents() {
    for seed in ["0", "1", "12345"] {
        let args = ["-n", "100", "--seed", seed];
        let (json, docs) = documents(&example("ironcushion.json"), &args);
        let (xml, _) = documents(&example("ironcushion.xml"), &args);
        assert_eq!(docs.len(), 100);
        assert_eq!(json, xml, "seed {seed}");
    }
}

/// The documents Iron Cushion's templates generate stay what they were, byte for byte:
/// the fixtures were printed by the build before value domains were added.
#[test]
fn iron_cushion_templates_generate_what_they_always_did() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (template, seed, count, fixture) in [
        ("ironcushion.json", "42", "40", "ironcushion-seed42.jsonl"),
        ("ironcushion.xml", "42", "40", "ironcushion-seed42.jsonl"),
        ("account.json", "7", "10", "account-seed7.jsonl"),
    ] {
        let (printed, _) = documents(&example(template), &["-n", count, "--seed", seed]);
        let expected = std::fs::read_to_string(fixtures.join(fixture)).unwrap();
        assert_eq!(printed, expected, "{template}");
    }
}

#[test]
fn a_wrong_value_domain_is_bad_input_with_the_fix() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "t.json",
        "{\"a\": 1,\n \"b\": {\"$string\": {\"distinct\": 0}}}",
    );
    let line = assert_bad_input(
        &schema,
        Some((2, 34)),
        "value domain $string has distinct 0",
    );
    assert!(line.contains("{\"$string\": {\"distinct\": 50}}"), "{line}");
    let xml = write(
        &dir,
        "t.xml",
        "<object><entry><name>a</name><value><string distinct=\"x\"/></value></entry></object>",
    );
    assert_bad_input(
        &xml,
        Some((1, 45)),
        "distinct=\"x\" on <string> is not a whole number",
    );
}

#[test]
fn value_domain_examples_generate_identical_documents() {
    let args = ["-n", "200", "--seed", "3"];
    let (json, docs) = documents(&example("domains.json"), &args);
    let (xml, _) = documents(&example("domains.xml"), &args);
    assert_eq!(json, xml);
    let countries: std::collections::HashSet<&str> = docs
        .iter()
        .map(|d| d["country"].as_str().unwrap())
        .collect();
    assert!(
        countries.len() <= 50 && countries.len() > 40,
        "{}",
        countries.len()
    );
}

#[test]
fn top_level_id_and_rev_are_removed() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "with_id.json",
        r#"{"_id": "doc-1", "_rev": "1-abc", "count": 3, "inner": {"_id": "kept"}}"#,
    );
    let (text, docs) = documents(&schema, &["-n", "5", "--seed", "3"]);
    assert_eq!(docs.len(), 5);
    for doc in &docs {
        let keys: Vec<&str> = doc.keys().map(String::as_str).collect();
        assert_eq!(keys, ["count", "inner"], "{doc:?}");
        assert!(doc["count"].is_i64());
        // Only the top level is a CouchDB document; a nested `_id` is an ordinary key.
        assert!(doc["inner"]["_id"].is_string());
    }
    assert!(!text.contains("doc-1") && !text.contains("1-abc"), "{text}");
    assert!(!text.contains("\"_rev\""), "{text}");
}

#[test]
fn missing_file() {
    let dir = TempDir::new().unwrap();
    let line = assert_bad_input(&dir.path().join("absent.json"), None, "cannot read");
    assert!(line.starts_with("sofabench: error: "), "{line}");
    assert_bad_input(&dir.path().join("absent.xml"), None, "cannot read");
}

#[test]
fn invalid_json() {
    let dir = TempDir::new().unwrap();
    let schema = write(&dir, "bad.json", "{\n  \"a\": 1,\n  \"b\": \n}\n");
    assert_bad_input(&schema, Some((4, 1)), "invalid JSON");
    let schema = write(&dir, "trailing.json", "{\"a\": 1} x");
    assert_bad_input(&schema, Some((1, 10)), "invalid JSON");
}

#[test]
fn invalid_xml() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "bad.xml",
        "<object>\n  <entry><name>a</name><value><integer/></value></entry>\n</objec>\n",
    );
    assert_bad_input(&schema, Some((3, 1)), "invalid XML");
}

#[test]
fn unknown_xml_tag() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "unknown.xml",
        "<object>\n  <entry><name>a</name><value><double/></value></entry>\n</object>\n",
    );
    let line = assert_bad_input(&schema, Some((2, 31)), "unknown tag");
    assert!(line.contains("double"), "{line}");
}

#[test]
fn top_level_json_array() {
    let dir = TempDir::new().unwrap();
    let schema = write(&dir, "array.json", "[{\"a\": 1}]\n");
    assert_bad_input(&schema, Some((1, 1)), "array");
}

#[test]
fn top_level_xml_array() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "array.xml",
        "<?xml version=\"1.0\"?>\n<array>\n  <element><integer/></element>\n</array>\n",
    );
    let line = assert_bad_input(&schema, Some((2, 1)), "<array>");
    assert!(line.contains("<object>"), "says what is expected: {line}");
}

#[test]
fn xml_entry_without_name() {
    let dir = TempDir::new().unwrap();
    let schema = write(
        &dir,
        "noname.xml",
        "<object>\n  <entry><name>a</name><value><integer/></value></entry>\n  \
         <entry><value><string/></value></entry>\n</object>\n",
    );
    let line = assert_bad_input(&schema, Some((3, 3)), "<entry>");
    assert!(line.contains("<name>"), "{line}");
}

/// `sofabench generate ... | head -1`: the reader goes away early; sofabench stops
/// quietly with exit status 0.
#[test]
fn closed_stdout_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .arg("generate")
        .arg("--schema")
        .arg(example("ironcushion.json"))
        .args(["-n", "100000000", "--seed", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sofabench starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let doc: Value = serde_json::from_str(&first).expect("the first line is JSON");
    assert!(doc.is_object());
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(stderr, "", "nothing on stderr");
    assert_eq!(status.code(), Some(0), "{status}");
}
