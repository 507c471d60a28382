//! A phase's `_changes` consumers, as the user asks for them: how many, which feed, and
//! what each request asks the server for. Plain data; the engine follows the feeds.

use std::fmt;
use std::time::Duration;

/// The most consumers a phase may have: each one's sightings are one bit of a word.
pub const MAX_CONSUMERS: u64 = 64;

/// The heartbeats a phase may ask for: CouchDB sends a newline every `heartbeat` ms.
pub const HEARTBEAT_RANGE: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(60));

/// The longest grace a phase may give its writes to appear on the feeds.
pub const MAX_GRACE: Duration = Duration::from_secs(3600);

/// How a consumer reads the feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedKind {
    /// One endless answer, a line per change.
    Continuous,
    /// One answer per batch of changes, held by the server until there is one.
    Longpoll,
    /// One answer per request, at once; asked again when the last one was empty after a
    /// short pause ([`NORMAL_PAUSE`]).
    Normal,
}

/// How long a `normal` consumer waits after an answer without changes before asking again.
pub const NORMAL_PAUSE: Duration = Duration::from_millis(50);

impl FeedKind {
    pub const NAMES: [&'static str; 3] = ["continuous", "longpoll", "normal"];

    pub fn parse(text: &str) -> Result<FeedKind, String> {
        match text {
            "continuous" => Ok(FeedKind::Continuous),
            "longpoll" => Ok(FeedKind::Longpoll),
            "normal" => Ok(FeedKind::Normal),
            other => Err(format!(
                "{other:?} is not a feed kind; use {}",
                FeedKind::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FeedKind::Continuous => "continuous",
            FeedKind::Longpoll => "longpoll",
            FeedKind::Normal => "normal",
        }
    }
}

impl fmt::Display for FeedKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `_changes` consumers of one phase, over the run's database.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangesFeed {
    pub consumers: u64,
    pub feed: FeedKind,
    pub include_docs: bool,
    /// A Mango selector (JSON text of an object): the feed is asked with
    /// `filter=_selector`, and only matching changes come.
    pub selector: Option<String>,
    pub heartbeat: Duration,
    /// How long after the phase's operations end the consumers keep reading for writes
    /// not yet seen; those still unseen then are counted as missing.
    pub grace: Duration,
}

impl ChangesFeed {
    /// What a phase gets when only the number of consumers is given.
    pub fn with_consumers(consumers: u64) -> ChangesFeed {
        ChangesFeed {
            consumers,
            feed: FeedKind::Continuous,
            include_docs: false,
            selector: None,
            heartbeat: Duration::from_secs(1),
            grace: Duration::from_secs(5),
        }
    }

    /// Every problem of the settings, each naming the setting (as `names` spells them:
    /// a flag or a scenario key) and the fix.
    pub fn problems(&self, names: &SettingNames) -> Vec<String> {
        let mut problems = Vec::new();
        if self.consumers == 0 || self.consumers > MAX_CONSUMERS {
            problems.push(format!(
                "{} {}: give from 1 to {MAX_CONSUMERS} consumers",
                names.consumers, self.consumers
            ));
        }
        let (low, high) = HEARTBEAT_RANGE;
        if self.heartbeat < low || self.heartbeat > high {
            problems.push(format!(
                "{} {:?}: give a heartbeat from {low:?} to {high:?}",
                names.heartbeat, self.heartbeat
            ));
        }
        if self.grace > MAX_GRACE {
            problems.push(format!(
                "{} {:?}: give a grace of at most {MAX_GRACE:?}",
                names.grace, self.grace
            ));
        }
        if let Some(selector) = &self.selector
            && let Err(e) = check_selector(selector)
        {
            problems.push(format!("{} {selector:?}: {e}", names.selector));
        }
        problems
    }
}

/// How the user spells each setting, for the messages.
pub struct SettingNames {
    pub consumers: &'static str,
    pub heartbeat: &'static str,
    pub grace: &'static str,
    pub selector: &'static str,
}

/// The flags' spelling.
pub const FLAG_NAMES: SettingNames = SettingNames {
    consumers: "--changes-consumers",
    heartbeat: "--changes-heartbeat",
    grace: "--changes-grace",
    selector: "--changes-selector",
};

/// A scenario file's spelling (keys of a phase's `changes` table).
pub const KEY_NAMES: SettingNames = SettingNames {
    consumers: "changes.consumers",
    heartbeat: "changes.heartbeat",
    grace: "changes.grace",
    selector: "changes.selector",
};

/// A selector must be a JSON object: the server refuses anything else with a 400 on
/// every request, which would leave the consumers reconnecting all phase long.
pub fn check_selector(text: &str) -> Result<(), String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err("a selector is a JSON object, e.g. {\"type\":\"user\"}".to_string()),
        Err(e) => Err(format!("not JSON ({e}); write a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_setting_is_named() {
        let mut feed = ChangesFeed::with_consumers(0);
        feed.heartbeat = Duration::from_millis(5);
        feed.grace = Duration::from_secs(7200);
        feed.selector = Some("[1]".to_string());
        let problems = feed.problems(&FLAG_NAMES);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].starts_with("--changes-consumers 0"));
        assert!(problems[1].starts_with("--changes-heartbeat"));
        assert!(problems[2].starts_with("--changes-grace"));
        assert!(problems[3].contains("JSON object"));
        assert!(
            ChangesFeed::with_consumers(3)
                .problems(&KEY_NAMES)
                .is_empty()
        );
    }

    #[test]
    fn feed_kinds_read_their_names() {
        for name in FeedKind::NAMES {
            assert_eq!(FeedKind::parse(name).unwrap().name(), name);
        }
        assert!(
            FeedKind::parse("eventsource")
                .unwrap_err()
                .contains("continuous")
        );
    }
}
