//! A pull: the changes feed from where the session stands, the revisions the device
//! lacks worked out locally (the device is the target: no `_revs_diff`), fetched with
//! their ancestry and stored, and the logs written as the profile says.

use super::Device;
use super::cycle::Cycle;
use super::cycle::StartedFrom;
use super::error::{Step, SyncError};
use super::feed::{self, Batch, FeedRequest};
use super::fetch::{self, Got};
use super::http::{self, Answer, DeviceHttp};
use super::replica::{History, Stored};
use super::seq::Seq;
use crate::workload::Rev;
use crate::workload::changes::FeedKind;
use std::time::{Duration, Instant};

/// How one batch ended.
enum Next {
    /// Read on: the batch was full.
    More,
    /// Nothing more now.
    Done,
}

/// A pull's first feed read, worked out but not sent: it owns all it needs, so the
/// device is free (to write, to push) while the server holds the read.
pub struct FeedAsk {
    pub request: FeedRequest,
    /// The sequence the read starts after.
    since: Seq,
    /// What the pull did before the read (the logs read when its session began).
    cycle: Cycle,
}

impl FeedAsk {
    /// The requests the pull sent before its feed read.
    pub fn requests_before(&self) -> u32 {
        self.cycle.requests
    }
}

impl Device {
    /// The first feed read of a pull; `wait` asks the profile's feed to wait for
    /// changes. Reads the logs only when the pull's session has to begin (no request
    /// otherwise). On a failure the session ends.
    pub async fn feed_ask(
        &mut self,
        http: &mut impl DeviceHttp,
        wait: bool,
    ) -> Result<FeedAsk, SyncError> {
        let mut cycle = Cycle::begin(StartedFrom::Continuing);
        let db = self.spec.scope.path().to_string();
        if let Err(error) = self
            .pulling
            .session(http, &mut cycle, &db, &self.spec.name)
            .await
        {
            self.pulling.end();
            return Err(error);
        }
        let since = self.pulling.position().cloned().unwrap_or_else(Seq::zero);
        let held = wait.then_some((self.spec.profile.feed, self.spec.profile.feed_timeout));
        let request = self.feed_request(&since, held);
        Ok(FeedAsk {
            request,
            since,
            cycle,
        })
    }

    /// The rest of a pull once its first feed read is answered (`Err`: why it was
    /// not): the revisions lacking fetched and stored, the logs written, further
    /// batches read. On a failure the session ends: the next pull reads the logs again.
    pub async fn pull_answer(
        &mut self,
        http: &mut impl DeviceHttp,
        ask: FeedAsk,
        answer: Result<Answer, String>,
    ) -> Result<Cycle, SyncError> {
        let FeedAsk {
            request,
            since,
            mut cycle,
        } = ask;
        let answer = http::answered(&mut cycle, Step::Feed, request.body.as_deref(), answer);
        let result = match answer {
            Ok(answer) => self.pull_batches(http, &mut cycle, since, answer).await,
            Err(error) => Err(error),
        };
        if let Err(error) = result {
            self.pulling.end();
            return Err(error);
        }
        cycle.finished = Instant::now();
        Ok(cycle)
    }

    fn feed_request(&self, since: &Seq, held: Option<(FeedKind, Duration)>) -> FeedRequest {
        let batch_size = self.spec.profile.batch_size.max(1);
        feed::request(&self.spec.scope, since, batch_size, held)
    }

    /// The batches of one pull, the first one's answer given.
    async fn pull_batches(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        mut since: Seq,
        mut answer: Answer,
    ) -> Result<(), SyncError> {
        let db = self.spec.scope.path().to_string();
        let mut touched: Vec<String> = Vec::new();
        loop {
            let next = self
                .pull_batch(http, cycle, &since, answer, &mut touched)
                .await?;
            if self.pulling.checkpoint_due(self.spec.profile.checkpoint) {
                self.pulling.checkpoint(http, cycle, &db).await?;
            }
            if matches!(next, Next::Done) {
                break;
            }
            since = self.pulling.position().cloned().unwrap_or_else(Seq::zero);
            let request = self.feed_request(&since, None);
            answer = http::exchange(
                http,
                cycle,
                Step::Feed,
                (request.method, &request.path),
                request.body.as_deref(),
            )
            .await?;
        }
        touched.sort_unstable();
        touched.dedup();
        cycle.conflicts_seen = touched
            .iter()
            .filter(|id| self.replica.in_conflict(id))
            .count() as u64;
        Ok(())
    }

