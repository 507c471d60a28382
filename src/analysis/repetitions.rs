//! A run's repetitions (`run --runs N`) as one result: each phase of all repetitions
//! merged into one phase, and each phase's figures per repetition for their spread.
//!
//! The repetitions ran one after the other, so a merged phase reads as one phase that
//! did all their work in turn: counts and histograms added, the wall-clock time the sum
//! of theirs (so a throughput is all successes over all the time taken), each
//! connection's times added to the same connection's, and the live intervals one after
//! the other. Merging the nodes of one run (`merge`) differs: they ran side by side.

use crate::metrics::{LoginTally, PhaseTally};
use crate::results::build::{self, PhaseFacts};
use crate::results::{
    ActionResult, IntervalResult, PhaseResult, RampResult, RunResult, SweepPoint, tally,
};
use crate::workload::Operation;

/// One phase of the repetitions so far, added up.
struct Merged {
    name: String,
    mix: Vec<Operation>,
    started_at_ms: u64,
    wall_seconds: f64,
    target_rate: Option<f64>,
    tally: PhaseTally,
    intervals: Vec<IntervalResult>,
    /// The widest any repetition's intervals were merged to.
    interval_width: u64,
    aborted: Vec<String>,
    action: Option<ActionResult>,
    logins: LoginTally,
    /// Every repetition runs the same scenario, so a phase's place in a sweep is the
    /// first repetition's.
    sweep: Option<SweepPoint>,
    /// Likewise its rate's ramp.
    ramp: Option<RampResult>,
    /// What could not be asked of the servers, each said once over the repetitions.
    server_notes: Vec<String>,
}

impl Merged {
    fn new(phase: &PhaseResult) -> Merged {
        Merged {
            name: phase.name.clone(),
            mix: Vec::new(),
            started_at_ms: phase.started_at_ms,
            wall_seconds: 0.0,
            target_rate: phase.target_rate,
            tally: PhaseTally::default(),
            intervals: Vec::new(),
            interval_width: 1,
            aborted: Vec::new(),
            action: None,
            logins: LoginTally::default(),
            sweep: phase.sweep.clone(),
            ramp: phase.ramp,
            server_notes: Vec::new(),
        }
    }

    fn add(&mut self, repetition: u64, phase: &PhaseResult) -> Result<(), String> {
        self.tally.follow(&tally::of_phase(phase)?);
        if let Some(logins) = &phase.logins {
            self.logins.merge(&tally::of_logins(logins)?);
        }
        for op in super::merge::mix(&[phase]) {
            if !self.mix.contains(&op) {
                self.mix.push(op);
            }
        }
        self.mix.sort_by_key(|op| op.index());
        // This repetition's intervals follow the earlier ones' on the merged phase's time.
        let offset = self.wall_seconds;
        self.intervals
            .extend(phase.intervals.iter().map(|row| IntervalResult {
                elapsed_seconds: row.elapsed_seconds + offset,
                ..row.clone()
            }));
        self.wall_seconds += phase.wall_seconds;
        self.interval_width = self.interval_width.max(phase.interval_width);
        for note in &phase.server_notes {
            if !self.server_notes.contains(note) {
                self.server_notes.push(note.clone());
            }
        }
        self.aborted.extend(
            phase
                .aborted
                .iter()
                .map(|reason| format!("repetition {repetition}: {reason}")),
        );
        // One action stands for all: the first that failed, else the first.
        let failed = |a: &Option<ActionResult>| a.as_ref().is_some_and(|a| a.error.is_some());
        if self.action.is_none() || (!failed(&self.action) && failed(&phase.action)) {
            self.action.clone_from(&phase.action);
        }
        Ok(())
    }

    fn result(&self) -> PhaseResult {
        let facts = PhaseFacts {
            name: self.name.clone(),
            mix: self.mix.clone(),
            started_at_ms: self.started_at_ms,
            wall_seconds: self.wall_seconds,
            target_rate: self.target_rate,
            intervals: self.intervals.clone(),
            interval_width: self.interval_width.max(1),
            aborted: self.aborted.clone(),
            action: self.action.clone(),
            logins: (!self.logins.is_empty()).then(|| build::logins(&self.logins)),
            sweep: self.sweep.clone(),
            ramp: self.ramp,
            // Each repetition wrote into a database of its own: their sizes do not add
            // up to one; each repetition's phases keep theirs.
            disk: None,
            server_notes: self.server_notes.clone(),
        };
        build::from_tally(facts, &self.tally)
    }
}

/// The phases of every repetition so far, merged, position by position: the `k`th
/// phase of each repetition into the `k`th merged phase.
#[derive(Default)]
pub struct Merger {
    phases: Vec<Merged>,
}

