//! Thresholds: conditions a run must meet, such as `read.p99 < 20ms`, checked after a run
//! (`sofabench run --threshold …`) or on a saved result (`sofabench check`).
//!
//! # Form
//!
//! `[PHASE:][OPERATION.]METRIC OP VALUE[UNIT]`, spaces optional:
//!
//! | part | meaning |
//! |---|---|
//! | `PHASE:` | only this phase (`crud:read.p99 < 20ms`); without it, every phase. A phase name also matches its repetitions (`crud` matches `crud#1`, `crud#2`) |
//! | `OPERATION.` | `bulk_insert`, `create`, `read`, `update`, `delete`; `*.` or nothing means all operations together |
//! | `METRIC` | `throughput`, `p50`, `p90`, `p99`, `p999` (or `p99.9`), `max`, `mean`, `errors`, `error_rate`; per document: `docs_per_sec`, `doc_errors`, `doc_error_rate` |
//! | `OP` | `<`, `<=`, `>`, `>=`, `==` (or `=`), `!=` |
//! | `VALUE` | a number; latencies take `ms` (the default), `s` or `us`; `error_rate` and `doc_error_rate` take `%` or a fraction from 0 to 1; `throughput` is operations per second and `docs_per_sec` documents per second (`/s` allowed); `errors` and `doc_errors` are counts |
//!
//! # What is measured
//!
//! Over the selected operations of the selected phases together:
//!
//! - **latencies** (`p50` … `max`, `mean`): from the sum of their HdrHistograms, so
//!   `read.p99` over two phases is the 99th percentile of all their reads, not an average
//!   of percentiles. The latency is the response time under an open model (`--rate`),
//!   the service time otherwise (see [`super::primary_latency`]). Only successful
//!   operations have a latency.
//! - **`throughput`**: successful operations divided by the summed wall-clock time of the
//!   phases they ran in (for one operation of one phase, the report's throughput).
//! - **`errors`**: failed operations; **`error_rate`**: failed / (succeeded + failed).
//!   A bulk insert request is one operation, whatever its documents did.
//! - **`docs_per_sec`**, **`doc_errors`**, **`doc_error_rate`**: the same in documents,
//!   for a bulk insert (whose request carries many): documents stored per second of the
//!   wall-clock time, failed documents (refused one by one, unaccounted for, or in a request that
//!   failed as a whole), and those over all its documents. Other operations touch one
//!   document each, so there these equal `throughput`, `errors` and `error_rate`.
//!
//! No metric mixes requests and documents: `bulk_insert.error_rate` is failed requests
//! over requests, `bulk_insert.doc_error_rate` failed documents over documents.
//!
//! A threshold that cannot be measured (no such phase or operation, no successful
//! operation to take a latency from) fails, and says why in place of the value.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::{add_encoded, base_name, empty_histogram, primary_latency};
use crate::metrics::Failure;
use crate::report::numbers::{grouped, grouped_decimal};
use crate::results::{PhaseResult, RunResult, build, per_second};
use crate::workload::Operation;

/// What a threshold measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Throughput,
    P50,
    P90,
    P99,
    P999,
    Max,
    Mean,
    Errors,
    ErrorRate,
    DocsPerSec,
    DocErrors,
    DocErrorRate,
    /// Operations that failed because the server answered 429 (not sent again).
    RateLimited,
    /// 429 answers after which the operation was sent again (`--retry-429`).
    Retries429,
}

/// The kinds of value, each with its units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Milliseconds.
    Latency,
    /// Operations (or documents) per second.
    Rate,
    /// A count of operations (or documents).
    Count,
    /// A fraction from 0 to 1.
    Fraction,
}

impl Metric {
    pub const NAMES: &'static str = "throughput, p50, p90, p99, p999 (p99.9), max, mean, errors, error_rate, docs_per_sec, doc_errors, doc_error_rate, rate_limited, retries_429";

