//! Scenario files: TOML with an ordered list of phases.
//!
//! ```toml
//! description = "reads while the database compacts"
//! database_name = "bench"          # any flag of `run` (the command line wins)
//! rate = 500                       # settings of every phase that does not set its own
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
//! rate = 1000                     # or a ramp over the duration: { from = 100, to = 1000 }
//! keys = "zipfian"                # uniform (default), latest, or { zipfian = 0.8 }
//! compact_at = "10s"              # or replicate_at = "5s", replicate_to = URL or NAME, two_way = true
//! replication = { to = ["copy"] } # continuous replication while the phase runs, with its lag
//! devices = { count = 100, scope = "doc-ids" } # devices syncing while it runs (see `devices`)
//! sweep = { read_ratio = [0, 50, 95] }   # or connections, batch_size, total, doc_size, id_scheme
//! doc_size = "4KiB"               # padded to a size, or a range "1KiB-64KiB"
//! id_scheme = "uuid"              # or sequential (the default)
//! [[phase]]
//! name = "queries"
//! mix = { find = 1, read = 1 }    # find, view and all_docs run declared queries:
//! queries = { find = "by_age" }   # one per kind per phase
//! duration = "30s"
//! [query.by_age]                  # see `query::declare` for the keys
//! kind = "find"
//! field = "Age"
//! ```
//!
//! The top-level keys that phases take (`num_connections`, `num_documents_per_bulk_insert`,
//! `num_crud_operations`, `total_operations`, `duration`, `rate`, in either spelling) stay
//! here, below the flags the user gives and above the defaults (see `settings`); the
//! command line takes the other top-level keys as flags before it gets here.
//!
//! The whole file is checked before anything is sent; every problem names the file, the
//! phase and the key.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::settings::{Keys, Layers, Origin, Origins, Spec};
use crate::query::Query;
use crate::query::declare::{self, QueryEntry};
use crate::workload::{
    Action, DocSize, IdScheme, KeyChoice, Operation, Phase, Rate, Shape, SweepPoint, SweptSetting,
    Weights, limits,
};

/// The top-level keys of a file that are settings of its phases, in both spellings.
pub const SETTING_KEYS: [&str; 11] = [
    "num_connections",
    "num-connections",
    "num_documents_per_bulk_insert",
    "num-documents-per-bulk-insert",
    "num_crud_operations",
    "num-crud-operations",
    "total_operations",
    "total-operations",
    "duration",
    "time",
    "rate",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    phase: Vec<PhaseEntry>,
    /// Declared queries, by name.
    #[serde(default)]
    query: BTreeMap<String, QueryEntry>,
    #[serde(alias = "num-connections")]
    num_connections: Option<u64>,
    #[serde(alias = "num-documents-per-bulk-insert")]
    num_documents_per_bulk_insert: Option<u64>,
    #[serde(alias = "num-crud-operations")]
    num_crud_operations: Option<u64>,
    #[serde(alias = "total-operations")]
    total_operations: Option<u64>,
    #[serde(alias = "time")]
    duration: Option<String>,
    rate: Option<toml::Value>,
}

impl ScenarioFile {
    /// The top-level settings, checked.
    fn settings(&self) -> Result<Keys, Vec<String>> {
        let duration = duration("duration", &self.duration).map_err(|e| vec![e.to_string()])?;
        let rate = rate(&self.rate).map_err(|e| vec![e])?;
        // Checked here under their own names: the phases that take them would otherwise be
        // blamed for a value none of them gave.
        let open_files = limits::open_files();
        let checks = [
            self.num_connections
                .map(|n| limits::connections("num_connections", n, open_files)),
            self.num_documents_per_bulk_insert
                .map(|n| limits::batch_size("num_documents_per_bulk_insert", n)),
        ];
        let problems: Vec<String> = checks
            .into_iter()
            .flatten()
            .filter_map(Result::err)
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Keys {
            connections: self.num_connections,
            batch_size: self.num_documents_per_bulk_insert,
            operations: self.num_crud_operations,
            total: self.total_operations,
            duration,
            rate,
        })
    }
}

