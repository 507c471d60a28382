//! The live view of a step: once per interval, the recorder's interval is taken over,
//! summed up into one compact row, handed to the observer, and kept for the report.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::machine::CpuTimes;
use super::observer::Observer;
use super::server_watch::Watched;
use crate::cpu::{cores, process_cpu};
use crate::disk::{self, DiskSlot};
use crate::metrics::coarse::Series;
use crate::metrics::interval::stalled;
use crate::metrics::late::{LateCauses, Signals};
use crate::metrics::{IntervalMetrics, IntervalRow, IntervalSummary, Recorder};
use crate::server_stats::join::{Joiner, NodeLooks};
use crate::workload::Schedule;

/// What a phase aims at on this node (open model): its schedule from the phase's start,
/// which ends with the phase's duration and its operations.
#[derive(Clone, Copy, Debug)]
pub struct Aim {
    pub schedule: Schedule,
    pub until: Option<Duration>,
    pub operations: Option<u64>,
}

impl Aim {
    /// Operations due in the first `seconds` of the phase.
    fn due_by(&self, seconds: f64) -> f64 {
        let seconds = self
            .until
            .map_or(seconds, |until| seconds.min(until.as_secs_f64()));
        let due = self.schedule.due_by(seconds);
        self.operations.map_or(due, |n| due.min(n as f64))
    }

    /// The rate aimed at over the stretch from `from` to `to` seconds after the phase's
    /// start: the operations due in it per second, exact under a ramp.
    pub fn rate_between(&self, from: f64, to: f64) -> f64 {
        if to > from {
            (self.due_by(to) - self.due_by(from)) / (to - from)
        } else {
            self.schedule.rate_at(from)
        }
    }
}

/// Samples the recorder until the step ends.
pub struct Monitor {
    recorder: Arc<Recorder>,
    /// The interval being summed up; reused so that sampling does not allocate histograms.
    interval: IntervalMetrics,
    started: Instant,
    last: Instant,
    last_cpu: Duration,
    last_machine: Option<CpuTimes>,
    /// Operations in flight when the current interval began.
    last_in_flight: u64,
    /// Whether the interval before was stalled, and was catching up after a stall.
    last_stall: (bool, bool),
    /// The rows kept for the result: at most `--max-intervals`, merged as they fill.
    rows: Series<IntervalRow>,
    /// The last rows, waiting for the servers' looks at their ends (which may come up
    /// to half an interval late) before they join `rows`.
    waiting: VecDeque<IntervalRow>,
    /// The servers' looks as they come, and what places them beside the rows.
    server: Option<(Arc<Mutex<Watched>>, Joiner)>,
    observer: Arc<dyn Observer>,
    /// What the phase aims at (open model), for each interval's target rate.
    aim: Option<Aim>,
    /// `--busy-poll`: every row says its CPU share was full by design.
    polling: bool,
    /// Where the database's sizes land, looked at beside the intervals.
    disk: Option<DiskSlot>,
}

impl Monitor {
    /// A monitor of a phase that starts at `started`.
    pub fn new(
        recorder: Arc<Recorder>,
        observer: Arc<dyn Observer>,
        aim: Option<Aim>,
        started: Instant,
        polling: bool,
    ) -> Monitor {
        Monitor {
            recorder,
            interval: IntervalMetrics::default(),
            started,
            last: started,
            last_cpu: process_cpu(),
            last_machine: CpuTimes::now(),
            last_in_flight: 0,
            last_stall: (false, false),
            rows: Series::new(crate::metrics::coarse::DEFAULT_BOUND),
            waiting: VecDeque::new(),
            server: None,
            observer,
            aim,
            polling,
            disk: None,
        }
    }

    /// Each row takes the database's sizes that landed in `slot` during its interval.
    pub fn with_disk(mut self, slot: DiskSlot) -> Monitor {
        self.disk = Some(slot);
        self
    }

    /// Keeps at most `bound` rows for the result, merging them as they fill.
    pub fn bounded(mut self, bound: usize) -> Monitor {
        self.rows = Series::new(bound);
        self
    }

    /// Puts what the servers said beside each row, from the looks that land in `looks`.
    pub fn with_server(mut self, looks: Arc<Mutex<Watched>>) -> Monitor {
        self.server = Some((looks, Joiner::default()));
        self
    }

