//! What the devices of a phase on this machine share: the settings, the figures, when
//! the phase started and whether its writes have stopped, who watches whose writes, and
//! the leaves of the shared documents this machine's pushes made (where a push that
//! made a branch, a conflict, is seen).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::figures::Figures;
use super::roster::DevicePlan;
use crate::engine::stop::Signal;
use crate::workload::fleet::{Fleet, FleetScope};
use crate::workload::rev::Rev;

/// Each shared document's leaves, by database and id.
type Leaves = HashMap<(u32, Box<str>), Vec<Rev>>;

/// The most leaves kept of one shared document: past it every push counts as a branch.
const MOST_LEAVES: usize = 1_000;

pub struct Context {
    pub fleet: Fleet,
    pub figures: Arc<Figures>,
    /// The phase's start, set as the devices start the phase.
    started: OnceLock<Instant>,
    /// Raised when the phase's writes stop (its operations ended, or Ctrl-C).
    pub ended: Signal,
    pub shared: Arc<[String]>,
    /// Warm devices (not joining cold) of this machine, per database, and in all.
    warm_per_database: Vec<u32>,
    warm: u32,
    /// The leaves each shared document has from this machine's pushes, per database.
    leaves: Mutex<Leaves>,
}

impl Context {
    pub fn new(
        fleet: Fleet,
        figures: Arc<Figures>,
        (plans, shared, databases): (&[DevicePlan], Arc<[String]>, usize),
    ) -> Context {
        let mut warm_per_database = vec![0u32; databases.max(1)];
        for plan in plans.iter().filter(|p| !p.is_cold()) {
            if let Some(count) = warm_per_database.get_mut(plan.database) {
                *count = count.saturating_add(1);
            }
        }
        let warm = plans.iter().filter(|p| !p.is_cold()).count() as u32;
        Context {
            fleet,
            figures,
            started: OnceLock::new(),
            ended: Signal::default(),
            shared,
            warm_per_database,
            warm,
            leaves: Mutex::new(HashMap::new()),
        }
    }

    /// Marks the phase's start (once; later calls change nothing).
    pub fn start(&self, at: Instant) {
        let _ = self.started.set(at);
    }

    pub fn started(&self) -> Instant {
        *self.started.get_or_init(Instant::now)
    }

    /// Time since the phase's start.
    pub fn elapsed(&self) -> Duration {
        self.started().elapsed()
    }

    /// The moment `after` the phase's start (far ahead when that cannot be told).
    pub fn at(&self, after: Duration) -> tokio::time::Instant {
        let start = tokio::time::Instant::from_std(self.started());
        start
            .checked_add(after)
            .unwrap_or_else(|| start + Duration::from_secs(86_400 * 365))
    }

    /// How many other warm devices of this machine follow a write of `plan`'s device
    /// (of a shared document, or of its own).
    pub fn watchers(&self, plan: &DevicePlan, shared: bool) -> u32 {
        let me = u32::from(!plan.is_cold());
        match self.fleet.scope {
            FleetScope::OwnDatabase => self
                .warm_per_database
                .get(plan.database)
                .map_or(0, |n| n.saturating_sub(me)),
            FleetScope::DocIds | FleetScope::Selector if shared => self.warm.saturating_sub(me),
            FleetScope::DocIds | FleetScope::Selector => 0,
        }
    }

    /// The seeded revision of every shared document of `database`: their first leaves.
    pub fn seeded(&self, database: u32, revs: impl Iterator<Item = (Box<str>, Rev)>) {
        let mut leaves = self.leaves.lock().unwrap_or_else(|p| p.into_inner());
        for (id, rev) in revs {
            leaves.insert((database, id), vec![rev]);
        }
    }

    /// A push took `rev` of shared document `id`, edits made on `base`: true when that
    /// made a branch (`base` was no longer a leaf, so the server now holds one more).
    pub fn pushed_shared(&self, database: u32, id: &str, base: &Rev, rev: &Rev) -> bool {
        let mut leaves = self.leaves.lock().unwrap_or_else(|p| p.into_inner());
        let known = leaves.entry((database, id.into())).or_default();
        match known.iter().position(|leaf| leaf == base) {
            Some(at) => {
                known[at] = rev.clone();
                false
            }
            None => {
                if known.len() < MOST_LEAVES {
                    known.push(rev.clone());
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NodeSlice;
    use crate::fleet::roster::Roster;
    use crate::fleet::visible::VisibleTable;
    use crate::workload::fleet::ColdJoin;

    fn context(scope: FleetScope) -> (Context, Vec<DevicePlan>) {
        let fleet = Fleet {
            devices: 6,
            scope,
            shared_documents: 2,
            cold: Some(ColdJoin {
                devices: 2,
                at: Duration::from_secs(1),
            }),
            ..Fleet::default()
        };
        let roster = Roster::new(&fleet, (NodeSlice::default(), "p", 2), None, 1);
        let figures = Arc::new(Figures::new(100, VisibleTable::new(10)));
        let ctx = Context::new(fleet, figures, (&roster.devices, roster.shared.clone(), 2));
        (ctx, roster.devices)
    }

    #[test]
    fn watchers_are_the_other_warm_devices_that_follow_the_document() {
        let (ctx, plans) = context(FleetScope::OwnDatabase);
        // 6 devices over 2 databases, 2 of them cold (devices 2 and 5: one per database).
        let cold: Vec<u64> = plans
            .iter()
            .filter(|p| p.is_cold())
            .map(|p| p.index)
            .collect();
        assert_eq!(cold, [2, 5]);
        assert_eq!(ctx.watchers(&plans[0], false), 1);
        assert_eq!(ctx.watchers(&plans[2], false), 2);
        let (ctx, plans) = context(FleetScope::DocIds);
        assert_eq!(ctx.watchers(&plans[0], false), 0);
        assert_eq!(ctx.watchers(&plans[0], true), 3);
        assert_eq!(ctx.watchers(&plans[5], true), 4);
    }

    #[test]
    fn a_push_on_a_leaf_extends_it_and_one_on_an_inner_revision_branches() {
        let (ctx, _) = context(FleetScope::DocIds);
        let rev = |t: &str| Rev::parse(t).unwrap();
        ctx.seeded(0, [(Box::from("s"), rev("1-a"))].into_iter());
        // Two devices edit 1-a: the first push extends it, the second branches.
        assert!(!ctx.pushed_shared(0, "s", &rev("1-a"), &rev("2-b")));
        assert!(ctx.pushed_shared(0, "s", &rev("1-a"), &rev("2-c")));
        // Each branch extended on its own leaf: no more branches.
        assert!(!ctx.pushed_shared(0, "s", &rev("2-c"), &rev("3-d")));
        assert!(!ctx.pushed_shared(0, "s", &rev("2-b"), &rev("5-e")));
        // Another database's document of the same id is another document.
        assert!(ctx.pushed_shared(1, "s", &rev("1-a"), &rev("2-f")));
    }
}