/// A rate as a file writes it, checked: `rate = 500`, or a ramp over the phase's
/// duration, `rate = { from = 100, to = 1000 }` or `rate = "100..1000"`.
fn rate(value: &Option<toml::Value>) -> Result<Option<Rate>, String> {
    let number = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
    let rate = match value {
        None => return Ok(None),
        Some(toml::Value::String(text)) => Rate::parse(text).map_err(|e| format!("rate: {e}"))?,
        Some(toml::Value::Table(t)) => {
            match (t.get("from").and_then(number), t.get("to").and_then(number)) {
                (Some(from), Some(to)) if t.len() == 2 => Rate::ramp(from, to),
                _ => {
                    let keys: Vec<&str> = t.keys().map(String::as_str).collect();
                    return Err(format!(
                        "rate: a table with {} is not a ramp; write {{ from = 100, to = 1000 }} (operations per second at the phase's start and at its end, both numbers)",
                        if keys.is_empty() {
                            "no keys".to_string()
                        } else {
                            format!("keys {}", keys.join(", "))
                        }
                    ));
                }
            }
        }
        Some(v) => match number(v) {
            Some(r) => Rate::constant(r),
            None => {
                return Err(format!(
                    "rate: {v} is not a rate; give operations per second (rate = 500) or a ramp (rate = {{ from = 100, to = 1000 }})"
                ));
            }
        },
    };
    limits::rate_of("rate:", rate)?;
    Ok(Some(rate))
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
    rate: Option<toml::Value>,
    keys: Option<toml::Value>,
    compact_at: Option<String>,
    replicate_at: Option<String>,
    replicate_to: Option<String>,
    #[serde(default)]
    two_way: bool,
    doc_size: Option<toml::Value>,
    id_scheme: Option<String>,
    #[serde(default)]
    sweep: BTreeMap<String, Vec<toml::Value>>,
    /// The phase's `_changes` consumers (see `scenario::changes`).
    changes: Option<toml::Value>,
    /// The phase's continuous replications (see `scenario::replication`).
    replication: Option<toml::Value>,
    /// The phase's fleet of devices (see `scenario::devices`).
    devices: Option<toml::Value>,
    /// The declared query each query operation of the mix runs: `{ find = "NAME" }`.
    #[serde(default)]
    queries: BTreeMap<String, String>,
    /// When the indexes of its queries are built: `"before"` it (the default) or
    /// `"during"` it, under its operations.
    indexes: Option<String>,
}

/// A file's phases with where their settings came from.
type Planned = Vec<(Phase, Origins)>;

/// A scenario file, read and checked.
#[derive(Debug)]
pub struct Loaded {
    pub description: String,
    pub phases: Planned,
    /// The top-level settings.
    pub top_level: Keys,
    /// The declared queries.
    pub queries: Vec<Arc<Query>>,
}

/// Reads and checks a scenario file, and expands its sweeps into phases.
pub fn load(path: &Path, layers: &Layers) -> Result<Loaded, Vec<String>> {
    let file = path.display().to_string();
    let text = crate::files::read_text(path, crate::files::Kind::Scenario)
        .map_err(|e| vec![e.to_string()])?;
    parse(&text, &file, layers)
}

pub fn parse(text: &str, file: &str, layers: &Layers) -> Result<Loaded, Vec<String>> {
    let syntax = |e: toml::de::Error| {
        vec![format!(
            "{file}: {}",
            e.to_string().trim().replace('\n', " ")
        )]
    };
    // Top-level keys other than these are run flags (the target, the template), which the
    // command line takes from the file before it gets here.
    let mut table: toml::Table = toml::from_str(text).map_err(syntax)?;
    table.retain(|key, _| {
        ["description", "phase", "query"].contains(&key) || SETTING_KEYS.contains(&key)
    });
    let scenario: ScenarioFile = toml::Value::Table(table).try_into().map_err(syntax)?;
    if scenario.phase.is_empty() {
        return Err(vec![format!(
            "{file}: no [[phase]]; a scenario needs at least one phase"
        )]);
    }
    let at_top = |e: String| format!("{file}: {e}");
    let layers = Layers {
        file: scenario
            .settings()
            .map_err(|e| e.into_iter().map(at_top).collect::<Vec<_>>())?,
        ..*layers
    };
    let declared = declare::queries(&scenario.query)
        .map_err(|e| e.into_iter().map(at_top).collect::<Vec<_>>())?;
    let mut problems = Vec::new();
    let mut phases = Vec::new();
    for entry in &scenario.phase {
        match expand(entry, &layers).and_then(|e| with_queries(e, entry, &declared)) {
            Ok(mut expanded) => phases.append(&mut expanded),
            Err(errors) => problems.extend(
                errors
                    .into_iter()
                    .map(|e| format!("{file}: phase {:?}: {e}", entry.name)),
            ),
        }
    }
    if problems.is_empty() {
        Ok(Loaded {
            description: scenario.description.unwrap_or_default(),
            phases,
            top_level: layers.file,
            queries: declared,
        })
    } else {
        Err(problems)
    }
}

