//! Turning measurements into what users read.

pub mod ironcushion;
pub mod latency;
pub mod live;
pub mod numbers;
pub mod summary;

use crate::engine::StepOutcome;

/// Everything printed for one step: Iron Cushion's block, the latency table, failures,
/// and why connections stopped early.
pub fn step_text(outcome: &StepOutcome) -> String {
    let mut out = ironcushion::block(outcome);
    if outcome.interrupted {
        out.push_str("  INTERRUPTED: the figures cover what was done before the stop\n");
    }
    out.push_str(&latency::table(
        &outcome.connections,
        latency::Latency::Service,
    ));
    if outcome.target_rate.is_some() {
        out.push_str(&latency::table(
            &outcome.connections,
            latency::Latency::Response,
        ));
    }
    out.push_str(&latency::failures(&outcome.connections));
    out.push_str(&summary::summary(outcome));
    let mut reasons = outcome.aborted.clone();
    reasons.sort();
    reasons.dedup();
    for reason in reasons.iter().take(3) {
        out.push_str(&format!("  stopped early: {reason}\n"));
    }
    if reasons.len() > 3 {
        out.push_str(&format!(
            "  stopped early: … and {} more\n",
            reasons.len() - 3
        ));
    }
    out
}
