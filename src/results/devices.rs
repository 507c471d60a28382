//! A phase's fleet of devices as the result file keeps it. Every figure keeps its
//! HdrHistogram, so the results of several client machines merge exactly
//! ([`merge`]): decoded into the devices' report, added, encoded again.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::Latency;
use super::build::latency;
use crate::metrics::devices::{
    Convergence, DeviceCounts, DeviceFigures, DevicesInterval, DevicesReport, VisibleCounts,
    keep_sample,
};
use crate::metrics::histogram;

/// What the phase's devices did (absent for a phase without a fleet).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DevicesResult {
    /// Devices of all client machines, and those this result covers (all of them once
    /// merged).
    pub devices: u64,
    pub devices_run: u64,
    /// Of those: devices that joined cold, and devices that went offline for a while.
    pub cold_devices: u64,
    pub offline_devices: u64,
    /// Client machines the fleet was split over (`--node-count`).
    pub client_nodes: u64,
    /// `own-database`, `doc-ids` or `selector`; `pouchdb` or `replicator`; the feed;
    /// `live` or `every N s`.
    pub scope: String,
    pub profile: String,
    pub feed: String,
    pub sync: String,
    /// From a write's push being acknowledged to another device of the same client
    /// machine storing it, one value per (write, device).
    pub time_to_visible: Latency,
    /// Each push that sent something, and each pull, start to end (a live pull from its
    /// feed's answer, not the wait before it).
    pub push: Latency,
    pub pull: Latency,
    /// Each cold device's initial sync (joining to holding its scope), and its documents
    /// per second.
    pub initial_sync: Latency,
    pub initial_docs_per_second: Counted,
    /// Each return from offline to the backlog pushed and the scope pulled.
    pub catch_up: Latency,
    /// Requests and bytes (both ways) of each cycle that sent any request.
    pub requests_per_cycle: Counted,
    pub bytes_per_cycle: Counted,
    pub counts: DeviceCounts,
    /// What the time-to-visible table tracked and could not.
    pub visible: VisibleCounts,
    /// The most devices online (joined, not offline), and live feed reads held, at an
    /// interval's end.
    pub most_online: u64,
    pub most_feeds_open: u64,
    /// Examples (at most 10 each): cycles that sent more requests than the budget, and
    /// failed cycles, naming the device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_budget_samples: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_samples: Vec<String>,
    /// The warm devices' sync before the phase: seconds, and devices that started behind.
    pub warm_up_seconds: f64,
    pub warm_up_behind: u64,
    /// The last sync after the writes stopped: seconds, and devices not done within the
    /// fleet's `last_sync`.
    pub last_sync_seconds: f64,
    pub last_sync_unfinished: u64,
    pub convergence: ConvergenceResult,
    pub intervals: Vec<DevicesIntervalResult>,
}

/// A histogram of plain values (not times): requests, bytes, documents per second.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Counted {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    /// HdrHistogram V2 deflate, base64.
    #[serde(deserialize_with = "super::checked::histogram")]
    pub histogram: String,
}

/// Whether every device's replica agreed with the server after the last sync.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ConvergenceResult {
    /// Devices compared with the server, and those that agreed for their whole scope:
    /// the same live documents, winning revisions and conflicts.
    pub checked: u64,
    pub converged: u64,
    /// Devices that did not (at most 10), each with the first difference found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diverged: Vec<DivergedDevice>,
    /// Live documents the server held in the devices' scopes, and their conflicting
    /// revisions (`_conflicts`).
    pub server_documents: u64,
    pub server_conflicts: u64,
    /// Why the server could not be read (then devices of that database are not
    /// converged); absent when it was, and when the check was skipped (Ctrl-C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DivergedDevice {
    pub device: String,
    pub difference: String,
}