    fn parse(name: &str) -> Option<Metric> {
        Some(match name {
            "throughput" => Metric::Throughput,
            "p50" => Metric::P50,
            "p90" => Metric::P90,
            "p99" => Metric::P99,
            "p999" | "p99.9" => Metric::P999,
            "max" => Metric::Max,
            "mean" => Metric::Mean,
            "errors" => Metric::Errors,
            "error_rate" => Metric::ErrorRate,
            "docs_per_sec" => Metric::DocsPerSec,
            "doc_errors" => Metric::DocErrors,
            "doc_error_rate" => Metric::DocErrorRate,
            "rate_limited" => Metric::RateLimited,
            "retries_429" => Metric::Retries429,
            _ => return None,
        })
    }

    fn kind(self) -> Kind {
        match self {
            Metric::Throughput | Metric::DocsPerSec => Kind::Rate,
            Metric::Errors | Metric::DocErrors | Metric::RateLimited | Metric::Retries429 => {
                Kind::Count
            }
            Metric::ErrorRate | Metric::DocErrorRate => Kind::Fraction,
            _ => Kind::Latency,
        }
    }

    /// Whether the metric counts documents rather than operations.
    fn per_document(self) -> bool {
        matches!(
            self,
            Metric::DocsPerSec | Metric::DocErrors | Metric::DocErrorRate
        )
    }
}

/// How the measured value is compared with the threshold's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

impl Comparison {
    /// The operator at the start of `text`, and its length.
    fn at_start(text: &str) -> Option<(Comparison, usize)> {
        const OPERATORS: [(&str, Comparison); 7] = [
            ("<=", Comparison::LessOrEqual),
            (">=", Comparison::GreaterOrEqual),
            ("==", Comparison::Equal),
            ("!=", Comparison::NotEqual),
            ("<", Comparison::Less),
            (">", Comparison::Greater),
            ("=", Comparison::Equal),
        ];
        OPERATORS
            .iter()
            .find(|(symbol, _)| text.starts_with(symbol))
            .map(|(symbol, comparison)| (*comparison, symbol.len()))
    }

    fn holds(self, actual: f64, wanted: f64) -> bool {
        match self {
            Comparison::Less => actual < wanted,
            Comparison::LessOrEqual => actual <= wanted,
            Comparison::Greater => actual > wanted,
            Comparison::GreaterOrEqual => actual >= wanted,
            Comparison::Equal => actual == wanted,
            Comparison::NotEqual => actual != wanted,
        }
    }
}

/// One parsed threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// The expression as given (trimmed), for reports.
    pub expression: String,
    /// Only this phase (and its repetitions); `None`: every phase.
    pub phase: Option<String>,
    /// Only this operation; `None` (`*` or nothing): all operations together.
    pub operation: Option<String>,
    pub metric: Metric,
    pub comparison: Comparison,
    /// In the metric's unit: milliseconds, operations per second, a count, or a fraction.
    pub value: f64,
}

/// A threshold checked against a result.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdOutcome {
    pub expression: String,
    /// The measured value with its unit, or why there is none.
    pub actual: String,
    pub passed: bool,
}

const FORM: &str = "expected [PHASE:][OPERATION.]METRIC OP VALUE, e.g. \"read.p99 < 20ms\", \"error_rate < 0.1%\", \"bulk_insert.docs_per_sec > 1000\"";

/// The message for a threshold that cannot be read; the expression is quoted, at most
/// [`QUOTED`] characters of it (a flag can be as long as a command line).
fn problem(expression: &str, what: &str) -> String {
    let quoted = crate::text::cut(expression, QUOTED);
    format!(
        "threshold {quoted:?}: {what}; {FORM} (metrics: {}; OP: <, <=, >, >=, ==, !=)",
        Metric::NAMES
    )
}

/// The longest part of a threshold's expression a message quotes.
const QUOTED: usize = 200;

/// The longest threshold read: `phase:operation.metric < value` fits in far less, and a
/// message quoting a longer one would quote the rest of it too.
const LONGEST: usize = 500;

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '#')
}

/// Splits `20ms` into `20` and `ms`.
fn number_and_unit(text: &str) -> (&str, &str) {
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        let exponent = (c == 'e' || c == 'E')
            && text[i + 1..]
                .chars()
                .next()
                .is_some_and(|n| n.is_ascii_digit() || n == '-' || n == '+');
        if (c.is_alphabetic() && !exponent) || c == '%' || c == '/' {
            end = i;
            break;
        }
    }
    (text[..end].trim(), text[end..].trim())
}

