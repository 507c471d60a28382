//! How long a run will take, as far as its settings say before anything is sent: the
//! header's `length:` line. Only what the settings fix is added up (durations, and counts
//! at a `--rate`); a count at the server's pace has no length until it has run, so it is
//! named by its operations, never given a guessed time.

use std::time::Duration;

use crate::analysis::search::SearchPlan;
use crate::report::numbers::grouped;
use crate::time::duration::{LONGEST, words};
use crate::words::counted;
use crate::workload::{Phase, Schedule};

/// What a phase's settings say about its length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PhaseLength {
    /// Bounded by time alone: exactly this long.
    Timed(Duration),
    /// A count at a rate: its schedule's length (count / rate), or its duration if that
    /// comes first; longer only if the server falls behind the rate.
    Paced(Duration),
    /// A count at the server's pace with a duration: at most the duration (and the
    /// operations still in flight when it ends).
    Capped(Duration),
    /// A count at the server's pace and nothing else: this many operations, for as long
    /// as the server takes.
    Open(u64),
}

/// What `phase`'s bounds and rate say about its length.
pub fn of_phase(phase: &Phase) -> PhaseLength {
    let duration = phase.bound.duration;
    let Some(count) = operations(phase) else {
        return PhaseLength::Timed(duration.unwrap_or_default());
    };
    let paced = phase.rate.and_then(|rate| {
        let seconds = Schedule::new(rate, duration).start_of(count)?;
        Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
    });
    match (paced, duration) {
        (Some(paced), Some(duration)) => PhaseLength::Paced(paced.min(duration)),
        (Some(paced), None) => PhaseLength::Paced(paced),
        (None, Some(duration)) => PhaseLength::Capped(duration),
        (None, None) => PhaseLength::Open(count),
    }
}

/// All connections' operations when counted, saturating (the phase's own sum is exact
/// but may overflow on absurd counts, which this line must survive to be refused later).
fn operations(phase: &Phase) -> Option<u64> {
    let bound = phase.bound;
    let per = bound
        .per_connection
        .map(|n| n.saturating_mul(phase.connections));
    match (per, bound.total) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Phases of one kind of length, and their length (or operations) added up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Part {
    phases: u64,
    length: Duration,
    operations: u64,
}

impl Part {
    fn add(&mut self, length: Duration, operations: u64) {
        self.phases = self.phases.saturating_add(1);
        self.length = self.length.saturating_add(length);
        self.operations = self.operations.saturating_add(operations);
    }
}

/// A run's length as far as it is known up front, for one repetition, and how many
/// repetitions there are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    timed: Part,
    paced: Part,
    capped: Part,
    open: Part,
    /// `--search-rate`: at most this many steps of this length, in place of the last phase.
    search: Option<(u32, Duration)>,
    runs: u64,
}

impl Estimate {
    /// The estimate for `phases`, the last one searched when `search` is given, the
    /// whole run `runs` times.
    pub fn of(phases: &[Phase], search: Option<&SearchPlan>, runs: u64) -> Estimate {
        let once = match (search, phases.split_last()) {
            (Some(_), Some((_, before))) => before,
            _ => phases,
        };
        let mut estimate = Estimate {
            search: search.map(|plan| (plan.most_steps, plan.step)),
            runs: runs.max(1),
            ..Estimate::default()
        };
        for phase in once {
            match of_phase(phase) {
                PhaseLength::Timed(d) => estimate.timed.add(d, 0),
                PhaseLength::Paced(d) => estimate.paced.add(d, 0),
                PhaseLength::Capped(d) => estimate.capped.add(d, 0),
                PhaseLength::Open(n) => estimate.open.add(Duration::ZERO, n),
            }
        }
        estimate
    }

    /// The steps of a rate search at most.
    fn search_length(&self) -> Duration {
        self.search
            .map_or(Duration::ZERO, |(steps, step)| step.saturating_mul(steps))
    }

    /// One repetition's known length: its timed, paced and capped phases and the
    /// search's steps.
    fn known(&self) -> Duration {
        self.timed
            .length
            .saturating_add(self.paced.length)
            .saturating_add(self.capped.length)
            .saturating_add(self.search_length())
    }