/// The devices' figures over one interval.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DevicesIntervalResult {
    pub elapsed_seconds: f64,
    pub length_seconds: f64,
    pub online: u64,
    pub feeds_open: u64,
    pub counts: DeviceCounts,
    pub time_to_visible: IntervalTimes,
    pub push: IntervalTimes,
    pub pull: IntervalTimes,
}

/// Times within one interval: two percentiles and their histogram (microseconds).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IntervalTimes {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    #[serde(deserialize_with = "super::checked::histogram")]
    pub histogram: String,
}

fn counted(h: &Histogram<u64>) -> Counted {
    let at = |q: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(q)
        }
    };
    Counted {
        count: h.len(),
        mean: if h.is_empty() { 0.0 } else { h.mean() },
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max: if h.is_empty() { 0 } else { h.max() },
        histogram: histogram::encode(h),
    }
}

fn interval_times(h: &Histogram<u64>) -> IntervalTimes {
    let ms = |q: f64| {
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / 1_000.0
        }
    };
    IntervalTimes {
        count: h.len(),
        p50_ms: ms(0.5),
        p99_ms: ms(0.99),
        histogram: histogram::encode(h),
    }
}

pub fn devices(report: &DevicesReport) -> DevicesResult {
    let f = &report.figures;
    let c = &report.convergence;
    DevicesResult {
        devices: report.devices,
        devices_run: report.devices_here,
        cold_devices: report.cold_devices,
        offline_devices: report.offline_devices,
        client_nodes: report.client_nodes,
        scope: report.scope.clone(),
        profile: report.profile.clone(),
        feed: report.feed.clone(),
        sync: report.sync.clone(),
        time_to_visible: latency(&f.visible),
        push: latency(&f.push),
        pull: latency(&f.pull),
        initial_sync: latency(&f.initial_sync),
        initial_docs_per_second: counted(&f.initial_docs_per_second),
        catch_up: latency(&f.catch_up),
        requests_per_cycle: counted(&f.requests),
        bytes_per_cycle: counted(&f.bytes),
        counts: report.counts,
        visible: report.visible,
        most_online: report.most_online,
        most_feeds_open: report.most_feeds_open,
        over_budget_samples: report.over_budget_samples.clone(),
        failure_samples: report.failure_samples.clone(),
        warm_up_seconds: report.warm_up_seconds,
        warm_up_behind: report.warm_up_behind,
        last_sync_seconds: report.last_sync_seconds,
        last_sync_unfinished: report.last_sync_unfinished,
        convergence: ConvergenceResult {
            checked: c.checked,
            converged: c.converged,
            diverged: c
                .diverged
                .iter()
                .map(|(device, difference)| DivergedDevice {
                    device: device.clone(),
                    difference: difference.clone(),
                })
                .collect(),
            server_documents: c.server_documents,
            server_conflicts: c.server_conflicts,
            error: c.error.clone(),
        },
        intervals: report
            .intervals
            .iter()
            .map(|i| DevicesIntervalResult {
                elapsed_seconds: i.elapsed_seconds,
                length_seconds: i.length_seconds,
                online: i.online,
                feeds_open: i.feeds_open,
                counts: i.counts,
                time_to_visible: interval_times(&i.visible),
                push: interval_times(&i.push),
                pull: interval_times(&i.pull),
            })
            .collect(),
    }
}

/// The histogram a result kept, in the recorder's form (so any two add).
fn decoded(text: &str) -> Result<Histogram<u64>, String> {
    let mut h = crate::metrics::recorder::new_histogram();
    h.add(histogram::decode(text)?)
        .map_err(|e| format!("histograms cannot be added: {e:?}"))?;
    Ok(h)
}

