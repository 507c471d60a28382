//! Result files in other formats, each made from a [`RunResult`] alone, so that
//! `sofabench report` regenerates any of them from a result's JSON.
//!
//! One file per format: [`csv`] (the per-interval series), [`hlog`] (HdrHistogram interval
//! logs, one per operation) and [`html`] (one self-contained page with charts). [`Format`]
//! puts them, and the JSON itself, behind one call.

pub mod csv;
pub mod hlog;
pub mod html;

use std::collections::BTreeSet;
use std::io;

use crate::results::{PhaseResult, RunResult};

/// A format a result can be written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// The result itself (docs/RESULTS.md).
    Json,
    /// One row per interval and operation.
    Csv,
    /// One self-contained page.
    Html,
    /// The interval log of one operation.
    Hlog { operation: String },
}

impl Format {
    /// The file's bytes.
    pub fn render(&self, result: &RunResult) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        match self {
            Format::Json => {
                out.extend_from_slice(result.to_json().as_bytes());
                out.push(b'\n');
            }
            Format::Csv => self::csv::write(result, &mut out)?,
            Format::Html => out.extend_from_slice(html::render(result).as_bytes()),
            Format::Hlog { operation } => hlog::write(result, operation, &mut out)?,
        }
        Ok(out)
    }
}

