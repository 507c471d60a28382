//! Updates of hot documents (`--hot-docs`) as a result keeps them, and back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::HotCounts;
use crate::metrics::hot::MOST_ATTEMPTS;

/// What the updates of hot documents met: 409s are expected there, not failures.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HotResult {
    /// PUTs sent, every attempt counted.
    pub attempts: u64,
    /// 409 answers among them.
    pub conflicts: u64,
    /// `conflicts` per PUT sent, 0 to 1.
    pub conflict_rate: f64,
    /// GETs for a document's current revision (after a 409, or when it was not known).
    pub fetches: u64,
    /// Successful updates by the attempt they succeeded at: `"1"` at the first PUT.
    pub by_attempts: BTreeMap<String, u64>,
    /// Updates that met a 409 at every attempt allowed (also failed as `409`).
    pub gave_up: u64,
}

impl HotResult {
    /// The successful updates by attempt in counting order, e.g. "1: 3,000, 2: 600, 10: 1"
    /// (the file's keys sort as text, "10" before "2"); "none" when none succeeded.
    pub fn attempts_text(&self) -> String {
        let mut by_attempts: Vec<(u64, u64)> = self
            .by_attempts
            .iter()
            .filter_map(|(attempt, n)| Some((attempt.parse().ok()?, *n)))
            .collect();
        if by_attempts.is_empty() {
            return "none".to_string();
        }
        by_attempts.sort_unstable();
        let parts: Vec<String> = by_attempts
            .iter()
            .map(|(attempt, n)| format!("{attempt}: {}", crate::report::numbers::grouped(*n)))
            .collect();
        parts.join(", ")
    }
}

/// The result of `counts`, `None` when no hot document was updated.
pub fn hot_result(counts: &HotCounts) -> Option<HotResult> {
    if counts.is_empty() {
        return None;
    }
    Some(HotResult {
        attempts: counts.attempts,
        conflicts: counts.conflicts,
        conflict_rate: if counts.attempts > 0 {
            counts.conflicts as f64 / counts.attempts as f64
        } else {
            0.0
        },
        fetches: counts.fetches,
        by_attempts: counts
            .by_attempts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| ((i + 1).to_string(), *n))
            .collect(),
        gave_up: counts.gave_up,
    })
}

/// The counts a result holds, for merging; an attempt that is not 1 to the most allowed
/// is refused.
pub fn hot_counts(result: &HotResult) -> Result<HotCounts, String> {
    let mut counts = HotCounts {
        attempts: result.attempts,
        conflicts: result.conflicts,
        fetches: result.fetches,
        gave_up: result.gave_up,
        ..HotCounts::default()
    };
    for (attempt, &n) in &result.by_attempts {
        let slot = attempt
            .parse::<usize>()
            .ok()
            .filter(|a| (1..=MOST_ATTEMPTS).contains(a))
            .ok_or_else(|| {
                format!("hot.by_attempts: {attempt:?} is not an attempt from 1 to {MOST_ATTEMPTS}")
            })?;
        counts.by_attempts[slot - 1] = n;
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_go_to_a_result_and_back() {
        let mut counts = HotCounts {
            attempts: 10,
            conflicts: 4,
            fetches: 4,
            ..HotCounts::default()
        };
        counts.succeeded_at(1);
        counts.succeeded_at(3);
        let result = hot_result(&counts).unwrap();
        assert_eq!(result.conflict_rate, 0.4);
        assert_eq!(result.by_attempts.keys().collect::<Vec<_>>(), ["1", "3"]);
        assert_eq!(result.attempts_text(), "1: 1, 3: 1");
        assert_eq!(hot_counts(&result), Ok(counts));
        assert_eq!(hot_result(&HotCounts::default()), None);
        let mut bad = result;
        bad.by_attempts.insert("0".to_string(), 1);
        assert!(hot_counts(&bad).unwrap_err().contains("\"0\""));
    }
}
