//! Iron Cushion's two-step workload: how much each connection does, and the rules that
//! make it possible at all.

use std::time::Duration;

use super::operation::Operation;
use super::phase::{KeyChoice, Phase};

/// The relative weights of the operations (`--create_weight` …; `bulk_insert` in scenario
/// phases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrudWeights {
    pub bulk_insert: u64,
    pub create: u64,
    pub read: u64,
    pub update: u64,
    pub delete: u64,
}

impl CrudWeights {
    pub fn total(&self) -> u64 {
        self.bulk_insert + self.create + self.read + self.update + self.delete
    }

    pub fn get(&self, operation: Operation) -> u64 {
        match operation {
            Operation::BulkInsert => self.bulk_insert,
            Operation::Create => self.create,
            Operation::Read => self.read,
            Operation::Update => self.update,
            Operation::Delete => self.delete,
        }
    }

    fn as_array(&self) -> [u64; 5] {
        [
            self.bulk_insert,
            self.create,
            self.read,
            self.update,
            self.delete,
        ]
    }

    /// Splits `n` operations by the weights: each operation gets its exact share rounded
    /// down, and the few left over go to the largest remainders (ties to the earlier
    /// operation), so the counts always add up to `n`.
    pub fn split(&self, n: u64) -> CrudCounts {
        let weights = self.as_array();
        let total_weight = self.total();
        if total_weight == 0 || n == 0 {
            return CrudCounts::default();
        }
        let exact: Vec<u128> = weights.iter().map(|&w| n as u128 * w as u128).collect();
        let mut counts: Vec<u64> = exact
            .iter()
            .map(|&e| (e / total_weight as u128) as u64)
            .collect();
        let mut left = n - counts.iter().sum::<u64>();
        let mut by_remainder: Vec<usize> = (0..5).collect();
        by_remainder.sort_by_key(|&i| std::cmp::Reverse(exact[i] % total_weight as u128));
        for i in by_remainder {
            if left == 0 {
                break;
            }
            counts[i] += 1;
            left -= 1;
        }
        CrudCounts {
            bulk_insert: counts[0],
            create: counts[1],
            read: counts[2],
            update: counts[3],
            delete: counts[4],
        }
    }
}

/// How many of each operation one connection performs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrudCounts {
    pub bulk_insert: u64,
    pub create: u64,
    pub read: u64,
    pub update: u64,
    pub delete: u64,
}

impl CrudCounts {
    pub fn total(&self) -> u64 {
        self.bulk_insert + self.create + self.read + self.update + self.delete
    }

    pub fn get(&self, operation: Operation) -> u64 {
        match operation {
            Operation::BulkInsert => self.bulk_insert,
            Operation::Create => self.create,
            Operation::Read => self.read,
            Operation::Update => self.update,
            Operation::Delete => self.delete,
        }
    }

    pub fn take(&mut self, operation: Operation) {
        let slot = match operation {
            Operation::BulkInsert => &mut self.bulk_insert,
            Operation::Create => &mut self.create,
            Operation::Read => &mut self.read,
            Operation::Update => &mut self.update,
            Operation::Delete => &mut self.delete,
        };
        *slot -= 1;
    }
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
    pub weights: CrudWeights,
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
    pub fn crud_counts(&self, connection: u64) -> Option<CrudCounts> {
        self.crud_phase(None).counts_of(connection)
    }

    /// Iron Cushion's two steps as phases (`bulk_insert`, then `crud`), leaving out a step
    /// with nothing to do. `rate` paces the CRUD step (open model).
    pub fn phases(&self, rate: Option<f64>) -> Vec<Phase> {
        let bulk = Phase {
            name: "bulk_insert".to_string(),
            mix: CrudWeights {
                bulk_insert: 1,
                ..CrudWeights::default()
            },
            bound: CrudBound {
                per_connection: Some(self.bulk_inserts_per_connection),
                ..CrudBound::default()
            },
            connections: self.connections,
            batch_size: self.documents_per_bulk_insert,
            rate: None,
            keys: KeyChoice::Uniform,
            action: None,
        };
        [bulk, self.crud_phase(rate)]
            .into_iter()
            .filter(Phase::has_work)
            .collect()
    }

    /// Iron Cushion's CRUD step as a phase.
    fn crud_phase(&self, rate: Option<f64>) -> Phase {
        Phase {
            name: "crud".to_string(),
            mix: CrudWeights {
                bulk_insert: 0,
                ..self.weights
            },
            bound: self.crud,
            connections: self.connections,
            batch_size: self.documents_per_bulk_insert,
            rate,
            keys: KeyChoice::Uniform,
            action: None,
        }
    }

