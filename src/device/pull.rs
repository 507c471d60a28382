//! A pull: the changes feed from where the session stands, the revisions the device
//! lacks worked out locally (the device is the target: no `_revs_diff`), fetched with
//! their ancestry and stored, and the logs written as the profile says.

use super::Device;
use super::cycle::Cycle;
use super::error::{Step, SyncError};
use super::feed::{self, Batch};
use super::fetch::{self, Got};
use super::http::{self, DeviceHttp};
use super::replica::{History, Stored};
use super::seq::Seq;
use crate::workload::Rev;

/// How one batch ended.
enum Next {
    /// Read on: the batch was full.
    More,
    /// Nothing more now.
    Done,
}

impl Device {
    /// The batches of one pull (see [`Device::pull`]).
    pub(super) async fn pull_batches(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        wait: bool,
    ) -> Result<(), SyncError> {
        let db = self.spec.scope.path().to_string();
        self.pulling
            .session(http, cycle, &db, &self.spec.name)
            .await?;
        let mut touched: Vec<String> = Vec::new();
        let mut first = true;
        loop {
            let held =
                (wait && first).then_some((self.spec.profile.feed, self.spec.profile.feed_timeout));
            first = false;
            let next = self.pull_batch(http, cycle, held, &mut touched).await?;
            if self.pulling.checkpoint_due(self.spec.profile.checkpoint) {
                self.pulling.checkpoint(http, cycle, &db).await?;
            }
            if matches!(next, Next::Done) {
                break;
            }
        }
        touched.sort_unstable();
        touched.dedup();
        cycle.conflicts_seen = touched
            .iter()
            .filter(|id| self.replica.in_conflict(id))
            .count() as u64;
        Ok(())
    }

    /// One feed read and what it brings.
    async fn pull_batch(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        held: Option<(crate::workload::changes::FeedKind, std::time::Duration)>,
        touched: &mut Vec<String>,
    ) -> Result<Next, SyncError> {
        let batch_size = self.spec.profile.batch_size.max(1);
        let since = self.pulling.position().cloned().unwrap_or_else(Seq::zero);
        let request = feed::request(&self.spec.scope, &since, batch_size, held);
        let answer = http::exchange(
            http,
            cycle,
            Step::Feed,
            (request.method, &request.path),
            request.body.as_deref(),
        )
        .await?;
        if answer.status != 200 {
            return Err(http::status_error(http, Step::Feed, &answer));
        }
        let batch = feed::parse(&answer.body, batch_size as usize)
            .map_err(|what| SyncError::bad(Step::Feed, what))?;
        cycle.changes_read = cycle.changes_read.saturating_add(batch.rows);
        let wanted = self.lacking(&batch);
        cycle.missing = cycle.missing.saturating_add(wanted.len() as u64);
        let got = if wanted.is_empty() {
            Got::default()
        } else {
            let db = self.spec.scope.path().to_string();
            self.fetch(http, cycle, &db, &wanted).await?
        };
        self.store(got.revisions, cycle, touched);
        if got.failures > 0 {
            // Not past revisions that could not be fetched: the next pull asks again.
            cycle.failures = cycle.failures.saturating_add(got.failures);
            return Ok(Next::Done);
        }
        let Some(next) = batch.next else {
            return Ok(Next::Done);
        };
        if next == since {
            return Ok(Next::Done);
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
