//! The settings a phase takes from outside itself, and where each value came from.
//!
//! Precedence, strongest first: the phase's own key, a flag the user gave, the scenario
//! file's top-level key, the defaults (the scenario's own, then the flag's). Every key is
//! decided on its own, so `--duration 30s` bounds a phase that sets only `total` too
//! (whichever comes first), and a default never overrides what a file says.

use std::fmt;
use std::time::Duration;

use crate::words::counted;
use crate::workload::changes::ChangesFeed;
use crate::workload::replication::ContinuousReplication;
use crate::workload::{
    Action, CrudBound, KeyChoice, Operation, Phase, Rate, Shape, SweepPoint, Weights,
};

/// Where a phase's setting came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The phase's own key (in a file, or fixed by a built-in scenario).
    Phase,
    /// A flag the user gave (on the command line or in a `--config` file).
    Flag(&'static str),
    /// The scenario file's top-level key.
    File,
    /// Nobody said: the scenario's or the flag's default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Phase => f.write_str("phase"),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::File => f.write_str("file"),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// The settings phases take, each one unset unless someone set it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Keys {
    pub connections: Option<u64>,
    pub batch_size: Option<u64>,
    /// Operations per connection.
    pub operations: Option<u64>,
    /// Operations of all connections together.
    pub total: Option<u64>,
    pub duration: Option<Duration>,
    /// Operations per second of all connections together (a bulk request counts one),
    /// constant or ramping over the phase's duration.
    pub rate: Option<Rate>,
}

/// The flag that gives each key.
pub const FLAGS: PerKey<&'static str> = PerKey {
    connections: "--num_connections",
    batch_size: "--num_documents_per_bulk_insert",
    operations: "--num_crud_operations",
    total: "--total-operations",
    duration: "--duration",
    rate: "--rate",
};

/// One thing per key: the flag that gives it, where a phase's value came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerKey<T> {
    pub connections: T,
    pub batch_size: T,
    pub operations: T,
    pub total: T,
    pub duration: T,
    pub rate: T,
}

/// Where each of a phase's settings came from (`None`: the phase has no such setting).
pub type Origins = PerKey<Option<Origin>>;

/// The layers under a phase's own keys.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Layers {
    /// What the user gave.
    pub given: Keys,
    /// A scenario file's top-level keys.
    pub file: Keys,
    /// The flags' defaults.
    pub default: Keys,
}

fn pick<T: Copy>(
    own: Option<T>,
    given: Option<T>,
    file: Option<T>,
    default: Option<T>,
    flag: &'static str,
) -> (Option<T>, Option<Origin>) {
    let found = own
        .map(|v| (v, Origin::Phase))
        .or(given.map(|v| (v, Origin::Flag(flag))))
        .or(file.map(|v| (v, Origin::File)))
        .or(default.map(|v| (v, Origin::Default)));
    (found.map(|(v, _)| v), found.map(|(_, o)| o))
}

/// A phase's settings, decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decided {
    pub connections: u64,
    pub batch_size: u64,
    pub bound: CrudBound,
    pub rate: Option<Rate>,
    pub origins: Origins,
}

impl Layers {
    /// The value outside any phase (for the run's config record): given, else the file's,
    /// else the default.
    pub fn value(&self) -> Keys {
        self.decide(&Keys::default(), &Keys::default()).keys()
    }

    /// A phase's settings from its own keys, the layers, and the scenario's defaults
    /// for it (`scenario`, below the user and the file, above the flags' defaults).
    pub fn decide(&self, own: &Keys, scenario: &Keys) -> Decided {
        let (g, f) = (&self.given, &self.file);
        let d = Keys {
            connections: scenario.connections.or(self.default.connections),
            batch_size: scenario.batch_size.or(self.default.batch_size),
            operations: scenario.operations.or(self.default.operations),
            total: scenario.total.or(self.default.total),
            duration: scenario.duration.or(self.default.duration),
            rate: scenario.rate.or(self.default.rate),
        };
        let connections = pick(
            own.connections,
            g.connections,
            f.connections,
            d.connections,
            FLAGS.connections,
        );
        let batch_size = pick(
            own.batch_size,
            g.batch_size,
            f.batch_size,
            d.batch_size,
            FLAGS.batch_size,
        );
        let operations = pick(
            own.operations,
            g.operations,
            f.operations,
            d.operations,
            FLAGS.operations,
        );
        let total = pick(own.total, g.total, f.total, d.total, FLAGS.total);
        let duration = pick(
            own.duration,
            g.duration,
            f.duration,
            d.duration,
            FLAGS.duration,
        );
        let rate = pick(own.rate, g.rate, f.rate, d.rate, FLAGS.rate);
        Decided {
            connections: connections.0.unwrap_or(0),
            batch_size: batch_size.0.unwrap_or(0),
            bound: CrudBound {
                per_connection: operations.0,
                total: total.0,
                duration: duration.0,
            },
            rate: rate.0,
            origins: PerKey {
                connections: connections.1,
                batch_size: batch_size.1,
                operations: operations.1,
                total: total.1,
                duration: duration.1,
                rate: rate.1,
            },
        }
    }
}