    /// Closes the current interval: takes the recorder's figures and reports the row.
    pub fn sample(&mut self) {
        // The clock and the CPU are read together, before the slower work, so that the
        // CPU share is of the same stretch of time.
        let now = Instant::now();
        let cpu_now = process_cpu();
        let machine_now = CpuTimes::now();
        let in_flight = self.recorder.in_flight();
        self.interval.clear();
        self.recorder.take_interval(&mut self.interval);
        let length = now.duration_since(self.last).as_secs_f64();
        let cpu = if length > 0.0 {
            (cpu_now - self.last_cpu).as_secs_f64() / length / cores()
        } else {
            0.0
        };
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let mut row = self.interval.row(elapsed, length, cpu);
        row.target_rate = self
            .aim
            .map(|aim| aim.rate_between(elapsed - length, elapsed));
        row.machine_cpu = machine_now
            .zip(self.last_machine)
            .and_then(|(now, then)| now.busy_since(&then));
        row.in_flight = in_flight;
        row.waiting_after_429 = self.recorder.waiting_after_429();
        row.polling = self.polling;
        row.disk = self.disk.as_ref().and_then(disk::take);
        // A 429 is an answer too, though its operation goes out again.
        let answered = row.operations.values().map(IntervalSummary::answered).sum();
        row.stalled = stalled(self.last_in_flight, answered);
        // Operations due during a stall start late once it ends, which may take two
        // intervals when it ended near an interval's end (as `late_cause` counts them).
        let (was_stalled, was_after) = self.last_stall;
        row.after_stall = was_stalled || (was_after && row.late > 0);
        self.last_stall = (row.stalled, row.after_stall);
        put_down_late(&mut row);
        self.observer
            .interval_closed(&self.interval, &row, row.target_rate);
        self.waiting.push_back(row);
        while self.waiting.len() > JOIN_DELAY {
            let row = self
                .waiting
                .pop_front()
                .expect("more than JOIN_DELAY rows wait");
            self.keep(row, None);
        }
        self.last = now;
        self.last_cpu = cpu_now;
        self.last_machine = machine_now;
        self.last_in_flight = in_flight;
    }

    /// A row joins the kept ones, with what the servers said as it ended: from the looks
    /// landed so far, or from `looks` once the servers are no longer watched.
    fn keep(&mut self, mut row: IntervalRow, looks: Option<&mut [NodeLooks]>) {
        if let Some((landed, joiner)) = &mut self.server {
            row.server = match looks {
                Some(looks) => joiner.beside(row.elapsed, row.length, looks),
                None => {
                    let mut landed = landed.lock().unwrap_or_else(|p| p.into_inner());
                    joiner.beside(row.elapsed, row.length, &mut landed.nodes)
                }
            };
        }
        self.rows.push(row);
    }

    /// The phase's rows once its last interval was taken, with the servers' looks that
    /// were left when they stopped being watched; and how many live intervals each row
    /// covers.
    pub fn finish(&mut self, mut looks: Vec<NodeLooks>) -> (Vec<IntervalRow>, u64) {
        while let Some(row) = self.waiting.pop_front() {
            self.keep(row, Some(&mut looks));
        }
        let bound = self.rows.bound();
        std::mem::replace(&mut self.rows, Series::new(bound)).into_parts()
    }
}

/// Rows wait this many intervals for the servers' looks at their ends: a look ends
/// within half an interval of its moment.
const JOIN_DELAY: usize = 2;

/// Puts each of the interval's late starts down to the first cause it shows.
fn put_down_late(row: &mut IntervalRow) {
    let met_429s = row.waiting_after_429 > 0
        || row
            .operations
            .values()
            .any(|o| o.rate_limited + o.retried_429 > 0);
    let signals = Signals {
        catching_up: row.stalled || row.after_stall,
        met_429s,
        cpu: row.cpu,
        machine_cpu: row.machine_cpu,
        polling: row.polling,
    };
    row.late_causes = LateCauses::of(row.late, &signals);
    if row.stalled {
        row.stalled_seconds = row.length;
    }
}

