//! One device's life in a phase: joining (cold devices), writing locally at its rate,
//! syncing live or every so often, going offline and catching up, and its last sync
//! once the writes stop. Each device is one tokio task owning its replica and its
//! connections; what it measures goes to the fleet's shared figures once per cycle.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::time::Instant as TokioInstant;

use super::budget::{CycleShape, Direction};
use super::context::Context;
use super::figures::CycleFigures;
use super::link::Link;
use super::roster::DevicePlan;
use super::writes::{Write, Writes};
use crate::device::{Cycle, Device, DeviceHttp, StartedFrom, SyncError, ZeroBecause};
use crate::workload::fleet::SyncEvery;
use crate::workload::rev::Rev;

/// The first pause after a failed cycle, and the longest: failures do not spin.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const LONGEST_BACKOFF: Duration = Duration::from_secs(5);

/// One device and what it needs to run.
pub struct DeviceRun {
    pub plan: DevicePlan,
    pub device: Device,
    /// Pushes (and, for a device that does not sync live, pulls too).
    requests: Link,
    /// A live device's feed and pulls.
    feed: Option<Link>,
    writes: Writes,
    /// For each shared document with unpushed edits: the revision they were made on.
    shared_bases: HashMap<Box<str>, Rev>,
    pulled_before: bool,
    pushed_before: bool,
    backoff: Duration,
    /// The last pull went through with revisions or rows it could not use.
    pull_fell_short: bool,
}

/// How a wait ended.
#[derive(PartialEq, Eq)]
enum Waited {
    Due,
    Ended,
}

/// How a pull ended.
#[derive(PartialEq, Eq)]
enum Pulled {
    /// It went through, storing this many revisions.
    Stored(u64),
    /// Its held feed read was given up (going offline, or the writes stopped).
    GaveUp,
    Failed,
}

impl DeviceRun {
    pub fn new(
        plan: DevicePlan,
        device: Device,
        (requests, feed): (Link, Option<Link>),
        writes: Writes,
    ) -> DeviceRun {
        DeviceRun {
            plan,
            device,
            requests,
            feed,
            writes,
            shared_bases: HashMap::new(),
            pulled_before: false,
            pushed_before: false,
            backoff: FIRST_BACKOFF,
            pull_fell_short: false,
        }
    }

    fn database(&self) -> u32 {
        self.plan.database as u32
    }

    /// A warm device's sync before the phase starts: it begins holding its scope.
    pub async fn warm_up(&mut self, ctx: &Context) {
        let _ = self.pull(ctx, false).await;
    }

    /// The phase: until the writes stop.
    pub async fn run(&mut self, ctx: &Context) {
        if let Some(at) = self.plan.joins_at {
            if wait_until(ctx, ctx.at(at)).await == Waited::Ended {
                return;
            }
            self.join(ctx).await;
        }
        let mut next_write = self.next_write();
        let mut next_sync = self
            .sync_period(ctx)
            .map(|every| TokioInstant::now() + first_sync_offset(self.plan.seed, every));
        while !ctx.ended.is_raised() {
            if self.plan.offline_at(ctx.elapsed()) {
                self.offline(ctx, &mut next_write).await;
                continue;
            }
            let wrote = self.write_due(ctx, &mut next_write);
            match self.sync_period(ctx) {
                None => {
                    if wrote {
                        self.push(ctx).await;
                    }
                    let pulled = self.live_pull(ctx, &mut next_write).await;
                    // A pull that went through but could not use what it was given
                    // asks again from the same place: it rests as a failed one does, or
                    // a server that keeps giving it would be asked as fast as it answers.
                    if pulled == Pulled::Failed || self.pull_fell_short {
                        let until = earliest(next_write, self.going_offline(ctx));
                        self.rest(ctx, until).await;
                    }
                }
                Some(every) => {
                    let due = next_sync.unwrap_or_else(TokioInstant::now);
                    let until = earliest(earliest(next_write, Some(due)), self.going_offline(ctx));
                    if let Some(until) = until
                        && wait_until(ctx, until).await == Waited::Ended
                    {
                        return;
                    }
                    if TokioInstant::now() >= due {
                        self.sync(ctx).await;
                        next_sync = Some(TokioInstant::now() + every);
                    }
                }
            }
        }
    }

