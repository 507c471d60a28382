//! Everything a run needs, checked and typed, made once from the flags (as ripgrep's
//! high-level arguments are made from its low-level ones).

use crate::analysis::search::SearchPlan;
use crate::analysis::thresholds::Threshold;
use crate::driver::admin::ExistingDatabase;
use crate::engine::{NodeSlice, PhaseShare, RunSettings};
use crate::scenario::Scenario;

use super::config::ConfigRecord;
use super::output::OutputFiles;

/// What the run may do with the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatabasePolicy {
    /// What to do with a database that already holds documents.
    pub existing: ExistingDatabase,
    /// Delete the database after the run, if the run created it (and the replicas it made).
    pub cleanup: bool,
}

/// A run, ready to be carried out.
pub struct Setup {
    /// The target, the documents, the timeouts: what the engine takes.
    pub engine: RunSettings,
    /// The phases, each counting the connections of all nodes together.
    pub scenario: Scenario,
    /// This node's share of each phase, in the order of `scenario.phases`.
    pub shares: Vec<PhaseShare>,
    pub node: NodeSlice,
    /// How the template is named in the header.
    pub template_name: String,
    pub database: DatabasePolicy,
    pub outputs: OutputFiles,
    pub thresholds: Vec<Threshold>,
    /// `--search-rate`: search the last phase's highest rate that meets the thresholds.
    pub search: Option<SearchPlan>,
    /// The settings as the result file records them.
    pub config: ConfigRecord,
    /// How many times the whole scenario runs (`--runs`), each on a database of its
    /// own; 1 for a plain run on the database given.
    pub runs: u64,
    /// The runtime threads the client runs on (`--threads`, else one per core).
    pub threads: usize,
    /// How much the report says (`-v`).
    pub detail: crate::report::Detail,
}

impl Setup {
    /// Applies the node slice to the scenario's phases, each written as one node runs it:
    /// the phases then count all nodes' connections, and `shares` say what this node drives.
    pub fn slice(scenario: Scenario, node: NodeSlice) -> (Scenario, Vec<PhaseShare>) {
        let (phases, shares) = scenario.phases.into_iter().map(|p| node.slice(p)).unzip();
        (Scenario { phases, ..scenario }, shares)
    }
}