    /// `d` for every repetition.
    fn all_runs(&self, d: Duration) -> Duration {
        let runs = u32::try_from(self.runs).unwrap_or(u32::MAX);
        d.checked_mul(runs).unwrap_or(Duration::MAX)
    }

    /// `at most 25s`, `about 50s`, `1h`, `unknown, 4,020 operations at the server's pace`,
    /// `30s plus 10 operations at the server's pace`.
    fn headline(&self) -> String {
        let known = self.all_runs(self.known());
        let bounded = !self.capped.length.is_zero() || self.search.is_some();
        let qualifier = if known > LONGEST {
            ""
        } else if bounded {
            "at most "
        } else if self.paced.phases > 0 {
            "about "
        } else {
            ""
        };
        let open = self.open.operations.saturating_mul(self.runs);
        let open = format!(
            "{} at the server's pace",
            counted_grouped(open, "operation")
        );
        match (self.open.phases > 0, known.is_zero()) {
            (false, _) => format!("{qualifier}{}", words(known)),
            (true, true) => format!("unknown, {open}"),
            (true, false) => format!("{qualifier}{} plus {open}", words(known)),
        }
    }

    /// How the estimate was made: its parts, one clause each.
    fn how(&self) -> String {
        let mut parts = Vec::new();
        let phases = |part: &Part| counted(part.phases, "phase");
        if self.timed.phases > 0 {
            parts.push(format!(
                "{} by duration alone: {}",
                phases(&self.timed),
                words(self.timed.length)
            ));
        }
        if self.paced.phases > 0 {
            parts.push(format!(
                "{} of counts at a --rate: {} if the server keeps up",
                phases(&self.paced),
                words(self.paced.length)
            ));
        }
        if self.capped.phases > 0 {
            parts.push(format!(
                "{} of counts, each ending at its duration if sooner: at most {}",
                phases(&self.capped),
                words(self.capped.length)
            ));
        }
        if let Some((steps, step)) = self.search {
            parts.push(format!(
                "rate search: at most {} of {}",
                counted(u64::from(steps), "step"),
                words(step)
            ));
        }
        if self.open.phases > 0 {
            parts.push(format!(
                "{} of counts with no duration or rate",
                phases(&self.open)
            ));
        }
        if self.runs > 1 {
            parts.push(format!("{} repetitions (--runs)", grouped(self.runs)));
        }
        parts.push(
            "plus setup, index builds, waits and the operations in flight at a phase's end"
                .to_string(),
        );
        parts.join("; ")
    }

    /// The header's line: `  length: at most 25s (5 phases of counts, each ending at its
    /// duration if sooner: at most 25s; plus setup, …)`.
    pub fn line(&self) -> String {
        format!("  length: {} ({})\n", self.headline(), self.how())
    }
}