    /// A cold device joins: it pulls its whole scope, timed.
    async fn join(&mut self, ctx: &Context) {
        ctx.figures
            .online
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let joined = Instant::now();
        loop {
            if let Pulled::Stored(stored) = self.pull_counting(ctx, false).await {
                ctx.figures.initial_sync(joined.elapsed(), stored);
                return;
            }
            if self.rest(ctx, None).await == Waited::Ended {
                return;
            }
        }
    }

    /// Offline: no sync, the writes go on; back online, the backlog is pushed and the
    /// scope pulled, timed as the catch-up.
    async fn offline(&mut self, ctx: &Context, next_write: &mut Option<TokioInstant>) {
        let Some((_, until)) = self.plan.offline else {
            return;
        };
        ctx.figures
            .online
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        let back = ctx.at(until);
        loop {
            let wake = earliest(*next_write, Some(back)).unwrap_or(back);
            if wait_until(ctx, wake).await == Waited::Ended {
                return;
            }
            self.write_due(ctx, next_write);
            if TokioInstant::now() >= back {
                break;
            }
        }
        ctx.figures
            .online
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let returned = Instant::now();
        if self.sync(ctx).await {
            ctx.figures.caught_up(returned.elapsed());
        }
    }

    /// The last push after the writes stopped; true when it went through.
    pub async fn last_push(&mut self, ctx: &Context) -> bool {
        self.push(ctx).await
    }

    /// The last pull, once every device has pushed; true when it went through.
    pub async fn last_pull(&mut self, ctx: &Context) -> bool {
        if let Some(feed) = &mut self.feed {
            feed.until = None;
        }
        self.pull(ctx, false).await
    }

    /// A push, then a pull that does not wait; true when both went through.
    async fn sync(&mut self, ctx: &Context) -> bool {
        let pushed = self.push(ctx).await;
        pushed && self.pull(ctx, false).await
    }

    fn sync_period(&self, ctx: &Context) -> Option<Duration> {
        match ctx.fleet.sync {
            SyncEvery::Live => None,
            SyncEvery::Every(every) => Some(every.max(Duration::from_millis(1))),
        }
    }

    /// When the device goes offline next, if it has yet to.
    fn going_offline(&self, ctx: &Context) -> Option<TokioInstant> {
        let (from, _) = self.plan.offline?;
        (ctx.elapsed() < from).then(|| ctx.at(from))
    }

    fn next_write(&mut self) -> Option<TokioInstant> {
        self.writes.next_gap().map(|gap| TokioInstant::now() + gap)
    }

    /// Makes every write that is due; true when it made any.
    fn write_due(&mut self, ctx: &Context, next_write: &mut Option<TokioInstant>) -> bool {
        let mut wrote = false;
        while let Some(at) = *next_write
            && at <= TokioInstant::now()
        {
            self.write(ctx);
            wrote = true;
            *next_write = self.writes.next_gap().map(|gap| at + gap);
        }
        wrote
    }

    /// One local write, told to the time-to-visible table.
    fn write(&mut self, ctx: &Context) {
        let drawn = self.writes.draw();
        let (id, rev) = match drawn {
            Write::Create(k) => {
                let id = self.plan.own_id(k);
                let rev = self.device.create(&id);
                (id, rev)
            }
            Write::EditOwn(k) => {
                let id = self.plan.own_id(k);
                let rev = self.device.edit(&id);
                (id, rev)
            }
            Write::EditShared(k) => {
                let id = ctx.shared[k as usize].clone();
                let base = self.device.document(&id).map(|d| d.winner.clone());
                let rev = self.device.edit(&id);
                if let (Some(base), Some(_)) = (base, &rev) {
                    self.shared_bases.entry(id.as_str().into()).or_insert(base);
                }
                (id, rev)
            }
        };
        let Some(rev) = rev else {
            ctx.figures.count(|c| c.writes_refused += 1);
            return;
        };
        let shared = matches!(drawn, Write::EditShared(_));
        ctx.figures.count(|c| {
            c.writes += 1;
            c.shared_edits += u64::from(shared);
        });
        let watchers = ctx.watchers(&self.plan, shared);
        ctx.figures
            .visible
            .written(self.database(), &id, rev, watchers);
    }

