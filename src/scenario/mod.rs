//! Scenarios: lists of phases, from a file or built in, and the result forms of the
//! reference benchmarks they reproduce.

mod builtin;
pub mod file;
pub mod forms;

use std::path::Path;
use std::time::Duration;

use crate::workload::{CrudWeights, KeyChoice, Phase};

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
    pub weights: CrudWeights,
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
