//! A scenario file phase's `replication` table: continuous replication while it runs.
//!
//! ```toml
//! replication = { to = ["replica-a", "http://user:pw@other:5984/replica-b"], two_way = false, grace = "30s" }
//! ```

use serde::Deserialize;

use crate::time::duration;
use crate::workload::replication::ContinuousReplication;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// One replica, or a list of them (one-to-many): a database name on the run's server,
    /// or a database's URL on another.
    to: toml::Value,
    #[serde(default)]
    two_way: bool,
    grace: Option<String>,
}

const EXAMPLE: &str = "write e.g. replication = { to = [\"replica-a\"], two_way = false }";

/// The replications the table asks for, or every problem of it.
pub fn replication(value: &toml::Value) -> Result<ContinuousReplication, Vec<String>> {
    let entry: Entry = value.clone().try_into().map_err(|e| {
        let why = e.to_string();
        vec![format!(
            "replication: {}; {EXAMPLE}",
            why.lines().next().unwrap_or(&why)
        )]
    })?;
    let mut problems = Vec::new();
    let replicas = match &entry.to {
        toml::Value::String(name) => vec![name.clone()],
        toml::Value::Array(names) => names
            .iter()
            .filter_map(|n| match n {
                toml::Value::String(name) => Some(name.clone()),
                other => {
                    problems.push(format!(
                        "replication.to: {other} is not a database name; {EXAMPLE}"
                    ));
                    None
                }
            })
            .collect(),
        other => {
            problems.push(format!(
                "replication.to: {other} is not a database name or a list of them; {EXAMPLE}"
            ));
            Vec::new()
        }
    };
    let mut replication = ContinuousReplication::to(replicas);
    replication.two_way = entry.two_way;
    if let Some(text) = &entry.grace {
        match duration::parse(text) {
            Ok(grace) => replication.grace = grace,
            Err(e) => problems.push(format!("replication.grace: {e}")),
        }
    }
    if problems.is_empty() {
        problems.extend(replication.problems("replication.to", None));
    }
    if problems.is_empty() {
        Ok(replication)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn table(text: &str) -> toml::Value {
        let doc: toml::Table = toml::from_str(&format!("replication = {text}")).unwrap();
        doc["replication"].clone()
    }

    #[test]
    fn one_name_or_a_list_reads() {
        let one = replication(&table(r#"{ to = "copy" }"#)).unwrap();
        assert_eq!(one, ContinuousReplication::to(vec!["copy".to_string()]));
        let many = replication(&table(
            r#"{ to = ["a", "b"], two_way = true, grace = "5s" }"#,
        ))
        .unwrap();
        assert_eq!(many.replicas, ["a", "b"]);
        assert!(many.two_way);
        assert_eq!(many.grace, Duration::from_secs(5));
    }

    #[test]
    fn every_problem_is_named() {
        let problems = replication(&table(r#"{ to = ["a", 3], grace = "soon" }"#)).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("replication.to: 3"));
        assert!(problems[1].starts_with("replication.grace"));
        let unknown = replication(&table(r#"{ to = "a", from = "b" }"#)).unwrap_err();
        assert!(unknown[0].contains("from"), "{unknown:?}");
        let url = replication(&table(r#"{ to = "http://h:5984/" }"#)).unwrap_err();
        assert!(url[0].contains("names no database"), "{url:?}");
        assert!(replication(&table(r#"{ to = "http://h:5984/db" }"#)).is_ok());
    }
}
