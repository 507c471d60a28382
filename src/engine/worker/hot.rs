//! Updates of hot documents (`--hot-docs`): every connection updates the same few
//! documents, so a PUT often carries a revision another connection has replaced. The
//! server's 409 is then an expected outcome: the connection fetches the document's
//! current revision and sends the update again, up to `MOST_ATTEMPTS` PUTs. Each 409,
//! fetch and attempt is counted (`OperationCounts::hot`), the answers' statuses too, and
//! the update's time runs from its first request to its last answer.

use std::sync::Arc;
use std::time::Instant;

use super::revision::{Fetched, current_rev, first_of};
use super::{Abort, Answer, Request, Settled, Start, Worker, written};
use crate::driver::Method;
use crate::engine::transport::{Clock, Transport};
use crate::metrics::ConnectionMetrics;
use crate::metrics::hot::MOST_ATTEMPTS;
use crate::workload::{HotDocuments, Operation, Rev};

/// The shared documents, and the revision of each as this connection last knew it
/// (`None`: not known, fetched before the next update).
pub(super) struct HotState {
    documents: Arc<HotDocuments>,
    revs: Vec<Option<Rev>>,
}

fn is_conflict(answer: &Answer) -> bool {
    matches!(answer, Answer::Received(exchange) if exchange.status == 409)
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// The hot documents of the phase about to run, or `None` when updates go to the
    /// connection's own documents. Revisions learnt in an earlier phase are kept.
    pub fn heat(&mut self, documents: Option<Arc<HotDocuments>>) {
        self.hot = documents.map(|documents| match self.hot.take() {
            Some(state) if Arc::ptr_eq(&state.documents, &documents) => state,
            _ => HotState {
                revs: documents.revs.clone(),
                documents,
            },
        });
    }

    fn point_at_hot(&mut self, k: usize) {
        let Some(state) = &self.hot else { return };
        self.id.clear();
        self.id.push_str(&state.documents.ids[k]);
        self.path.clear();
        self.path.push_str(self.shared.database_path());
        self.path.push('/');
        self.path.push_str(&self.id);
    }

    fn set_hot_rev(&mut self, k: usize, rev: Option<Rev>) {
        if let Some(state) = &mut self.hot {
            state.revs[k] = rev;
        }
    }

    /// One update of a hot document chosen by the phase's keys.
    pub(super) async fn hot_update(
        &mut self,
        metrics: &mut ConnectionMetrics,
        start: Start,
    ) -> Result<(), Abort> {
        let Some(state) = &self.hot else {
            return Ok(());
        };
        let k = state.documents.pick(&mut self.pick_rng, self.keys);
        self.point_at_hot(k);
        let mut first_sent = None;
        for attempt in 1..=MOST_ATTEMPTS {
            let known = self.hot.as_ref().and_then(|s| s.revs[k].clone());
            let rev = match known {
                Some(rev) => rev,
                None => match self
                    .fetch_hot_rev(metrics, k, start, &mut first_sent)
                    .await?
                {
                    Some(rev) => rev,
                    // The update failed, counted: the document could not be read.
                    None => return Ok(()),
                },
            };
            self.write_hot_body(k, &rev);
            metrics.operation(Operation::Update).hot.attempts += 1;
            let request = Request {
                first_sent,
                ..Request::new(Operation::Update, Method::Put, true, 1)
            };
            let (answer, retried) = self.exchange_retrying(metrics, request).await?;
            if is_conflict(&answer) && attempt < MOST_ATTEMPTS {
                first_sent = first_of(first_sent, retried, &answer);
                let counts = metrics.operation(Operation::Update);
                counts.statuses.add(409, 1);
                counts.hot.conflicts += 1;
                self.set_hot_rev(k, None);
                continue;
            }
            let gave_up = is_conflict(&answer);
            let first_sent = first_sent.or(retried);
            let settled = self.settle(
                metrics,
                (Operation::Update, start),
                answer,
                first_sent,
                |w, m, answer| {
                    let rev = written(answer, w.shared.most_kept)?;
                    w.written_for_feeds(&rev);
                    w.set_hot_rev(k, Some(rev));
                    m.operation(Operation::Update).hot.succeeded_at(attempt);
                    Ok(())
                },
            );
            let hot = &mut metrics.operation(Operation::Update).hot;
            hot.gave_up += u64::from(gave_up);
            if gave_up {
                hot.conflicts += 1;
            }
            if settled != Settled::Done {
                // Whether it was applied is not known, or the revision is stale: fetch.
                self.set_hot_rev(k, None);
            }
            return Ok(());
        }
        Ok(())
    }

    /// The update's body for hot document `k` over revision `rev`: the template's
    /// document `k`, its next version.
    fn write_hot_body(&mut self, k: usize, rev: &Rev) {
        self.rev.clear();
        rev.write_to(&mut self.rev);
        self.body.clear();
        self.shared.writer.write_sized(
            &mut self.body,
            k as u64,
            rev.generation().saturating_add(1),
            Some(&self.id),
            Some(&self.rev),
            self.doc_size,
        );
    }

    /// `GET` of hot document `k` for its current revision; `None` when it cannot be read:
    /// the update then failed as what the answer said (counted), with its time since its
    /// first request.
    async fn fetch_hot_rev(
        &mut self,
        metrics: &mut ConnectionMetrics,
        k: usize,
        start: Start,
        first_sent: &mut Option<Instant>,
    ) -> Result<Option<Rev>, Abort> {
        metrics.operation(Operation::Update).hot.fetches += 1;
        match self
            .fetch_current_rev(metrics, Operation::Update, first_sent)
            .await?
        {
            Fetched::Rev(rev) => {
                self.set_hot_rev(k, Some(rev.clone()));
                Ok(Some(rev))
            }
            Fetched::Not(answer, first_sent) => {
                self.settle(
                    metrics,
                    (Operation::Update, start),
                    answer,
                    first_sent,
                    |w, _, exchange| current_rev(exchange, w.shared.most_kept).map(|_| ()),
                );
                Ok(None)
            }
        }
    }
}
