//! The live view of a step: once per interval, the connections' interval recorders are
//! taken over, merged into one row, printed, and kept for the report.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::metrics::{IntervalMetrics, IntervalRow, SharedInterval};
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

/// Samples the connections' recorders until the step ends.
pub struct Monitor {
    recorders: Vec<SharedInterval>,
    started: Instant,
    last: Instant,
    last_cpu: Duration,
    pub rows: Vec<IntervalRow>,
    output: LiveOutput,
    bar: ProgressBar,
    /// The operations per second the run aims at (open model), for the lines.
    target_rate: Option<f64>,
}

impl Monitor {
    pub fn new(
        recorders: Vec<SharedInterval>,
        output: LiveOutput,
        bar: ProgressBar,
        target_rate: Option<f64>,
    ) -> Monitor {
        let now = Instant::now();
        Monitor {
            recorders,
            started: now,
            last: now,
            last_cpu: process_cpu(),
            rows: Vec::new(),
            output,
            bar,
            target_rate,
        }
    }

    /// Closes the current interval: takes every recorder's figures and prints the row.
    pub fn sample(&mut self) {
        let now = Instant::now();
        let mut merged = IntervalMetrics::default();
        for recorder in &self.recorders {
            let taken = std::mem::take(&mut *recorder.lock().unwrap_or_else(|p| p.into_inner()));
            merged.merge(&taken);
        }
        let cpu_now = process_cpu();
        let length = now.duration_since(self.last).as_secs_f64();
        let cpu = if length > 0.0 {
            (cpu_now - self.last_cpu).as_secs_f64() / length / cores()
        } else {
            0.0
        };
        let row = IntervalRow {
            elapsed: now.duration_since(self.started).as_secs_f64(),
            length,
            metrics: merged,
            cpu,
        };
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
