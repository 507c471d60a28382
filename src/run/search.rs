//! `--search-rate`: the scenario's last phase run again and again, each step at the rate
//! the bisection picks, each judged against the thresholds, until the answer is close
//! enough, the steps run out, or Ctrl-C. Every step is a phase of the result, with its
//! report printed like any phase's, and the result files are rewritten after each.

use super::output::OutputFiles;
use super::record::Record;
use super::runner::{Measured, checkpoint, print};
use crate::analysis::search::{Bisection, Ending, SearchPlan, judge};
use crate::analysis::thresholds::Threshold;
use crate::engine::{Engine, PhaseShare};
use crate::exit::Failed;
use crate::report;
use crate::results::{self, SearchResult, SearchStep};
use crate::workload::{CrudBound, Phase, Rate};

/// What a search is given besides the engine.
pub struct Search<'a> {
    pub plan: &'a SearchPlan,
    pub checks: &'a [Threshold],
    /// The phase searched, as one node runs it, and this node's share of it.
    pub phase: &'a Phase,
    pub share: PhaseShare,
    /// How much each step's block says.
    pub detail: report::Detail,
}

/// The searched phase at one rate, named `<name>@<rate>` (never `<name>#<n>`, which
/// `compare` takes for repetitions of one setting), bounded by the step's duration alone
/// (a count would end a fast step early and make it look slow).
fn step_phase(phase: &Phase, rate: f64, plan: &SearchPlan) -> Phase {
    Phase {
        name: format!("{}@{rate}", phase.name),
        rate: Some(Rate::constant(rate)),
        bound: CrudBound {
            per_connection: None,
            total: None,
            duration: Some(plan.step),
        },
        ..phase.clone()
    }
}

impl Search<'_> {
    /// The search as the result keeps it, after `steps`.
    fn result(&self, steps: &[SearchStep], bisection: &Bisection, ending: Ending) -> SearchResult {
        SearchResult {
            phase: self.phase.name.clone(),
            low: self.plan.low,
            high: self.plan.high,
            step_seconds: self.plan.step.as_secs_f64(),
            most_steps: self.plan.most_steps,
            precision: self.plan.precision,
            thresholds: self.checks.iter().map(|c| c.expression.clone()).collect(),
            steps: steps.to_vec(),
            answer: bisection.answer(),
            lowest_failed: bisection.lowest_failed(),
            ending: ending.name().to_string(),
        }
    }

    /// The search of a run stopped before its first step (in a phase before them).
    pub fn stopped_before_its_steps(&self) -> SearchResult {
        self.result(&[], &Bisection::new(*self.plan), Ending::Interrupted)
    }

    /// Runs the steps, adding each to `measured` (and `measured.search`) and handing it
    /// to `checkpoint` as it ends.
    pub async fn run(
        &self,
        engine: &mut Engine,
        measured: &mut Measured,
        record: &mut Record,
        outputs: &OutputFiles,
    ) -> Result<(), Failed> {
        let mut bisection = Bisection::new(*self.plan);
        let mut steps = Vec::new();
        let ending = loop {
            let rate = match bisection.next() {
                Ok(rate) => rate,
                Err(ending) => break ending,
            };
            let number = bisection.tried() + 1;
            let phase = step_phase(self.phase, rate, self.plan);
            let share = PhaseShare {
                rate: Some(Rate::constant(rate)),
                ..self.share
            };
            let stop = engine.stop_signal();
            let outcome = engine.run(&phase, share).await;
            let outcome = outcome.map_err(|e| super::runner::phase_failed(&stop, e))?;
            let result = results::build::phase(&outcome, None);
            print(&report::phase_text(
                &result,
                outcome.interrupted,
                self.detail,
            ));
            let interrupted = outcome.interrupted;
            let mut judged = judge(&result, &self.phase.name, rate, self.checks).step;
            if interrupted {
                // Cut short, it neither met nor failed: the bisection does not count it.
                judged.meets = false;
                judged.interrupted = true;
                judged.reasons = vec!["interrupted (Ctrl-C) before the step's end".to_string()];
            } else {
                bisection.record(rate, judged.meets);
            }
            print(&report::search::step_line(number as usize, &judged));
            steps.push(judged);
            record.add(result.clone()).map_err(Failed::run)?;
            measured.phases.push(result);
            measured.outcomes.push(outcome);
            if interrupted {
                break Ending::Interrupted;
            }
            // A file written now is read only if the run dies before the search ends.
            measured.search = Some(self.result(&steps, &bisection, Ending::Interrupted));
            record.search.clone_from(&measured.search);
            checkpoint(outputs, record);
        };
        measured.search = Some(self.result(&steps, &bisection, ending));
        record.search.clone_from(&measured.search);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Operation, Weights};
    use std::time::Duration;

    #[test]
    fn a_step_is_the_phase_at_one_rate_for_the_steps_duration() {
        let mut phase = Phase::sample("crud", Weights::only(Operation::Read, 1));
        phase.rate = Some(Rate::ramp(1.0, 2.0));
        phase.bound.total = Some(10);
        let plan = SearchPlan {
            low: 10.0,
            high: 100.0,
            step: Duration::from_secs(3),
            most_steps: 5,
            precision: 0.05,
        };
        let step = step_phase(&phase, 31.6, &plan);
        assert_eq!(step.name, "crud@31.6");
        assert_eq!(step.rate, Some(Rate::constant(31.6)));
        assert_eq!(
            step.bound,
            CrudBound {
                per_connection: None,
                total: None,
                duration: Some(Duration::from_secs(3))
            }
        );
        assert_eq!((step.mix, step.connections), (phase.mix, phase.connections));
        assert_eq!(step_phase(&phase, 1_000.0, &plan).name, "crud@1000");
    }
}
