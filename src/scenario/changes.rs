//! A scenario file phase's `changes` table: its `_changes` consumers.
//!
//! ```toml
//! changes = { consumers = 2, feed = "longpoll", include_docs = true,
//!             selector = { kind = "order" }, heartbeat = "1s", grace = "5s" }
//! ```

use serde::Deserialize;

use crate::time::duration;
use crate::workload::changes::{ChangesFeed, FeedKind, KEY_NAMES};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    consumers: u64,
    feed: Option<String>,
    include_docs: Option<bool>,
    /// A TOML table (written as JSON on the request) or a JSON text.
    selector: Option<toml::Value>,
    heartbeat: Option<String>,
    grace: Option<String>,
}

/// The consumers the table asks for, or every problem of it.
pub fn feed(value: &toml::Value) -> Result<ChangesFeed, Vec<String>> {
    let entry: Entry = value.clone().try_into().map_err(|e| {
        vec![format!(
            "changes: {}; write e.g. changes = {{ consumers = 2, feed = \"continuous\" }}",
            first_line(&e.to_string())
        )]
    })?;
    let mut problems = Vec::new();
    let mut feed = ChangesFeed::with_consumers(entry.consumers);
    if let Some(kind) = &entry.feed {
        match FeedKind::parse(kind) {
            Ok(kind) => feed.feed = kind,
            Err(e) => problems.push(format!("changes.feed: {e}")),
        }
    }
    feed.include_docs = entry.include_docs.unwrap_or(false);
    feed.selector = entry.selector.map(|s| match s {
        toml::Value::String(text) => text,
        table => serde_json::to_string(&table).unwrap_or_default(),
    });
    for (key, text, slot) in [
        ("changes.heartbeat", &entry.heartbeat, &mut feed.heartbeat),
        ("changes.grace", &entry.grace, &mut feed.grace),
    ] {
        if let Some(text) = text {
            match duration::parse(text) {
                Ok(value) => *slot = value,
                Err(e) => problems.push(format!("{key}: {e}")),
            }
        }
    }
    problems.extend(feed.problems(&KEY_NAMES));
    if problems.is_empty() {
        Ok(feed)
    } else {
        Err(problems)
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn table(text: &str) -> toml::Value {
        let doc: toml::Table = toml::from_str(&format!("changes = {text}")).unwrap();
        doc["changes"].clone()
    }

    #[test]
    fn a_full_table_reads() {
        let feed = feed(&table(
            r#"{ consumers = 2, feed = "normal", include_docs = true, selector = { kind = "a" }, heartbeat = "500ms", grace = "2s" }"#,
        ))
        .unwrap();
        assert_eq!((feed.consumers, feed.feed), (2, FeedKind::Normal));
        assert_eq!(feed.selector.as_deref(), Some(r#"{"kind":"a"}"#));
        assert_eq!(feed.heartbeat, Duration::from_millis(500));
        assert_eq!(feed.grace, Duration::from_secs(2));
    }

    #[test]
    fn every_problem_is_named() {
        let problems = feed(&table(
            r#"{ consumers = 0, feed = "sse", heartbeat = "1ms", selector = "[1]" }"#,
        ))
        .unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].starts_with("changes.feed"));
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("changes.consumers 0"))
        );
        let unknown = feed(&table("{ consumers = 1, follow = true }")).unwrap_err();
        assert!(unknown[0].contains("follow"), "{unknown:?}");
    }
}
