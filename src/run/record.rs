//! What a run has measured so far, and the result it makes at any moment: after each
//! phase (the files rewritten, so a run killed mid-way keeps what it finished) and at the
//! end. A plain run's result holds its phases; with `--runs N`, the repetitions' phases
//! merged, and each repetition's own.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::repeat::Pass;
use crate::analysis::repetitions::Merger;
use crate::results::environment::{DatabaseShape, ServerEnvironment};
use crate::results::{self, NodeInfo, PhaseResult, RepetitionResult, RunResult, SearchResult};

pub struct Record {
    config: BTreeMap<String, serde_json::Value>,
    started: SystemTime,
    node: NodeInfo,
    /// With repetitions, their phases merged as they finish; `None` for a plain run.
    merger: Option<Merger>,
    /// The repetitions that have ended (finished, or stopped by Ctrl-C).
    ended: Vec<RepetitionResult>,
    /// The pass under way: a repetition, or the plain run itself.
    current: Option<RepetitionResult>,
    /// A rate search's steps so far and its answer (`--search-rate`, never with
    /// repetitions).
    pub search: Option<SearchResult>,
}

impl Record {
    pub fn new(
        config: BTreeMap<String, serde_json::Value>,
        started: SystemTime,
        node: NodeInfo,
        repeated: bool,
    ) -> Record {
        Record {
            config,
            started,
            node,
            merger: repeated.then(Merger::default),
            ended: Vec::new(),
            current: None,
            search: None,
        }
    }

    /// The server as the run found it at setup.
    pub fn found_server(&mut self, server: ServerEnvironment) {
        self.node.server = Some(server);
    }

    /// The database the run used, as it found or made it, and why its shape is unknown
    /// when it is; kept beside the server.
    pub fn found_database(&mut self, (shape, unknown): (DatabaseShape, Option<String>)) {
        let server = self
            .node
            .server
            .get_or_insert_with(ServerEnvironment::default);
        server.database = Some(shape);
        server.unknown_because.extend(unknown);
    }

    /// The run's settings, as its result records them.
    pub fn config(&self) -> &BTreeMap<String, serde_json::Value> {
        &self.config
    }

    /// The client machine the run records, and the server it found.
    pub fn node(&self) -> &NodeInfo {
        &self.node
    }

    pub fn start(&mut self, pass: &Pass) {
        let now = results::build::rfc3339(SystemTime::now());
        self.current = Some(RepetitionResult {
            index: pass.index,
            database_name: pass.database.clone(),
            id_prefix: pass.id_prefix.clone(),
            started_at: now.clone(),
            ended_at: now,
            // Until it ends: a file written meanwhile holds it unfinished.
            interrupted: true,
            database_deleted: false,
            phases: Vec::new(),
        });
    }

    /// Adds a phase the pass under way finished.
    pub fn add(&mut self, phase: PhaseResult) -> Result<(), String> {
        let Some(current) = &mut self.current else {
            return Err("a phase ended outside any pass of the run".to_string());
        };
        if let Some(merger) = &mut self.merger {
            merger.add(current.index, current.phases.len(), &phase)?;
        }
        current.phases.push(phase);
        Ok(())
    }

    /// Ends the pass under way: `interrupted` when Ctrl-C stopped it, `deleted` when
    /// `--cleanup` deleted its database.
    pub fn end(&mut self, interrupted: bool, deleted: bool) {
        if let Some(mut current) = self.current.take() {
            current.ended_at = results::build::rfc3339(SystemTime::now());
            current.interrupted = interrupted;
            current.database_deleted = deleted;
            self.ended.push(current);
        }
    }

    /// The result so far, ending now; `interrupted` when the run has not finished.
    pub fn result(&self, interrupted: bool) -> RunResult {
        let passes: Vec<&RepetitionResult> = self.ended.iter().chain(&self.current).collect();
        let phases = match &self.merger {
            Some(merger) => merger.phases(),
            None => passes
                .iter()
                .flat_map(|pass| pass.phases.iter().cloned())
                .collect(),
        };
        let mut result = results::build::run(
            self.config.clone(),
            self.started,
            SystemTime::now(),
            interrupted,
            self.node.clone(),
            phases,
        );
        if self.merger.is_some() {
            result.repetitions = passes.into_iter().cloned().collect();
        }
        result.search.clone_from(&self.search);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::repeat::passes;

    fn record(repeated: bool) -> Record {
        let node = NodeInfo {
            index: 0,
            count: 1,
            host: "h".to_string(),
            client: None,
            server: None,
        };
        Record::new(BTreeMap::new(), SystemTime::now(), node, repeated)
    }

    fn phase(name: &str) -> PhaseResult {
        PhaseResult::of_operations(name, 1.0, Vec::new())
    }

    #[test]
    fn a_plain_run_holds_its_phases_and_no_repetitions() {
        let mut record = record(false);
        record.start(&passes("db", "p", 1)[0]);
        record.add(phase("bulk_insert")).unwrap();
        record.add(phase("crud")).unwrap();
        record.end(false, false);
        let result = record.result(false);
        let names: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["bulk_insert", "crud"]);
        assert!(result.repetitions.is_empty());
        assert!(!result.to_json().contains("repetitions"));
    }

    #[test]
    fn repetitions_are_kept_and_the_one_under_way_is_unfinished() {
        let mut record = record(true);
        let all = passes("db", "p", 3);
        record.start(&all[0]);
        record.add(phase("crud")).unwrap();
        record.end(false, true);
        record.start(&all[1]);
        record.add(phase("crud")).unwrap();
        // A checkpoint while the second repetition runs.
        let so_far = record.result(true);
        assert_eq!(so_far.phases.len(), 1, "one merged phase");
        assert_eq!(so_far.phases[0].wall_seconds, 2.0);
        let shown: Vec<(u64, &str, bool, bool)> = so_far
            .repetitions
            .iter()
            .map(|r| {
                (
                    r.index,
                    r.database_name.as_str(),
                    r.interrupted,
                    r.database_deleted,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [(1, "db-run1", false, true), (2, "db-run2", true, false)]
        );
        record.end(true, false);
        let last = record.result(true);
        assert_eq!(last.repetitions.len(), 2);
        assert!(last.repetitions[1].interrupted);
        assert_eq!(last.repetitions[1].id_prefix, "p-r2");
    }
}
