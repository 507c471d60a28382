//! Reading results after the run: comparing two results, thresholds that pass or fail a
//! run, and merging the results of many nodes into one. One file per concern; the command-line side is in `cli/compare.rs`,
//! `cli/merge.rs` and `cli/check.rs`.

pub mod compare;
pub mod differences;
pub mod expectations;
pub mod measure;
pub mod merge;
pub mod repetitions;
pub mod search;
pub mod statistics;
pub mod thresholds;

use hdrhistogram::Histogram;

use crate::results::{Latency, OperationResult, PhaseResult, histogram};

/// The latency that speaks for an operation of a phase: the response time under an open
/// model (`--rate`, where it counts from each operation's scheduled start and so shows a
/// stalled server), the service time otherwise. Thresholds and `compare` both use it.
pub fn primary_latency<'a>(phase: &PhaseResult, operation: &'a OperationResult) -> &'a Latency {
    if phase.target_rate.is_some() {
        &operation.response
    } else {
        &operation.latency
    }
}

/// Adds an encoded histogram (see [`histogram::encode`]) into `into`.
pub fn add_encoded(into: &mut Histogram<u64>, encoded: &str) -> Result<(), String> {
    let other = histogram::decode(encoded)?;
    into.add(&other)
        .map_err(|e| format!("histograms cannot be added: {e:?}"))
}

/// An empty histogram of microseconds, as the engine records them.
pub fn empty_histogram() -> Histogram<u64> {
    crate::metrics::recorder::new_histogram()
}

/// A phase's name without a repetition suffix: `crud#2` → `crud`.
pub fn base_name(phase: &str) -> &str {
    match phase.rsplit_once('#') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => phase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_suffixes_are_stripped() {
        assert_eq!(base_name("crud#2"), "crud");
        assert_eq!(base_name("crud#12"), "crud");
        assert_eq!(base_name("crud"), "crud");
        assert_eq!(base_name("crud#"), "crud#");
        assert_eq!(base_name("a#b"), "a#b");
    }
}
