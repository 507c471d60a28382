//! The two text formats scrapers read: Prometheus's (text/plain, version 0.0.4) and
//! OpenMetrics 1.0, which differ in how families are named and typed (a counter's family
//! drops its `_total` in OpenMetrics; an info metric is a gauge ending in `_info` for
//! Prometheus), in the `# UNIT` lines and in the closing `# EOF`. Everything else is the
//! same, so one writer makes both.

use std::fmt::Write;

use super::buckets::{BOUNDS_MICROS, Buckets};

/// Which text a scraper gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Prometheus,
    OpenMetrics,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }

    /// The format an `Accept` header prefers: OpenMetrics when it is asked for at least
    /// as strongly as plain text (Prometheus asks for it first), else Prometheus's text,
    /// which is also what a request without the header gets.
    pub fn from_accept(accept: Option<&str>) -> Format {
        let (mut openmetrics, mut text) = (0.0_f64, 0.0_f64);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.parse::<f64>().ok())
                .unwrap_or(1.0);
            match media.as_str() {
                "application/openmetrics-text" => openmetrics = openmetrics.max(quality),
                "text/plain" | "text/*" | "*/*" => text = text.max(quality),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= text {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        }
    }
}

/// What a family's samples are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
    /// Labels that describe something, with the value 1.
    Info,
}

/// One metric family: its name without a type's suffix (`sofabench_operations`, whose
/// counter samples are `sofabench_operations_total`), what it holds, and its base unit
/// when it has one (its name then ends in it).
#[derive(Clone, Copy, Debug)]
pub struct Family {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    pub unit: Option<&'static str>,
}

/// Label names and values of one sample.
pub type Labels<'a> = &'a [(&'a str, &'a str)];

/// A text being written, family by family.
pub struct Exposition {
    format: Format,
    out: String,
}

impl Exposition {
    pub fn new(format: Format) -> Exposition {
        Exposition {
            format,
            out: String::with_capacity(32 * 1024),
        }
    }

    /// Starts `family`: its HELP and TYPE lines (and UNIT, in OpenMetrics). Each family
    /// is started once, before its samples.
    pub fn family(&mut self, family: &Family) {
        let (name, kind) = match (self.format, family.kind) {
            (Format::Prometheus, Kind::Counter) => (suffixed(family.name, "_total"), "counter"),
            (Format::Prometheus, Kind::Info) => (suffixed(family.name, "_info"), "gauge"),
            (Format::OpenMetrics, Kind::Counter) => (family.name.to_string(), "counter"),
            (Format::OpenMetrics, Kind::Info) => (family.name.to_string(), "info"),
            (_, Kind::Gauge) => (family.name.to_string(), "gauge"),
            (_, Kind::Histogram) => (family.name.to_string(), "histogram"),
        };
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(family.help));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
        if let (Format::OpenMetrics, Some(unit)) = (self.format, family.unit) {
            let _ = writeln!(self.out, "# UNIT {name} {unit}");
        }
    }

    /// A counter's, gauge's or info's sample.
    pub fn sample(&mut self, family: &Family, labels: Labels, value: Value) {
        let suffix = match family.kind {
            Kind::Counter => "_total",
            Kind::Info => "_info",
            Kind::Gauge | Kind::Histogram => "",
        };
        self.line(family.name, suffix, labels, None, value);
    }

    /// A histogram's samples: cumulative buckets up to `+Inf`, the count and the sum.
    pub fn histogram(&mut self, family: &Family, labels: Labels, buckets: &Buckets) {
        let mut below = 0;
        for (bound, count) in BOUNDS_MICROS.iter().zip(buckets.per_bound()) {
            below += count;
            let le = seconds_text(*bound as f64 / 1e6);
            self.line(
                family.name,
                "_bucket",
                labels,
                Some(&le),
                Value::Count(below),
            );
        }
        let count = Value::Count(buckets.count());
        self.line(family.name, "_bucket", labels, Some("+Inf"), count);
        self.line(family.name, "_count", labels, None, count);
        let sum = Value::Float(buckets.sum_micros() as f64 / 1e6);
        self.line(family.name, "_sum", labels, None, sum);
    }

    fn line(&mut self, name: &str, suffix: &str, labels: Labels, le: Option<&str>, value: Value) {
        self.out.push_str(name);
        self.out.push_str(suffix);
        let le = le.map(|le| ("le", le));
        let mut all = labels.iter().copied().chain(le).peekable();
        if all.peek().is_some() {
            self.out.push('{');
            for (i, (label, text)) in all.enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{label}=\"{}\"", escape_label(text));
            }
            self.out.push('}');
        }
        self.out.push(' ');
        value.write(&mut self.out);
        self.out.push('\n');
    }

    /// The whole text.
    pub fn finish(mut self) -> String {
        if self.format == Format::OpenMetrics {
            self.out.push_str("# EOF\n");
        }
        self.out
    }
}