/// The operation kinds of a phase, in the order its result lists them, then any that only
/// its intervals name.
pub(crate) fn phase_operations(phase: &PhaseResult) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    let mut names = Vec::new();
    let listed = phase.operations.iter().map(|o| o.operation.as_str());
    let in_intervals = phase
        .intervals
        .iter()
        .flat_map(|i| i.operations.iter().map(|o| o.operation.as_str()));
    for name in listed.chain(in_intervals) {
        if seen.insert(name) {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
pub(crate) mod sample {
    //! A small result made in memory, for the formats' unit tests.

    use std::collections::BTreeMap;

    use crate::results::build::latency;
    use crate::results::histogram::encode;
    use crate::results::*;

    fn histogram(values: &[u64]) -> hdrhistogram::Histogram<u64> {
        let mut h = crate::metrics::recorder::new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    fn interval(end_ms: u64, elapsed: f64, ops: &[(&str, &[u64], u64)]) -> IntervalResult {
        IntervalResult {
            late_causes: None,
            stalled_seconds: None,
            end_ms,
            elapsed_seconds: elapsed,
            length_seconds: 1.0,
            cpu: 0.25,
            late: 1,
            machine_cpu: None,
            in_flight: 0,
            waiting_after_429: 0,
            polling: false,
            target_rate: None,
            disk: None,
            operations: ops
                .iter()
                .map(|(name, values, failed)| {
                    let h = histogram(values);
                    IntervalOperation {
                        operation: name.to_string(),
                        succeeded: h.len(),
                        failed: *failed,
                        timeouts: 0,
                        rate_limited: 0,
                        retried_429: 0,
                        documents: None,
                        bytes_sent: None,
                        bytes_received: None,
                        throughput: h.len() as f64,
                        p50_ms: h.value_at_quantile(0.5) as f64 / 1000.0,
                        p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
                        histogram: encode(&h),
                    }
                })
                .collect(),
            server: Vec::new(),
        }
    }

    fn operation(name: &str, values: &[u64]) -> OperationResult {
        let h = histogram(values);
        OperationResult {
            operation: name.to_string(),
            succeeded: h.len(),
            failed: 1,
            documents: h.len(),
            documents_failed: 1,
            throughput: h.len() as f64 / 2.0,
            documents_per_sec: h.len() as f64 / 2.0,
            failures: BTreeMap::from([("404".to_string(), 1)]),
            failure_samples: Default::default(),
            failed_latency: None,
            resends: 0,
            retried_429: 0,
            retry_429_wait_ns: 0,
            unknown_outcomes: 0,
            not_run: 0,
            bytes_sent: 0,
            bytes_received: 0,
            rows: None,
            rows_per_sec: None,
            hot: None,
            existing: None,
            row_check: None,
            statuses: BTreeMap::from([("200".to_string(), h.len()), ("404".to_string(), 1)]),
            latency: latency(&h),
            response: latency(&h),
        }
    }

    /// A PouchDB Server's look: only its file (`disk_size`), 16 KB a document.
    fn sizes(at_seconds: f64, doc_count: u64) -> crate::disk::DiskSizes {
        crate::disk::DiskSizes {
            file: Some(16_000 * doc_count),
            doc_count: Some(doc_count),
            at_seconds,
            ..Default::default()
        }
    }

    /// One CRUD phase of two intervals: reads in both, creates only in the second.
    pub fn result() -> RunResult {
        let reads1: &[u64] = &[900, 1_000, 1_100, 25_000];
        let reads2: &[u64] = &[800, 1_200];
        let creates: &[u64] = &[2_000, 3_000, 4_000];
        let mut all_reads = reads1.to_vec();
        all_reads.extend_from_slice(reads2);
        let mut phase = PhaseResult {
            interval_width: 1,
            name: "crud".to_string(),
            started_at_ms: 1_700_000_000_000,
            wall_seconds: 2.0,
            connections: 2,
            target_rate: None,
            ramp: None,
            late: 0,
            send_lag: None,
            connection_times: None,
            connection_setup: None,
            logins: None,
            sweep: None,
            changes: None,
            replication: None,
            devices: None,
            index_builds: Vec::new(),
            settle: None,
            operations: vec![operation("create", creates), operation("read", &all_reads)],
            iron_cushion: IronCushion {
                time_taken: 2.0,
                total_json_bytes_sent: 1_000,
                total_json_bytes_received: 2_000,
                local_processing: Spread::default(),
                send_data: Spread::default(),
                remote_processing: BTreeMap::from([(
                    "remoteReadProcessing".to_string(),
                    Spread {
                        min: 0.1,
                        max: 0.2,
                        median: 0.15,
                        sd: 0.05,
                    },
                )]),
                receive_data: Spread::default(),
                rates: BTreeMap::from([("remoteReadProcessingRate".to_string(), 40.0)]),
            },
            intervals: vec![
                interval(1_700_000_001_000, 1.0, &[("read", reads1, 0)]),
                interval(
                    1_700_000_002_000,
                    2.0,
                    &[("create", creates, 0), ("read", reads2, 1)],
                ),
            ],
            aborted: vec![],
            action: None,
            target_nodes: Vec::new(),
            disk: Some(crate::results::disk_result(
                &crate::disk::PhaseDisk {
                    start: Some(sizes(1.0, 2)),
                    end: Some(sizes(2.0, 5)),
                },
                &[operation("create", creates)],
            )),
            server_notes: Vec::new(),
        };
        // The database's sizes were looked at in the second interval only.
        phase.intervals[1].disk = Some(sizes(1.5, 3));
        // The read that failed in the second interval was a 429, after three retried.
        let read = &mut phase.operations[1];
        read.failures = BTreeMap::from([("rate_limited".to_string(), 1)]);
        read.statuses = BTreeMap::from([("200".to_string(), 6), ("429".to_string(), 4)]);
        read.retried_429 = 3;
        read.retry_429_wait_ns = 7_500_000_000;
        read.failure_samples = BTreeMap::from([(
            "rate_limited".to_string(),
            vec![r#"Retry-After: 5 · {"error":"too_many_requests"}"#.to_string()],
        )]);
        let late_read = &mut phase.intervals[1].operations[1];
        (late_read.rate_limited, late_read.retried_429) = (1, 3);
        RunResult {
            schema: SCHEMA.to_string(),
            tool: Tool {
                name: "sofabench".to_string(),
                version: "0.1.0".to_string(),
            },
            started_at: "2023-11-14T22:13:20Z".to_string(),
            ended_at: "2023-11-14T22:13:22Z".to_string(),
            interrupted: false,
            config: BTreeMap::from([
                ("num_connections".to_string(), serde_json::json!(2)),
                (
                    "template".to_string(),
                    serde_json::json!("</script><b>x</b>.json"),
                ),
            ]),
            nodes: vec![NodeInfo {
                index: 0,
                count: 1,
                host: "test".to_string(),
                client: None,
                server: None,
            }],
            phases: vec![phase],
            repetitions: Vec::new(),
            search: None,
        }
    }
}
