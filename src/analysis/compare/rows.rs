//! The figures `compare` shows, as plain data: for each phase, each operation's measures
//! with their values per side (a side's repetitions), before anything is judged.

use super::super::measure::{self, Measure};
use super::super::repetitions::samples;
use crate::results::{PhaseResult, RunResult};

/// One measure of one operation of a phase: a row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub phase: String,
    pub operation: String,
    pub measure: Measure,
    /// Per side (the baseline first), the value of each repetition; empty where a side
    /// has no such figure.
    pub values: Vec<Vec<f64>>,
}

impl Row {
    /// `crud.read.p99`: what `--judge` names it by.
    pub fn name(&self) -> String {
        format!("{}.{}.{}", self.phase, self.operation, self.measure.name())
    }
}

/// The logins of a phase, per side: each repetition's count, and the mean login time of
/// those that logged in.
#[derive(Clone, Debug, Default)]
pub struct Logins {
    pub counts: Vec<Vec<f64>>,
    pub means: Vec<Vec<f64>>,
}

/// A phase as the sides ran it.
#[derive(Clone, Debug)]
pub struct Phase {
    pub name: String,
    /// Which sides ran it.
    pub present: Vec<bool>,
    pub rows: Vec<Row>,
    /// `None` when no side logged in.
    pub logins: Option<Logins>,
}

/// The phases of all sides by name, in the order they first appear (the baseline's
/// first).
pub fn phases(sides: &[&RunResult]) -> Vec<Phase> {
    let samples: Vec<Vec<(&str, Vec<&PhaseResult>)>> = sides.iter().map(|r| samples(r)).collect();
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in samples.iter().flatten() {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let found: Vec<Vec<&PhaseResult>> = samples
                .iter()
                .map(|side| {
                    side.iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, phases)| phases.clone())
                        .unwrap_or_default()
                })
                .collect();
            phase(name, &found)
        })
        .collect()
}

fn phase(name: &str, sides: &[Vec<&PhaseResult>]) -> Phase {
    let operations = measure::operations(sides.iter().flatten().copied());
    let rows = operations
        .iter()
        .flat_map(|operation| {
            Measure::ALL
                .into_iter()
                .filter(|m| m.applies_to(operation))
                .map(|measure| Row {
                    phase: name.to_string(),
                    operation: operation.to_string(),
                    measure,
                    values: sides
                        .iter()
                        .map(|phases| measure.values(phases, operation))
                        .collect(),
                })
        })
        .collect();
    Phase {
        name: name.to_string(),
        present: sides.iter().map(|phases| !phases.is_empty()).collect(),
        rows,
        logins: logins(sides),
    }
}

fn logins(sides: &[Vec<&PhaseResult>]) -> Option<Logins> {
    let any = sides.iter().flatten().any(|p| p.logins.is_some());
    any.then(|| Logins {
        counts: sides
            .iter()
            .map(|phases| {
                let count = |p: &&PhaseResult| p.logins.as_ref().map_or(0.0, |l| l.count as f64);
                phases.iter().map(count).collect()
            })
            .collect(),
        means: sides
            .iter()
            .map(|phases| {
                let logins = phases.iter().filter_map(|p| p.logins.as_ref());
                logins.map(|l| l.latency.mean_ms).collect()
            })
            .collect(),
    })
}
