//! Scenarios: lists of phases, from a file or built in, and the result forms of the
//! reference benchmarks they reproduce.

mod builtin;
mod changes;
mod devices;
pub mod fabric;
pub mod file;
mod fleets;
mod queries;
mod replication;
pub mod settings;

use std::path::Path;
use std::sync::Arc;

use crate::query::Query;
use crate::workload::{Operation, Phase, Plan, Shape, limits};

pub use builtin::{BUILTINS, Builtin, OWN_FLAGS, find as builtin};
pub use settings::{Keys, Layers, Origin, Origins, flags_no_phase_takes};

/// Which reference benchmark's output a scenario adds to the standard report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Standard,
    /// titan-loadtest's tab-separated line per phase.
    Titan,
    /// couchbase-tests' table of counts, durations and rates with a weighted average.
    Scaling,
    /// CouchDB's `fabric_bench`: a line per step, operations or rows per second.
    Fabric,
}

/// A document template's JSON text and its description for the header.
pub type OwnTemplate = (String, String);

/// A named list of phases.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub phases: Vec<Phase>,
    /// Where each phase's settings came from, in the order of `phases`.
    pub origins: Vec<Origins>,
    pub form: Form,
    /// A scenario file's top-level settings (the layer between the flags and the defaults).
    pub top_level: Keys,
    /// The queries the scenario declares, whose indexes are made before the first phase
    /// that runs queries.
    pub queries: Vec<Arc<Query>>,
    /// The scenario's own document template (JSON) and its description, used when the
    /// run names none (fabric-bench: `fabric_bench`'s body).
    pub template: Option<OwnTemplate>,
}

impl Scenario {
    pub fn new(
        name: &str,
        description: &str,
        form: Form,
        planned: Vec<(Phase, Origins)>,
    ) -> Scenario {
        let (phases, origins) = planned.into_iter().unzip();
        Scenario {
            name: name.to_string(),
            description: description.to_string(),
            phases,
            origins,
            form,
            top_level: Keys::default(),
            queries: Vec::new(),
            template: None,
        }
    }
}

/// What the built-in scenarios take besides the layered settings.
#[derive(Clone, Debug)]
pub struct BuiltinOptions {
    /// Iron Cushion's flags (its weights are also the soak's mix).
    pub plan: Plan,
    /// Whether `--num_bulk_insert_operations` was given, for the header.
    pub bulk_operations_given: bool,
    pub full: bool,
    /// scaling's `--writes` (if given) and `--reads` (0 if not), when either is given.
    pub writes_reads: Option<(Option<u64>, u64)>,
    pub batch_sizes: Vec<u64>,
    /// couchdb-report: the replica's database name, on the run's own server.
    pub replica: String,
    /// mango and views: the top-level field of the template their queries draw on.
    pub query_field: String,
    /// fabric-bench: `fabric_bench`'s counts and document size.
    pub fabric: fabric::FabricOptions,
}

/// A scenario file, with `layers` under its phases' keys (the file's top level fills
/// `layers.file`).
pub fn from_file(path: &Path, layers: &Layers) -> Result<Scenario, Vec<String>> {
    let loaded = file::load(path, layers)?;
    let name = path.display().to_string();
    Ok(Scenario {
        top_level: loaded.top_level,
        queries: loaded.queries,
        ..Scenario::new(&name, &loaded.description, Form::Standard, loaded.phases)
    })
}

/// Refuses, before anything is sent, a phase that cannot run at all: one whose mix only
/// reads, updates, deletes or queries (whose parameters come from known documents) when no earlier phase stores a document. sofabench works
/// only on documents it stored itself (documents already in a reused database are not
/// its own), so such a phase would send nothing and pass for a success.
pub fn check_documents(phases: &[Phase]) -> Result<(), Vec<String>> {
    let mut stores = false;
    let mut problems = Vec::new();
    for phase in phases.iter().filter(|p| p.has_work()) {
        let mix = phase.mix;
        let has = |op: Operation| mix[op] > 0;
        stores |= has(Operation::Create) || has(Operation::BulkInsert);
        let needs = Operation::ALL
            .into_iter()
            .any(|op| op.needs_document() && has(op));
        if needs && !stores {
            problems.push(format!(
                "phase {:?} only reads, updates, deletes or queries, but no phase before it stores a document (sofabench works on the documents it stored itself); add a phase with bulk_insert or create before it, or add create to its mix",
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

/// Gives every phase the shape the flags ask for where it sets none of its own, and
/// refuses bulk inserts whose padded batches would not fit in memory.
pub fn apply_shape(phases: &mut [Phase], flags: Shape) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    for phase in phases {
        phase.shape = phase.shape.or(flags);
        if let Err(e) = limits::padded_batch(phase) {
            problems.push(e);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Refuses, before anything is sent, numbers and names out of range (see
/// [`limits`]): too many connections for the open-files limit, huge batches, names
/// that repeat or carry control characters, phases bounded to nothing.
pub fn check_limits(phases: &[Phase]) -> Result<(), Vec<String>> {
    let open_files = limits::open_files();
    let mut problems = limits::phases(phases);
    for phase in phases {
        problems.extend(limits::phase(phase, open_files));
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
    use crate::workload::Weights;

    fn phase(name: &str, mix: Weights) -> Phase {
        Phase::sample(name, mix)
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
