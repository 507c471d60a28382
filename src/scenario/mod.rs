//! Scenarios: lists of phases, from a file or built in, and the result forms of the
//! reference benchmarks they reproduce.

mod builtin;
pub mod file;
pub mod forms;

use std::path::Path;
use std::time::Duration;

use crate::workload::{KeyChoice, Operation, Phase, Weights};

pub use builtin::LIST;

/// Settings from the command line that phases take unless they say otherwise.
#[derive(Clone, Debug)]
pub struct Defaults {
    pub connections: u64,
    pub batch_size: u64,
    pub duration: Option<Duration>,
    pub total: Option<u64>,
    pub rate: Option<f64>,
    pub keys: KeyChoice,
}

impl Defaults {
    /// Defaults with only connections and batch size, for files and tests.
    pub fn basic(connections: u64, batch_size: u64) -> Defaults {
        Defaults {
            connections,
            batch_size,
            duration: None,
            total: None,
            rate: None,
            keys: KeyChoice::Uniform,
        }
    }
}

/// Which reference benchmark's output a scenario adds to the standard report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Standard,
    /// titan-loadtest's tab-separated line per phase.
    Titan,
    /// couchbase-tests' table of counts, durations and rates with a weighted average.
    Scaling,
}

/// A named list of phases.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub phases: Vec<Phase>,
    pub form: Form,
}

/// Options of the built-in scenarios.
#[derive(Clone, Debug, Default)]
pub struct BuiltinOptions {
    pub full: bool,
    pub writes_reads: Option<(u64, u64)>,
    pub batch_sizes: Vec<u64>,
    /// couchdb-report: the replica's database name, on the run's own server.
    pub replica: String,
    pub weights: Weights,
}

/// A built-in scenario by name (`ironcushion` is built by the caller from its flags).
pub fn builtin(name: &str, defaults: &Defaults, options: &BuiltinOptions) -> Option<Scenario> {
    match name {
        "read-ratio-sweep" => Some(builtin::read_ratio_sweep(defaults)),
        "scaling" => Some(builtin::scaling(
            defaults,
            options.full,
            options.writes_reads,
        )),
        "couchdb-report" => Some(builtin::couchdb_report(
            defaults,
            &options.batch_sizes,
            &options.replica,
        )),
        "soak" => Some(builtin::soak(defaults, options.weights)),
        _ => None,
    }
}

/// A scenario file.
pub fn from_file(path: &Path, defaults: &Defaults) -> Result<Scenario, Vec<String>> {
    let (description, phases) = file::load(path, defaults)?;
    Ok(Scenario {
        name: path.display().to_string(),
        description,
        phases,
        form: Form::Standard,
    })
}

/// Refuses, before anything is sent, a phase that cannot run at all: one whose mix only
/// reads, updates or deletes when no earlier phase stores a document. sofabench works
/// only on documents it stored itself (documents already in a reused database are not
/// its own), so such a phase would send nothing and pass for a success.
pub fn check_documents(phases: &[Phase]) -> Result<(), Vec<String>> {
    let mut stores = false;
    let mut problems = Vec::new();
    for phase in phases.iter().filter(|p| p.has_work()) {
        let mix = phase.mix;
        let has = |op: Operation| mix[op] > 0;
        stores |= has(Operation::Create) || has(Operation::BulkInsert);
        let needs = has(Operation::Read) || has(Operation::Update) || has(Operation::Delete);
        if needs && !stores {
            problems.push(format!(
                "phase {:?} only reads, updates or deletes, but no phase before it stores a document (sofabench works on the documents it stored itself); add a phase with bulk_insert or create before it, or add create to its mix",
                phase.name
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, mix: Weights) -> Phase {
        Phase {
            name: name.to_string(),
            mix,
            bound: crate::workload::CrudBound {
                per_connection: Some(10),
                total: None,
                duration: None,
            },
            connections: 2,
            batch_size: 10,
            rate: None,
            keys: KeyChoice::Uniform,
            action: None,
        }
    }

    #[test]
    fn a_phase_with_nothing_to_work_on_is_refused() {
        let delete = Weights::only(Operation::Delete, 1);
        let load = Weights::only(Operation::BulkInsert, 1);
        let problems = check_documents(&[phase("gone", delete)]).unwrap_err();
        assert!(problems[0].contains("\"gone\""), "{problems:?}");
        assert!(check_documents(&[phase("load", load), phase("gone", delete)]).is_ok());
    }
}