    /// One feed answer and what it brings.
    async fn pull_batch(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        since: &Seq,
        answer: Answer,
        touched: &mut Vec<String>,
    ) -> Result<Next, SyncError> {
        let batch_size = self.spec.profile.batch_size.max(1);
        if answer.status != 200 {
            return Err(http::status_error(http, Step::Feed, &answer));
        }
        let batch = feed::parse(&answer.body, batch_size as usize)
            .map_err(|what| SyncError::bad(Step::Feed, what))?;
        cycle.changes_read = cycle.changes_read.saturating_add(batch.rows);
        // A row the device cannot use would stop it for good if it waited for it: it is
        // passed over, and counted.
        cycle.failures = cycle.failures.saturating_add(batch.unusable);
        let wanted = self.lacking(&batch);
        cycle.missing = cycle.missing.saturating_add(wanted.len() as u64);
        let got = if wanted.is_empty() {
            Got::default()
        } else {
            let db = self.spec.scope.path().to_string();
            self.fetch(http, cycle, &db, &wanted).await?
        };
        let stored: Vec<(String, Rev)> = got
            .revisions
            .iter()
            .map(|fetched| (fetched.id.clone(), fetched.leaf.rev.clone()))
            .collect();
        self.store(got.revisions, cycle, touched);
        // Revisions the server gave unasked are not kept, only counted.
        cycle.failures = cycle.failures.saturating_add(got.refused);
        if got.failures > 0 {
            // Not past revisions that could not be fetched: the next pull asks again.
            cycle.failures = cycle.failures.saturating_add(got.failures);
            return Ok(Next::Done);
        }
        for change in &batch.changes {
            let kept: Vec<Rev> = stored
                .iter()
                .filter(|(id, _)| *id == change.id)
                .map(|(_, rev)| rev.clone())
                .collect();
            if self
                .replica
                .drop_superseded(&change.id, &change.revs, &kept)
            {
                touched.push(change.id.clone());
            }
        }
        let Some(next) = batch.next else {
            return Ok(Next::Done);
        };
        if next == *since {
            return Ok(Next::Done);
        }
        if next.before(since) {
            // A feed that goes back would have the pull read it again and again: the
            // session ends, and the next one starts from the logs.
            return Err(SyncError::bad(
                Step::Feed,
                format!("last_seq {} is before since {}", next.json(), since.json()),
            ));
        }
        let full = batch.truncated || batch.rows >= u64::from(batch_size);
        if let Some(session) = self.pulling.session_mut() {
            session.advance(next);
        }
        Ok(if full { Next::More } else { Next::Done })
    }

    /// The revisions of the batch the device lacks.
    fn lacking(&self, batch: &Batch) -> Vec<(String, Rev)> {
        batch
            .changes
            .iter()
            .flat_map(|change| {
                change
                    .revs
                    .iter()
                    .filter(|rev| self.replica.lacks(&change.id, rev))
                    .map(|rev| (change.id.clone(), rev.clone()))
            })
            .collect()
    }

    /// `_bulk_get`, or `open_revs` per document where the server has no `_bulk_get`.
    async fn fetch(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
        wanted: &[(String, Rev)],
    ) -> Result<Got, SyncError> {
        if !self.no_bulk_get {
            match fetch::bulk_get(http, cycle, db, wanted).await? {
                Some(got) => return Ok(got),
                None => self.no_bulk_get = true,
            }
        }
        let mut got = Got::default();
        let mut start = 0;
        while start < wanted.len() {
            let id = &wanted[start].0;
            let end = start
                + wanted[start..]
                    .iter()
                    .take_while(|(other, _)| other == id)
                    .count();
            let revs: Vec<Rev> = wanted[start..end]
                .iter()
                .map(|(_, rev)| rev.clone())
                .collect();
            let one = fetch::open_revs(http, cycle, db, (id, &revs)).await?;
            got.revisions.extend(one.revisions);
            got.failures = got.failures.saturating_add(one.failures);
            got.refused = got.refused.saturating_add(one.refused);
            start = end;
        }
        Ok(got)
    }

    fn store(
        &mut self,
        revisions: Vec<fetch::Fetched>,
        cycle: &mut Cycle,
        touched: &mut Vec<String>,
    ) {
        for fetched in revisions {
            let history = History {
                start: fetched.start,
                ids: &fetched.ids,
            };
            match self
                .replica
                .store(&fetched.id, fetched.leaf.clone(), history)
            {
                Stored::Extended | Stored::Branched => {
                    cycle.written = cycle.written.saturating_add(1);
                    cycle
                        .landed
                        .push((fetched.id.as_str().into(), fetched.leaf.rev));
                    touched.push(fetched.id);
                }
                Stored::Known => {}
                Stored::Refused => cycle.failures = cycle.failures.saturating_add(1),
            }
        }
    }
}