    /// One push, recorded; false when it failed.
    async fn push(&mut self, ctx: &Context) -> bool {
        match self.device.push(&mut self.requests).await {
            Ok(cycle) => {
                self.backoff = FIRST_BACKOFF;
                self.resynced(ctx, &cycle, Direction::Push);
                let figures = cycle_figures(&cycle, Direction::Push, None);
                ctx.figures.cycle(&self.plan.name, &figures);
                if let Some(said) = &cycle.refused_said {
                    ctx.figures.refused(&self.plan.name, cycle.failures, said);
                }
                for (id, rev) in &cycle.landed {
                    ctx.figures
                        .visible
                        .acknowledged(self.database(), id, rev, cycle.finished);
                    if let Some(base) = self.shared_bases.remove(id) {
                        let branched = ctx.pushed_shared(self.database(), id, &base, rev);
                        ctx.figures
                            .count(|c| c.conflicts_created += u64::from(branched));
                    }
                }
                true
            }
            Err(e) => {
                ctx.figures
                    .failed(&self.plan.name, Direction::Push, &e.to_string());
                false
            }
        }
    }

    /// One pull, recorded; true when it went through.
    async fn pull(&mut self, ctx: &Context, wait: bool) -> bool {
        matches!(self.pull_counting(ctx, wait).await, Pulled::Stored(_))
    }

    /// One pull, recorded.
    async fn pull_counting(&mut self, ctx: &Context, wait: bool) -> Pulled {
        let link = self.feed.as_mut().unwrap_or(&mut self.requests);
        link.interrupted = false;
        link.feed_answered = None;
        let result = self.device.pull(link, wait).await;
        let (interrupted, answered) = (link.interrupted, link.feed_answered);
        self.pulled(ctx, result, (interrupted, answered), wait)
    }

    /// A live pull: its feed read held on the feed's own connection, in a task of its
    /// own, while the device's writes and pushes go on on the other one (as PouchDB's
    /// live replication pushes and pulls side by side). The read is given up only when
    /// the device goes offline or the writes stop.
    async fn live_pull(&mut self, ctx: &Context, next_write: &mut Option<TokioInstant>) -> Pulled {
        let Some(mut feed) = self.feed.take() else {
            return self.pull_counting(ctx, true).await;
        };
        feed.until = self.going_offline(ctx);
        feed.interrupted = false;
        feed.feed_answered = None;
        let ask = match self.device.feed_ask(&mut feed, true).await {
            Ok(ask) => ask,
            Err(e) => {
                self.feed = Some(feed);
                return self.pulled(ctx, Err(e), (false, None), true);
            }
        };
        let (method, path) = (ask.request.method, ask.request.path.clone());
        let body = ask.request.body.clone();
        let mut read = tokio::spawn(async move {
            let answer = feed.send(method, &path, body.as_deref()).await;
            (feed, answer)
        });
        let finished = loop {
            let wake = *next_write;
            tokio::select! {
                finished = &mut read => break finished,
                () = sleep_until_some(wake) => {
                    if self.write_due(ctx, next_write) {
                        self.push(ctx).await;
                    }
                }
            }
        };
        let Ok((mut feed, answer)) = finished else {
            // The read's task did not finish (it panicked): its connection is gone, and
            // the device's pulls go on on its other one.
            return self.pulled(ctx, Err(given_up_error()), (false, None), true);
        };
        if feed.interrupted {
            let before = u64::from(ask.requests_before());
            ctx.figures.count(|c| {
                c.feeds_given_up += 1;
                c.requests += 1 + before;
            });
            self.feed = Some(feed);
            return Pulled::GaveUp;
        }
        let answered = feed.feed_answered;
        let result = self.device.pull_answer(&mut feed, ask, answer).await;
        let interrupted = feed.interrupted;
        self.feed = Some(feed);
        self.pulled(ctx, result, (interrupted, answered), true)
    }

    /// A pull's end, recorded; `interrupted` when its held feed read was given up,
    /// `answered` when its feed read was answered.
    fn pulled(
        &mut self,
        ctx: &Context,
        result: Result<Cycle, SyncError>,
        (interrupted, answered): (bool, Option<Instant>),
        wait: bool,
    ) -> Pulled {
        match result {
            Ok(cycle) => {
                self.pull_fell_short = cycle.failures > 0;
                if !self.pull_fell_short {
                    self.backoff = FIRST_BACKOFF;
                }
                self.resynced(ctx, &cycle, Direction::Pull);
                let from = answered.filter(|_| wait);
                ctx.figures.cycle(
                    &self.plan.name,
                    &cycle_figures(&cycle, Direction::Pull, from),
                );
                if !self.plan.is_cold() {
                    for (id, rev) in &cycle.landed {
                        ctx.figures
                            .visible
                            .stored(self.database(), id, rev, cycle.finished);
                    }
                }
                Pulled::Stored(cycle.written)
            }
            Err(_) if interrupted => {
                ctx.figures.count(|c| {
                    c.feeds_given_up += 1;
                    c.requests += 1;
                });
                Pulled::GaveUp
            }
            Err(e) => {
                ctx.figures
                    .failed(&self.plan.name, Direction::Pull, &e.to_string());
                Pulled::Failed
            }
        }
    }

