//! Scenario files: TOML with an ordered list of phases.
//!
//! ```toml
//! description = "reads while the database compacts"
//! database_name = "bench"          # any flag of `run` (the command line wins)
//! json_document_schema_filename = "examples/account.json"
//! [[phase]]
//! name = "load"
//! mix = { bulk_insert = 1 }
//! batch_size = 500
//! total = 200                     # operations of all connections together
//! [[phase]]
//! name = "reads"
//! mix = { read = 9, update = 1 }
//! duration = "30s"
//! connections = 20
//! rate = 1000
//! keys = "zipfian"                # uniform (default), latest, or { zipfian = 0.8 }
//! compact_at = "10s"              # or replicate_at = "5s", replicate_to = URL or NAME, two_way = true
//! sweep = { read_ratio = [0, 50, 95] }   # or connections, batch_size, total
//! ```
//!
//! The whole file is checked before anything is sent; every problem names the file, the
//! phase and the key.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::Defaults;
use crate::workload::{Action, CrudBound, KeyChoice, Operation, Phase, Weights};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    phase: Vec<PhaseEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseEntry {
    name: String,
    #[serde(default)]
    mix: BTreeMap<String, u64>,
    operations: Option<u64>,
    total: Option<u64>,
    duration: Option<String>,
    connections: Option<u64>,
    batch_size: Option<u64>,
    rate: Option<f64>,
    keys: Option<toml::Value>,
    compact_at: Option<String>,
    replicate_at: Option<String>,
    replicate_to: Option<String>,
    #[serde(default)]
    two_way: bool,
    #[serde(default)]
    sweep: BTreeMap<String, Vec<toml::Value>>,
}

/// Reads and checks a scenario file, and expands its sweeps into phases.
pub fn load(path: &Path, defaults: &Defaults) -> Result<(String, Vec<Phase>), Vec<String>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![format!(
            "cannot read the scenario {file}: {e}; check --scenario"
        )]
    })?;
    parse(&text, &file, defaults)
}

pub fn parse(
    text: &str,
    file: &str,
    defaults: &Defaults,
) -> Result<(String, Vec<Phase>), Vec<String>> {
    let syntax = |e: toml::de::Error| {
        vec![format!(
            "{file}: {}",
            e.to_string().trim().replace('\n', " ")
        )]
    };
    // Top-level keys other than these are run flags (the target, the template), which the
    // command line takes from the file before it gets here.
    let mut table: toml::Table = toml::from_str(text).map_err(syntax)?;
    table.retain(|key, _| key == "description" || key == "phase");
    let scenario: ScenarioFile = toml::Value::Table(table).try_into().map_err(syntax)?;
    if scenario.phase.is_empty() {
        return Err(vec![format!(
            "{file}: no [[phase]]; a scenario needs at least one phase"
        )]);
    }
    let mut problems = Vec::new();
    let mut phases = Vec::new();
    for entry in &scenario.phase {
        match expand(entry, defaults) {
            Ok(mut expanded) => phases.append(&mut expanded),
            Err(errors) => problems.extend(
                errors
                    .into_iter()
                    .map(|e| format!("{file}: phase {:?}: {e}", entry.name)),
            ),
        }
    }
    if problems.is_empty() {
        Ok((scenario.description.unwrap_or_default(), phases))
    } else {
        Err(problems)
    }
}

fn duration(key: &str, text: &Option<String>) -> Result<Option<Duration>, String> {
    text.as_deref()
        .map(|t| crate::cli::parse_duration(t).map_err(|e| format!("{key}: {e}")))
        .transpose()
}

fn weights(mix: &BTreeMap<String, u64>) -> Result<Weights, String> {
    let mut w = Weights::default();
    for (key, &value) in mix {
        match Operation::named(key) {
            Some(operation) => w[operation] = value,
            None => {
                let names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
                return Err(format!(
                    "mix: unknown operation {key:?}; use {}",
                    names.join(", ")
                ));
            }
        }
    }
    if w.total() == 0 {
        return Err(
            "mix: give at least one operation a weight above 0, e.g. mix = { read = 1 }"
                .to_string(),
        );
    }
    Ok(w)
}

fn keys(value: &Option<toml::Value>) -> Result<KeyChoice, String> {
    match value {
        None => Ok(KeyChoice::Uniform),
        Some(toml::Value::String(s)) => match s.as_str() {
            "uniform" => Ok(KeyChoice::Uniform),
            "zipfian" => Ok(KeyChoice::Zipfian(0.99)),
            "latest" => Ok(KeyChoice::Latest),
            other => Err(format!(
                "keys: unknown distribution {other:?}; use uniform, zipfian, latest or {{ zipfian = 0.99 }}"
            )),
        },
        Some(toml::Value::Table(t)) => match t
            .get("zipfian")
            .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        {
            Some(c) if c > 0.0 => Ok(KeyChoice::Zipfian(c)),
            _ => Err("keys: write { zipfian = 0.99 } with a constant above 0".to_string()),
        },
        Some(other) => Err(format!(
            "keys: {other} is not a distribution; use uniform, zipfian or latest"
        )),
    }
}

