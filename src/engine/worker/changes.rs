//! The writer's side of the `_changes` consumers (the phase's, and those following its
//! replicas): each write the server answered is handed to every table of the phase,
//! with the moment its answer arrived.

use std::sync::Arc;

use super::Worker;
use crate::engine::changes::Table;
use crate::engine::transport::{Clock, Transport};
use crate::workload::Rev;

impl<T: Transport, C: Clock> Worker<T, C> {
    /// The tables of the phase about to run, per database (see `Engine::feed_tables`):
    /// its consumers' and its replicas'; none when it has neither.
    pub fn follow_changes(&mut self, tables: Vec<Vec<Arc<Table>>>) {
        self.changes = tables;
    }

    /// The tables that follow the database of the write just answered.
    fn feeds_of_this_database(&self) -> &[Arc<Table>] {
        self.changes
            .get(self.database as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The server answered a write of the document `self.id` with `rev`.
    pub(super) fn written_for_feeds(&self, rev: &Rev) {
        self.bulk_written_for_feeds(&self.id, rev);
    }

    /// The server stored document `id` with `rev` (in the database of the request just
    /// answered).
    pub(super) fn bulk_written_for_feeds(&self, id: &str, rev: &Rev) {
        let tables = self.feeds_of_this_database();
        if tables.is_empty() {
            return;
        }
        let at = self.clock.now();
        for table in tables {
            table.acknowledged(id, rev.clone(), at);
        }
    }
}