/// The report a result was made from (its histograms decoded).
fn report_of(r: &DevicesResult) -> Result<DevicesReport, String> {
    let figures = DeviceFigures {
        visible: decoded(&r.time_to_visible.histogram)?,
        push: decoded(&r.push.histogram)?,
        pull: decoded(&r.pull.histogram)?,
        initial_sync: decoded(&r.initial_sync.histogram)?,
        initial_docs_per_second: decoded(&r.initial_docs_per_second.histogram)?,
        catch_up: decoded(&r.catch_up.histogram)?,
        requests: decoded(&r.requests_per_cycle.histogram)?,
        bytes: decoded(&r.bytes_per_cycle.histogram)?,
    };
    let intervals = r
        .intervals
        .iter()
        .map(|i| {
            Ok(DevicesInterval {
                elapsed_seconds: i.elapsed_seconds,
                length_seconds: i.length_seconds,
                online: i.online,
                feeds_open: i.feeds_open,
                counts: i.counts,
                visible: decoded(&i.time_to_visible.histogram)?,
                push: decoded(&i.push.histogram)?,
                pull: decoded(&i.pull.histogram)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let c = &r.convergence;
    Ok(DevicesReport {
        devices: r.devices,
        devices_here: r.devices_run,
        cold_devices: r.cold_devices,
        offline_devices: r.offline_devices,
        client_nodes: r.client_nodes,
        scope: r.scope.clone(),
        profile: r.profile.clone(),
        feed: r.feed.clone(),
        sync: r.sync.clone(),
        figures,
        counts: r.counts,
        visible: r.visible,
        most_online: r.most_online,
        most_feeds_open: r.most_feeds_open,
        over_budget_samples: r.over_budget_samples.clone(),
        failure_samples: r.failure_samples.clone(),
        warm_up_seconds: r.warm_up_seconds,
        warm_up_behind: r.warm_up_behind,
        last_sync_seconds: r.last_sync_seconds,
        last_sync_unfinished: r.last_sync_unfinished,
        convergence: Convergence {
            checked: c.checked,
            converged: c.converged,
            diverged: c
                .diverged
                .iter()
                .map(|d| (d.device.clone(), d.difference.clone()))
                .collect(),
            server_documents: c.server_documents,
            server_conflicts: c.server_conflicts,
            error: c.error.clone(),
        },
        intervals,
    })
}

/// Adds another machine's report of the same phase: devices, counts and times add;
/// intervals add by position (every machine samples the phase at the same interval);
/// the most online at once is the most of the added intervals.
fn add(mine: &mut DevicesReport, other: &DevicesReport) {
    mine.devices_here = mine.devices_here.saturating_add(other.devices_here);
    mine.cold_devices = mine.cold_devices.saturating_add(other.cold_devices);
    mine.offline_devices = mine.offline_devices.saturating_add(other.offline_devices);
    mine.client_nodes = mine.client_nodes.max(other.client_nodes);
    mine.figures.add(&other.figures);
    mine.counts.add(&other.counts);
    mine.visible.add(&other.visible);
    for sample in &other.over_budget_samples {
        keep_sample(&mut mine.over_budget_samples, || sample.clone());
    }
    for sample in &other.failure_samples {
        keep_sample(&mut mine.failure_samples, || sample.clone());
    }
    mine.warm_up_seconds = mine.warm_up_seconds.max(other.warm_up_seconds);
    mine.warm_up_behind = mine.warm_up_behind.saturating_add(other.warm_up_behind);
    mine.last_sync_seconds = mine.last_sync_seconds.max(other.last_sync_seconds);
    mine.last_sync_unfinished = mine
        .last_sync_unfinished
        .saturating_add(other.last_sync_unfinished);
    mine.convergence.add(&other.convergence);
    for (k, theirs) in other.intervals.iter().enumerate() {
        match mine.intervals.get_mut(k) {
            Some(interval) => interval.add(theirs),
            None => mine.intervals.push(theirs.clone()),
        }
    }
    let most = |f: fn(&DevicesInterval) -> u64| mine.intervals.iter().map(f).max().unwrap_or(0);
    mine.most_online = most(|i| i.online).max(mine.most_online);
    mine.most_feeds_open = most(|i| i.feeds_open).max(mine.most_feeds_open);
}

/// The devices of several client machines' results of one phase, as one; `None` when
/// none had a fleet.
pub fn merge<'a>(
    results: impl Iterator<Item = &'a DevicesResult>,
) -> Result<Option<DevicesResult>, String> {
    let mut merged: Option<DevicesReport> = None;
    for result in results {
        let report = report_of(result).map_err(|e| format!("devices: {e}"))?;
        match &mut merged {
            None => merged = Some(report),
            Some(mine) => {
                // The most online at once is read again from the added intervals.
                mine.most_online = 0;
                mine.most_feeds_open = 0;
                add(mine, &report)
            }
        }
    }
    Ok(merged.map(|report| devices(&report)))
}

/// A result of 5 devices of which `converged` agreed with the server, for tests.
#[cfg(test)]
pub(crate) fn sample(converged: u64) -> DevicesResult {
    let mut result = devices(&tests::report(3, 7, 4));
    result.convergence.converged = converged;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::recorder::new_histogram;

    /// A machine's report with `n` pulls of `ms` each and `online` devices.
    pub(super) fn report(n: u64, ms: u64, online: u64) -> DevicesReport {
        let mut figures = DeviceFigures::default();
        let mut interval = DevicesInterval::empty(1.0, 1.0);
        for _ in 0..n {
            figures.pull.record(ms * 1_000).unwrap();
            interval.pull.record(ms * 1_000).unwrap();
        }
        interval.online = online;
        interval.counts.pulls = n;
        DevicesReport {
            devices: 10,
            devices_here: 5,
            cold_devices: 1,
            offline_devices: 0,
            client_nodes: 2,
            scope: "own-database".into(),
            profile: "pouchdb".into(),
            feed: "longpoll".into(),
            sync: "live".into(),
            figures,
            counts: DeviceCounts {
                pulls: n,
                ..DeviceCounts::default()
            },
            visible: VisibleCounts::default(),
            most_online: online,
            most_feeds_open: 0,
            over_budget_samples: vec![],
            failure_samples: vec![],
            warm_up_seconds: 1.0,
            warm_up_behind: 0,
            last_sync_seconds: 2.0,
            last_sync_unfinished: 0,
            convergence: Convergence {
                checked: 5,
                converged: 5,
                ..Convergence::default()
            },
            intervals: vec![interval],
        }
    }

    #[test]
    fn a_result_reads_back_as_written() {
        let result = devices(&report(3, 7, 4));
        let text = serde_json::to_string(&result).unwrap();
        let back: DevicesResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, result);
        assert_eq!(back.pull.count, 3);
        assert_eq!(back.intervals[0].pull.count, 3);
    }

    #[test]
    fn machines_merge_exactly() {
        let (a, b) = (devices(&report(3, 7, 4)), devices(&report(1, 50, 5)));
        let merged = merge([&a, &b].into_iter()).unwrap().unwrap();
        assert_eq!(merged.devices, 10);
        assert_eq!(merged.devices_run, 10);
        assert_eq!(merged.counts.pulls, 4);
        assert_eq!(merged.pull.count, 4);
        assert!(
            (49.9..50.1).contains(&merged.pull.max_ms),
            "{}",
            merged.pull.max_ms
        );
        assert_eq!(merged.intervals.len(), 1);
        assert_eq!(merged.intervals[0].online, 9);
        assert_eq!(merged.most_online, 9);
        assert_eq!(
            (merged.convergence.checked, merged.convergence.converged),
            (10, 10)
        );
        assert_eq!(merge(std::iter::empty()).unwrap(), None);
    }

    #[test]
    fn a_changed_histogram_is_refused_by_merge() {
        let mut a = devices(&report(1, 1, 1));
        a.pull.histogram = "bm90IGEgaGlzdG9ncmFt".into();
        let refused = merge([&a].into_iter()).unwrap_err();
        assert!(refused.starts_with("devices:"), "{refused}");
        let _ = new_histogram();
    }
}
