//! Which devices this client machine drives, and what each one is: its name, its
//! database, the documents it follows, when it goes offline and when it joins. Plain
//! data made once from the fleet's settings, the same on every machine for a device.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::NodeSlice;
use crate::seed;
use crate::workload::fleet::{Fleet, FleetScope};

/// Seeds of the fleet's devices derive from the run's seed under this label, apart from
/// the connections' and the documents'.
const FLEET_LABEL: u64 = 0x0066_6c65_6574; // "fleet"

/// The most own documents a device following `_doc_ids` lists (its feed request carries
/// them all).
pub const MOST_OWN_IDS: u64 = 1_000;

/// One device as this machine runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct DevicePlan {
    /// Its place among all machines' devices.
    pub index: u64,
    /// `n<node>-d<index>`: carries the machine, so that machines never collide.
    pub name: String,
    /// The run's database it replicates (an index into the run's database paths).
    pub database: usize,
    /// The ids it may create, `<prefix><name>-<k>`: its own documents.
    pub own_prefix: String,
    /// With `FleetScope::DocIds`, the most documents of its own it creates (its feed
    /// lists them, with the shared ones); past them its creates become edits.
    pub own_capacity: Option<u64>,
    /// From the phase's start until it goes offline, and until it comes back.
    pub offline: Option<(Duration, Duration)>,
    /// From the phase's start until it joins, empty, and pulls its scope.
    pub joins_at: Option<Duration>,
    pub seed: u64,
}

impl DevicePlan {
    /// Whether the device holds nothing until it joins during the phase.
    pub fn is_cold(&self) -> bool {
        self.joins_at.is_some()
    }

    /// Whether the device is offline `at` (from the phase's start).
    pub fn offline_at(&self, at: Duration) -> bool {
        self.offline
            .is_some_and(|(from, until)| from <= at && at < until)
    }

    /// The id of its `k`th own document.
    pub fn own_id(&self, k: u64) -> String {
        format!("{}{k}", self.own_prefix)
    }
}

/// The devices of all machines, in order, that this machine (`node`) runs: a
/// contiguous share, the first machines taking one more when they do not divide evenly.
pub fn share_of(devices: u64, node: NodeSlice) -> Range<u64> {
    let count = node.count.max(1);
    let (each, extra) = (devices / count, devices % count);
    let start = node.index * each + node.index.min(extra);
    let len = each + u64::from(node.index < extra);
    start..start.saturating_add(len)
}

/// Whether device `g` of `total` is among `chosen` of them spread evenly over the
/// indexes (exactly `chosen` devices are, whatever `total`).
fn spread_pick(g: u64, chosen: u64, total: u64) -> bool {
    if total == 0 || chosen == 0 {
        return false;
    }
    let chosen = u128::from(chosen.min(total));
    let (g, total) = (u128::from(g), u128::from(total));
    (g + 1) * chosen / total > g * chosen / total
}

/// The shared documents' ids: `<prefix>shared-<k>`, the same on every machine.
pub fn shared_ids(prefix: &str, count: u64) -> Arc<[String]> {
    (0..count).map(|k| format!("{prefix}shared-{k}")).collect()
}

/// The devices this machine runs, with everything about each one fixed.
pub struct Roster {
    pub devices: Vec<DevicePlan>,
    pub shared: Arc<[String]>,
}

impl Roster {
    /// The roster of `fleet` for machine `node`: ids under `prefix`, devices of
    /// `FleetScope::OwnDatabase` dealt over `databases` round robin, own-id lists sized
    /// for a phase of `duration`.
    pub fn new(
        fleet: &Fleet,
        (node, prefix, databases): (NodeSlice, &str, usize),
        duration: Option<Duration>,
        run_seed: u64,
    ) -> Roster {
        let fleet_seed = seed::derive(run_seed, FLEET_LABEL);
        let cold = fleet.cold.map_or(0, |c| c.devices);
        let offline_count = fleet.offline.map_or(0, |o| {
            fleet.devices.saturating_mul(u64::from(o.share.min(100))) / 100
        });
        let own_capacity =
            (fleet.scope != FleetScope::OwnDatabase).then(|| own_capacity(fleet, duration));
        let devices = share_of(fleet.devices, node)
            .map(|g| {
                let name = format!("n{}-d{g}", node.index);
                let is_cold = spread_pick(g, cold, fleet.devices);
                // Offline devices are picked over the indexes apart from the cold
                // ones' spread: a device may be both, and then it joins, then goes away.
                let offline = spread_pick(fleet.devices - 1 - g, offline_count, fleet.devices);
                DevicePlan {
                    index: g,
                    database: match fleet.scope {
                        FleetScope::OwnDatabase => (g % databases.max(1) as u64) as usize,
                        FleetScope::DocIds | FleetScope::Selector => 0,
                    },
                    own_prefix: format!("{prefix}{name}-"),
                    name,
                    own_capacity,
                    offline: fleet.offline.filter(|_| offline).map(|o| {
                        let until = o.from.saturating_add(o.lasting);
                        (o.from, until)
                    }),
                    joins_at: fleet.cold.filter(|_| is_cold).map(|c| c.at),
                    seed: seed::derive(fleet_seed, g),
                }
            })
            .collect();
        Roster {
            devices,
            shared: shared_ids(prefix, fleet.shared_documents),
        }
    }
}