    /// Checks Iron Cushion's rules, and the few more that keep a run from asking for the
    /// impossible. Every broken rule is reported, each with what to change.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let w = self.weights;
        if self.connections == 0 {
            problems.push("--num_connections=0: a run needs at least one connection; set --num_connections to 1 or more".to_string());
        }
        if self.bulk_inserts_per_connection > 0 && self.documents_per_bulk_insert == 0 {
            problems.push(format!(
                "--num_documents_per_bulk_insert=0 with --num_bulk_insert_operations={}: every bulk insert would be empty; give --num_documents_per_bulk_insert=1 or more, or --num_bulk_insert_operations=0 to skip the bulk insert step",
                self.bulk_inserts_per_connection
            ));
        }
        if self.has_crud_step() && w.total() == 0 {
            problems.push(
                "the CRUD step has operations to do but all four weights are 0; give at least one of --create_weight, --read_weight, --update_weight, --delete_weight a value above 0, or set --num_crud_operations=0 to skip the CRUD step".to_string(),
            );
        }
        if w.create + w.read < w.delete {
            problems.push(format!(
                "--delete_weight={} is larger than --create_weight + --read_weight = {} + {} = {}: every delete needs a _rev learned from an earlier create or read; raise --create_weight or --read_weight, or lower --delete_weight",
                w.delete, w.create, w.read, w.create + w.read
            ));
        }
        if w.update > 0 && w.create + w.read == 0 {
            problems.push(format!(
                "--update_weight={} needs --create_weight + --read_weight above 0: an update needs a _rev learned from a create or a read; raise --create_weight or --read_weight",
                w.update
            ));
        }
        let counted = (0..self.connections).try_fold(CrudCounts::default(), |sum, c| {
            self.crud_counts(c).map(|n| CrudCounts {
                bulk_insert: 0,
                create: sum.create + n.create,
                read: sum.read + n.read,
                update: sum.update + n.update,
                delete: sum.delete + n.delete,
            })
        });
        // A run bounded only by time has no counts: it reads, updates and deletes while
        // documents remain.
        let counts = counted.unwrap_or(CrudCounts {
            bulk_insert: 0,
            create: w.create,
            read: w.read,
            update: w.update,
            delete: 0,
        });
        let available = self.bulk_documents() + counts.create;
        if counts.delete > available {
            problems.push(format!(
                "the CRUD step would delete {} documents but only {available} exist ({} bulk inserted + {} created); bulk insert more documents (--num_bulk_insert_operations, --num_documents_per_bulk_insert), increase --create_weight, or decrease --delete_weight",
                counts.delete,
                self.bulk_documents(),
                counts.create
            ));
        } else if self.has_crud_step()
            && available == 0
            && counts.read + counts.update + counts.delete > 0
        {
            problems.push(
                "the CRUD step reads or updates documents but none exist (no bulk inserts, --create_weight=0); bulk insert documents first or give --create_weight a value above 0"
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

    fn plan(bulk: (u64, u64), crud: u64, w: [u64; 4]) -> Plan {
        Plan {
            connections: 2,
            documents_per_bulk_insert: bulk.0,
            bulk_inserts_per_connection: bulk.1,
            crud: CrudBound {
                per_connection: Some(crud),
                ..CrudBound::default()
            },
            weights: CrudWeights {
                bulk_insert: 0,
                create: w[0],
                read: w[1],
                update: w[2],
                delete: w[3],
            },
        }
    }

    #[test]
    fn readme_example_splits_exactly() {
        let counts = plan((1000, 20), 10_000, [2, 3, 2, 1])
            .crud_counts(0)
            .unwrap();
        assert_eq!(
            counts,
            CrudCounts {
                bulk_insert: 0,
                create: 2500,
                read: 3750,
                update: 2500,
                delete: 1250
            }
        );
    }

    #[test]
    fn leftovers_go_to_largest_remainders_and_counts_add_up() {
        for n in 0..50 {
            let counts = plan((1, 1), n, [1, 1, 1, 0]).weights.split(n);
            assert_eq!(counts.total(), n);
            assert_eq!(counts.delete, 0);
            assert!(counts.create >= counts.read && counts.read >= counts.update);
            assert!(counts.create - counts.update <= 1);
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
    fn zeros_are_fine_where_they_make_sense() {
        assert!(plan((0, 0), 0, [0, 0, 0, 0]).validate().is_ok());
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
        p.weights.create = 0;
        assert!(p.validate().unwrap_err()[0].contains("none exist"));
    }
}
