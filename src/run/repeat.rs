//! Repeating a run (`--runs N`), as hyperfine repeats a command: the whole scenario
//! again, each repetition on a database of its own with document ids of its own, from the
//! same seed, so that the repetitions differ only by the noise of the system measured.

use crate::scenario::Scenario;
use crate::workload::Action;

/// The most repetitions: each is a whole run on a database of its own.
pub const MOST_RUNS: u64 = 100;

/// What sets one pass of the run apart: for a plain run the run itself, for `--runs N`
/// one repetition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// From 1.
    pub index: u64,
    /// How many passes the run makes: 1 for a plain run.
    pub count: u64,
    /// The database it runs on.
    pub database: String,
    /// The prefix of its document ids.
    pub id_prefix: String,
}

impl Pass {
    /// Whether this pass is one of several repetitions, rather than a plain run.
    pub fn is_repetition(&self) -> bool {
        self.count > 1
    }

    /// The scenario as this pass runs it: a replication to a database named on the run's
    /// own server goes to one of the repetition's own (`<name>-run<N>`), so that no
    /// repetition replicates into a replica an earlier one filled. Replications to a URL
    /// are the user's to choose and stay as they are.
    pub fn scenario(&self, scenario: &Scenario) -> Scenario {
        if !self.is_repetition() {
            return scenario.clone();
        }
        let mut own = scenario.clone();
        for phase in &mut own.phases {
            if let Some(Action::Replicate { target, .. }) = &mut phase.action
                && !target.starts_with("http://")
                && !target.starts_with("https://")
            {
                *target = suffixed(target, self.index);
            }
            if let Some(replication) = &mut phase.replication {
                for replica in &mut replication.replicas {
                    *replica = suffixed(replica, self.index);
                }
            }
        }
        own
    }
}

/// `<name>-run<index>`: a repetition's database, or replica.
pub fn suffixed(name: &str, index: u64) -> String {
    format!("{name}-run{index}")
}

/// The passes of a run of `runs` repetitions (1: a plain run) on `database` with ids
/// from `id_prefix`: repetition `N` on `<database>-run<N>` with ids `<id_prefix>-r<N>-…`.
pub fn passes(database: &str, id_prefix: &str, runs: u64) -> Vec<Pass> {
    if runs <= 1 {
        return vec![Pass {
            index: 1,
            count: 1,
            database: database.to_string(),
            id_prefix: id_prefix.to_string(),
        }];
    }
    (1..=runs)
        .map(|index| Pass {
            index,
            count: runs,
            database: suffixed(database, index),
            id_prefix: format!("{id_prefix}-r{index}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::scenario::Form;
    use crate::workload::{CrudBound, KeyChoice, Phase, Weights};

    #[test]
    fn a_plain_run_is_one_pass_on_the_database_given() {
        assert_eq!(
            passes("bench", "sb1", 1),
            [Pass {
                index: 1,
                count: 1,
                database: "bench".to_string(),
                id_prefix: "sb1".to_string(),
            }]
        );
    }

    #[test]
    fn each_repetition_has_a_database_and_ids_of_its_own() {
        let all = passes("bench", "sb1", 3);
        let names: Vec<(&str, &str)> = all
            .iter()
            .map(|p| (p.database.as_str(), p.id_prefix.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("bench-run1", "sb1-r1"),
                ("bench-run2", "sb1-r2"),
                ("bench-run3", "sb1-r3")
            ]
        );
        assert!(all.iter().all(|p| p.count == 3 && p.is_repetition()));
    }

    #[test]
    fn replications_to_a_name_go_to_the_repetitions_own_replica() {
        let phase = |target: &str| Phase {
            name: target.to_string(),
            mix: Weights::default(),
            bound: CrudBound::default(),
            connections: 1,
            batch_size: 1,
            rate: None,
            keys: KeyChoice::Uniform,
            shape: Default::default(),
            action: Some(Action::Replicate {
                at: Duration::ZERO,
                target: target.to_string(),
                two_way: false,
            }),
            sweep: None,
            changes: None,
            replication: None,
            fleet: None,
            queries: Default::default(),
            indexes_during: false,
            settle: false,
        };
        let scenario = Scenario::new(
            "s",
            "",
            Form::Standard,
            vec![
                (phase("copy"), Default::default()),
                (phase("https://elsewhere/db"), Default::default()),
            ],
        );
        let targets = |s: &Scenario| -> Vec<String> {
            s.phases
                .iter()
                .map(|p| match &p.action {
                    Some(Action::Replicate { target, .. }) => target.clone(),
                    _ => String::new(),
                })
                .collect()
        };
        let second = &passes("bench", "p", 2)[1];
        assert_eq!(
            targets(&second.scenario(&scenario)),
            ["copy-run2", "https://elsewhere/db"]
        );
        let plain = &passes("bench", "p", 1)[0];
        assert_eq!(targets(&plain.scenario(&scenario)), targets(&scenario));
    }
}
