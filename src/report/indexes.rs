//! The index builds timed around a phase: one line each.

use std::fmt::Write;

use crate::results::{BuiltWhen, IndexBuildResult};

/// `  index _design/sofabench (ages, by_name) built in 1.234 s …`, one per build.
pub fn lines(builds: &[IndexBuildResult]) -> String {
    let mut out = String::new();
    for build in builds {
        let _ = writeln!(
            out,
            "  index {} ({}) built in {:.3} s {} (from its creation until a query waiting for it answered)",
            build.index,
            build.queries.join(", "),
            build.seconds,
            when(build.when)
        );
    }
    out
}

/// Whether the database was idle or under the phase's operations while it built.
pub fn when(when: BuiltWhen) -> &'static str {
    match when {
        BuiltWhen::BeforePhase => "before the phase, idle",
        BuiltWhen::WhilePhaseRan => "while the phase's operations ran",
        BuiltWhen::PhaseEndedFirst => "from the phase's start; its operations ended first",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_build() {
        let builds = [IndexBuildResult {
            index: "_design/sofabench".to_string(),
            queries: vec!["ages".to_string(), "names".to_string()],
            seconds: 1.2345,
            when: BuiltWhen::BeforePhase,
        }];
        assert_eq!(
            lines(&builds),
            "  index _design/sofabench (ages, names) built in 1.234 s before the phase, idle (from its creation until a query waiting for it answered)\n"
        );
        assert_eq!(lines(&[]), "");
    }
}
