//! Fetching a document's current revision before writing over it: what updates of hot
//! documents do after a 409 (`--hot-docs`) and writes into existing data do first
//! (`--existing-writes fetch`). The `GET` is part of the operation: its time is in the
//! operation's, and its answer's status is counted.

use std::time::Instant;

use super::{Abort, Answer, Request, Worker};
use crate::driver::{Exchange, Method, responses};
use crate::engine::kept::MostKept;
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure};
use crate::workload::{Operation, Rev};

/// What a `GET` for the current revision brought.
pub(super) enum Fetched {
    Rev(Rev),
    /// Anything else, for the caller to settle the operation with; with when its first
    /// request went out.
    Not(Answer, Option<Instant>),
}

/// The start of the first request an operation sent, once it sends another.
pub(super) fn first_of(
    first_sent: Option<Instant>,
    retried: Option<Instant>,
    answer: &Answer,
) -> Option<Instant> {
    first_sent.or(retried).or(match answer {
        Answer::Received(exchange) => Some(exchange.started),
        Answer::Lost { .. } => None,
    })
}

/// The current revision in a document's `GET` answer, if it is no longer than `most`
/// allows.
pub(super) fn current_rev(answer: &Exchange, most: MostKept) -> Result<Rev, Failure> {
    if answer.status != 200 {
        return Err(Failure::of_status(answer.status));
    }
    most.rev(responses::read_rev(&answer.body).ok_or(Failure::BadAnswer)?)
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// `GET` of the document at `self.path` for its current revision, as part of
    /// `operation` (whose first request went out at `first_sent`, if one did).
    pub(super) async fn fetch_current_rev(
        &mut self,
        metrics: &mut ConnectionMetrics,
        operation: Operation,
        first_sent: &mut Option<Instant>,
    ) -> Result<Fetched, Abort> {
        let request = Request {
            first_sent: *first_sent,
            ..Request::new(operation, Method::Get, false, 0)
        };
        let (answer, retried) = self.exchange_retrying(metrics, request).await?;
        if let Answer::Received(exchange) = &answer
            && let Ok(rev) = current_rev(exchange, self.shared.most_kept)
        {
            *first_sent = first_of(*first_sent, retried, &answer);
            metrics.operation(operation).statuses.add(200, 1);
            return Ok(Fetched::Rev(rev));
        }
        Ok(Fetched::Not(answer, first_sent.or(retried)))
    }
}
