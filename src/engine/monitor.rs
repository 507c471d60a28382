//! The live view of a step: once per interval, the recorder's interval is taken over,
//! summed up into one compact row, printed, and kept for the report.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::machine::CpuTimes;
use crate::metrics::interval::stalled;
use crate::metrics::{IntervalMetrics, IntervalRow, Recorder};
use crate::report::live;

/// Where live lines go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveOutput {
    /// Nothing (`--quiet`).
    Silent,
    /// Above the progress bar on a terminal, plain lines on standard error otherwise.
    Lines,
}

/// CPU time this process has used, user plus system.
pub fn process_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes into the struct we own; RUSAGE_SELF is always valid.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Cores the client may use.
pub fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// Above this share of its cores, the client itself may be what limits the figures.
pub const SATURATED: f64 = 0.9;

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
    pub rows: Vec<IntervalRow>,
    output: LiveOutput,
    bar: ProgressBar,
    /// The operations per second the run aims at (open model), for the lines.
    target_rate: Option<f64>,
}

impl Monitor {
    pub fn new(
        recorder: Arc<Recorder>,
        output: LiveOutput,
        bar: ProgressBar,
        target_rate: Option<f64>,
    ) -> Monitor {
        let now = Instant::now();
        Monitor {
            recorder,
            interval: IntervalMetrics::default(),
            started: now,
            last: now,
            last_cpu: process_cpu(),
            last_machine: CpuTimes::now(),
            last_in_flight: 0,
            rows: Vec::new(),
            output,
            bar,
            target_rate,
        }
    }

    /// Closes the current interval: takes the recorder's figures and prints the row.
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
        let mut row =
            self.interval
                .row(now.duration_since(self.started).as_secs_f64(), length, cpu);
        row.machine_cpu = machine_now
            .zip(self.last_machine)
            .and_then(|(now, then)| now.busy_since(&then));
        row.in_flight = in_flight;
        let answered = row
            .operations
            .values()
            .map(|o| o.succeeded + o.failed)
            .sum();
        row.stalled = stalled(self.last_in_flight, answered);
        // Operations due during a stall start late once it ends, which may take two
        // intervals when it ended near an interval's end (as `late_cause` counts them).
        row.after_stall = self
            .rows
            .last()
            .is_some_and(|r| r.stalled || (r.after_stall && row.late > 0));
        if self.output == LiveOutput::Lines && length > 0.05 {
            let line = live::line(&row, self.target_rate);
            if self.bar.is_hidden() {
                eprintln!("{line}");
            } else {
                self.bar.println(line);
            }
        }
        self.rows.push(row);
        self.last = now;
        self.last_cpu = cpu_now;
        self.last_machine = machine_now;
        self.last_in_flight = in_flight;
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