impl Threshold {
    /// Parses one expression; the error names the expression and the expected form.
    pub fn parse(text: &str) -> Result<Threshold, String> {
        let expression = text.trim();
        let fail = |what: &str| Err(problem(expression, what));
        if expression.chars().count() > LONGEST {
            return fail(&format!("longer than {LONGEST} characters"));
        }
        let Some(at) = expression.find(['<', '>', '=', '!']) else {
            return fail("no comparison");
        };
        let Some((comparison, length)) = Comparison::at_start(&expression[at..]) else {
            return fail("\"!\" is not a comparison, \"!=\" is");
        };
        let left = expression[..at].trim();
        let right = expression[at + length..].trim();
        if left.is_empty() {
            return fail("nothing to measure before the comparison");
        }
        if right.is_empty() {
            return fail("no value after the comparison");
        }
        if right.starts_with(['<', '>', '=', '!']) {
            return fail("one comparison only");
        }

        let (phase, measured) = match left.split_once(':') {
            Some((phase, rest)) => {
                let phase = phase.trim();
                if !is_name(phase) {
                    return fail(&format!("{phase:?} is not a phase name"));
                }
                (Some(phase.to_string()), rest.trim())
            }
            None => (None, left),
        };
        let (operation, metric_name) = match Metric::parse(measured) {
            Some(_) => (None, measured),
            None => match measured.split_once('.') {
                Some((operation, metric)) => (Some(operation.trim()), metric.trim()),
                None => {
                    return fail(&format!("unknown metric {measured:?}"));
                }
            },
        };
        let operation = match operation {
            None | Some("*") => None,
            Some(name) if Operation::ALL.iter().any(|op| op.name() == name) => {
                Some(name.to_string())
            }
            Some(name) => {
                let names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
                return fail(&format!(
                    "{name:?} is not an operation; use one of {}, or * for all",
                    names.join(", ")
                ));
            }
        };
        let Some(metric) = Metric::parse(metric_name) else {
            return fail(&format!("unknown metric {metric_name:?}"));
        };

        let (number, unit) = number_and_unit(right);
        let number_text: String = number.chars().filter(|c| *c != ',' && *c != '_').collect();
        let value: f64 = match number_text.parse() {
            Ok(v) if f64::is_finite(v) && v >= 0.0 => v,
            Ok(_) => return fail(&format!("{number:?} is not a value of 0 or more")),
            Err(_) => return fail(&format!("{right:?} is not a number")),
        };
        let value = match (metric.kind(), unit) {
            (Kind::Latency, "" | "ms") => value,
            (Kind::Latency, "s") => value * 1_000.0,
            (Kind::Latency, "us" | "µs") => value / 1_000.0,
            (Kind::Latency, _) => {
                return fail(&format!(
                    "{metric_name} is a latency: give ms (the default), s or us, not {unit:?}"
                ));
            }
            (Kind::Rate, "" | "/s") => value,
            (Kind::Rate, "ops/s" | "op/s") if !metric.per_document() => value,
            (Kind::Rate, "docs/s" | "doc/s") if metric.per_document() => value,
            (Kind::Rate, _) => {
                let what = if metric.per_document() {
                    "documents"
                } else {
                    "operations"
                };
                return fail(&format!(
                    "{metric_name} is {what} per second: give a plain number, not {unit:?}"
                ));
            }
            (Kind::Count, "") => value,
            (Kind::Count, _) => {
                return fail(&format!(
                    "{metric_name} is a count: give a plain number, not {unit:?}"
                ));
            }
            (Kind::Fraction, "%") if value <= 100.0 => value / 100.0,
            (Kind::Fraction, "") if value <= 1.0 => value,
            (Kind::Fraction, "%" | "") => {
                return fail(&format!(
                    "{metric_name} is at most 100% (or 1 as a fraction); write 5% or 0.05"
                ));
            }
            (Kind::Fraction, _) => {
                return fail(&format!(
                    "{metric_name} takes % or a fraction from 0 to 1, not {unit:?}"
                ));
            }
        };
        Ok(Threshold {
            expression: expression.to_string(),
            phase,
            operation,
            metric,
            comparison,
            value,
        })
    }

