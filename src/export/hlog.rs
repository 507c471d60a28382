//! HdrHistogram interval logs (`.hlog`), the format HdrHistogram's own tools read
//! (`HistogramLogProcessor`, HdrHistogram Log Analyzer): one log per operation kind, one
//! line per interval, each with the response times of the interval's successful
//! operations in microseconds. The interval's max is printed in milliseconds
//! (`MaxValueDivisor` 1000).
//!
//! StartTime and BaseTime are the start of the first phase with the operation; a line's
//! timestamp is its interval's start relative to that. Within a phase that has the
//! operation, an interval without it is logged with an empty histogram, so the log's
//! timeline has no gaps.

use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;

use super::phase_operations;
use crate::results::{RunResult, histogram};

/// The operation kinds of the result's phases, each once, in the order they first appear.
pub fn operations(result: &RunResult) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for phase in &result.phases {
        for name in phase_operations(phase) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The file name of an operation's log beside `result.json`: `result.<operation>.hlog`.
/// The name comes from a result file, which anyone can edit: any character other than a
/// letter, digit, `_` or `-` becomes `_`, so that `../x` cannot lead outside the folder.
pub fn file_name(operation: &str) -> String {
    let safe: String = operation
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("result.{safe}.hlog")
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Writes the interval log of `operation` (e.g. `read`).
pub fn write(result: &RunResult, operation: &str, out: &mut impl Write) -> io::Result<()> {
    let phases: Vec<_> = result
        .phases
        .iter()
        .filter(|p| phase_operations(p).contains(&operation))
        .collect();
    let base_ms = phases.first().map_or(0, |p| p.started_at_ms);
    let base = UNIX_EPOCH + Duration::from_millis(base_ms);
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();

    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(&format!(
            "{} {}: latencies of successful {operation} operations, from the scheduled start under --rate and from sending otherwise, one histogram per interval (phases: {})",
            result.tool.name,
            result.tool.version,
            names.join(", ")
        ))
        .add_comment("Units: values in microseconds; the interval max column in milliseconds")
        .add_comment("[Histogram log format version 1.3]")
        .with_start_time(base)
        .with_base_time(base)
        .with_max_value_divisor(1000.0);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = builder.begin_log_with(out, &mut serializer)?;
    log.write_comment(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
    )?;
    for phase in phases {
        for interval in &phase.intervals {
            let histogram = match interval
                .operations
                .iter()
                .find(|o| o.operation == operation)
            {
                Some(op) => histogram::decode(&op.histogram)
                    .map_err(|e| invalid(format!("{operation} in phase {}: {e}", phase.name)))?,
                None => crate::metrics::recorder::new_histogram(),
            };
            let end = phase.started_at_ms as f64 / 1e3 + interval.elapsed_seconds;
            let start = (end - interval.length_seconds - base_ms as f64 / 1e3).max(0.0);
            log.write_histogram(
                &histogram,
                Duration::from_secs_f64(start),
                Duration::from_secs_f64(interval.length_seconds.max(0.0)),
                None,
            )
            .map_err(|e| invalid(format!("cannot write the {operation} log: {e}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    use super::*;

    #[test]
    fn a_file_name_stays_in_its_folder() {
        assert_eq!(file_name("bulk_insert"), "result.bulk_insert.hlog");
        assert_eq!(file_name("../../etc/x"), "result.______etc_x.hlog");
        assert_eq!(file_name("a\0b/"), "result.a_b_.hlog");
    }

    #[test]
    fn lists_operations_in_order() {
        let result = super::super::sample::result();
        assert_eq!(operations(&result), ["create", "read"]);
    }

    #[test]
    fn logs_read_back_with_every_interval() {
        let result = super::super::sample::result();
        let mut out = Vec::new();
        write(&result, "create", &mut out).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("#Units: values in microseconds"), "{text}");
        assert!(text.contains("#[MaxValueDivisor: 1000.000]"), "{text}");
        let mut counts = Vec::new();
        let mut maxes = Vec::new();
        let mut starts = Vec::new();
        for entry in IntervalLogIterator::new(&out) {
            match entry.unwrap() {
                LogEntry::Interval(i) => {
                    use base64::Engine as _;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(i.encoded_histogram())
                        .unwrap();
                    let h: hdrhistogram::Histogram<u64> = Deserializer::new()
                        .deserialize(&mut bytes.as_slice())
                        .unwrap();
                    counts.push(h.len());
                    maxes.push(i.max());
                    starts.push(i.start_timestamp().as_secs_f64());
                }
                LogEntry::StartTime(t) | LogEntry::BaseTime(t) => {
                    assert_eq!(t.as_secs(), 1_700_000_000)
                }
            }
        }
        assert_eq!(counts, [0, 3]);
        assert_eq!(starts, [0.0, 1.0]);
        assert!((maxes[1] - 4.001).abs() < 0.01, "{maxes:?}");
    }
}
