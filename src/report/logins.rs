//! The line on logins (`--auth cookie` or `iam`): how many sessions or tokens the phase
//! needed and what getting them took, apart from the operations, whose times leave them out.

use super::connections::times;
use crate::report::numbers::grouped;
use crate::results::PhaseResult;

/// One line; none when the phase made no login.
pub fn line(phase: &PhaseResult) -> String {
    let Some(logins) = &phase.logins else {
        return String::new();
    };
    let failed = match logins.failed {
        0 => "none failed".to_string(),
        n => format!("{} failed", grouped(n)),
    };
    format!(
        "  logins: {}, {failed}; {} (not in the operations' times)\n",
        grouped(logins.count),
        times("each", &logins.latency)
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::LoginTally;
    use crate::results::build;

    #[test]
    fn logins_show_with_their_failures_and_times() {
        let mut phase = PhaseResult::of_operations("crud", 1.0, Vec::new());
        assert_eq!(line(&phase), "");
        let mut tally = LoginTally::default();
        tally.record(Duration::from_millis(20), true);
        tally.record(Duration::from_millis(40), false);
        phase.logins = Some(build::logins(&tally));
        let text = line(&phase);
        assert!(
            text.starts_with("  logins: 2, 1 failed; each: mean 30."),
            "{text}"
        );
        assert!(text.contains("max 40.0"), "{text}");
    }
}