impl Merger {
    /// Adds a phase that repetition `repetition` finished, at `position` in its
    /// repetition. A phase read back from a result that does not decode, or at a
    /// position whose name differs, is refused.
    pub fn add(
        &mut self,
        repetition: u64,
        position: usize,
        phase: &PhaseResult,
    ) -> Result<(), String> {
        if position == self.phases.len() {
            self.phases.push(Merged::new(phase));
        }
        let merged = self.phases.get_mut(position).ok_or_else(|| {
            format!(
                "repetition {repetition}: phase {} comes before the phases that precede it",
                phase.name
            )
        })?;
        if merged.name != phase.name {
            return Err(format!(
                "repetition {repetition}: phase {position} is {:?} where the first repetition has {:?}; repetitions run the same phases",
                phase.name, merged.name
            ));
        }
        merged.add(repetition, phase)
    }

    /// The merged phases, as a result's `phases`.
    pub fn phases(&self) -> Vec<PhaseResult> {
        self.phases.iter().map(Merged::result).collect()
    }
}

/// Each phase (by name, in the order of the result's phases) with one entry per
/// repetition that finished it: what its figures' spread and `compare`'s test are
/// taken over.
///
/// A result with `repetitions` gives the phases of its finished repetitions (an
/// interrupted one holds a phase cut short); with none finished, the merged phase
/// alone. A result without gives its phases grouped by name up to a `#N` suffix
/// (`crud#1`, `crud#2`), the form results with repetitions had before `--runs`; a plain
/// result, one entry per phase.
pub fn samples(result: &RunResult) -> Vec<(&str, Vec<&PhaseResult>)> {
    if result.repetitions.is_empty() {
        return grouped_by_name(result);
    }
    result
        .phases
        .iter()
        .map(|merged| {
            let finished: Vec<&PhaseResult> = result
                .finished_repetitions()
                .filter_map(|r| r.phases.iter().find(|p| p.name == merged.name))
                .collect();
            let phases = if finished.is_empty() {
                vec![merged]
            } else {
                finished
            };
            (merged.name.as_str(), phases)
        })
        .collect()
}

fn grouped_by_name(result: &RunResult) -> Vec<(&str, Vec<&PhaseResult>)> {
    let mut groups: Vec<(&str, Vec<&PhaseResult>)> = Vec::new();
    for phase in &result.phases {
        let name = super::base_name(&phase.name);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, phases)) => phases.push(phase),
            None => groups.push((name, vec![phase])),
        }
    }
    groups
}

