//! Iron Cushion's two-step workload: how much each connection does, and the rules that
//! make it possible at all.

use std::time::Duration;

use super::operation::Operation;
use super::per_operation::PerOperation;
use super::phase::{KeyChoice, Phase, Shape};
use super::rate::Rate;

/// The relative weights of the operations in a mix (`--create_weight` …; `bulk_insert`
/// in scenario phases).
pub type Weights = PerOperation<u64>;

/// How many of each operation one connection performs.
pub type Counts = PerOperation<u64>;

impl PerOperation<u64> {
    /// Splits `n` operations by these weights: each operation gets its exact share rounded
    /// down, and the few left over go to the largest remainders (ties to the earlier
    /// operation), so the counts always add up to `n`.
    pub fn split(&self, n: u64) -> Counts {
        let total_weight = self.total() as u128;
        if total_weight == 0 || n == 0 {
            return Counts::default();
        }
        let exact = self.map(|_, &w| n as u128 * w as u128);
        let mut counts = exact.map(|_, &e| (e / total_weight) as u64);
        let mut left = n - counts.total();
        let mut by_remainder: Vec<Operation> = Operation::ALL.to_vec();
        by_remainder.sort_by_key(|&op| std::cmp::Reverse(exact[op] % total_weight));
        for op in by_remainder {
            if left == 0 {
                break;
            }
            counts[op] += 1;
            left -= 1;
        }
        counts
    }
}

/// A mix of `read_percent` reads and the rest creates (the titan load test's writes).
pub fn reads_and_creates(read_percent: u64) -> Weights {
    let mut mix = Weights::only(Operation::Read, read_percent);
    mix[Operation::Create] = 100 - read_percent;
    mix
}

/// What ends the CRUD step: a count per connection, a total count shared by the
/// connections, a duration, or several of them (whichever comes first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrudBound {
    pub per_connection: Option<u64>,
    pub total: Option<u64>,
    pub duration: Option<Duration>,
}

/// The whole of an Iron Cushion run, with its counts per connection as its flags define them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub connections: u64,
    pub documents_per_bulk_insert: u64,
    pub bulk_inserts_per_connection: u64,
    pub crud: CrudBound,
    pub weights: Weights,
    /// Where operations find their documents: with `--hot-docs` or existing data some
    /// need no document (nor a revision) of the connection's own.
    pub targets: super::Targets,
}

impl Plan {
    /// Documents one connection inserts in the bulk insert step.
    pub fn bulk_documents_per_connection(&self) -> u64 {
        self.documents_per_bulk_insert * self.bulk_inserts_per_connection
    }

    /// Documents all connections insert in the bulk insert step.
    pub fn bulk_documents(&self) -> u64 {
        self.bulk_documents_per_connection() * self.connections
    }

    /// True unless a bound of 0 operations skips the CRUD step.
    pub fn has_crud_step(&self) -> bool {
        let b = self.crud;
        b.per_connection != Some(0)
            && b.total != Some(0)
            && (b.per_connection.is_some() || b.total.is_some() || b.duration.is_some())
    }

    /// The CRUD operations of connection `c` by kind, when counted.
    pub fn crud_counts(&self, connection: u64) -> Option<Counts> {
        self.crud_phase(None).counts_of(connection)
    }

    /// Iron Cushion's two steps as phases (`bulk_insert`, then `crud`), leaving out a step
    /// with nothing to do. `rate` paces the CRUD step (open model).
    pub fn phases(&self, rate: Option<Rate>) -> Vec<Phase> {
        let bulk = Phase {
            name: "bulk_insert".to_string(),
            mix: Weights::only(Operation::BulkInsert, 1),
            bound: CrudBound {
                per_connection: Some(self.bulk_inserts_per_connection),
                ..CrudBound::default()
            },
            connections: self.connections,
            batch_size: self.documents_per_bulk_insert,
            rate: None,
            keys: KeyChoice::Uniform,
            action: None,
            sweep: None,
            shape: Shape::default(),
            changes: None,
            replication: None,
            fleet: None,
            queries: Default::default(),
            indexes_during: false,
            settle: false,
        };
        [bulk, self.crud_phase(rate)]
            .into_iter()
            .filter(Phase::has_work)
            .collect()
    }