impl Decided {
    fn keys(&self) -> Keys {
        let present = |o: Option<Origin>| o.is_some();
        Keys {
            connections: present(self.origins.connections).then_some(self.connections),
            batch_size: present(self.origins.batch_size).then_some(self.batch_size),
            operations: self.bound.per_connection,
            total: self.bound.total,
            duration: self.bound.duration,
            rate: self.rate,
        }
    }
}

/// The flags the user gave that no phase takes, because every phase sets its own value
/// (or, for the batch size, because no phase bulk inserts): giving them changes nothing,
/// which the user must hear rather than find out.
pub fn flags_no_phase_takes(
    given: &Keys,
    phases: &[Phase],
    origins: &[Origins],
) -> Vec<(&'static str, &'static str)> {
    let from_flag = |o: Option<Origin>| matches!(o, Some(Origin::Flag(_)));
    let taken = |key: fn(&Origins) -> Option<Origin>, uses: fn(&Phase) -> bool| {
        phases
            .iter()
            .zip(origins)
            .any(|(phase, origins)| uses(phase) && from_flag(key(origins)))
    };
    let any = |_: &Phase| true;
    let bulk = |phase: &Phase| phase.mix[Operation::BulkInsert] > 0;
    let keys: [(bool, &str, bool); 6] = [
        (
            given.connections.is_some(),
            FLAGS.connections,
            taken(|o| o.connections, any),
        ),
        (
            given.batch_size.is_some(),
            FLAGS.batch_size,
            taken(|o| o.batch_size, bulk),
        ),
        (
            given.operations.is_some(),
            FLAGS.operations,
            taken(|o| o.operations, any),
        ),
        (given.total.is_some(), FLAGS.total, taken(|o| o.total, any)),
        (
            given.duration.is_some(),
            FLAGS.duration,
            taken(|o| o.duration, any),
        ),
        (given.rate.is_some(), FLAGS.rate, taken(|o| o.rate, any)),
    ];
    keys.into_iter()
        .filter(|(given, _, taken)| *given && !taken)
        .map(|(_, flag, _)| {
            let why = if flag == FLAGS.batch_size && !phases.iter().any(bulk) {
                "no phase of the scenario bulk inserts"
            } else {
                "every phase of the scenario sets its own"
            };
            (flag, why)
        })
        .collect()
}

/// Where a phase's settings came from, for the run's header: `connections 10 (default),
/// 200 operations in total (phase), rate 500/s (--rate)`. Batch size only matters to bulk
/// inserts, so it is left out of phases without them.
pub fn describe(phase: &Phase, origins: &Origins) -> String {
    let mut parts = Vec::new();
    let mut add = |text: String, origin: Option<Origin>| {
        if let Some(origin) = origin {
            parts.push(format!("{text} ({origin})"));
        }
    };
    add(
        format!("connections {}", phase.connections),
        origins.connections,
    );
    if phase.mix[Operation::BulkInsert] > 0 {
        add(
            format!("batch size {}", phase.batch_size),
            origins.batch_size,
        );
    }
    let bound = phase.bound;
    if let Some(n) = bound.per_connection {
        add(
            format!("{} per connection", counted(n, "operation")),
            origins.operations,
        );
    }
    if let Some(n) = bound.total {
        add(
            format!("{} in total", counted(n, "operation")),
            origins.total,
        );
    }
    if let Some(d) = bound.duration {
        add(format!("duration {d:?}"), origins.duration);
    }
    if let Some(r) = phase.rate {
        add(format!("rate {r}/s"), origins.rate);
    }
    parts.join(", ")
}

/// A phase as a scenario file or a built-in scenario writes it: its own keys, with the
/// rest left to the layers.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub mix: Weights,
    /// The phase's own keys.
    pub own: Keys,
    /// A built-in scenario's defaults for this phase.
    pub scenario: Keys,
    pub keys: KeyChoice,
    pub action: Option<Action>,
    pub sweep: Option<SweepPoint>,
    pub shape: Shape,
    pub changes: Option<ChangesFeed>,
    pub replication: Option<ContinuousReplication>,
    /// Waits for the server to settle before the phase (see [`Phase::settle`]).
    pub settle: bool,
    /// Devices replicating while the phase runs.
    pub fleet: Option<crate::workload::fleet::Fleet>,
}