/// The phases of `entry` with the queries its `queries` key names, and when their
/// indexes are built.
fn with_queries(
    mut phases: Planned,
    entry: &PhaseEntry,
    declared: &[Arc<Query>],
) -> Result<Planned, Vec<String>> {
    let during = indexes_during(entry)?;
    for (phase, _) in &mut phases {
        let mix = phase.mix;
        phase.queries = declare::phase_queries(&entry.queries, declared, |op| mix[op] > 0)
            .map_err(|e| vec![e])?;
        phase.indexes_during = during;
    }
    Ok(phases)
}

/// The `indexes` key: whether the phase's indexes are built while it runs.
fn indexes_during(entry: &PhaseEntry) -> Result<bool, Vec<String>> {
    match entry.indexes.as_deref() {
        None | Some("before") => Ok(false),
        Some("during") if !entry.sweep.is_empty() => Err(vec![
            "indexes = \"during\" with a sweep: the sweep's phases after its first would find the indexes built; build them during a phase of its own".to_string(),
        ]),
        Some("during") => Ok(true),
        Some(other) => Err(vec![format!(
            "indexes = {other:?}: give \"before\" (built before the phase, on an idle database) or \"during\" (built while the phase's operations run)"
        )]),
    }
}

fn duration(key: &str, text: &Option<String>) -> Result<Option<Duration>, String> {
    text.as_deref()
        .map(|t| crate::time::duration::parse(t).map_err(|e| format!("{key}: {e}")))
        .transpose()
}

fn weights(mix: &BTreeMap<String, u64>) -> Result<Weights, String> {
    let mut w = Weights::default();
    for (key, &value) in mix {
        limits::weight(&format!("mix: {key}"), value)?;
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
            Some(c) => limits::zipfian(c).map(|()| KeyChoice::Zipfian(c)),
            None => {
                Err("keys: write { zipfian = 0.99 } with a constant between 0 and 1".to_string())
            }
        },
        Some(other) => Err(format!(
            "keys: {other} is not a distribution; use uniform, zipfian or latest"
        )),
    }
}

/// The background action a phase's keys ask for.
fn action(entry: &PhaseEntry) -> Result<Option<Action>, Vec<String>> {
    let compact_at = duration("compact_at", &entry.compact_at);
    let replicate_at = duration("replicate_at", &entry.replicate_at);
    let (compact_at, replicate_at) = match (compact_at, replicate_at) {
        (Ok(c), Ok(r)) => (c, r),
        (c, r) => return Err([c.err(), r.err()].into_iter().flatten().collect()),
    };
    match (compact_at, replicate_at, &entry.replicate_to) {
        (Some(_), Some(_), _) => Err(vec![
            "compact_at and replicate_at: give one background action per phase".to_string(),
        ]),
        (Some(at), None, _) => Ok(Some(Action::Compact { at })),
        (None, Some(at), Some(target)) => Ok(Some(Action::Replicate {
            at,
            target: target.clone(),
            two_way: entry.two_way,
        })),
        (None, Some(_), None) => Err(vec![
            "replicate_at needs replicate_to, the target database's URL or its name on the run's server".to_string(),
        ]),
        (None, None, Some(_)) => Err(vec![
            "replicate_to needs replicate_at, when the replication starts (e.g. replicate_at = \"5s\")".to_string(),
        ]),
        (None, None, None) if entry.two_way => Err(vec![
            "two_way needs replicate_at and replicate_to: it makes a replication go both ways".to_string(),
        ]),
        (None, None, None) => Ok(None),
    }
}