    /// Iron Cushion's CRUD step as a phase.
    fn crud_phase(&self, rate: Option<Rate>) -> Phase {
        Phase {
            name: "crud".to_string(),
            mix: {
                let mut mix = self.weights;
                mix[Operation::BulkInsert] = 0;
                mix
            },
            bound: self.crud,
            connections: self.connections,
            batch_size: self.documents_per_bulk_insert,
            rate,
            keys: KeyChoice::Uniform,
            action: None,
            sweep: None,
            shape: Shape::default(),
            changes: None,
            replication: None,
            fleet: None,
            queries: Default::default(),
            indexes_during: false,
            settle: false,
        }
    }

    /// Checks Iron Cushion's rules, and the few more that keep a run from asking for the
    /// impossible. Every broken rule is reported, each with what to change.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let w = |op: Operation| self.weights[op];
        let (create, read, update, delete) = (
            w(Operation::Create),
            w(Operation::Read),
            w(Operation::Update),
            w(Operation::Delete),
        );
        let own = |op: Operation| self.targets.needs_known(op);
        if self.connections == 0 {
            problems.push("--num_connections=0: a run needs at least one connection; set --num_connections to 1 or more".to_string());
        }
        if self.bulk_inserts_per_connection > 0 && self.documents_per_bulk_insert == 0 {
            problems.push(format!(
                "--num_documents_per_bulk_insert=0 with --num_bulk_insert_operations={}: every bulk insert would be empty; give --num_documents_per_bulk_insert=1 or more, or --num_bulk_insert_operations=0 to skip the bulk insert step",
                self.bulk_inserts_per_connection
            ));
        }
        if self.has_crud_step() && self.weights.total() == 0 {
            problems.push(
                "the CRUD step has operations to do but all its weights are 0; give at least one of --create_weight, --read_weight, --update_weight, --delete_weight, --attachment_write_weight a value above 0, or set --num_crud_operations=0 to skip the CRUD step".to_string(),
            );
        }
        if create + read < delete && own(Operation::Delete) {
            problems.push(format!(
                "--delete_weight={delete} is larger than --create_weight + --read_weight = {create} + {read} = {}: every delete needs a _rev learned from an earlier create or read; raise --create_weight or --read_weight, or lower --delete_weight",
                create + read
            ));
        }
        if update > 0 && create + read == 0 && own(Operation::Update) {
            problems.push(format!(
                "--update_weight={update} needs --create_weight + --read_weight above 0: an update needs a _rev learned from a create or a read; raise --create_weight or --read_weight"
            ));
        }
        let counted = (0..self.connections).try_fold(Counts::default(), |mut sum, c| {
            sum.add(&self.crud_counts(c)?);
            Some(sum)
        });
        // A run bounded only by time has no counts: it reads, updates and deletes while
        // documents remain.
        let counts = counted.unwrap_or_else(|| {
            let mut counts = self.weights;
            counts[Operation::Delete] = 0;
            counts
        });
        let available = self.bulk_documents() + counts[Operation::Create];
        let own_count = |op: Operation| if own(op) { counts[op] } else { 0 };
        let needing = own_count(Operation::Read)
            + own_count(Operation::Update)
            + own_count(Operation::Delete)
            + counts[Operation::AttachmentWrite];
        if own_count(Operation::Delete) > available {
            problems.push(format!(
                "the CRUD step would delete {} documents but only {available} exist ({} bulk inserted + {} created); bulk insert more documents (--num_bulk_insert_operations, --num_documents_per_bulk_insert), increase --create_weight, or decrease --delete_weight",
                counts[Operation::Delete],
                self.bulk_documents(),
                counts[Operation::Create]
            ));
        } else if self.has_crud_step() && available == 0 && needing > 0 {
            problems.push(
                "the CRUD step reads, updates or attaches to documents but none exist (no bulk inserts, --create_weight=0); bulk insert documents first or give --create_weight a value above 0"
                    .to_string(),
            );
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights or counts of create, read, update and delete.
    fn crud(n: [u64; 4]) -> Counts {
        let mut table = Counts::default();
        for (op, n) in Operation::CRUD.into_iter().zip(n) {
            table[op] = n;
        }
        table
    }

    fn plan(bulk: (u64, u64), crud_operations: u64, w: [u64; 4]) -> Plan {
        Plan {
            connections: 2,
            documents_per_bulk_insert: bulk.0,
            bulk_inserts_per_connection: bulk.1,
            crud: CrudBound {
                per_connection: Some(crud_operations),
                ..CrudBound::default()
            },
            weights: crud(w),
            targets: crate::workload::Targets::Own,
        }
    }

    #[test]
    fn readme_example_splits_exactly() {
        let counts = plan((1000, 20), 10_000, [2, 3, 2, 1])
            .crud_counts(0)
            .unwrap();
        assert_eq!(counts, crud([2500, 3750, 2500, 1250]));
    }

    #[test]
    fn leftovers_go_to_largest_remainders_and_counts_add_up() {
        for n in 0..50 {
            let counts = plan((1, 1), n, [1, 1, 1, 0]).weights.split(n);
            assert_eq!(counts.total(), n);
            let [create, read, update, delete] = Operation::CRUD.map(|op| counts[op]);
            assert_eq!(delete, 0);
            assert!(create >= read && read >= update);
            assert!(create - update <= 1);
        }
    }

    #[test]
    fn readme_rules_are_enforced() {
        let err = plan((10, 1), 100, [1, 1, 0, 3]).validate().unwrap_err();
        assert!(
            err[0].contains("--delete_weight=3") && err[0].contains("= 2"),
            "{err:?}"
        );
        let err = plan((10, 1), 100, [0, 0, 1, 0]).validate().unwrap_err();
        assert!(
            err.iter().any(|e| e.contains("--update_weight=1")),
            "{err:?}"
        );
        // 2 connections x 50 deletes > 2 x 10 bulk + 2 x 25 created.
        let err = plan((10, 1), 100, [1, 1, 0, 2]).validate().unwrap_err();
        assert!(
            err[0].contains("delete 100 documents but only 70"),
            "{err:?}"
        );
    }

    #[test]
    fn attachment_writes_need_documents() {
        // Attachments go on documents: with none stored, the step could only fail.
        let mut p = plan((0, 0), 100, [0, 0, 0, 0]);
        p.weights[Operation::AttachmentWrite] = 1;
        assert!(p.validate().unwrap_err()[0].contains("none exist"));
    }

    #[test]
    fn zeros_are_fine_where_they_make_sense() {
        assert!(plan((0, 0), 0, [0, 0, 0, 0]).validate().is_ok());
        let hot = Plan {
            targets: crate::workload::Targets::SharedUpdates,
            ..plan((0, 0), 100, [0, 0, 1, 0])
        };
        assert!(
            hot.validate().is_ok(),
            "updates of hot documents need no own document"
        );
        assert!(plan((10, 1), 0, [2, 2, 3, 3]).validate().is_ok());
        assert!(plan((0, 0), 100, [1, 0, 0, 0]).validate().is_ok());
        assert!(plan((10, 2), 100, [0, 1, 0, 0]).validate().is_ok());
        assert!(plan((0, 5), 0, [0, 0, 0, 0]).validate().is_err());
        assert!(plan((0, 0), 10, [0, 0, 0, 0]).validate().is_err());
        assert!(plan((0, 0), 10, [0, 1, 0, 0]).validate().is_err());
    }

    #[test]
    fn a_total_is_shared_and_time_alone_leaves_counts_open() {
        let mut p = plan((10, 1), 100, [1, 1, 1, 0]);
        p.connections = 3;
        p.crud = CrudBound {
            per_connection: None,
            total: Some(10),
            duration: None,
        };
        let each = |p: &Plan| {
            (0..3)
                .map(|c| p.crud_counts(c).unwrap().total())
                .collect::<Vec<_>>()
        };
        assert_eq!(each(&p), [4, 3, 3]);
        p.crud.per_connection = Some(2);
        assert_eq!(each(&p), [2, 2, 2], "whichever comes first");
        p.crud = CrudBound {
            per_connection: None,
            total: None,
            duration: Some(Duration::from_secs(1)),
        };
        assert!(p.has_crud_step());
        assert_eq!(p.crud_counts(0), None);
        assert!(p.validate().is_ok());
        p.bulk_inserts_per_connection = 0;
        p.weights[Operation::Create] = 0;
        assert!(p.validate().unwrap_err()[0].contains("none exist"));
    }
}
