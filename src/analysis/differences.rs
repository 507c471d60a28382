//! The settings in which two results' runs differ, from their `config`, named as a user
//! set them: a change between two runs may come from any of them rather than from what
//! the user meant to compare, so `compare` lists them under a warning.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::results::RunResult;

/// Keys that say nothing about what a run did: drawn anew by every run (the seed and
/// the id prefix), or how often it was repeated.
const NOT_COMPARED: [&str; 3] = ["seed", "id_prefix", "runs"];

/// The CRUD weights, shown together as the mix.
const WEIGHTS: [&str; 4] = [
    "create_weight",
    "read_weight",
    "update_weight",
    "delete_weight",
];

/// Keys shown under another name, with how their values read.
const NAMED: [(&str, &str); 9] = [
    ("num_connections", "connections"),
    ("database_address", "server"),
    ("database_name", "database"),
    ("auth", "auth mode"),
    ("tls", "TLS"),
    ("keep_alive", "keep-alive"),
    ("scenario", "scenario"),
    ("timeout_seconds", "timeout (s)"),
    ("phases", "phases"),
];

/// The longest value shown; a scenario's phases can run to a thousand descriptions.
const MOST_CHARS: usize = 200;

type Config = BTreeMap<String, Value>;

/// One line per setting the two runs differ in: `connections: A 1, B 8`.
pub fn differing(a: &RunResult, b: &RunResult) -> Vec<String> {
    differing_between(a, b, ('A', 'B'))
}

/// As [`differing`], each side named by its letter: `connections: A 1, C 8`.
pub fn differing_between(a: &RunResult, b: &RunResult, letters: (char, char)) -> Vec<String> {
    let pair = |label: &str, a: &str, b: &str| pair(label, a, b, letters);
    let (a, b) = (&a.config, &b.config);
    let differs = |key: &str| a.get(key) != b.get(key);
    let mut lines = Vec::new();
    if differs("rate") {
        lines.push(pair("load model", &load_model(a), &load_model(b)));
    }
    if WEIGHTS.iter().any(|key| differs(key)) {
        lines.push(pair(
            "mix (create/read/update/delete weights)",
            &weights(a),
            &weights(b),
        ));
    }
    for (key, label) in NAMED {
        if differs(key) {
            lines.push(pair(
                label,
                &named(key, a.get(key)),
                &named(key, b.get(key)),
            ));
        }
    }
    let shown: BTreeSet<&str> = ["rate"]
        .into_iter()
        .chain(WEIGHTS)
        .chain(NAMED.iter().map(|(key, _)| *key))
        .chain(NOT_COMPARED)
        .collect();
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if !shown.contains(key.as_str()) && differs(key) {
            lines.push(pair(key, &plain(a.get(key)), &plain(b.get(key))));
        }
    }
    lines
}

/// The longest pair of values shown on one line; longer ones (a scenario's phases, full
/// of commas themselves) get a line each, so that where B's begins is plain.
const MOST_ON_ONE_LINE: usize = 80;

