//! What differs between two runs' environments (see `results::environment`): a fact
//! that says what ran (the server's version, the nodes, q and n, the client machine) and
//! differs is a warning; a fact of the moment (the load average, a compaction running)
//! that differs, and a fact recorded on one side only, are noted quietly: a result
//! written before these facts existed says "unknown", which is no difference.

use crate::results::RunResult;
use crate::results::environment::{Fact, Kind, UNKNOWN, facts};
use crate::text::visible;

/// The facts two runs differ in, by how much they matter.
#[derive(Debug, Default, PartialEq)]
pub struct Differences {
    /// What ran differs: `server.version: A 3.4.2, B 3.5.0`.
    pub identity: Vec<String>,
    /// The moment differs, or a fact is known on one side only.
    pub noted: Vec<String>,
}

/// The differences of `b` from `a`, each side named by its letter.
pub fn differences(a: &RunResult, b: &RunResult, letters: (char, char)) -> Differences {
    let mut out = Differences::default();
    for (fa, fb) in facts(a).iter().zip(facts(b).iter()) {
        if fa.value == fb.value {
            continue;
        }
        let line = line(fa, fb, letters);
        if fa.value == UNKNOWN || fb.value == UNKNOWN {
            out.noted
                .push(format!("{line} (recorded on one side only)"));
        } else if fa.kind == Kind::Moment {
            out.noted.push(format!("{line} (at the start)"));
        } else {
            out.identity.push(line);
        }
    }
    out
}

fn line(a: &Fact, b: &Fact, (la, lb): (char, char)) -> String {
    format!(
        "{}: {la} {}, {lb} {}",
        a.name,
        visible(&a.value),
        visible(&b.value)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::NodeInfo;
    use crate::results::environment::{ClientEnvironment, ServerEnvironment, ServerNode};

    fn run(version: Option<&str>, load: f64) -> RunResult {
        let mut r = RunResult::of_phases(Vec::new());
        r.nodes = vec![NodeInfo {
            index: 0,
            count: 1,
            host: "h".to_string(),
            client: Some(ClientEnvironment {
                sofabench: "0.1.0".to_string(),
                load_average: Some(load),
                ..ClientEnvironment::default()
            }),
            server: version.map(|v| ServerEnvironment {
                nodes: vec![ServerNode {
                    version: Some(v.to_string()),
                    ..ServerNode::default()
                }],
                ..ServerEnvironment::default()
            }),
        }];
        r
    }

    #[test]
    fn identity_differences_warn_and_moments_and_unknowns_are_noted() {
        let d = differences(
            &run(Some("3.4.2"), 0.5),
            &run(Some("3.5.0"), 0.5),
            ('A', 'B'),
        );
        assert_eq!(d.identity, ["server.version: A 3.4.2, B 3.5.0"]);
        assert!(d.noted.is_empty());
        let d = differences(&run(None, 0.5), &run(Some("3.5.\u{1b}0"), 2.0), ('A', 'C'));
        assert!(d.identity.is_empty(), "{d:?}");
        assert_eq!(
            d.noted,
            [
                "server.version: A unknown, C 3.5.\\x1b0 (recorded on one side only)",
                "server.nodes: A unknown, C 1 (recorded on one side only)",
                "client.load_average: A 0.50, C 2.00 (at the start)",
            ]
        );
        assert_eq!(
            differences(&run(None, 1.0), &run(None, 1.0), ('A', 'B')),
            Differences::default()
        );
    }
}