/// How many documents of its own a device listing its ids (`_doc_ids`) may create: the
/// creates its rate and mix make over the phase, with room for chance, at least 10 and
/// at most [`MOST_OWN_IDS`]; 100 for a phase without a duration.
fn own_capacity(fleet: &Fleet, duration: Option<Duration>) -> u64 {
    let Some(duration) = duration else {
        return 100;
    };
    let creates =
        fleet.writes_per_second.max(0.0) * duration.as_secs_f64() * f64::from(fleet.mix.create)
            / 100.0;
    // Poisson's spread is about the square root of the mean: four of them is room enough.
    let room = creates + 4.0 * creates.sqrt() + 10.0;
    (room.ceil() as u64).clamp(10, MOST_OWN_IDS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fleet::{ColdJoin, Offline};

    fn node(index: u64, count: u64) -> NodeSlice {
        NodeSlice { index, count }
    }

    #[test]
    fn machines_share_the_devices_without_gaps_or_overlap() {
        for (devices, count) in [(10, 3), (3, 5), (0, 2), (100, 1), (7, 7)] {
            let mut next = 0;
            for index in 0..count {
                let mine = share_of(devices, node(index, count));
                assert_eq!(mine.start, next, "{devices} devices on {count} machines");
                next = mine.end;
            }
            assert_eq!(next, devices);
        }
    }

    #[test]
    fn exactly_the_chosen_number_is_picked_and_spread() {
        for (total, chosen) in [(10, 3), (10, 0), (10, 10), (7, 20), (1000, 333)] {
            let picked: Vec<u64> = (0..total)
                .filter(|&g| spread_pick(g, chosen, total))
                .collect();
            assert_eq!(picked.len() as u64, chosen.min(total));
        }
        // Spread: 3 of 9 are one in each third.
        let picked: Vec<u64> = (0..9).filter(|&g| spread_pick(g, 3, 9)).collect();
        assert_eq!(picked, [2, 5, 8]);
    }

    #[test]
    fn names_and_ids_carry_the_machine_and_databases_are_dealt_round_robin() {
        let fleet = Fleet {
            devices: 5,
            ..Fleet::default()
        };
        let roster = Roster::new(&fleet, (node(1, 2), "run-", 2), None, 7);
        let names: Vec<&str> = roster.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["n1-d3", "n1-d4"]);
        assert_eq!(roster.devices[0].own_id(12), "run-n1-d3-12");
        assert_eq!(
            roster
                .devices
                .iter()
                .map(|d| d.database)
                .collect::<Vec<_>>(),
            [1, 0]
        );
        assert_eq!(roster.devices[0].own_capacity, None);
        // The same device has the same seed whichever machine list it is in.
        let alone = Roster::new(&fleet, (node(0, 1), "run-", 2), None, 7);
        assert_eq!(alone.devices[3].seed, roster.devices[0].seed);
        assert_ne!(alone.devices[3].seed, alone.devices[4].seed);
    }

    #[test]
    fn offline_and_cold_devices_are_counted_as_asked() {
        let fleet = Fleet {
            devices: 20,
            scope: FleetScope::DocIds,
            shared_documents: 3,
            offline: Some(Offline {
                share: 25,
                from: Duration::from_secs(10),
                lasting: Duration::from_secs(5),
            }),
            cold: Some(ColdJoin {
                devices: 4,
                at: Duration::from_secs(3),
            }),
            ..Fleet::default()
        };
        let roster = Roster::new(
            &fleet,
            (node(0, 1), "p", 1),
            Some(Duration::from_secs(60)),
            1,
        );
        let offline: Vec<_> = roster
            .devices
            .iter()
            .filter(|d| d.offline.is_some())
            .collect();
        assert_eq!(offline.len(), 5);
        let d = offline[0];
        assert!(!d.offline_at(Duration::from_secs(9)));
        assert!(d.offline_at(Duration::from_secs(10)));
        assert!(d.offline_at(Duration::from_millis(14_999)));
        assert!(!d.offline_at(Duration::from_secs(15)));
        assert_eq!(roster.devices.iter().filter(|d| d.is_cold()).count(), 4);
        assert!(roster.devices.iter().all(|d| d.database == 0));
        assert_eq!(&*roster.shared, ["pshared-0", "pshared-1", "pshared-2"]);
        // 0.2 writes/s for 60 s, half of them creates: 6, with room.
        let capacity = roster.devices[0].own_capacity.unwrap();
        assert!((16..=30).contains(&capacity), "{capacity}");
    }

    #[test]
    fn own_capacity_is_bounded() {
        let busy = Fleet {
            writes_per_second: 1e9,
            ..Fleet::default()
        };
        assert_eq!(
            own_capacity(&busy, Some(Duration::from_secs(3600))),
            MOST_OWN_IDS
        );
        let idle = Fleet {
            writes_per_second: 0.0,
            ..Fleet::default()
        };
        assert_eq!(own_capacity(&idle, Some(Duration::from_secs(3600))), 10);
    }
}
