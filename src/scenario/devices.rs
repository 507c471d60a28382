//! A scenario file phase's `devices` table: the fleet of devices replicating with the
//! database while the phase runs. The values read as the `--device*` flags' do.
//!
//! ```toml
//! devices = { count = 100, scope = "doc-ids", profile = "pouchdb", feed = "longpoll",
//!             sync = "live", writes = 0.2, mix = { create = 50, edit_own = 40, edit_shared = 10 },
//!             shared_docs = 20, offline = "20%:10s:30s", cold = "5@30s", doc_size = 256,
//!             users = false, grace = "2m" }
//! ```

use serde::Deserialize;

use crate::workload::changes::FeedKind;
use crate::workload::fleet::{ClientProfile, Fleet, FleetScope, WriteMix};
use crate::workload::fleet_input::{
    self, DOC_BYTES, KEY_NAMES, parse_cold, parse_grace, parse_offline, parse_sync, parse_writes,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    count: u64,
    scope: Option<String>,
    profile: Option<String>,
    feed: Option<String>,
    /// `"live"` or a duration.
    sync: Option<String>,
    /// Writes per second per device: a number, whole or not.
    writes: Option<toml::Value>,
    mix: Option<Mix>,
    shared_docs: Option<u64>,
    /// `"SHARE%:FROM:LASTING"`.
    offline: Option<String>,
    /// A count, or `"N@TIME"`.
    cold: Option<toml::Value>,
    doc_size: Option<u64>,
    users: Option<bool>,
    grace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Mix {
    #[serde(default)]
    create: u32,
    #[serde(default)]
    edit_own: u32,
    #[serde(default)]
    edit_shared: u32,
}

const EXAMPLE: &str = "write e.g. devices = { count = 100, scope = \"doc-ids\", sync = \"live\" }";

/// The fleet the table asks for, or every problem of it.
pub fn fleet(value: &toml::Value) -> Result<Fleet, Vec<String>> {
    let entry: Entry = value.clone().try_into().map_err(|e| {
        let why = e.to_string();
        vec![format!(
            "devices: {}; {EXAMPLE}",
            why.lines().next().unwrap_or(&why)
        )]
    })?;
    let mut problems = Vec::new();
    let mut fleet = Fleet {
        devices: entry.count,
        ..Fleet::default()
    };
    let mut read = |key: &str, result: Result<(), String>| {
        if let Err(e) = result {
            problems.push(format!("devices.{key}: {e}"));
        }
    };
    if let Some(text) = &entry.scope {
        read("scope", FleetScope::parse(text).map(|s| fleet.scope = s));
    }
    if let Some(text) = &entry.profile {
        read(
            "profile",
            ClientProfile::parse(text).map(|p| fleet.profile = p),
        );
    }
    if let Some(text) = &entry.feed {
        read("feed", FeedKind::parse(text).map(|f| fleet.feed = f));
    }
    if let Some(text) = &entry.sync {
        read("sync", parse_sync(text).map(|s| fleet.sync = s));
    }
    if let Some(value) = &entry.writes {
        let writes = match value {
            toml::Value::Integer(n) => parse_writes(&n.to_string()),
            toml::Value::Float(x) => parse_writes(&x.to_string()),
            other => Err(format!("{other} is not a number; give e.g. writes = 0.2")),
        };
        read("writes", writes.map(|w| fleet.writes_per_second = w));
    }
    if let Some(mix) = &entry.mix {
        fleet.mix = WriteMix {
            create: mix.create,
            edit_own: mix.edit_own,
            edit_shared: mix.edit_shared,
        };
    }
    if let Some(shared) = entry.shared_docs {
        fleet.shared_documents = shared;
    }
    if let Some(text) = &entry.offline {
        read(
            "offline",
            parse_offline(text).map(|o| fleet.offline = Some(o)),
        );
    }
    if let Some(value) = &entry.cold {
        let cold = match value {
            toml::Value::Integer(n) => parse_cold(&n.to_string()),
            toml::Value::String(text) => parse_cold(text),
            other => Err(format!(
                "{other} is neither N nor \"N@TIME\"; give e.g. cold = \"5@30s\""
            )),
        };
        read("cold", cold.map(|c| fleet.cold = Some(c)));
    }
    if let Some(bytes) = entry.doc_size {
        let (low, high) = DOC_BYTES;
        match u32::try_from(bytes)
            .ok()
            .filter(|b| (low..=high).contains(b))
        {
            Some(bytes) => fleet.doc_bytes = bytes,
            None => read(
                "doc_size",
                Err(format!(
                    "{bytes}: give from {low} to {high} bytes, e.g. 256"
                )),
            ),
        }
    }
    fleet.users = entry.users.unwrap_or(false);
    if let Some(text) = &entry.grace {
        read("grace", parse_grace(text).map(|g| fleet.last_sync = g));
    }
    // What no single value says: a mix not summing to 100, more cold devices than
    // devices, users without databases of their own.
    problems.extend(fleet_input::problems(&fleet, &KEY_NAMES));
    if problems.is_empty() {
        Ok(fleet)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fleet::SyncEvery;
    use std::time::Duration;

    fn table(text: &str) -> toml::Value {
        let doc: toml::Table = toml::from_str(&format!("devices = {text}")).unwrap();
        doc["devices"].clone()
    }

    #[test]
    fn a_full_table_reads() {
        let fleet = fleet(&table(
            r#"{ count = 40, scope = "doc-ids", profile = "replicator", feed = "continuous", sync = "30s", writes = 1, mix = { create = 20, edit_own = 70, edit_shared = 10 }, shared_docs = 5, offline = "25%:10s:20s", cold = "4@5s", doc_size = 512, grace = "30s" }"#,
        ))
        .unwrap();
        assert_eq!(
            (fleet.devices, fleet.scope.clone()),
            (40, FleetScope::DocIds)
        );
        assert_eq!(fleet.profile, ClientProfile::Replicator);
        assert_eq!(fleet.sync, SyncEvery::Every(Duration::from_secs(30)));
        assert_eq!(fleet.writes_per_second, 1.0);
        assert_eq!(fleet.mix.edit_shared, 10);
        assert_eq!(fleet.offline.map(|o| o.share), Some(25));
        assert_eq!(
            fleet.cold.map(|c| (c.devices, c.at)),
            Some((4, Duration::from_secs(5)))
        );
        assert_eq!(
            (fleet.doc_bytes, fleet.last_sync),
            (512, Duration::from_secs(30))
        );
        let bare = super::fleet(&table("{ count = 3, cold = 3, writes = 0.5 }")).unwrap();
        assert_eq!(bare.cold.map(|c| c.devices), Some(3));
        assert_eq!(bare.writes_per_second, 0.5);
    }

    #[test]
    fn every_problem_is_named() {
        let problems = fleet(&table(
            r#"{ count = 2, scope = "everything", sync = "5ms", writes = "fast", offline = "0%:1s:1s", doc_size = 1 }"#,
        ))
        .unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:?}");
        for (problem, key) in problems.iter().zip([
            "devices.scope",
            "devices.sync",
            "devices.writes",
            "devices.offline",
            "devices.doc_size",
        ]) {
            assert!(problem.starts_with(key), "{problem:?} is not about {key}");
        }
        let whole = fleet(&table(
            r#"{ count = 2, cold = 3, mix = { create = 50, edit_shared = 40 }, users = true, scope = "selector" }"#,
        ))
        .unwrap_err();
        assert_eq!(whole.len(), 4, "{whole:?}");
        assert!(whole[0].starts_with("devices.cold 3"));
        assert!(whole[1].starts_with("devices.mix: the shares sum to 90"));
        assert!(whole[2].contains("give devices.shared_docs N"));
        assert!(whole[3].starts_with("devices.users with devices.scope selector"));
        let unknown = fleet(&table("{ count = 1, phones = 3 }")).unwrap_err();
        assert!(unknown[0].contains("phones"), "{unknown:?}");
        let mix = fleet(&table("{ count = 1, mix = { new = 100 } }")).unwrap_err();
        assert!(mix[0].contains("new"), "{mix:?}");
    }
}
