//! Query operations: `find`, `view`, `all_docs` and `changes_read`, each running the
//! query its phase names, with parameters drawn from a document the connection knows
//! (a read of the whole database draws none). A document's
//! values are a function of the seed, its number and its version, so the worker writes
//! the document again to read them instead of keeping it. The answer's rows are counted
//! as it is read, without keeping it or building a tree of it, and in a phase that writes nothing a `find` answer's rows are
//! compared with the rows the seed's documents give (`query::expected`).

use super::{Start, Worker};
use crate::driver::{Method, Streaming};
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure};
use crate::query::{Draw, PhaseQueries, Query, QueryKind, WHOLE_READ_MOST, field, request};
use crate::workload::Operation;

/// What a worker keeps for its queries.
#[derive(Default)]
pub struct QueryState {
    /// The current phase's queries.
    pub phase: PhaseQueries,
    /// A known document written again, to read a value from.
    document: Vec<u8>,
    /// The ids of a `keys` query.
    ids: Vec<String>,
    /// `/db/_partition/P` of a partition query.
    scope: String,
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// One query operation: a known document is picked (counted as `no_document` when
    /// there is none), its values give the query's parameters, and a successful answer's
    /// rows are counted.
    pub(super) async fn query(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        start: Start,
    ) -> Result<(), super::Abort> {
        let Some(query) = self.queries.phase.of(operation).cloned() else {
            // A scenario's phases always name their queries; nothing else can run one.
            self.shared
                .recorder
                .failed(metrics, operation, Failure::NoDocument, 0);
            return Ok(());
        };
        if query.is_whole() {
            return self.whole_read(metrics, operation, &query, start).await;
        }
        let Some(slot) = self.pick(metrics, operation) else {
            return Ok(());
        };
        let shared = self.shared.clone();
        let mut scope = std::mem::take(&mut self.queries.scope);
        let database = if query.partition {
            // The picked document's id is in `self.id`; its partition scopes the query.
            request::partition_scope(shared.database_path(), &self.id, &mut scope);
            &scope
        } else {
            shared.database_path()
        };
        // The rows the answer should hold, when the phase's documents are all known.
        let mut expected = None;
        let (method, with_body) = match &query.kind {
            QueryKind::Find(find) => {
                let value = self.drawn_value(slot, &find.draw)?;
                let value = &self.queries.document[value];
                let rows = self.queries.phase.find_rows.as_ref();
                expected = rows.and_then(|rows| rows.rows(value));
                request::find(find, value, database, &mut self.path, &mut self.body);
                (Method::Post, true)
            }
            QueryKind::View(view) => {
                let value = self.drawn_value(slot, &view.draw)?;
                let value = &self.queries.document[value];
                request::view(view, value, database, &mut self.path);
                (Method::Get, false)
            }
            // Read whole in `whole_read`, never here.
            QueryKind::ChangesRead(_) => return Ok(()),
            QueryKind::AllDocs(all) if all.keys == 0 => {
                request::all_docs_range(all, &self.id, database, &mut self.path);
                (Method::Get, false)
            }
            QueryKind::AllDocs(all) => {
                self.queries.ids.clear();
                for _ in 0..all.keys {
                    if let Some(slot) = self.pool.pick_by(&mut self.pick_rng, self.keys) {
                        let mut id = String::new();
                        let document = self.pool.get(slot);
                        super::server_ids::write_id(&self.shared.ids, document, &mut id);
                        self.queries.ids.push(id);
                    }
                }
                let ids = self.queries.ids.iter().map(String::as_str);
                request::all_docs_keys(all, ids, database, &mut self.path, &mut self.body);
                (Method::Post, true)
            }
        };
        self.queries.scope = scope;
        self.counted(metrics, operation, (method, with_body), expected, start)
            .await
    }

    /// A read of the whole database from its first row (`_all_docs` or `_changes`):
    /// no document is drawn, and its answer is counted up to [`WHOLE_READ_MOST`]
    /// rather than `--max-response-size`, being counted and never held.
    async fn whole_read(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        query: &Query,
        start: Start,
    ) -> Result<(), super::Abort> {
        let database = self.shared.database_path();
        match &query.kind {
            QueryKind::AllDocs(all) => request::all_docs_whole(all, database, &mut self.path),
            QueryKind::ChangesRead(feed) => request::changes_read(feed, database, &mut self.path),
            // Only the kinds above read whole.
            QueryKind::Find(_) | QueryKind::View(_) => return Ok(()),
        }
        let most = Some(WHOLE_READ_MOST);
        self.counted_up_to(metrics, operation, (Method::Get, false), None, start, most)
            .await
    }

    /// Sends the query written in the buffers; its answer is counted as it is read,
    /// never held, its rows with it.
    async fn counted(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        request: (Method, bool),
        expected: Option<u64>,
        start: Start,
    ) -> Result<(), super::Abort> {
        self.counted_up_to(metrics, operation, request, expected, start, None)
            .await
    }

    async fn counted_up_to(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        (method, with_body): (Method, bool),
        expected: Option<u64>,
        start: Start,
        most: Option<u64>,
    ) -> Result<(), super::Abort> {
        self.streaming = Streaming {
            count_rows: true,
            count_answer_up_to: most,
            ..Streaming::NONE
        };
        let done = self
            .perform(
                metrics,
                operation,
                method,
                with_body,
                start,
                |_, metrics, answer| {
                    if answer.status != 200 {
                        return Err(Failure::of_status(answer.status));
                    }
                    let rows = answer.rows.ok_or(Failure::BadAnswer)?;
                    let counts = metrics.operation(operation);
                    counts.rows += rows;
                    if let Some(expected) = expected {
                        counts.rows_checked += 1;
                        counts.rows_expected += expected;
                        counts.rows_wrong += u64::from(rows != expected);
                    }
                    Ok(())
                },
            )
            .await;
        self.streaming = Streaming::NONE;
        done.map(|_| ())
    }

    /// Writes the document in `slot` again, at the version the connection knows, and
    /// gives where `draw`'s field lies in it.
    fn drawn_value(
        &mut self,
        slot: usize,
        draw: &Draw,
    ) -> Result<std::ops::Range<usize>, super::Abort> {
        let document = self.pool.get(slot);
        let (number, version) = (document.number, document.rev.generation().max(1));
        let buffer = &mut self.queries.document;
        buffer.clear();
        self.shared
            .writer
            .write(buffer, number, version, None, None);
        // Checked against the template before the run: only a bug could miss it.
        field::top_level_range(buffer, draw.quoted_field.as_bytes()).ok_or_else(|| {
            format!(
                "connection {}: the documents have no top-level field {}",
                self.index, draw.quoted_field
            )
        })
    }
}
