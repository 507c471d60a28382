//! The writer's side of the `_changes` consumers (the phase's, and those following its
//! replicas): each write the server answered is handed to every table of the phase,
//! with the moment its answer arrived.

use std::sync::Arc;

use super::Worker;
use crate::engine::changes::Table;
use crate::engine::transport::{Clock, Transport};
use crate::workload::Rev;

impl<T: Transport, C: Clock> Worker<T, C> {
    /// The tables of the phase about to run: its consumers' and its replicas'; none
    /// when it has neither.
    pub fn follow_changes(&mut self, tables: Vec<Arc<Table>>) {
        self.changes = tables;
    }

    /// The server answered a write of the document `self.id` with `rev`.
    pub(super) fn written_for_feeds(&self, rev: &Rev) {
        let at = self.clock.now();
        for table in &self.changes {
            table.acknowledged(&self.id, rev.clone(), at);
        }
    }

    /// The server stored document `id` with `rev` in a bulk insert.
    pub(super) fn bulk_written_for_feeds(&self, id: &str, rev: &Rev) {
        if self.changes.is_empty() {
            return;
        }
        let at = self.clock.now();
        for table in &self.changes {
            table.acknowledged(id, rev.clone(), at);
        }
    }
}
