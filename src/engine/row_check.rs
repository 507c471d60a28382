//! Whether a phase's `find` answers can be checked against the seed's documents, and what
//! they should hold: only in a phase that writes nothing (reads and queries only, no
//! replication), on one client machine, in a database that held no documents before the
//! run, can the documents the connections know be all the documents there are.

use std::sync::Arc;

use super::{Engine, PhaseShare};
use crate::query::expected::{self, Expected};
use crate::workload::{Action, Operation, Phase};

/// Operations that change no document.
const STILL: [Operation; 6] = [
    Operation::Read,
    Operation::Find,
    Operation::View,
    Operation::AllDocs,
    Operation::ChangesRead,
    Operation::AttachmentRead,
];

/// True when nothing writes to the database while `phase` runs: its mix only reads, and
/// its background action, if any, is a compaction.
pub fn writes_nothing(phase: &Phase) -> bool {
    let reads_only = phase
        .mix
        .iter()
        .all(|(operation, &weight)| weight == 0 || STILL.contains(&operation));
    reads_only && matches!(phase.action, None | Some(Action::Compact { .. }))
}

impl Engine {
    /// The rows each of `phase`'s `find` answers should hold, when they can be known.
    pub(super) fn expected_find_rows(
        &self,
        phase: &Phase,
        share: &PhaseShare,
    ) -> Option<Arc<Expected>> {
        let find = expected::checkable(phase.queries.find.as_deref()?)?;
        let alone = share.connections >= phase.connections;
        if !(self.settings.started_empty && alone && writes_nothing(phase)) {
            return None;
        }
        let documents = self
            .workers
            .iter()
            .flat_map(|w| w.pool.iter())
            .map(|d| (d.number, d.rev.generation()));
        Expected::of(find, &self.settings.writer, documents).map(Arc::new)
    }
}