/// How many repetitions a result's figures spread over: its finished repetitions, or
/// the most phases sharing a name up to a `#N` suffix; 1 for a plain run.
pub fn count(result: &RunResult) -> usize {
    samples(result)
        .iter()
        .map(|(_, phases)| phases.len())
        .max()
        .unwrap_or(0)
        .max(1)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::metrics::{ConnectionMetrics, PhaseOutcome, StepLatencies};
    use crate::results::RepetitionResult;
    use std::time::{Duration, UNIX_EPOCH};

    /// A phase whose `reads` reads of `ms` milliseconds each took `wall` seconds, on two
    /// connections that each waited `remote_ms` for answers, with one interval.
    fn phase(reads: u64, ms: u64, wall: f64, remote_ms: u64) -> PhaseResult {
        let mut latencies = StepLatencies::default();
        let connections: Vec<ConnectionMetrics> = (0..2)
            .map(|_| {
                let mut c = ConnectionMetrics::default();
                c.operation(Operation::Read).succeeded = reads / 2;
                c.operation(Operation::Read).documents = reads / 2;
                c.times.remote_ns[Operation::Read] = remote_ms * 1_000_000;
                c
            })
            .collect();
        for _ in 0..reads {
            latencies[Operation::Read].record(ms * 1_000_000, ms * 1_000_000);
        }
        let tally = PhaseTally::of_connections(
            connections,
            latencies,
            crate::metrics::recorder::new_histogram(),
            Vec::new(),
        );
        let outcome = PhaseOutcome {
            interval_width: 1,
            name: "crud".to_string(),
            operations: vec![Operation::Read],
            started_at: UNIX_EPOCH + Duration::from_secs(1_000),
            wall: Duration::from_secs_f64(wall),
            tally,
            aborted: Vec::new(),
            intervals: Vec::new(),
            target_rate: None,
            rate: None,
            interrupted: false,
            action: None,
            changes: None,
            replication: None,
            devices: None,
            logins: LoginTally::default(),
            disk: crate::disk::PhaseDisk::default(),
            server_notes: Vec::new(),
        };
        let mut result = build::phase(&outcome, None);
        result.intervals = vec![interval(wall)];
        result
    }

    fn interval(elapsed: f64) -> IntervalResult {
        IntervalResult {
            late_causes: None,
            stalled_seconds: None,
            end_ms: 0,
            elapsed_seconds: elapsed,
            length_seconds: elapsed,
            cpu: 0.0,
            late: 0,
            operations: Vec::new(),
            machine_cpu: None,
            in_flight: 0,
            waiting_after_429: 0,
            polling: false,
            target_rate: None,
            disk: None,
            server: Vec::new(),
        }
    }

    #[test]
    fn repetitions_merge_as_one_phase_doing_their_work_in_turn() {
        let (first, second) = (phase(100, 1, 1.0, 400), phase(300, 2, 2.0, 1_000));
        let mut merger = Merger::default();
        merger.add(1, 0, &first).unwrap();
        merger.add(2, 0, &second).unwrap();
        let merged = &merger.phases()[0];
        let read = &merged.operations[0];
        assert_eq!(read.succeeded, 400);
        // 400 reads over 3 s, not over the longer repetition's 2 s.
        assert_eq!(merged.wall_seconds, 3.0);
        assert_eq!(read.throughput, 400.0 / 3.0);
        assert_eq!(read.latency.count, 400);
        // A quarter took 1 ms, the rest 2 ms.
        assert_eq!(read.latency.p50_ms, 2.0);
        assert_eq!(read.latency.mean_ms, 1.75);
        assert_eq!(merged.connections, 2, "the same two connections both times");
        // Each connection waited 0.4 s then 1 s: 1.4 s for its 200 reads.
        let remote = &merged.iron_cushion.remote_processing["remoteReadProcessing"];
        assert_eq!((remote.min, remote.max), (1.4, 1.4));
        assert_eq!(
            merged.iron_cushion.rates["remoteReadProcessingRate"],
            400.0 / 1.4
        );
        let elapsed: Vec<f64> = merged.intervals.iter().map(|i| i.elapsed_seconds).collect();
        assert_eq!(
            elapsed,
            [1.0, 3.0],
            "the second repetition's after the first"
        );
    }

    #[test]
    fn phases_out_of_step_are_refused() {
        let mut merger = Merger::default();
        let mut other = phase(10, 1, 1.0, 1);
        other.name = "bulk_insert".to_string();
        merger.add(1, 0, &phase(10, 1, 1.0, 1)).unwrap();
        let err = merger.add(2, 0, &other).unwrap_err();
        assert!(err.contains("\"bulk_insert\" where the first repetition has \"crud\""));
        assert!(merger.add(2, 5, &phase(10, 1, 1.0, 1)).is_err());
    }

    fn repetition(index: u64, interrupted: bool, phase: PhaseResult) -> RepetitionResult {
        RepetitionResult {
            index,
            database_name: format!("db-run{index}"),
            id_prefix: format!("p-r{index}"),
            started_at: String::new(),
            ended_at: String::new(),
            interrupted,
            database_deleted: false,
            phases: vec![phase],
        }
    }

    fn result(phases: Vec<PhaseResult>, repetitions: Vec<RepetitionResult>) -> RunResult {
        let mut result = RunResult::of_phases(phases);
        result.repetitions = repetitions;
        result
    }

    #[test]
    fn samples_are_the_finished_repetitions_or_the_phases_named_alike() {
        let merged = phase(30, 1, 3.0, 1);
        let with = result(
            vec![merged.clone()],
            vec![
                repetition(1, false, phase(10, 1, 1.0, 1)),
                repetition(2, false, phase(12, 1, 1.0, 1)),
                repetition(3, true, phase(8, 1, 1.0, 1)),
            ],
        );
        let found = samples(&with);
        assert_eq!(found.len(), 1);
        let reads: Vec<u64> = found[0]
            .1
            .iter()
            .map(|p| p.operations[0].succeeded)
            .collect();
        assert_eq!(reads, [10, 12], "the interrupted repetition is left out");
        assert_eq!(count(&with), 2);

        let interrupted_only = result(
            vec![merged.clone()],
            vec![repetition(1, true, phase(9, 1, 1.0, 1))],
        );
        assert_eq!(
            samples(&interrupted_only)[0].1,
            [&interrupted_only.phases[0]]
        );

        let named = |name: &str| PhaseResult {
            name: name.to_string(),
            ..merged.clone()
        };
        let suffixed = result(vec![named("crud#1"), named("crud#2"), named("x")], vec![]);
        let names: Vec<(&str, usize)> = samples(&suffixed)
            .iter()
            .map(|(n, p)| (*n, p.len()))
            .collect();
        assert_eq!(names, [("crud", 2), ("x", 1)]);
        assert_eq!(count(&result(vec![named("x")], vec![])), 1);
        assert_eq!(count(&result(vec![], vec![])), 1);
    }

    #[test]
    fn the_first_failed_action_stands_for_the_merged_phase() {
        let action = |error: Option<&str>| ActionResult {
            kind: "compact".to_string(),
            started_seconds: Some(0.0),
            finished_seconds: None,
            size_before: None,
            size_after: None,
            size_field: None,
            error: error.map(str::to_string),
            note: None,
        };
        let with = |a| PhaseResult {
            action: Some(a),
            ..phase(10, 1, 1.0, 1)
        };
        let mut merger = Merger::default();
        merger.add(1, 0, &with(action(None))).unwrap();
        merger.add(2, 0, &with(action(Some("boom")))).unwrap();
        merger.add(3, 0, &with(action(Some("later")))).unwrap();
        let merged = merger.phases();
        assert_eq!(
            merged[0].action.as_ref().unwrap().error.as_deref(),
            Some("boom")
        );
    }
}