/// The phase as the file writes it, with every problem of its keys (a wrong key is
/// left unset, so the phase's other problems are found too).
fn spec(entry: &PhaseEntry) -> (Spec, Vec<String>) {
    let mut problems = Vec::new();
    let mut note = |r: Result<(), String>| {
        if let Err(e) = r {
            problems.push(e);
        }
    };
    // A phase of devices without a mix is devices alone: no connections.
    let devices_alone = entry.devices.is_some() && entry.mix.is_empty();
    let mix = if devices_alone && entry.connections.is_none_or(|c| c == 0) {
        // Never run (no connection); a create, so that no check looks for stored ones.
        Weights::only(Operation::Create, 1)
    } else {
        weights(&entry.mix)
            .map_err(|e| note(Err(e)))
            .unwrap_or_default()
    };
    let phase_duration = duration("duration", &entry.duration)
        .map_err(|e| note(Err(e)))
        .unwrap_or(None);
    let keys = keys(&entry.keys)
        .map_err(|e| note(Err(e)))
        .unwrap_or(KeyChoice::Uniform);
    let action = action(entry)
        .map_err(|errors| errors.into_iter().for_each(|e| note(Err(e))))
        .unwrap_or(None);
    let phase_rate = rate(&entry.rate).map_err(|e| note(Err(e))).unwrap_or(None);
    let mut spec = Spec::new(entry.name.clone(), mix);
    spec.own = Keys {
        connections: entry.connections.or(devices_alone.then_some(0)),
        batch_size: entry.batch_size,
        operations: entry.operations,
        total: entry.total,
        duration: phase_duration,
        rate: phase_rate,
    };
    spec.keys = keys;
    spec.action = action;
    spec.shape = Shape {
        doc_size: entry
            .doc_size
            .as_ref()
            .map(|v| doc_size("doc_size", v))
            .transpose()
            .map_err(|e| note(Err(e)))
            .unwrap_or(None),
        ids: entry
            .id_scheme
            .as_deref()
            .map(|s| IdScheme::named(s).map_err(|e| format!("id_scheme: {e}")))
            .transpose()
            .map_err(|e| note(Err(e)))
            .unwrap_or(None),
    };
    spec.changes = entry.changes.as_ref().and_then(|value| {
        super::changes::feed(value)
            .map_err(|errors| problems.extend(errors))
            .ok()
    });
    spec.replication = entry.replication.as_ref().and_then(|value| {
        super::replication::replication(value)
            .map_err(|errors| problems.extend(errors))
            .ok()
    });
    spec.fleet = entry.devices.as_ref().and_then(|value| {
        super::devices::fleet(value)
            .map_err(|errors| problems.extend(errors))
            .ok()
    });
    (spec, problems)
}

/// The phase with its settings decided, checked as a whole.
fn base_phase(entry: &PhaseEntry, layers: &Layers) -> Result<(Phase, Origins), Vec<String>> {
    let (spec, mut problems) = spec(entry);
    let (phase, origins) = spec.decide(layers);
    let bound = phase.bound;
    let bounded =
        bound.per_connection.is_some() || bound.total.is_some() || bound.duration.is_some();
    if !bounded && !entry.sweep.contains_key("total") {
        problems.push(
            "give operations (per connection), total, or duration (here, at the file's top level, or with --num_crud_operations, --total-operations or --duration)".to_string(),
        );
    }
    // A phase whose devices table was refused already has its problem said.
    if phase.connections == 0 && phase.fleet.is_none() && entry.devices.is_none() {
        problems.push("connections: give 1 or more (0 only in a phase of devices)".to_string());
    }
    if phase.mix[Operation::BulkInsert] > 0 && phase.batch_size == 0 {
        problems.push("batch_size: bulk inserts need 1 or more documents each".to_string());
    }
    if problems.is_empty() {
        Ok((phase, origins))
    } else {
        Err(problems)
    }
}