/// `1 operation`, `4,020 operations`.
fn counted_grouped(n: u64, noun: &str) -> String {
    let noun = if n == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    };
    format!("{} {noun}", grouped(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CrudBound, Operation, Rate, Weights};

    fn phase(total: Option<u64>, duration: Option<u64>, rate: Option<Rate>) -> Phase {
        Phase {
            bound: CrudBound {
                per_connection: None,
                total,
                duration: duration.map(Duration::from_secs),
            },
            rate,
            ..Phase::sample("p", Weights::only(Operation::Read, 1))
        }
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn each_phase_is_as_long_as_its_settings_say_and_no_longer() {
        let rate = Some(Rate::constant(200.0));
        assert_eq!(
            of_phase(&phase(None, Some(30), rate)),
            PhaseLength::Timed(secs(30))
        );
        assert_eq!(
            of_phase(&phase(Some(10_000), None, rate)),
            PhaseLength::Paced(secs(50)),
            "count / rate"
        );
        assert_eq!(
            of_phase(&phase(Some(10_000), Some(20), rate)),
            PhaseLength::Paced(secs(20)),
            "the duration comes first"
        );
        assert_eq!(
            of_phase(&phase(Some(10_000), Some(20), None)),
            PhaseLength::Capped(secs(20))
        );
        assert_eq!(
            of_phase(&phase(Some(10_000), None, None)),
            PhaseLength::Open(10_000)
        );
        // 10 per connection on 2 connections, but 15 in total: 15.
        let mut both = phase(Some(15), None, None);
        both.bound.per_connection = Some(10);
        assert_eq!(of_phase(&both), PhaseLength::Open(15));
        // A ramp from 0 to 100/s over 10 s: 500 operations take the whole ramp.
        let ramp = phase(Some(500), Some(10), Some(Rate::ramp(0.0, 100.0)));
        match of_phase(&ramp) {
            PhaseLength::Paced(d) => assert!((d.as_secs_f64() - 10.0).abs() < 1e-6, "{d:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_header_adds_up_what_is_known_and_names_what_is_not() {
        let capped: Vec<Phase> = (0..5).map(|_| phase(Some(1_000), Some(5), None)).collect();
        let line = Estimate::of(&capped, None, 1).line();
        assert_eq!(
            line,
            "  length: at most 25s (5 phases of counts, each ending at its duration if sooner: at most 25s; plus setup, index builds, waits and the operations in flight at a phase's end)\n"
        );
        let open: Vec<Phase> = (0..5).map(|_| phase(Some(1_000), None, None)).collect();
        let line = Estimate::of(&open, None, 1).line();
        assert!(
            line.starts_with("  length: unknown, 5,000 operations at the server's pace (5 phases of counts with no duration or rate; plus"),
            "{line}"
        );
        let soak = [
            phase(Some(10), None, None),
            phase(None, Some(3_600), Some(Rate::constant(100.0))),
        ];
        let line = Estimate::of(&soak, None, 3).line();
        assert!(
            line.starts_with("  length: 3h plus 30 operations at the server's pace (1 phase by duration alone: 1h; "),
            "{line}"
        );
        assert!(line.contains("; 3 repetitions (--runs); "), "{line}");
        let paced = [phase(Some(10_000), None, Some(Rate::constant(200.0)))];
        let line = Estimate::of(&paced, None, 1).line();
        assert!(
            line.starts_with(
                "  length: about 50s (1 phase of counts at a --rate: 50s if the server keeps up; "
            ),
            "{line}"
        );
    }

    #[test]
    fn a_rate_search_counts_its_steps_in_place_of_the_last_phase() {
        let plan = SearchPlan {
            low: 10.0,
            high: 100.0,
            step: secs(10),
            most_steps: 12,
            precision: 0.05,
        };
        let phases = [phase(None, Some(30), None), phase(Some(99), None, None)];
        let line = Estimate::of(&phases, Some(&plan), 1).line();
        assert!(
            line.starts_with("  length: at most 2m 30s (1 phase by duration alone: 30s; rate search: at most 12 steps of 10s; "),
            "{line}"
        );
    }

    #[test]
    fn absurd_settings_saturate_instead_of_overflowing() {
        let mut huge = phase(Some(u64::MAX), Some(LONGEST.as_secs()), None);
        huge.bound.per_connection = Some(u64::MAX);
        huge.connections = u64::MAX;
        let phases = vec![huge; 1_000];
        let line = Estimate::of(&phases, None, u64::MAX).line();
        assert!(line.starts_with("  length: more than 10 years ("), "{line}");
        let open = vec![phase(Some(u64::MAX), None, None); 3];
        let line = Estimate::of(&open, None, u64::MAX).line();
        assert!(
            line.starts_with("  length: unknown, 18,446,744,073,709,551,615 operations"),
            "{line}"
        );
        // The slowest rate over the most operations: longer than a Duration holds.
        let slow = phase(Some(u64::MAX), None, Some(Rate::constant(0.001)));
        assert_eq!(of_phase(&slow), PhaseLength::Paced(Duration::MAX));
        let line = Estimate::of(&[slow], None, 7).line();
        assert!(line.starts_with("  length: more than 10 years ("), "{line}");
    }
}
