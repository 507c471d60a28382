//! Reads, updates and deletes of existing data (`--key-range`, `--key-sample`): each
//! targets a document already in the database, chosen by the phase's keys, instead of one
//! the connection stored. The connection knows no revision of it: a write either fetches
//! the current one first (`--existing-writes fetch`) or goes without (`blind`), and a 409
//! is then a conflict, counted, not a failure. A target that is not there is a miss.

use std::sync::Arc;

use super::revision::{Fetched, current_rev};
use super::{Abort, Request, Start, Worker, server_ids, written};
use crate::driver::{Exchange, Method, responses};
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure};
use crate::workload::{Existing, ExistingWrites, Operation, Rev};

/// A 404 that says the document is missing or deleted is a miss of `operation` (counted,
/// not a failure); any other answer is judged by `judge`.
fn miss_or(
    metrics: &mut ConnectionMetrics,
    operation: Operation,
    answer: &Exchange,
    judge: impl FnOnce(&Exchange) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if answer.status == 404 && responses::document_missing(&answer.body) {
        metrics.operation(operation).existing.misses += 1;
        return Ok(());
    }
    judge(answer)
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// From now on reads, updates and deletes target `existing` (or, with `None`, the
    /// connection's own documents).
    pub fn aim_at_existing(&mut self, existing: Option<Arc<Existing>>) {
        self.existing = existing;
    }

    /// Points the request at a target chosen by the phase's keys; returns the number a
    /// write's content is made from.
    fn point_at_existing(&mut self) -> u64 {
        let Some(existing) = &self.existing else {
            return 0;
        };
        let number = existing.pick(
            &mut self.pick_rng,
            self.keys,
            &self.shared.ids,
            &mut self.id,
        );
        self.path.clear();
        self.path.push_str(self.shared.database_path());
        self.path.push('/');
        server_ids::push_encoded(&mut self.path, &self.id);
        number
    }

    /// A read of an existing document: a hit (200 with a revision) or a miss (404).
    pub(super) async fn existing_read(
        &mut self,
        metrics: &mut ConnectionMetrics,
        start: Start,
    ) -> Result<(), Abort> {
        self.point_at_existing();
        self.perform(
            metrics,
            Operation::Read,
            Method::Get,
            false,
            start,
            |w, m, answer| {
                let most = w.shared.most_kept;
                miss_or(m, Operation::Read, answer, |a| {
                    current_rev(a, most).map(|_| ())
                })
            },
        )
        .await
        .map(|_| ())
    }

    /// An update or delete of an existing document, over its current revision or blind.
    /// Its time runs from its first request (the fetch) to its last answer.
    pub(super) async fn existing_write(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        start: Start,
    ) -> Result<(), Abort> {
        let number = self.point_at_existing();
        let writes = self.existing.as_ref().map(|e| e.writes).unwrap_or_default();
        let mut first_sent = None;
        let rev = match writes {
            ExistingWrites::Blind => None,
            ExistingWrites::Fetch => {
                metrics.operation(operation).existing.fetches += 1;
                match self
                    .fetch_current_rev(metrics, operation, &mut first_sent)
                    .await?
                {
                    Fetched::Rev(rev) => Some(rev),
                    Fetched::Not(answer, first_sent) => {
                        // Missing: a miss; anything else failed as the answer said.
                        self.settle(
                            metrics,
                            (operation, start),
                            answer,
                            first_sent,
                            |w, m, a| {
                                let most = w.shared.most_kept;
                                miss_or(m, operation, a, |a| current_rev(a, most).map(|_| ()))
                            },
                        );
                        return Ok(());
                    }
                }
            }
        };
        let (method, with_body) = self.prepare_existing_write(operation, number, rev.as_ref());
        let request = Request {
            first_sent,
            ..Request::new(operation, method, with_body, 1)
        };
        let (answer, retried) = self.exchange_retrying(metrics, request).await?;
        let first_sent = first_sent.or(retried);
        let blind_update = rev.is_none() && operation == Operation::Update;
        self.settle(
            metrics,
            (operation, start),
            answer,
            first_sent,
            |w, m, a| judge_write(w, m, operation, a, blind_update),
        );
        Ok(())
    }

    /// The request of a write over `rev` (none: blind) to the document at `self.path`.
    fn prepare_existing_write(
        &mut self,
        operation: Operation,
        number: u64,
        rev: Option<&Rev>,
    ) -> (Method, bool) {
        self.rev.clear();
        if let Some(rev) = rev {
            rev.write_to(&mut self.rev);
        }
        if operation == Operation::Delete {
            if rev.is_some() {
                self.path.push_str("?rev=");
                self.path.push_str(&self.rev);
            }
            return (Method::Delete, false);
        }
        let version = rev.map_or(1, |rev| rev.generation().saturating_add(1));
        self.body.clear();
        self.shared.writer.write_sized(
            &mut self.body,
            number,
            version,
            Some(&self.id),
            rev.map(|_| self.rev.as_str()),
            self.doc_size,
        );
        (Method::Put, true)
    }
}

/// How a write into existing data ended: stored (a blind update that stored is a miss: no
/// document was there), a conflict (409, counted), a miss (404 missing), or a failure.
fn judge_write<T: Transport, C: Clock>(
    worker: &mut Worker<T, C>,
    metrics: &mut ConnectionMetrics,
    operation: Operation,
    answer: &Exchange,
    blind_update: bool,
) -> Result<(), Failure> {
    if answer.status == 409 {
        metrics.operation(operation).existing.conflicts += 1;
        return Ok(());
    }
    miss_or(metrics, operation, answer, |a| {
        let rev = written(a, worker.shared.most_kept)?;
        worker.written_for_feeds(&rev);
        Ok(())
    })?;
    if blind_update && matches!(answer.status, 200..=202) {
        metrics.operation(operation).existing.misses += 1;
    }
    Ok(())
}