fn base_phase(entry: &PhaseEntry, defaults: &Defaults) -> Result<Phase, Vec<String>> {
    let mut problems = Vec::new();
    let mut note = |r: Result<(), String>| {
        if let Err(e) = r {
            problems.push(e);
        }
    };
    let mix = weights(&entry.mix)
        .map_err(|e| note(Err(e)))
        .unwrap_or_default();
    let phase_duration = duration("duration", &entry.duration)
        .map_err(|e| note(Err(e)))
        .unwrap_or(None);
    let keys = keys(&entry.keys)
        .map_err(|e| note(Err(e)))
        .unwrap_or(KeyChoice::Uniform);
    let compact_at = duration("compact_at", &entry.compact_at)
        .map_err(|e| note(Err(e)))
        .unwrap_or(None);
    let replicate_at = duration("replicate_at", &entry.replicate_at)
        .map_err(|e| note(Err(e)))
        .unwrap_or(None);
    let action = match (compact_at, replicate_at, &entry.replicate_to) {
        (Some(_), Some(_), _) => {
            note(Err(
                "compact_at and replicate_at: give one background action per phase".to_string(),
            ));
            None
        }
        (Some(at), None, _) => Some(Action::Compact { at }),
        (None, Some(at), Some(target)) => Some(Action::Replicate {
            at,
            target: target.clone(),
            two_way: entry.two_way,
        }),
        (None, Some(_), None) => {
            note(Err(
                "replicate_at needs replicate_to, the target database's URL or its name on the run's server".to_string(),
            ));
            None
        }
        (None, None, _) => None,
    };
    if entry.operations.is_none()
        && entry.total.is_none()
        && phase_duration.is_none()
        && !entry.sweep.contains_key("total")
    {
        note(Err(
            "give operations (per connection), total, or duration".to_string()
        ));
    }
    if entry.rate.is_some_and(|r| r <= 0.0 || !r.is_finite()) {
        note(Err("rate: give operations per second above 0".to_string()));
    }
    let connections = entry.connections.unwrap_or(defaults.connections);
    if connections == 0 {
        note(Err("connections: give 1 or more".to_string()));
    }
    let batch_size = entry.batch_size.unwrap_or(defaults.batch_size);
    if mix[Operation::BulkInsert] > 0 && batch_size == 0 {
        note(Err(
            "batch_size: bulk inserts need 1 or more documents each".to_string(),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Phase {
        name: entry.name.clone(),
        mix,
        bound: CrudBound {
            per_connection: entry.operations,
            total: entry.total,
            duration: phase_duration,
        },
        connections,
        batch_size,
        rate: entry.rate,
        keys,
        action,
    })
}

fn expand(entry: &PhaseEntry, defaults: &Defaults) -> Result<Vec<Phase>, Vec<String>> {
    let base = base_phase(entry, defaults)?;
    if entry.sweep.is_empty() {
        return Ok(vec![base]);
    }
    if entry.sweep.len() > 1 {
        return Err(vec!["sweep: sweep one parameter per phase".to_string()]);
    }
    let (parameter, values) = entry.sweep.iter().next().expect("one sweep");
    let mut phases = Vec::new();
    for value in values {
        let Some(n) = value.as_integer().filter(|n| *n >= 0).map(|n| n as u64) else {
            return Err(vec![format!(
                "sweep.{parameter}: {value} is not a whole number ≥ 0"
            )]);
        };
        let mut phase = base.clone();
        match parameter.as_str() {
            "read_ratio" if n <= 100 => {
                // The rest of the mix are creates (the titan load test's writes).
                phase.mix = crate::workload::plan::reads_and_creates(n);
                phase.name = format!("{}_{n:02}", base.name);
            }
            "read_ratio" => return Err(vec![format!("sweep.read_ratio: {n} is not a percentage")]),
            "connections" if n > 0 => {
                phase.connections = n;
                phase.name = format!("{}_{n}", base.name);
            }
            "batch_size" if n > 0 => {
                phase.batch_size = n;
                phase.name = format!("{}_{n}", base.name);
            }
            "total" => {
                phase.bound.total = Some(n);
                phase.name = format!("{}_{n}", base.name);
            }
            "connections" | "batch_size" => {
                return Err(vec![format!("sweep.{parameter}: values must be 1 or more")]);
            }
            other => {
                return Err(vec![format!(
                    "sweep: unknown parameter {other:?}; sweep read_ratio, connections, batch_size or total"
                )]);
            }
        }
        phases.push(phase);
    }
    Ok(phases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Defaults {
        Defaults::basic(4, 100)
    }

    #[test]
    fn phases_and_sweeps_expand_in_order() {
        let text = r#"
            description = "demo"
            [[phase]]
            name = "load"
            mix = { bulk_insert = 1 }
            total = 10
            [[phase]]
            name = "RR"
            mix = { read = 1 }
            duration = "2s"
            keys = { zipfian = 0.8 }
            sweep = { read_ratio = [0, 25] }
        "#;
        let (description, phases) = parse(text, "s.toml", &defaults()).unwrap();
        assert_eq!(description, "demo");
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["load", "RR_00", "RR_25"]);
        assert_eq!(phases[2].mix[Operation::Read], 25);
        assert_eq!(phases[2].mix[Operation::Create], 75);
        assert_eq!(phases[1].keys, KeyChoice::Zipfian(0.8));
        assert_eq!(phases[0].connections, 4);
        assert_eq!(phases[0].batch_size, 100);
    }

    #[test]
    fn every_problem_names_file_phase_and_key() {
        let text = r#"
            [[phase]]
            name = "a"
            mix = { reed = 1 }
            [[phase]]
            name = "b"
            mix = { read = 1 }
            duration = "5x"
            keys = "hot"
        "#;
        let problems = parse(text, "s.toml", &defaults()).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("s.toml: phase \"a\": mix: unknown operation \"reed\"")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("phase \"a\": give operations")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("phase \"b\": duration:")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("phase \"b\": keys: unknown distribution \"hot\"")),
            "{problems:?}"
        );
        let unknown = parse(
            "[[phase]]\nname = 'x'\nmix = { read = 1 }\ntotal = 1\nconections = 3\n",
            "u.toml",
            &defaults(),
        )
        .unwrap_err();
        assert!(
            unknown[0].contains("u.toml") && unknown[0].contains("conections"),
            "{unknown:?}"
        );
    }
}