fn pair(label: &str, a: &str, b: &str, (la, lb): (char, char)) -> String {
    let (a, b) = (cut(a), cut(b));
    if a.chars().count() + b.chars().count() > MOST_ON_ONE_LINE {
        format!("{label}:\n    {la} {a}\n    {lb} {b}")
    } else {
        format!("{label}: {la} {a}, {lb} {b}")
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MOST_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn load_model(config: &Config) -> String {
    match config.get("rate") {
        None => "not recorded".to_string(),
        Some(Value::Number(rate)) => format!(
            "open, --rate {} operations/s",
            rate.as_f64().unwrap_or(f64::NAN)
        ),
        Some(Value::Null) => "closed (no --rate)".to_string(),
        Some(other) => plain(Some(other)),
    }
}

fn weights(config: &Config) -> String {
    WEIGHTS
        .iter()
        .map(|key| match config.get(*key) {
            Some(Value::Number(n)) => n.to_string(),
            _ => "?".to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn named(key: &str, value: Option<&Value>) -> String {
    match (key, value) {
        ("tls", Some(Value::Null)) => "none (http)".to_string(),
        ("tls", Some(Value::Object(tls))) => {
            let mut text = if tls.get("verified") == Some(&Value::Bool(false)) {
                "certificates not checked (--insecure)".to_string()
            } else {
                "certificates checked".to_string()
            };
            if let Some(Value::String(cacert)) = tls.get("cacert") {
                text.push_str(&format!(" against {cacert}"));
            }
            if tls.get("client_certificate") == Some(&Value::Bool(true)) {
                text.push_str(", client certificate");
            }
            text
        }
        ("keep_alive", Some(Value::Bool(true))) => "on".to_string(),
        ("keep_alive", Some(Value::Bool(false))) => {
            "off (--disable-keepalive: a connection per request)".to_string()
        }
        ("timeout_seconds", Some(Value::Null)) => "none".to_string(),
        ("phases", Some(Value::Array(phases))) => phases
            .iter()
            .map(|p| plain(Some(p)))
            .collect::<Vec<_>>()
            .join("; "),
        _ => plain(value),
    }
}

fn plain(value: Option<&Value>) -> String {
    match value {
        None => "not recorded".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "none".to_string(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(config: Value) -> RunResult {
        let mut result = RunResult::of_phases(Vec::new());
        result.config = serde_json::from_value(config).unwrap();
        result
    }

    fn base() -> Value {
        json!({
            "rate": null, "num_connections": 1, "create_weight": 2, "read_weight": 2,
            "update_weight": 3, "delete_weight": 3, "database_name": "bench", "auth": "basic",
            "tls": null, "keep_alive": true, "seed": 1, "id_prefix": "a", "scenario": "ironcushion",
            "retry_429": null
        })
    }

    #[test]
    fn each_setting_that_differs_is_named_as_users_set_it() {
        let mut other = base();
        for (key, value) in [
            ("rate", json!(500.0)),
            ("num_connections", json!(8)),
            ("read_weight", json!(5)),
            ("database_name", json!("other")),
            ("auth", json!("cookie")),
            (
                "tls",
                json!({"verified": false, "cacert": null, "client_certificate": true}),
            ),
            ("keep_alive", json!(false)),
            ("retry_429", json!(10)),
            // Drawn anew by every run, or the repetition count: never a difference.
            ("seed", json!(2)),
            ("id_prefix", json!("b")),
            ("runs", json!(3)),
        ] {
            other[key] = value;
        }
        let lines = differing(&result(base()), &result(other));
        assert_eq!(
            lines,
            [
                "load model: A closed (no --rate), B open, --rate 500 operations/s",
                "mix (create/read/update/delete weights): A 2/2/3/3, B 2/5/3/3",
                "connections: A 1, B 8",
                "database: A bench, B other",
                "auth mode: A basic, B cookie",
                "TLS: A none (http), B certificates not checked (--insecure), client certificate",
                "keep-alive: A on, B off (--disable-keepalive: a connection per request)",
                "retry_429: A none, B 10",
            ]
        );
        assert!(differing(&result(base()), &result(base())).is_empty());
    }

    #[test]
    fn long_values_are_cut_and_missing_ones_said() {
        let mut long = base();
        long["phases"] = json!(vec!["crud: 1,000 operations"; 100]);
        let mut older = base();
        older.as_object_mut().unwrap().remove("auth");
        let lines = differing(&result(older), &result(long));
        assert_eq!(lines[0], "auth mode: A not recorded, B basic");
        assert!(
            lines[1].starts_with("phases:\n    A not recorded\n    B crud: 1,000 operations; "),
            "a long pair gets a line a side: {}",
            lines[1]
        );
        assert!(lines[1].ends_with('…') && lines[1].chars().count() < 260);
    }
}
