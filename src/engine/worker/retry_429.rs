//! `--retry-429`: an operation the server turned away with a 429 (which it did not apply)
//! goes out again after the wait the server asked for, as often as allowed. Each 429
//! retried is counted, with the time waited; one given up while waiting (Ctrl-C, the
//! phase's end) fails as `interrupted`, with the wait it had begun.

use std::time::Instant;

use super::{Answer, Request, Shared, Worker};
use crate::driver::Exchange;
use crate::engine::rate_limit::{self, Reading};
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure, FailureSamples};
use crate::text::Quoted;

/// Why a wait to send again ended before its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Stopped,
    PhaseEnded,
}

impl Cut {
    fn says(self) -> &'static str {
        match self {
            Cut::Stopped => "the run was stopped",
            Cut::PhaseEnded => "the phase ended",
        }
    }
}

impl Shared {
    /// Keeps a 429 as an example of `rate_limited`: the `Retry-After` it carried (and how
    /// it was read, when the operation went out again), then the start of its body.
    pub(super) fn note_429(
        &self,
        samples: &mut FailureSamples,
        answer: &Exchange,
        reading: Option<Reading>,
    ) {
        if samples.wants(&Failure::RateLimited) {
            let asked = rate_limit::describe(answer.retry_after.as_deref(), reading);
            let mut said = format!("{asked} · ").into_bytes();
            said.extend_from_slice(
                &answer.body[..answer
                    .body
                    .len()
                    .min(Quoted::window(FailureSamples::LENGTH))],
            );
            self.note(samples, &Failure::RateLimited, &said);
        }
    }
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// Sends `request`, and under `--retry-429` sends it again after each 429 for as long
    /// as allowed. Returns the last answer (a 429 past the allowance is one), and when the
    /// first attempt went out if there were more.
    pub(super) async fn exchange_retrying(
        &mut self,
        metrics: &mut ConnectionMetrics,
        mut request: Request,
    ) -> Result<(Answer, Option<Instant>), super::Abort> {
        let mut retries = 0;
        loop {
            let answer = self.exchange(metrics, request).await?;
            let turned_away = match (&answer, self.shared.retry_429) {
                (Answer::Received(exchange), Some(allowed))
                    if exchange.status == 429 && allowed.allows(retries) =>
                {
                    exchange
                }
                _ => return Ok((answer, request.first_sent)),
            };
            let first = *request.first_sent.get_or_insert(turned_away.started);
            if let Err(cut) = self
                .wait_after_429(metrics, request, turned_away, retries)
                .await
            {
                let lost = self.give_up_waiting(metrics, request, turned_away, cut);
                return Ok((lost, Some(first)));
            }
            retries += 1;
        }
    }

    /// Counts the 429 `answer` and waits as it asks before the operation's next attempt
    /// (its `retries + 1`-th); `Err` when the wait was cut short.
    async fn wait_after_429(
        &mut self,
        metrics: &mut ConnectionMetrics,
        request: Request,
        answer: &Exchange,
        retries: u32,
    ) -> Result<(), Cut> {
        let operation = request.operation;
        let asked = answer.retry_after.as_deref();
        let wait = rate_limit::wait(asked, retries, self.clock.wall(), rand::random());
        let counts = metrics.operation(operation);
        counts.statuses.add(429, 1);
        self.shared
            .note_429(&mut counts.samples, answer, Some(wait.reading));
        let started = self.clock.now();
        let cut = self
            .rest_until(crate::time::duration::after(started, wait.length))
            .await;
        let waited = self.nanos_since(started);
        match cut {
            None => {
                self.shared.recorder.retried_429(metrics, operation, waited);
                Ok(())
            }
            // Not retried, but waited: the time counts all the same.
            Some(cut) => {
                let counts = metrics.operation(operation);
                counts.retry_429_wait_ns = counts.retry_429_wait_ns.saturating_add(waited);
                Err(cut)
            }
        }
    }

    /// Waits until `at`, out of flight, unless the run is stopped or the phase ends
    /// first (then says which).
    async fn rest_until(&mut self, at: Instant) -> Option<Cut> {
        let until = self.deadline.map_or(at, |end| end.min(at));
        let stop = self.shared.stop.stop.clone();
        if stop.is_raised() {
            return Some(Cut::Stopped);
        }
        self.shared.recorder.resting();
        let stopped = tokio::select! {
            biased;
            () = stop.raised() => true,
            () = self.clock.sleep_until(until) => false,
        };
        self.shared.recorder.resumed();
        if stopped || stop.is_raised() {
            Some(Cut::Stopped)
        } else if until < at {
            Some(Cut::PhaseEnded)
        } else {
            None
        }
    }

    /// An operation whose wait to go out again was cut: it fails as interrupted, its
    /// time counted from its first attempt. The server did not apply it.
    fn give_up_waiting(
        &mut self,
        metrics: &mut ConnectionMetrics,
        request: Request,
        answer: &Exchange,
        cut: Cut,
    ) -> Answer {
        let operation = request.operation;
        let samples = &mut metrics.operation(operation).samples;
        if samples.wants(&Failure::Interrupted) {
            let asked = rate_limit::describe(answer.retry_after.as_deref(), None);
            let text = format!(
                "given up while waiting to send it again after a 429 ({asked}): {}",
                cut.says()
            );
            self.shared
                .note(samples, &Failure::Interrupted, text.as_bytes());
        }
        let since = request.first_sent.unwrap_or(answer.started);
        let took = self.nanos_since(since);
        self.shared
            .recorder
            .failed(metrics, operation, Failure::Interrupted, took);
        Answer::Lost { unknown: false }
    }
}
