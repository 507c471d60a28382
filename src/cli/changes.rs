//! The `_changes` consumer flags of `sofabench run`, and how they reach the phases.
//!
//! `--changes-consumers N` gives every phase without consumers of its own N of them.
//! A built-in scenario's consumers take every flag given; a scenario file's phase with
//! its own `changes` table keeps it whole (a phase's own keys beat the flags).

use std::time::Duration;

use clap::Args;

use super::choices::{Choices, FEED_KINDS};
use crate::scenario::Scenario;
use crate::time::duration;
use crate::workload::changes::{
    ChangesFeed, FLAG_NAMES, FeedKind, HEARTBEAT_RANGE, MAX_CONSUMERS, MAX_GRACE, check_selector,
};

#[derive(Args, Debug, Default, Clone)]
pub struct ChangesArgs {
    /// Follow _changes with N consumers in every phase
    ///
    /// 1 to 64; the report gives change latency: from each write's answer to its
    /// sighting.
    #[arg(long = "changes-consumers", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_CONSUMERS))]
    pub consumers: Option<u64>,

    /// The feed the consumers read
    ///
    /// Continuous by default.
    #[arg(long = "changes-feed", value_name = "KIND", value_parser = Choices::new(FeedKind::parse, &FEED_KINDS), hide_short_help = true)]
    pub feed: Option<FeedKind>,

    /// The consumers ask for each change's document too (include_docs=true)
    #[arg(long = "changes-include-docs", hide_short_help = true)]
    pub include_docs: bool,

    /// Only changes of documents matching a Mango selector
    ///
    /// A JSON object, sent with filter=_selector.
    #[arg(long = "changes-selector", value_name = "JSON", value_parser = selector, hide_short_help = true)]
    pub selector: Option<String>,

    /// The feed's heartbeat or longest wait
    ///
    /// Heartbeat (continuous) or longest wait (longpoll), 100ms to 60s; default 1s. No
    /// byte for twice as long and a second counts as a stall.
    #[arg(long = "changes-heartbeat", value_name = "TIME", value_parser = heartbeat, hide_short_help = true)]
    pub heartbeat: Option<Duration>,

    /// How long consumers read after a phase's operations
    ///
    /// They keep reading for writes not yet seen, which are then counted as missing;
    /// default 5s.
    #[arg(long = "changes-grace", value_name = "TIME", value_parser = grace, hide_short_help = true)]
    pub grace: Option<Duration>,
}

fn selector(text: &str) -> Result<String, String> {
    check_selector(text)?;
    Ok(text.to_string())
}

fn heartbeat(text: &str) -> Result<Duration, String> {
    let value = duration::parse(text)?;
    let (low, high) = HEARTBEAT_RANGE;
    if value < low || value > high {
        return Err(format!(
            "{text:?} is not a heartbeat from {low:?} to {high:?}; give e.g. --changes-heartbeat 1s"
        ));
    }
    Ok(value)
}

fn grace(text: &str) -> Result<Duration, String> {
    let value = duration::parse(text)?;
    if value > MAX_GRACE {
        return Err(format!(
            "{text:?} is longer than {MAX_GRACE:?}; give e.g. --changes-grace 5s"
        ));
    }
    Ok(value)
}

impl ChangesArgs {
    /// `base` with every setting the flags gave in its place.
    fn over(&self, base: ChangesFeed) -> ChangesFeed {
        ChangesFeed {
            consumers: self.consumers.unwrap_or(base.consumers),
            feed: self.feed.unwrap_or(base.feed),
            include_docs: self.include_docs || base.include_docs,
            selector: self.selector.clone().or(base.selector),
            heartbeat: self.heartbeat.unwrap_or(base.heartbeat),
            grace: self.grace.unwrap_or(base.grace),
        }
    }

    /// The flags given besides `--changes-consumers`.
    fn settings_given(&self) -> Vec<&'static str> {
        let given = [
            (self.feed.is_some(), "--changes-feed"),
            (self.include_docs, "--changes-include-docs"),
            (self.selector.is_some(), FLAG_NAMES.selector),
            (self.heartbeat.is_some(), FLAG_NAMES.heartbeat),
            (self.grace.is_some(), FLAG_NAMES.grace),
        ];
        given
            .into_iter()
            .filter_map(|(is, flag)| is.then_some(flag))
            .collect()
    }

    /// Gives the scenario's phases their consumers; refuses settings no phase takes, and
    /// With several client machines the first runs the consumers (see `RunSettings`).
    pub fn apply(&self, scenario: &mut Scenario, builtin: bool) -> Result<(), String> {
        for phase in &mut scenario.phases {
            phase.changes = match phase.changes.take() {
                Some(own) if builtin => Some(self.over(own)),
                Some(own) => Some(own),
                None => self
                    .consumers
                    .map(|n| self.over(ChangesFeed::with_consumers(n))),
            };
        }
        let followed = scenario.phases.iter().any(|p| p.changes.is_some());
        let given = self.settings_given();
        if !followed && !given.is_empty() {
            return Err(format!(
                "{} set the changes consumers, and no phase has any: give --changes-consumers N too (or --scenario changes)",
                given.join(", ")
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Form;
    use crate::workload::{Operation, Phase, Weights};

    fn scenario(phases: Vec<Phase>) -> Scenario {
        let planned = phases
            .into_iter()
            .map(|p| (p, Default::default()))
            .collect();
        Scenario::new("s", "", Form::Standard, planned)
    }

    #[test]
    fn flags_reach_phases_as_the_precedence_says() {
        let args = ChangesArgs {
            consumers: Some(3),
            feed: Some(FeedKind::Longpoll),
            ..ChangesArgs::default()
        };
        let mut own = Phase::sample("own", Weights::only(Operation::Create, 1));
        own.changes = Some(ChangesFeed::with_consumers(1));
        let bare = Phase::sample("bare", Weights::only(Operation::Create, 1));
        let mut file = scenario(vec![own.clone(), bare.clone()]);
        args.apply(&mut file, false).unwrap();
        assert_eq!(file.phases[0].changes, Some(ChangesFeed::with_consumers(1)));
        let flagged = file.phases[1].changes.as_ref().unwrap();
        assert_eq!((flagged.consumers, flagged.feed), (3, FeedKind::Longpoll));
        let mut built_in = scenario(vec![own]);
        args.apply(&mut built_in, true).unwrap();
        assert_eq!(built_in.phases[0].changes.as_ref().unwrap().consumers, 3);
    }

    #[test]
    fn settings_without_consumers_are_refused() {
        let args = ChangesArgs {
            include_docs: true,
            ..ChangesArgs::default()
        };
        let bare = Phase::sample("bare", Weights::only(Operation::Create, 1));
        let error = args.apply(&mut scenario(vec![bare]), false);
        assert!(error.unwrap_err().contains("--changes-include-docs"));
    }

    #[test]
    fn bad_values_are_named() {
        assert!(
            heartbeat("10ms")
                .unwrap_err()
                .contains("--changes-heartbeat")
        );
        assert!(grace("2h").unwrap_err().contains("--changes-grace"));
        assert!(selector("{\"a\":").unwrap_err().contains("JSON"));
        assert_eq!(heartbeat("2s").unwrap(), Duration::from_secs(2));
    }
}
