//! Why operations started late (open model), put down per live interval, so that the
//! causes stay exact when intervals are later merged into coarser ones: a one-second stall
//! or a saturated second inside a merged minute would vanish from the minute's figures.
//!
//! Each late start is put down to the first cause its interval shows: catching up after a
//! stall, the server's 429s, the client's CPU at its limit, the machine's CPU taken by
//! other processes, else too few connections. Under `--busy-poll` the client keeps its
//! cores full by design, so neither CPU cause can be told.

use serde::{Deserialize, Serialize};

use crate::cpu::SATURATED;

/// Late starts by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LateCauses {
    /// Catching up after the server stopped answering.
    pub stall: u64,
    /// While the server turned requests away with 429.
    pub rate_limited: u64,
    /// While the client's CPU was saturated.
    pub client_cpu: u64,
    /// While other processes kept the machine's CPU busy.
    pub other_processes: u64,
    /// Every connection was still waiting for an answer.
    pub connections: u64,
}

/// What an interval showed that may explain its late starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Signals {
    /// Stalled, or catching up after a stall.
    pub catching_up: bool,
    /// 429s in the interval, or operations waiting after one at its end.
    pub met_429s: bool,
    pub cpu: f64,
    pub machine_cpu: Option<f64>,
    pub polling: bool,
}

impl LateCauses {
    /// The interval's `late` starts, put down to the first cause `signals` show.
    pub fn of(late: u64, signals: &Signals) -> LateCauses {
        let mut causes = LateCauses::default();
        *causes.share(signals) += late;
        causes
    }

    /// The count the first cause `signals` show goes to.
    pub fn share(&mut self, signals: &Signals) -> &mut u64 {
        if signals.catching_up {
            &mut self.stall
        } else if signals.met_429s {
            &mut self.rate_limited
        } else if signals.cpu >= SATURATED && !signals.polling {
            &mut self.client_cpu
        } else if Self::other_processes(signals).is_some() {
            &mut self.other_processes
        } else {
            &mut self.connections
        }
    }

    /// The machine's CPU share when other processes kept it saturated.
    pub fn other_processes(signals: &Signals) -> Option<f64> {
        signals
            .machine_cpu
            .filter(|&m| m >= SATURATED && !signals.polling)
    }

    pub fn add(&mut self, other: &LateCauses) {
        self.stall += other.stall;
        self.rate_limited += other.rate_limited;
        self.client_cpu += other.client_cpu;
        self.other_processes += other.other_processes;
        self.connections += other.connections;
    }

    pub fn total(&self) -> u64 {
        self.stall + self.rate_limited + self.client_cpu + self.other_processes + self.connections
    }
}