    /// Parses every expression; the error lists each bad one.
    pub fn parse_all(expressions: &[String]) -> Result<Vec<Threshold>, String> {
        let mut thresholds = Vec::new();
        let mut problems = Vec::new();
        for expression in expressions {
            match Threshold::parse(expression) {
                Ok(t) => thresholds.push(t),
                Err(e) => problems.push(e),
            }
        }
        if problems.is_empty() {
            Ok(thresholds)
        } else {
            Err(problems.join("\nsofabench: error: "))
        }
    }

    /// Measures the threshold's metric in `result` and compares.
    pub fn evaluate(&self, result: &RunResult) -> ThresholdOutcome {
        self.evaluate_phases(&result.phases)
    }

    /// Measures the threshold's metric over `phases` (a result's, or one step of a rate
    /// search) and compares.
    pub fn evaluate_phases(&self, phases: &[PhaseResult]) -> ThresholdOutcome {
        let outcome = |actual: String, passed: bool| ThresholdOutcome {
            expression: self.expression.clone(),
            actual,
            passed,
        };
        match self.measure(phases) {
            Ok((value, actual)) => outcome(actual, self.comparison.holds(value, self.value)),
            Err(why) => outcome(why, false),
        }
    }

    /// The measured value in the threshold's unit, and as text with its unit.
    fn measure(&self, all: &[PhaseResult]) -> Result<(f64, String), String> {
        let phases: Vec<_> = all
            .iter()
            .filter(|p| {
                self.phase
                    .as_deref()
                    .is_none_or(|name| p.name == name || base_name(&p.name) == name)
            })
            .collect();
        if let Some(name) = &self.phase
            && phases.is_empty()
        {
            let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "no phase {name:?} (phases: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
        let mut selected = Vec::new();
        let mut wall = 0.0;
        for phase in &phases {
            let before = selected.len();
            for op in &phase.operations {
                if self
                    .operation
                    .as_deref()
                    .is_none_or(|name| op.operation == name)
                {
                    selected.push((*phase, op));
                }
            }
            if selected.len() > before {
                wall += phase.wall_seconds;
            }
        }
        if selected.is_empty() {
            return Err(match &self.operation {
                Some(name) => format!("no {name} operations"),
                None => "no operations".to_string(),
            });
        }
        // Operations, or documents: never both in one figure.
        let (succeeded, failed, unit): (u64, u64, &str) = if self.metric.per_document() {
            (
                selected.iter().map(|(_, op)| op.documents).sum(),
                selected.iter().map(|(_, op)| op.documents_failed).sum(),
                "documents",
            )
        } else {
            (
                selected.iter().map(|(_, op)| op.succeeded).sum(),
                selected.iter().map(|(_, op)| op.failed).sum(),
                "operations",
            )
        };
        match self.metric.kind() {
            Kind::Rate => {
                let rate = per_second(succeeded, wall);
                let shown = grouped_decimal(rate, 1);
                Ok(if self.metric.per_document() {
                    (rate, format!("{shown} docs/s"))
                } else {
                    (rate, format!("{shown}/s"))
                })
            }
            Kind::Count => {
                let rate_limited = Failure::RateLimited.to_string();
                let count: u64 = match self.metric {
                    Metric::RateLimited => selected
                        .iter()
                        .map(|(_, op)| op.failures.get(rate_limited.as_str()).copied().unwrap_or(0))
                        .sum(),
                    Metric::Retries429 => selected.iter().map(|(_, op)| op.retried_429).sum(),
                    _ => failed,
                };
                Ok((count as f64, grouped(count)))
            }
            Kind::Fraction => {
                let total = succeeded + failed;
                if total == 0 {
                    return Err(format!("no {unit}"));
                }
                let rate = failed as f64 / total as f64;
                Ok((
                    rate,
                    format!(
                        "{}% ({} of {} {unit})",
                        trimmed(rate * 100.0, 3),
                        grouped(failed),
                        grouped(total)
                    ),
                ))
            }
            Kind::Latency => {
                let mut histogram: Histogram<u64> = empty_histogram();
                for (phase, op) in &selected {
                    add_encoded(&mut histogram, &primary_latency(phase, op).histogram)?;
                }
                if histogram.is_empty() {
                    return Err("no successful operations to take a latency from".to_string());
                }
                let latency = build::latency(&histogram);
                let ms = match self.metric {
                    Metric::P50 => latency.p50_ms,
                    Metric::P90 => latency.p90_ms,
                    Metric::P99 => latency.p99_ms,
                    Metric::P999 => latency.p999_ms,
                    Metric::Max => latency.max_ms,
                    _ => latency.mean_ms,
                };
                Ok((ms, format!("{}ms", trimmed(ms, 3))))
            }
        }
    }
}

/// `1.500` → `1.5`, `2.000` → `2`.
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Evaluates every threshold.
pub fn evaluate_all(thresholds: &[Threshold], result: &RunResult) -> Vec<ThresholdOutcome> {
    thresholds.iter().map(|t| t.evaluate(result)).collect()
}

/// The block printed after a run or by `check`:
///
/// ```text
/// THRESHOLDS:
///   PASS  read.p99 < 20ms        actual 3.215ms
///   FAIL  error_rate < 0.1%      actual 0.25% (2 of 800)
/// ```
pub fn report(outcomes: &[ThresholdOutcome]) -> String {
    let width = outcomes
        .iter()
        .map(|o| o.expression.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("THRESHOLDS:\n");
    for o in outcomes {
        let _ = writeln!(
            out,
            "  {}  {:<width$}  actual {}",
            if o.passed { "PASS" } else { "FAIL" },
            o.expression,
            o.actual
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::{OperationResult, PhaseResult};

    fn parse(text: &str) -> Threshold {
        Threshold::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn parts(text: &str) -> (Option<String>, Option<String>, Metric, Comparison, f64) {
        let t = parse(text);
        (t.phase, t.operation, t.metric, t.comparison, t.value)
    }

    fn s(text: &str) -> Option<String> {
        Some(text.to_string())
    }

    #[test]
    fn every_metric_and_unit_parses() {
        use Comparison::*;
        use Metric::*;
        assert_eq!(parts("read.p99 < 20ms"), (None, s("read"), P99, Less, 20.0));
        assert_eq!(parts("read.p99<20"), (None, s("read"), P99, Less, 20.0));
        assert_eq!(
            parts("create.p50 <= 5ms"),
            (None, s("create"), P50, LessOrEqual, 5.0)
        );
        assert_eq!(
            parts("update.mean < 1.5s"),
            (None, s("update"), Mean, Less, 1500.0)
        );
        assert_eq!(parts("p90 < 250us"), (None, None, P90, Less, 0.25));
        assert_eq!(parts("*.p90 < 250 µs"), (None, None, P90, Less, 0.25));
        assert_eq!(parts("read.p999 < 1e2ms").4, 100.0);
        assert_eq!(parts("read.p99.9 < 30ms").2, P999);
        assert_eq!(parts("p99.9 < 30ms").2, P999);
        assert_eq!(parts("delete.max != 0").3, NotEqual);
        assert_eq!(
            parts("bulk_insert.throughput > 5000"),
            (None, s("bulk_insert"), Throughput, Greater, 5000.0)
        );
        assert_eq!(parts("throughput >= 5,000/s").4, 5000.0);
        assert_eq!(
            parts("read.errors == 0"),
            (None, s("read"), Errors, Equal, 0.0)
        );
        assert_eq!(parts("errors = 3").3, Equal);
        assert_eq!(
            parts("error_rate < 0.1%"),
            (None, None, ErrorRate, Less, 0.001)
        );
        assert_eq!(parts("error_rate < 0.05").4, 0.05);
        assert_eq!(
            parts(" crud:read.p99 < 20ms "),
            (s("crud"), s("read"), P99, Less, 20.0)
        );
        assert_eq!(
            parts("crud:error_rate<1%"),
            (s("crud"), None, ErrorRate, Less, 0.01)
        );
        assert_eq!(
            parse(" crud:read.p99 < 20ms ").expression,
            "crud:read.p99 < 20ms"
        );
    }

    #[test]
    fn bad_expressions_say_what_is_wrong_and_the_form() {
        for (text, says) in [
            ("read.p99", "no comparison"),
            ("< 20ms", "nothing to measure"),
            ("read.p99 <", "no value"),
            ("read.p98 < 20ms", "unknown metric \"p98\""),
            ("latency < 20ms", "unknown metric \"latency\""),
            ("read.p99 < 20kg", "give ms"),
            ("read.p99 < fast", "not a number"),
            ("read.p99 < -1ms", "0 or more"),
            ("read.p99 << 1ms", "one comparison"),
            ("read.p99 ! 1ms", "\"!=\" is"),
            ("read.errors < 5ms", "errors is a count"),
            ("throughput > 5ms", "operations per second"),
            (
                "throughput > 5 docs/s",
                "throughput is operations per second",
            ),
            (
                "docs_per_sec > 5 ops/s",
                "docs_per_sec is documents per second",
            ),
            ("doc_errors < 1%", "doc_errors is a count"),
            ("doc_error_rate < 5", "doc_error_rate is at most 100%"),
            ("error_rate < 5", "at most 100%"),
            ("error_rate < 5ms", "takes %"),
            ("re ad.p99 < 1ms", "not an operation"),
            ("foo.p99 < 1ms", "use one of bulk_insert, create"),
            ("cr ud:p99 < 1ms", "not a phase name"),
        ] {
            let err = Threshold::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
            assert!(
                err.contains(&format!("{:?}", text.trim())) && err.contains("expected [PHASE:]"),
                "{text}: {err}"
            );
        }
        // A long one is refused for its length, and quoted only in part.
        let long = "(".repeat(60_000);
        let err = Threshold::parse(&long).unwrap_err();
        assert!(err.contains("longer than 500 characters"), "{err}");
        assert!(err.len() < 1_500, "{err}");
        let err =
            Threshold::parse_all(&["p99 < 1ms".into(), "x".into(), "y < 1".into()]).unwrap_err();
        assert_eq!(err.matches("threshold ").count(), 2, "{err}");
    }

    fn latency(values_us: &[u64]) -> crate::results::Latency {
        let mut h = empty_histogram();
        for v in values_us {
            h.record(*v).unwrap();
        }
        build::latency(&h)
    }

    fn op(name: &str, succeeded: u64, failed: u64, values_us: &[u64]) -> OperationResult {
        OperationResult {
            operation: name.to_string(),
            succeeded,
            failed,
            documents: succeeded,
            documents_failed: failed,
            throughput: 0.0,
            documents_per_sec: 0.0,
            latency: latency(values_us),
            response: latency(&[]),
            ..OperationResult::unmeasured()
        }
    }

    fn phase(name: &str, wall: f64, operations: Vec<OperationResult>) -> PhaseResult {
        PhaseResult::of_operations(name, wall, operations)
    }

    /// bulk_insert: 10 requests of 100 ms in 2 s; crud: reads of 1..=100 ms (one failed),
    /// creates of 1 s, in 4 s.
    fn result() -> RunResult {
        let reads: Vec<u64> = (1..=100).map(|ms| ms * 1_000).collect();
        let phases = vec![
            phase(
                "bulk_insert",
                2.0,
                vec![op("bulk_insert", 10, 0, &[100_000; 10])],
            ),
            phase(
                "crud",
                4.0,
                vec![
                    op("create", 2, 0, &[1_000_000, 1_000_000]),
                    op("read", 100, 1, &reads),
                ],
            ),
        ];
        RunResult::of_phases(phases)
    }

    fn check(text: &str) -> ThresholdOutcome {
        parse(text).evaluate(&result())
    }

    #[test]
    fn latencies_come_from_the_merged_histograms() {
        let o = check("read.p99 < 99ms");
        assert!(!o.passed);
        assert_eq!(o.actual, "99.007ms", "HdrHistogram's equivalent value");
        assert!(check("read.p99 <= 99.1ms").passed);
        assert!(check("read.p99 < 100ms").passed);
        assert!(check("read.p50 < 51ms").passed);
        assert!(check("read.p50 > 49.9ms").passed);
        assert!(check("read.max >= 0.1s").passed);
        assert!(check("read.mean < 50600us").passed);
        assert!(
            check("create.p50 == 1000.447ms").passed,
            "{:?}",
            check("create.p50 == 1000.447ms")
        );
        assert!(check("crud:create.p90 > 999ms").passed);
        // All operations of all phases: 112 values, 12 of them 100 ms or more.
        assert_eq!(check("p90 < 1s").actual, "100.031ms");
        assert_eq!(check("*.max < 1s").actual, "1000.447ms");
        assert!(!check("max < 1s").passed);
        assert!(check("bulk_insert:p99 < 100.1ms").passed);
    }

    #[test]
    fn counts_rates_and_throughput() {
        let o = check("read.errors == 0");
        assert_eq!((o.passed, o.actual.as_str()), (false, "1"));
        assert!(check("errors < 2").passed);
        assert!(check("create.errors == 0").passed);
        let o = check("error_rate < 1%");
        assert!(o.passed, "{o:?}");
        assert_eq!(o.actual, "0.885% (1 of 113 operations)");
        assert!(!check("read.error_rate < 0.5%").passed);
        let o = check("read.throughput > 25");
        assert_eq!((o.passed, o.actual.as_str()), (false, "25.0/s"));
        assert!(check("bulk_insert.throughput >= 5").passed);
        // 112 successful operations in 6 s of phases.
        assert_eq!(check("throughput > 0").actual, "18.7/s");
        assert_eq!(check("crud:throughput > 0").actual, "25.5/s");
    }

    #[test]
    fn per_document_metrics_parse() {
        use Comparison::*;
        use Metric::*;
        assert_eq!(
            parts("bulk_insert.docs_per_sec > 5000"),
            (None, s("bulk_insert"), DocsPerSec, Greater, 5000.0)
        );
        assert_eq!(parts("docs_per_sec >= 5,000 docs/s").4, 5000.0);
        assert_eq!(parts("bulk_insert.docs_per_sec > 100/s").4, 100.0);
        assert_eq!(
            parts("bulk_insert:bulk_insert.doc_errors == 0"),
            (s("bulk_insert"), s("bulk_insert"), DocErrors, Equal, 0.0)
        );
        assert_eq!(
            parts("bulk_insert.doc_error_rate < 0.1%"),
            (None, s("bulk_insert"), DocErrorRate, Less, 0.001)
        );
        assert!(Metric::NAMES.contains("docs_per_sec, doc_errors, doc_error_rate"));
    }

    /// A bulk insert phase of 2 s: 10 requests of 100 documents succeeded, one of them with
    /// 15 documents refused (`doc:conflict`), and 2 requests of 100 failed as a whole (500).
    fn bulk_with_failed_documents() -> RunResult {
        let mut bulk = op("bulk_insert", 10, 2, &[100_000; 10]);
        bulk.documents = 1_000 - 15;
        bulk.documents_failed = 15 + 200;
        bulk.failures = BTreeMap::from([("500".to_string(), 2), ("doc:conflict".to_string(), 15)]);
        let mut r = result();
        r.phases[0].operations = vec![bulk];
        r
    }

    #[test]
    fn bulk_inserts_count_requests_and_documents_apart() {
        let r = bulk_with_failed_documents();
        let check = |text: &str| parse(text).evaluate(&r);
        // Requests: 2 failed of 12.
        let o = check("bulk_insert.error_rate < 20%");
        assert!(o.passed, "{o:?}");
        assert_eq!(o.actual, "16.667% (2 of 12 operations)");
        assert_eq!(check("bulk_insert.errors == 2").actual, "2");
        assert_eq!(check("bulk_insert.throughput > 0").actual, "5.0/s");
        // Documents: 215 failed of 1,200 sent.
        let o = check("bulk_insert.doc_error_rate < 20%");
        assert!(o.passed, "{o:?}");
        assert_eq!(o.actual, "17.917% (215 of 1,200 documents)");
        assert_eq!(check("bulk_insert.doc_errors == 215").actual, "215");
        assert!(check("bulk_insert.doc_errors == 215").passed);
        let o = check("bulk_insert.docs_per_sec > 490");
        assert_eq!((o.passed, o.actual.as_str()), (true, "492.5 docs/s"));
        assert!(!check("bulk_insert.docs_per_sec > 500").passed);
        // Other operations touch one document each: the same figures as operations.
        assert_eq!(
            check("crud:read.doc_error_rate < 1%").actual,
            "0.99% (1 of 101 documents)"
        );
        assert_eq!(check("crud:docs_per_sec > 0").actual, "25.5 docs/s");
    }

    #[test]
    fn results_written_before_the_document_fields_still_read_and_measure() {
        let mut json = serde_json::to_value(result()).unwrap();
        for phase in json["phases"].as_array_mut().unwrap() {
            for op in phase["operations"].as_array_mut().unwrap() {
                let op = op.as_object_mut().unwrap();
                assert!(op.remove("documents_failed").is_some());
                assert!(op.remove("documents_per_sec").is_some());
            }
        }
        let old: RunResult = serde_json::from_value(json).unwrap();
        assert_eq!(old.phases[1].operations[1].documents_failed, 0);
        // Rates come from the counts, which old files have.
        let o = parse("crud:docs_per_sec > 25").evaluate(&old);
        assert_eq!((o.passed, o.actual.as_str()), (true, "25.5 docs/s"));
    }

    /// Every threshold the README shows must parse, so that a user can copy it.
    #[test]
    fn the_documented_thresholds_parse() {
        let pages = [
            include_str!("../../README.md"),
            include_str!("../../docs/thresholds-and-comparisons.md"),
        ];
        let mut found = Vec::new();
        for part in pages
            .iter()
            .flat_map(|page| page.split("--threshold").skip(1))
        {
            let part = part.trim_start_matches(['=', ' ']);
            if let Some(quoted) = part.strip_prefix('\'') {
                found.push(quoted.split('\'').next().unwrap_or_default().to_string());
            }
        }
        assert!(found.len() >= 4, "{found:?}");
        assert!(
            found.iter().any(|t| t.contains("bulk_insert.docs_per_sec")),
            "{found:?}"
        );
        for expression in &found {
            Threshold::parse(expression).unwrap_or_else(|e| panic!("{expression}: {e}"));
        }
    }

    #[test]
    fn what_cannot_be_measured_fails_and_says_why() {
        let o = check("query:p99 < 1s");
        assert!(!o.passed);
        assert_eq!(o.actual, "no phase \"query\" (phases: bulk_insert, crud)");
        let o = check("delete.p99 < 1s");
        assert_eq!(
            (o.passed, o.actual.as_str()),
            (false, "no delete operations")
        );
        let o = check("bulk_insert:read.errors == 0");
        assert_eq!(o.actual, "no read operations");
        let mut r = result();
        r.phases[1].operations[0] = op("create", 0, 3, &[]);
        let o = parse("create.p99 < 1s").evaluate(&r);
        assert!(!o.passed && o.actual.contains("no successful"), "{o:?}");
        let o = parse("create.error_rate <= 100%").evaluate(&r);
        assert!(o.passed && o.actual == "100% (3 of 3 operations)", "{o:?}");
    }

    #[test]
    fn repetitions_of_a_phase_count_together() {
        let mut r = result();
        r.phases[1].name = "crud#1".into();
        let mut second = r.phases[1].clone();
        second.name = "crud#2".into();
        r.phases.push(second);
        assert_eq!(parse("crud:read.errors == 2").evaluate(&r).actual, "2");
        assert_eq!(parse("crud#2:read.errors == 1").evaluate(&r).actual, "1");
    }

    #[test]
    fn the_report_aligns_expressions() {
        let outcomes = evaluate_all(&[parse("read.p99 < 20ms"), parse("errors == 0")], &result());
        assert_eq!(
            report(&outcomes),
            "THRESHOLDS:\n  FAIL  read.p99 < 20ms  actual 99.007ms\n  FAIL  errors == 0      actual 1\n"
        );
    }

    #[test]
    fn counts_of_429s_failed_and_retried() {
        let mut r = result();
        let read = &mut r.phases[1].operations[1];
        read.failures.insert("rate_limited".to_string(), 2);
        read.failures.insert("timeout".to_string(), 5);
        read.retried_429 = 7;
        let measured = |text: &str| {
            let o = parse(text).evaluate(&r);
            (o.passed, o.actual)
        };
        assert_eq!(measured("rate_limited == 2"), (true, "2".to_string()));
        assert_eq!(measured("read.retries_429 < 7"), (false, "7".to_string()));
        assert_eq!(
            measured("bulk_insert:rate_limited == 0"),
            (true, "0".to_string())
        );
    }
}
