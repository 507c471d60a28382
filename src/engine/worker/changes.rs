//! The writer's side of the `_changes` consumers: each write the server answered is
//! handed to the phase's table, with the moment its answer arrived.

use std::sync::Arc;

use super::Worker;
use crate::engine::changes::Table;
use crate::engine::transport::{Clock, Transport};
use crate::workload::Rev;

impl<T: Transport, C: Clock> Worker<T, C> {
    /// The table of the phase about to run, or `None` when it has no consumers.
    pub fn follow_changes(&mut self, table: Option<Arc<Table>>) {
        self.changes = table;
    }

    /// The server answered a write of the document `self.id` with `rev`.
    pub(super) fn written_for_feeds(&self, rev: &Rev) {
        if let Some(table) = &self.changes {
            table.acknowledged(&self.id, rev.clone(), self.clock.now());
        }
    }

    /// The server stored document `id` with `rev` in a bulk insert.
    pub(super) fn bulk_written_for_feeds(&self, id: &str, rev: &Rev) {
        if let Some(table) = &self.changes {
            table.acknowledged(id, rev.clone(), self.clock.now());
        }
    }
}