impl Spec {
    /// A phase of `mix` that sets nothing else.
    pub fn new(name: impl Into<String>, mix: Weights) -> Spec {
        Spec {
            name: name.into(),
            mix,
            own: Keys::default(),
            scenario: Keys::default(),
            keys: KeyChoice::Uniform,
            action: None,
            sweep: None,
            shape: Shape::default(),
            changes: None,
            replication: None,
            fleet: None,
            settle: false,
        }
    }

    /// The phase, with every setting decided, and where each came from.
    pub fn decide(self, layers: &Layers) -> (Phase, Origins) {
        let decided = layers.decide(&self.own, &self.scenario);
        let phase = Phase {
            name: self.name,
            mix: self.mix,
            bound: decided.bound,
            connections: decided.connections,
            batch_size: decided.batch_size,
            rate: decided.rate,
            keys: self.keys,
            action: self.action,
            sweep: self.sweep,
            shape: self.shape,
            changes: self.changes,
            replication: self.replication,
            fleet: self.fleet,
            // A scenario file sets them once its queries are read.
            queries: Default::default(),
            indexes_during: false,
            settle: self.settle,
        };
        (phase, decided.origins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers() -> Layers {
        Layers {
            given: Keys {
                rate: Some(Rate::constant(500.0)),
                ..Keys::default()
            },
            file: Keys {
                rate: Some(Rate::constant(50.0)),
                connections: Some(4),
                ..Keys::default()
            },
            default: Keys {
                connections: Some(10),
                batch_size: Some(1000),
                ..Keys::default()
            },
        }
    }

    #[test]
    fn each_key_takes_the_strongest_layer_that_sets_it() {
        let own = Keys {
            batch_size: Some(7),
            ..Keys::default()
        };
        let decided = layers().decide(&own, &Keys::default());
        assert_eq!(decided.batch_size, 7);
        assert_eq!(decided.origins.batch_size, Some(Origin::Phase));
        assert_eq!(decided.rate, Some(Rate::constant(500.0)));
        assert_eq!(decided.origins.rate, Some(Origin::Flag("--rate")));
        assert_eq!(decided.connections, 4);
        assert_eq!(decided.origins.connections, Some(Origin::File));
        assert_eq!(decided.bound.duration, None);
        assert_eq!(decided.origins.duration, None);
    }

    #[test]
    fn a_scenario_default_gives_way_to_the_user_and_the_file_only() {
        let scenario = Keys {
            connections: Some(2),
            duration: Some(Duration::from_secs(5)),
            ..Keys::default()
        };
        let mut layers = layers();
        let decided = layers.decide(&Keys::default(), &scenario);
        assert_eq!(decided.connections, 4, "the file's key");
        assert_eq!(decided.bound.duration, Some(Duration::from_secs(5)));
        assert_eq!(decided.origins.duration, Some(Origin::Default));
        layers.file.connections = None;
        let decided = layers.decide(&Keys::default(), &scenario);
        assert_eq!(
            decided.connections, 2,
            "the scenario's over the flag's default"
        );
        assert_eq!(layers.value().connections, Some(10));
        assert_eq!(layers.value().rate, Some(Rate::constant(500.0)));
    }

    #[test]
    fn the_header_names_each_origin() {
        let spec = Spec {
            own: Keys {
                total: Some(200),
                ..Keys::default()
            },
            ..Spec::new("load", Weights::default())
        };
        let (phase, origins) = spec.decide(&layers());
        assert_eq!(
            describe(&phase, &origins),
            "connections 4 (file), 200 operations in total (phase), rate 500/s (--rate)"
        );
    }

    #[test]
    fn a_flag_no_phase_takes_is_named_with_the_reason() {
        let mut given = layers();
        given.given.total = Some(99);
        given.given.batch_size = Some(3);
        let reads = Weights::only(Operation::Read, 1);
        let mut own_total = Spec::new("reads", reads);
        own_total.own.total = Some(10);
        let mut no_own = Spec::new("more", reads);
        no_own.own.rate = Some(Rate::constant(5.0));
        let (a, oa) = own_total.decide(&given);
        let (b, ob) = no_own.decide(&given);
        let unused = flags_no_phase_takes(&given.given, &[a.clone(), b.clone()], &[oa, ob]);
        // The total reaches the second phase; the rate reaches the first; nobody bulk inserts.
        assert_eq!(
            unused,
            [(
                "--num_documents_per_bulk_insert",
                "no phase of the scenario bulk inserts"
            )]
        );
        let unused = flags_no_phase_takes(&given.given, &[a], &[oa]);
        assert_eq!(unused.len(), 2, "{unused:?}");
        assert!(unused.contains(&(
            "--total-operations",
            "every phase of the scenario sets its own"
        )));
    }
}
