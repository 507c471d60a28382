//! `check --expect NAME=VALUE`: what a result must have run against and from
//! (`server.version=3.5.2`, `client.cores=8`), so that a CI job comparing versions cannot
//! compare the wrong runs without a word. NAME is a fact's name
//! ([`crate::results::environment::facts`]); VALUE is compared as text, exactly: a merged
//! result's differing values (`2 | 8`) must be given whole, and `unknown` matches a fact
//! the result does not record (a result written before facts were kept has none).

use std::fmt::Write as _;

use crate::results::environment::{Fact, names};
use crate::text::visible;

/// One `--expect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub name: &'static str,
    pub value: String,
}

/// An expectation judged on a result's facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectationOutcome {
    pub expected: Expectation,
    /// What the result says.
    pub actual: String,
    pub met: bool,
}

impl Expectation {
    /// `NAME=VALUE`; an unknown name, a missing `=` or an empty value is bad input that
    /// names the fix.
    pub fn parse(text: &str) -> Result<Expectation, String> {
        let Some((name, value)) = text.split_once('=') else {
            return Err(format!(
                "--expect {text:?}: expected NAME=VALUE, e.g. server.version=3.5.0; the names: {}",
                names().join(", ")
            ));
        };
        let Some(name) = names().into_iter().find(|n| *n == name) else {
            return Err(format!(
                "--expect {text:?}: no fact is named {name:?}; the names: {}",
                names().join(", ")
            ));
        };
        if value.is_empty() {
            return Err(format!(
                "--expect {text:?}: give the value after '=' (\"unknown\" for a fact the result does not record)"
            ));
        }
        Ok(Expectation {
            name,
            value: value.to_string(),
        })
    }

    /// Every one of `texts`, or every problem among them.
    pub fn parse_all(texts: &[String]) -> Result<Vec<Expectation>, String> {
        let (parsed, problems): (Vec<_>, Vec<_>) = texts
            .iter()
            .map(|t| Expectation::parse(t))
            .partition(Result::is_ok);
        if problems.is_empty() {
            Ok(parsed.into_iter().filter_map(Result::ok).collect())
        } else {
            let problems: Vec<String> = problems.into_iter().filter_map(Result::err).collect();
            Err(problems.join("\nsofabench: error: "))
        }
    }

    /// This expectation against `facts` (every name is among them: [`Self::parse`] took
    /// only those).
    pub fn judge(&self, facts: &[Fact]) -> ExpectationOutcome {
        let actual = facts
            .iter()
            .find(|f| f.name == self.name)
            .map_or(crate::results::environment::UNKNOWN, |f| f.value.as_str());
        ExpectationOutcome {
            expected: self.clone(),
            actual: actual.to_string(),
            met: actual == self.value,
        }
    }
}

/// The ENVIRONMENT block of `check`: a line per expectation, a failed one saying what the
/// result says instead. Values are escaped: they came from a server, a machine or a file.
pub fn report(outcomes: &[ExpectationOutcome]) -> String {
    let mut out = String::from("ENVIRONMENT:\n");
    for o in outcomes {
        let expected = format!("{}={}", o.expected.name, visible(&o.expected.value));
        let _ = if o.met {
            writeln!(out, "  PASS  {expected}")
        } else {
            writeln!(
                out,
                "  FAIL  expected {expected}, the result says {}",
                visible(&o.actual)
            )
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::environment::Kind;

    fn fact(name: &'static str, value: &str) -> Fact {
        Fact {
            name,
            value: value.to_string(),
            kind: Kind::Identity,
        }
    }

    #[test]
    fn a_value_is_compared_as_text_whole() {
        let facts = [
            fact("server.version", "3.5.0"),
            fact("client.cores", "2 | 8"),
            fact("database.q", "unknown"),
        ];
        let judged = |text: &str| Expectation::parse(text).unwrap().judge(&facts);
        assert!(judged("server.version=3.5.0").met);
        let wrong = judged("server.version=3.5.2");
        assert!(!wrong.met);
        assert_eq!(wrong.actual, "3.5.0");
        assert!(!judged("server.version=3.5").met);
        assert!(!judged("client.cores=2").met);
        assert!(judged("client.cores=2 | 8").met);
        assert!(judged("database.q=unknown").met);
        // A value may hold '=': only the first one parts the name from it.
        let odd = Expectation::parse("server.product=a=b").unwrap();
        assert_eq!(odd.value, "a=b");
    }

    #[test]
    fn a_bad_expectation_names_the_fix() {
        let err = Expectation::parse("server.versoin=3.5.0").unwrap_err();
        assert!(err.contains("no fact is named \"server.versoin\""), "{err}");
        assert!(err.contains("server.version, server.git_sha"), "{err}");
        assert!(err.contains("client.cores"), "{err}");
        let err = Expectation::parse("server.version").unwrap_err();
        assert!(err.contains("expected NAME=VALUE"), "{err}");
        let err = Expectation::parse("server.version=").unwrap_err();
        assert!(err.contains("give the value"), "{err}");
        let both = ["a=1".to_string(), "b".to_string()];
        let err = Expectation::parse_all(&both).unwrap_err();
        assert_eq!(err.matches("--expect").count(), 2, "{err}");
    }

    #[test]
    fn the_block_says_what_the_result_says_escaped() {
        let facts = [fact("server.version", "3.5.0\n  PASS  forged\u{1b}[2J")];
        let outcomes = [Expectation::parse("server.version=3.5.2")
            .unwrap()
            .judge(&facts)];
        assert_eq!(
            report(&outcomes),
            "ENVIRONMENT:\n  FAIL  expected server.version=3.5.2, the result says 3.5.0\\n  PASS  forged\\x1b[2J\n"
        );
        let facts = [fact("client.cores", "2")];
        let outcomes = [Expectation::parse("client.cores=2").unwrap().judge(&facts)];
        assert_eq!(report(&outcomes), "ENVIRONMENT:\n  PASS  client.cores=2\n");
    }
}