/// A sweep of no values would leave its phase out silently, and one of more values
/// than a run may have phases would only fill memory.
fn sweep_size(parameter: &str, values: usize) -> Result<(), Vec<String>> {
    if values == 0 {
        return Err(vec![format!(
            "sweep.{parameter}: no values, so the phase would run nothing; give at least one, or remove the sweep"
        )]);
    }
    if values > limits::MOST_PHASES {
        return Err(vec![format!(
            "sweep.{parameter}: {values} values; at most {} (each becomes a phase with its own report lines)",
            limits::MOST_PHASES
        )]);
    }
    Ok(())
}

/// A document size as a file writes it: a number of bytes, or text such as "4KiB" or
/// "1KiB-64KiB".
fn doc_size(key: &str, value: &toml::Value) -> Result<DocSize, String> {
    let text = match value {
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    DocSize::parse(&text).map_err(|e| format!("{key}: {e}"))
}

/// A sweep of the documents' shape: each value one phase, named after it.
fn shape_sweep(
    base: &Phase,
    origins: Origins,
    parameter: &str,
    values: &[toml::Value],
) -> Result<Planned, Vec<String>> {
    let mut phases = Vec::new();
    for value in values {
        let key = format!("sweep.{parameter}");
        let mut phase = base.clone();
        let (setting, number, label) = if parameter == "doc_size" {
            let size = doc_size(&key, value).map_err(|e| vec![e])?;
            phase.shape.doc_size = Some(size);
            (SweptSetting::DocSize, size.min, size.min.to_string())
        } else {
            let scheme = value
                .as_str()
                .ok_or_else(|| format!("{value} is not a name"))
                .and_then(IdScheme::named)
                .map_err(|e| vec![format!("{key}: {e}")])?;
            phase.shape.ids = Some(scheme);
            let name = scheme.name().to_string();
            (SweptSetting::IdScheme, scheme.sweep_value(), name)
        };
        phase.name = format!("{}_{label}", base.name);
        phase.sweep = Some(SweepPoint {
            series: base.name.clone(),
            setting,
            value: number,
        });
        phases.push((phase, origins));
    }
    Ok(phases)
}

fn expand(entry: &PhaseEntry, layers: &Layers) -> Result<Planned, Vec<String>> {
    let (base, origins) = base_phase(entry, layers)?;
    if entry.sweep.is_empty() {
        return Ok(vec![(base, origins)]);
    }
    if entry.sweep.len() > 1 {
        return Err(vec!["sweep: sweep one parameter per phase".to_string()]);
    }
    let (parameter, values) = entry.sweep.iter().next().expect("one sweep");
    sweep_size(parameter, values.len())?;
    if parameter == "doc_size" || parameter == "id_scheme" {
        return shape_sweep(&base, origins, parameter, values);
    }
    let mut phases = Vec::new();
    for value in values {
        let Some(n) = value.as_integer().filter(|n| *n >= 0).map(|n| n as u64) else {
            return Err(vec![format!(
                "sweep.{parameter}: {value} is not a whole number ≥ 0"
            )]);
        };
        let mut phase = base.clone();
        let mut origins = origins;
        let setting = match parameter.as_str() {
            "read_ratio" if n <= 100 => {
                // The rest of the mix are creates (the titan load test's writes).
                phase.mix = crate::workload::plan::reads_and_creates(n);
                phase.name = format!("{}_{n:02}", base.name);
                SweptSetting::ReadRatio
            }
            "read_ratio" => return Err(vec![format!("sweep.read_ratio: {n} is not a percentage")]),
            "connections" if n > 0 => {
                phase.connections = n;
                origins.connections = Some(Origin::Phase);
                phase.name = format!("{}_{n}", base.name);
                SweptSetting::Connections
            }
            "batch_size" if n > 0 => {
                phase.batch_size = n;
                origins.batch_size = Some(Origin::Phase);
                phase.name = format!("{}_{n}", base.name);
                SweptSetting::BatchSize
            }
            "total" => {
                phase.bound.total = Some(n);
                origins.total = Some(Origin::Phase);
                phase.name = format!("{}_{n}", base.name);
                SweptSetting::Total
            }
            "connections" | "batch_size" => {
                return Err(vec![format!("sweep.{parameter}: values must be 1 or more")]);
            }
            other => {
                return Err(vec![format!(
                    "sweep: unknown parameter {other:?}; sweep read_ratio, connections, batch_size, total, doc_size or id_scheme"
                )]);
            }
        };
        phase.sweep = Some(SweepPoint {
            series: base.name.clone(),
            setting,
            value: n,
        });
        phases.push((phase, origins));
    }
    Ok(phases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Layers {
        Layers {
            default: Keys {
                connections: Some(4),
                batch_size: Some(100),
                ..Keys::default()
            },
            ..Layers::default()
        }
    }

    fn phases(text: &str, layers: &Layers) -> Vec<(Phase, Origins)> {
        parse(text, "s.toml", layers).unwrap().phases
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
        let loaded = parse(text, "s.toml", &defaults()).unwrap();
        assert_eq!(loaded.description, "demo");
        let phases: Vec<Phase> = loaded.phases.into_iter().map(|(p, _)| p).collect();
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["load", "RR_00", "RR_25"]);
        assert_eq!(phases[2].mix[Operation::Read], 25);
        assert_eq!(phases[2].mix[Operation::Create], 75);
        assert_eq!(phases[1].keys, KeyChoice::Zipfian(0.8));
        assert_eq!(phases[0].connections, 4);
        assert_eq!(phases[0].batch_size, 100);
        // The sweep's phases say where they sit in it; the plain phase is in none.
        assert_eq!(phases[0].sweep, None);
        let point = phases[2].sweep.as_ref().unwrap();
        assert_eq!(
            (point.series.as_str(), point.setting, point.value),
            ("RR", SweptSetting::ReadRatio, 25)
        );
    }

    #[test]
    fn shapes_are_set_and_swept() {
        let text = r#"
            [[phase]]
            name = "load"
            mix = { bulk_insert = 1 }
            total = 10
            doc_size = "1KiB-4KiB"
            id_scheme = "uuid"
            [[phase]]
            name = "size"
            mix = { create = 1 }
            total = 10
            sweep = { doc_size = [256, "4KiB"] }
            [[phase]]
            name = "ids"
            mix = { create = 1 }
            total = 10
            sweep = { id_scheme = ["sequential", "uuid"] }
        "#;
        let phases: Vec<Phase> = phases(text, &defaults())
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "load",
                "size_256",
                "size_4096",
                "ids_sequential",
                "ids_uuid"
            ]
        );
        assert_eq!(
            phases[0].shape,
            Shape {
                doc_size: Some(DocSize {
                    min: 1024,
                    max: 4096
                }),
                ids: Some(IdScheme::Uuid)
            }
        );
        assert_eq!(phases[2].shape.doc_size, Some(DocSize::fixed(4096)));
        let point = phases[4].sweep.as_ref().unwrap();
        assert_eq!((point.setting, point.value), (SweptSetting::IdScheme, 1));
        assert_eq!(phases[2].sweep.as_ref().unwrap().value, 4096);
        let bad = r#"
            [[phase]]
            name = "a"
            mix = { create = 1 }
            total = 1
            doc_size = "huge"
            id_scheme = "random"
        "#;
        let problems = parse(bad, "s.toml", &defaults()).unwrap_err();
        assert!(
            problems[0].contains("doc_size:") && problems[1].contains("id_scheme:"),
            "{problems:?}"
        );
        let bad_sweep = bad
            .replace("doc_size = \"huge\"", "sweep = { id_scheme = [3] }")
            .replace("id_scheme = \"random\"", "");
        let problems = parse(&bad_sweep, "s.toml", &defaults()).unwrap_err();
        assert!(
            problems.iter().any(|p| p.contains("sweep.id_scheme")),
            "{problems:?}"
        );
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

    #[test]
    fn indexes_are_built_before_a_phase_unless_it_asks_for_during() {
        let text = |indexes: &str, sweep: &str| {
            format!(
                "[query.q]\nkind = 'view'\nfield = 'integer1'\nmap = 'function (doc) {{ emit(doc.integer1); }}'\n\
                 [[phase]]\nname = 'w'\nmix = {{ create = 1, view = 1 }}\nqueries = {{ view = 'q' }}\ntotal = 10\n{indexes}\n{sweep}\n"
            )
        };
        let during = |indexes: &str| {
            parse(&text(indexes, ""), "s.toml", &defaults())
                .map(|loaded| loaded.phases[0].0.indexes_during)
        };
        assert!(!during("").unwrap());
        assert!(!during("indexes = 'before'").unwrap());
        assert!(during("indexes = 'during'").unwrap());
        let wrong = during("indexes = 'after'").unwrap_err();
        assert!(
            wrong[0].contains("phase \"w\": indexes = \"after\": give \"before\""),
            "{wrong:?}"
        );
        let swept = parse(
            &text("indexes = 'during'", "sweep = { connections = [1, 2] }"),
            "s.toml",
            &defaults(),
        )
        .unwrap_err();
        assert!(swept[0].contains("with a sweep"), "{swept:?}");
    }

    const TWO_PHASES: &str = r#"
        rate = 50
        [[phase]]
        name = "load"
        mix = { bulk_insert = 1 }
        total = 10
        rate = 5
        [[phase]]
        name = "reads"
        mix = { read = 1 }
        total = 20
    "#;

    #[test]
    fn a_phase_key_beats_a_flag_which_beats_the_file_which_beats_the_defaults() {
        let mut layers = defaults();
        let planned = phases(TWO_PHASES, &layers);
        assert_eq!(planned[0].0.rate, Some(Rate::constant(5.0)));
        assert_eq!(planned[0].1.rate, Some(Origin::Phase));
        assert_eq!(
            planned[1].0.rate,
            Some(Rate::constant(50.0)),
            "the file's top level"
        );
        assert_eq!(planned[1].1.rate, Some(Origin::File));
        assert_eq!(planned[1].1.connections, Some(Origin::Default));
        layers.given.rate = Some(Rate::constant(500.0));
        layers.given.connections = Some(7);
        let planned = phases(TWO_PHASES, &layers);
        assert_eq!(
            planned[0].0.rate,
            Some(Rate::constant(5.0)),
            "the phase's own key wins"
        );
        assert_eq!(
            planned[1].0.rate,
            Some(Rate::constant(500.0)),
            "the flag wins over the file"
        );
        assert_eq!(planned[1].1.rate, Some(Origin::Flag("--rate")));
        assert_eq!(planned[1].0.connections, 7);
    }

    #[test]
    fn a_given_duration_bounds_every_phase_that_sets_none() {
        let mut layers = defaults();
        layers.given.duration = Some(Duration::from_secs(3));
        let planned = phases(TWO_PHASES, &layers);
        for (phase, origins) in &planned {
            assert!(phase.bound.total.is_some());
            assert_eq!(phase.bound.duration, Some(Duration::from_secs(3)));
            assert_eq!(origins.duration, Some(Origin::Flag("--duration")));
        }
        // A phase with no bound of its own takes it from a flag.
        let text = "[[phase]]\nname = 'x'\nmix = { create = 1 }\n";
        assert!(parse(text, "s.toml", &defaults()).is_err());
        assert_eq!(
            phases(text, &layers)[0].0.bound.duration,
            Some(Duration::from_secs(3))
        );
    }

    #[test]
    fn top_level_settings_are_checked_and_take_either_spelling() {
        let text =
            "num-connections = 3\ntime = '2s'\n[[phase]]\nname = 'x'\nmix = { create = 1 }\n";
        let planned = phases(text, &defaults());
        assert_eq!(planned[0].0.connections, 3);
        assert_eq!(planned[0].0.bound.duration, Some(Duration::from_secs(2)));
        assert_eq!(planned[0].1.connections, Some(Origin::File));
        let bad = parse(
            "rate = -1\n[[phase]]\nname = 'x'\nmix = { create = 1 }\ntotal = 1\n",
            "b.toml",
            &defaults(),
        );
        assert!(bad.unwrap_err()[0].starts_with("b.toml: rate:"));
    }

    #[test]
    fn an_out_of_range_top_level_setting_is_blamed_on_its_own_key() {
        let phase = "[[phase]]\nname = 'x'\nmix = { bulk_insert = 1 }\ntotal = 1\n";
        for (top, says) in [
            (
                "num_connections = 1000000000000",
                "r.toml: num_connections 1000000000000: ",
            ),
            (
                "num-connections = 1000000000000",
                "r.toml: num_connections 1000000000000: ",
            ),
            (
                "num_documents_per_bulk_insert = 2000000",
                "r.toml: num_documents_per_bulk_insert 2000000: at most 1000000",
            ),
        ] {
            let problems = parse(&format!("{top}\n{phase}"), "r.toml", &defaults()).unwrap_err();
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].starts_with(says), "{problems:?}");
            assert!(!problems[0].contains("phase"), "{problems:?}");
        }
    }

    #[test]
    fn a_refused_devices_table_is_said_once() {
        let text = "[[phase]]\nname = 'x'\nduration = '5s'\ndevices = { count = 5, bogus = 1 }\n";
        let problems = parse(text, "r.toml", &defaults()).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("bogus"), "{problems:?}");
    }

    fn problems_of(extra: &str) -> Vec<String> {
        let text = format!("[[phase]]\nname = 'x'\nmix = {{ create = 1 }}\ntotal = 5\n{extra}\n");
        parse(&text, "r.toml", &defaults()).unwrap_err()
    }

    #[test]
    fn keys_rates_actions_and_sweeps_have_ranges() {
        for (extra, says) in [
            ("keys = { zipfian = 1.0 }", "strictly between 0 and 1"),
            ("keys = { zipfian = 0 }", "strictly between 0 and 1"),
            ("rate = 1e12", "to 10000000"),
            ("rate = inf", "to 10000000"),
            ("rate = { from = 0, to = 0 }", "from 0.001"),
            (
                "rate = { from = 10, to = -1 }",
                "a ramp goes from one rate to another",
            ),
            (
                "rate = { from = 10 }",
                "a table with keys from is not a ramp",
            ),
            (
                "rate = { from = 1, to = 2, over = 3 }",
                "keys from, over, to",
            ),
            ("rate = '10..fast'", "give operations per second"),
            ("rate = true", "true is not a rate"),
            ("replicate_to = 'copy'", "replicate_to needs replicate_at"),
            ("two_way = true", "two_way needs replicate_at"),
            ("compact_at = '87601h'", "longer than 10 years"),
            (
                "sweep = { connections = [] }",
                "sweep.connections: no values",
            ),
        ] {
            let problems = problems_of(extra);
            assert!(
                problems[0].starts_with("r.toml: phase \"x\": ") && problems[0].contains(says),
                "{extra}: {problems:?}"
            );
        }
        let values: Vec<String> = (1..=1001).map(|n| n.to_string()).collect();
        let many = problems_of(&format!("sweep = {{ total = [{}] }}", values.join(",")));
        assert!(many[0].contains("1001 values; at most 1000"), "{many:?}");
    }

    #[test]
    fn a_rate_ramps_as_a_table_or_as_text_and_a_flat_one_is_constant() {
        let text = r#"
            rate = "5..50"
            [[phase]]
            name = "up"
            mix = { read = 1 }
            duration = "10s"
            rate = { from = 100, to = 1000.5 }
            [[phase]]
            name = "file"
            mix = { read = 1 }
            duration = "10s"
            [[phase]]
            name = "flat"
            mix = { read = 1 }
            duration = "10s"
            rate = { from = 7, to = 7 }
        "#;
        let planned = phases(text, &defaults());
        assert_eq!(planned[0].0.rate, Some(Rate::ramp(100.0, 1000.5)));
        assert_eq!(planned[1].0.rate, Some(Rate::ramp(5.0, 50.0)));
        assert_eq!(planned[1].1.rate, Some(Origin::File));
        assert_eq!(planned[2].0.rate, Some(Rate::constant(7.0)));
        assert!(
            planned[0]
                .0
                .describe()
                .contains("ramping from 100 to 1000.5 ops/s")
        );
    }
}