/// A sample's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Count(u64),
    Float(f64),
}

impl Value {
    fn write(self, out: &mut String) {
        match self {
            Value::Count(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) if x.is_nan() => out.push_str("NaN"),
            Value::Float(x) if x.is_infinite() => {
                out.push_str(if x > 0.0 { "+Inf" } else { "-Inf" })
            }
            Value::Float(x) => {
                let _ = write!(out, "{x}");
            }
        }
    }
}

fn suffixed(name: &str, suffix: &str) -> String {
    format!("{name}{suffix}")
}

/// Seconds as a bucket's bound: `0.0001`, `0.5`, `60`.
fn seconds_text(seconds: f64) -> String {
    format!("{seconds}")
}

/// A label's value as both formats quote it.
fn escape_label(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\\', '"', '\n']) {
        return text.into();
    }
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .into()
}

/// A HELP text: the helps are ours, but a backslash or a line break would still end it.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPERATIONS: Family = Family {
        name: "sofabench_operations",
        kind: Kind::Counter,
        help: "Operations that ended.",
        unit: None,
    };

    const PHASE: Family = Family {
        name: "sofabench_phase",
        kind: Kind::Info,
        help: "The phase running.",
        unit: None,
    };

    #[test]
    fn prometheus_and_openmetrics_name_counters_and_infos_their_own_way() {
        for (format, counter_type, info_type, end) in [
            (
                Format::Prometheus,
                "# TYPE sofabench_operations_total counter",
                "# TYPE sofabench_phase_info gauge",
                "",
            ),
            (
                Format::OpenMetrics,
                "# TYPE sofabench_operations counter",
                "# TYPE sofabench_phase info",
                "# EOF\n",
            ),
        ] {
            let mut text = Exposition::new(format);
            text.family(&OPERATIONS);
            text.sample(&OPERATIONS, &[("operation", "read")], Value::Count(3));
            text.family(&PHASE);
            text.sample(&PHASE, &[("phase", "say \"hi\"\\\n")], Value::Count(1));
            let text = text.finish();
            assert!(text.contains(counter_type), "{text}");
            assert!(text.contains(info_type), "{text}");
            assert!(text.contains("sofabench_operations_total{operation=\"read\"} 3\n"));
            assert!(text.contains(r#"sofabench_phase_info{phase="say \"hi\"\\\n"} 1"#));
            assert!(text.ends_with(&format!("1\n{end}")), "{text}");
        }
    }

    #[test]
    fn openmetrics_is_chosen_only_when_asked_for_at_least_as_strongly() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::from_accept(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::from_accept(None), Format::Prometheus);
        assert_eq!(Format::from_accept(Some("*/*")), Format::Prometheus);
        assert_eq!(
            Format::from_accept(Some("text/plain, application/openmetrics-text;q=0.5")),
            Format::Prometheus
        );
        assert_eq!(
            Format::from_accept(Some("Application/OpenMetrics-Text; q=0")),
            Format::Prometheus
        );
    }
}
