//! The index builds timed before a phase: one line each.

use std::fmt::Write;

use crate::results::IndexBuildResult;

/// `  index _design/sofabench (ages, by_name) built in 1.234 s`, one per build.
pub fn lines(builds: &[IndexBuildResult]) -> String {
    let mut out = String::new();
    for build in builds {
        let _ = writeln!(
            out,
            "  index {} ({}) built in {:.3} s (from its creation until a query waiting for it answered)",
            build.index,
            build.queries.join(", "),
            build.seconds
        );
    }
    out
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
        }];
        assert_eq!(
            lines(&builds),
            "  index _design/sofabench (ages, names) built in 1.234 s (from its creation until a query waiting for it answered)\n"
        );
        assert_eq!(lines(&[]), "");
    }
}
