//! The whole machine's CPU use, beside the client's own: a server on the same machine
//! takes CPU the client then lacks, and only the two figures together tell which
//! process was short.

/// Jiffies the machine's CPUs spent busy and in total since boot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    /// The machine's counters now; `None` where the system has no `/proc/stat`.
    pub fn now() -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        parse(stat.lines().next()?)
    }

    /// The share of all CPUs that was busy between `earlier` and `self`.
    pub fn busy_since(&self, earlier: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let busy = self.busy.checked_sub(earlier.busy)?;
        (total > 0).then(|| busy as f64 / total as f64)
    }
}

/// The summary line `cpu  user nice system idle iowait irq softirq steal …`. Idle and
/// iowait are the idle time; guest time is already counted in user, so it is left out.
fn parse(line: &str) -> Option<CpuTimes> {
    let mut words = line.split_whitespace();
    if words.next()? != "cpu" {
        return None;
    }
    let fields: Vec<u64> = words
        .take(8)
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    if fields.len() < 4 {
        return None;
    }
    let idle = fields[3] + fields.get(4).copied().unwrap_or(0);
    let total: u64 = fields.iter().sum();
    Some(CpuTimes {
        busy: total.saturating_sub(idle),
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_share_leaves_out_idle_and_iowait() {
        let a = parse("cpu  100 0 100 700 100 0 0 0 0 0").unwrap();
        let b = parse("cpu  250 0 150 800 200 0 0 0 0 0").unwrap();
        assert_eq!(b.busy_since(&a), Some(0.5));
        assert_eq!(a.busy_since(&b), None);
        assert_eq!(parse("cpu0 1 2 3 4"), None);
        assert_eq!(parse("cpu  x"), None);
    }
}