    /// Counts a start from 0 of a device that had written a checkpoint that way before
    /// (a device with no checkpoint yet starts from 0 by design).
    fn resynced(&mut self, ctx: &Context, cycle: &Cycle, direction: Direction) {
        let flag = match direction {
            Direction::Push => &mut self.pushed_before,
            Direction::Pull => &mut self.pulled_before,
        };
        let before = *flag;
        *flag |= cycle.checkpoint_writes > 0;
        if let (true, StartedFrom::Zero { because }) = (before, cycle.started_from) {
            ctx.figures.count(|c| match because {
                ZeroBecause::NoLog => c.resynced_no_log += 1,
                ZeroBecause::NoCommonSession => c.resynced_no_common_session += 1,
            });
        }
    }

    /// After a failure: a pause that grows, cut short by `until` or the end.
    async fn rest(&mut self, ctx: &Context, until: Option<TokioInstant>) -> Waited {
        let pause = TokioInstant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(LONGEST_BACKOFF);
        wait_until(ctx, earliest(Some(pause), until).unwrap_or(pause)).await
    }
}

/// A cycle as the figures take it; a live pull timed from `from`, its feed's answer.
fn cycle_figures(cycle: &Cycle, direction: Direction, from: Option<Instant>) -> CycleFigures {
    let start = from.unwrap_or(cycle.started).max(cycle.started);
    CycleFigures {
        direction,
        requests: u64::from(cycle.requests),
        bytes_sent: cycle.bytes_sent,
        bytes_received: cycle.bytes_received,
        checkpoint_writes: u64::from(cycle.checkpoint_writes),
        shape: CycleShape {
            changes_read: cycle.changes_read,
            missing: cycle.missing,
            written: cycle.written,
            read_log: cycle.started_from != StartedFrom::Continuing,
            // The device writes its log only when its position moved on
            // (`checkpoint_due`): a write is the witness, rows or not.
            log_moved: cycle.checkpoint_writes > 0,
        },
        conflicts_seen: cycle.conflicts_seen,
        failures: cycle.failures,
        time: cycle.finished.saturating_duration_since(start),
    }
}

/// Sleeps until `at`; forever without one.
async fn sleep_until_some(at: Option<TokioInstant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a pull failed whose feed read's task did not finish.
fn given_up_error() -> SyncError {
    SyncError::Transport {
        step: crate::device::Step::Feed,
        reason: "the feed read's task ended without an answer".to_string(),
    }
}

/// A device's first periodic sync: a fixed offset in [0, every) from its own seed (the
/// run's seed and its index), so that devices spread their syncs as phones do.
fn first_sync_offset(seed: u64, every: Duration) -> Duration {
    let nanos = u64::try_from(every.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(crate::seed::derive(seed, 2) % nanos)
}

fn earliest(a: Option<TokioInstant>, b: Option<TokioInstant>) -> Option<TokioInstant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Waits until `at`, or until the writes stop.
async fn wait_until(ctx: &Context, at: TokioInstant) -> Waited {
    if ctx.ended.is_raised() {
        return Waited::Ended;
    }
    tokio::select! {
        () = tokio::time::sleep_until(at) => Waited::Due,
        () = ctx.ended.raised() => Waited::Ended,
    }
}

#[cfg(test)]
mod offset_tests {
    use super::*;

    #[test]
    fn first_syncs_spread_over_the_period_and_repeat_with_the_seed() {
        let every = Duration::from_secs(60);
        let offsets: Vec<Duration> = (0..100)
            .map(|i| first_sync_offset(crate::seed::derive(7, i), every))
            .collect();
        assert!(offsets.iter().all(|o| *o < every));
        assert!(offsets.iter().any(|o| *o < every / 2));
        assert!(offsets.iter().any(|o| *o >= every / 2));
        let mut distinct = offsets.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() > 90,
            "devices do not sync in the same instant"
        );
        let again = first_sync_offset(crate::seed::derive(7, 3), every);
        assert_eq!(again, offsets[3]);
        assert_eq!(first_sync_offset(5, Duration::ZERO), Duration::ZERO);
    }
}