/// Runs `monitor` every `interval` until the returned handle's task is aborted; the
/// monitor itself is shared so the engine can take a last sample and the rows.
pub fn spawn(monitor: Arc<Mutex<Monitor>>, interval: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            monitor.lock().unwrap_or_else(|p| p.into_inner()).sample();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Operation, Rate};

    fn aim(rate: Rate, until_s: Option<f64>, operations: Option<u64>) -> Aim {
        let until = until_s.map(Duration::from_secs_f64);
        Aim {
            schedule: Schedule::new(rate, until),
            until,
            operations,
        }
    }

    #[test]
    fn an_intervals_target_is_the_schedules_mean_over_it() {
        let ramp = aim(Rate::ramp(100.0, 300.0), Some(10.0), None);
        // 100 + 20 t per second: its mean over [2, 3] is the rate at 2.5 s.
        assert!((ramp.rate_between(2.0, 3.0) - 150.0).abs() < 1e-9);
        assert!((ramp.rate_between(0.0, 10.0) - 200.0).abs() < 1e-9);
        // An interval past the phase's duration holds only the part before it.
        assert!((ramp.rate_between(9.5, 10.5) - 295.0 / 2.0).abs() < 1e-6);
        assert_eq!(ramp.rate_between(11.0, 12.0), 0.0);
        assert_eq!(
            ramp.rate_between(4.0, 4.0),
            180.0,
            "no length: the rate then"
        );
        // A count-bounded constant rate ends with its operations: 25 due at 50/s.
        let counted = aim(Rate::constant(50.0), None, Some(25));
        assert_eq!(counted.rate_between(0.0, 0.4), 50.0);
        assert!((counted.rate_between(0.4, 1.0) - 5.0 / 0.6).abs() < 1e-9);
    }

    /// An observer that keeps what it is told.
    #[derive(Default)]
    struct Keeper {
        rows: Mutex<Vec<(IntervalRow, Option<f64>)>>,
    }

    impl Observer for Keeper {
        fn interval(&self, row: &IntervalRow, target_rate: Option<f64>) {
            self.rows.lock().unwrap().push((row.clone(), target_rate));
        }
    }

    #[test]
    fn rows_reach_the_observer_with_stalls_and_what_follows_them() {
        let recorder = Arc::new(Recorder::new(2));
        let keeper = Arc::new(Keeper::default());
        let constant = aim(Rate::constant(50.0), Some(3_600.0), None);
        let mut monitor = Monitor::new(
            recorder.clone(),
            keeper.clone(),
            Some(constant),
            Instant::now(),
            false,
        );
        // One operation in flight that no answer ends for a whole interval: a stall.
        recorder.began(None, false);
        monitor.sample();
        monitor.sample();
        // It is answered; the operations due meanwhile start late.
        let mut on = crate::metrics::ConnectionMetrics::default();
        recorder.succeeded(&mut on, Operation::Read, 1, 1_000, 2_000);
        recorder.ended();
        recorder.began(None, true);
        recorder.ended();
        monitor.sample();
        recorder.began(None, true);
        recorder.ended();
        monitor.sample();
        monitor.sample();
        let kept = keeper.rows.lock().unwrap();
        let flags: Vec<(bool, bool)> = kept
            .iter()
            .map(|(row, _)| (row.stalled, row.after_stall))
            .collect();
        assert_eq!(
            flags,
            [
                (false, false),
                (true, false),
                (false, true),
                (false, true),
                (false, false)
            ]
        );
        assert_eq!(kept[2].0.of(Operation::Read).succeeded, 1);
        assert_eq!(kept[2].0.late, 1);
        assert!(
            kept.iter().all(|(row, rate)| *rate == row.target_rate
                && rate.is_some_and(|r| (r - 50.0).abs() < 1e-6)),
            "every row carries the interval's target to the observer"
        );
        let (rows, width) = monitor.finish(Vec::new());
        assert_eq!(
            (rows.len(), width),
            (kept.len(), 1),
            "every row is kept for the result"
        );
        // The late starts after the stall are put down to it.
        let causes: Vec<u64> = rows.iter().map(|r| r.late_causes.stall).collect();
        assert_eq!(causes, [0, 0, 1, 1, 0]);
        assert!(rows[1].stalled_seconds > 0.0 && rows[2].stalled_seconds == 0.0);
    }
}
