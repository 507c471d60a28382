//! The random order of one connection's CRUD operations.
//!
//! Iron Cushion shuffles each connection's creates, reads, updates and deletes. A plain
//! shuffle can put a delete before the connection knows any document, so the order is
//! drawn one operation at a time instead: each draw picks among the operations still to
//! do, in proportion to how many of each remain (which is exactly a uniform shuffle when
//! nothing is in the way), but never one that would leave the rest impossible. The
//! order depends only on the counts, the documents the connection starts with, and the
//! seed — never on the server's answers — so a seed reproduces it exactly.
//!
//! A step bounded only by time has no counts: its operations are drawn by the weights,
//! reads, updates and deletes only while the connection knows a document.

use rand::RngExt;

use super::operation::Operation;
use super::plan::{Counts, Weights};
use crate::seed::Rng;

/// Where the operations that work on a document find it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Targets {
    /// Among the documents the connection stored itself.
    #[default]
    Own,
    /// Updates go to the shared hot documents (`--hot-docs`).
    SharedUpdates,
    /// Reads, updates and deletes go to documents already in the database
    /// (`--key-range`, `--key-sample`).
    Existing,
}

impl Targets {
    /// Whether `operation` works on a document the connection stored itself.
    pub fn needs_known(self, operation: Operation) -> bool {
        operation.needs_document()
            && match self {
                Targets::Own => true,
                Targets::SharedUpdates => operation != Operation::Update,
                Targets::Existing => !matches!(
                    operation,
                    Operation::Read | Operation::Update | Operation::Delete
                ),
            }
    }
}

/// Yields a connection's CRUD operations in their random order.
pub struct OperationOrder {
    remaining: Counts,
    /// False when the order never ends (`remaining` then holds the weights).
    counted: bool,
    /// Documents the connection will know at this point, if every operation succeeds.
    known: u64,
    /// Documents one bulk insert adds.
    batch: u64,
    /// Which operations work on documents the connection stored itself.
    targets: Targets,
    rng: Rng,
}

impl OperationOrder {
    pub fn new(counts: Counts, known_documents: u64, rng: Rng) -> OperationOrder {
        OperationOrder {
            remaining: counts,
            counted: true,
            known: known_documents,
            batch: 0,
            targets: Targets::Own,
            rng,
        }
    }

    /// Sets how many documents a bulk insert adds (for mixes that include bulk inserts).
    pub fn with_batch(mut self, batch: u64) -> OperationOrder {
        self.batch = batch;
        self
    }

    /// Sets which operations need a document the connection knows.
    pub fn with_targets(mut self, targets: Targets) -> OperationOrder {
        self.targets = targets;
        self
    }

    /// An endless order, drawn by the weights.
    pub fn by_weights(weights: Weights, known_documents: u64, rng: Rng) -> OperationOrder {
        OperationOrder {
            remaining: weights,
            counted: false,
            known: known_documents,
            batch: 0,
            targets: Targets::Own,
            rng,
        }
    }

    /// The operations of a counted order not drawn yet (`None` for an endless order).
    /// An order ends early when what is left needs documents the connection does not
    /// know: those are left here.
    pub fn left(&self) -> Option<Counts> {
        self.counted.then_some(self.remaining)
    }

    /// True when the rest of the operations can run from a state, by doing creates first,
    /// then reads and updates, then deletes.
    fn can_finish(&self, known: u64, rest: &Counts) -> bool {
        let reachable = known + rest[Operation::Create] + rest[Operation::BulkInsert] * self.batch;
        let own = |op: Operation| {
            if self.needs_known(op) { rest[op] } else { 0 }
        };
        reachable >= own(Operation::Delete)
            && (own(Operation::Read) + own(Operation::Update) == 0 || reachable >= 1)
    }

    /// Whether `operation` works on a document the connection knows.
    fn needs_known(&self, operation: Operation) -> bool {
        self.targets.needs_known(operation)
    }

    /// Documents known after `operation` succeeds.
    fn after(&self, operation: Operation) -> u64 {
        match operation {
            Operation::BulkInsert => self.known + self.batch,
            Operation::Create => self.known + 1,
            // A delete of a document the connection does not own (existing data)
            // leaves its own documents as they were; one that needs a known document
            // is only allowed while there is one.
            Operation::Delete if self.needs_known(operation) => self.known.saturating_sub(1),
            _ => self.known,
        }
    }

    fn allowed(&self, operation: Operation) -> bool {
        if self.remaining[operation] == 0 {
            return false;
        }
        if self.needs_known(operation) && self.known == 0 {
            return false;
        }
        if !self.counted {
            return true;
        }
        let mut rest = self.remaining;
        rest[operation] -= 1;
        let known = self.after(operation);
        self.can_finish(known, &rest)
    }
}

impl Iterator for OperationOrder {
    type Item = Operation;

    fn next(&mut self) -> Option<Operation> {
        let weights = self
            .remaining
            .map(|op, &n| if self.allowed(op) { n } else { 0 });
        let total = weights.total();
        if total == 0 {
            return None;
        }
        let mut draw = self.rng.random_range(0..total);
        let mut chosen = Operation::Create;
        for (op, &weight) in weights.iter() {
            if draw < weight {
                chosen = op;
                break;
            }
            draw -= weight;
        }
        if self.counted {
            self.remaining[chosen] -= 1;
        }
        self.known = self.after(chosen);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    fn counts(c: u64, r: u64, u: u64, d: u64) -> Counts {
        let mut counts = Counts::default();
        for (op, n) in Operation::CRUD.into_iter().zip([c, r, u, d]) {
            counts[op] = n;
        }
        counts
    }

    fn order(c: Counts, known: u64, seed: u64) -> Vec<Operation> {
        OperationOrder::new(c, known, seed::rng(seed)).collect()
    }

    #[test]
    fn every_operation_comes_exactly_once_and_never_on_an_empty_connection() {
        for s in 0..200 {
            let c = counts(3, 2, 2, 4);
            let ops = order(c, 1, s);
            assert_eq!(ops.len() as u64, c.total());
            let mut known = 1i64;
            for op in &ops {
                if op.needs_document() {
                    assert!(known > 0, "seed {s}: {ops:?}");
                }
                match op {
                    Operation::Create => known += 1,
                    Operation::Delete => known -= 1,
                    _ => {}
                }
            }
            for op in Operation::CRUD {
                let n = ops.iter().filter(|&&o| o == op).count() as u64;
                assert_eq!(n, c[op]);
            }
        }
    }

    #[test]
    fn tight_cases_still_finish() {
        // No documents to start with, one create, a read after its delete is impossible:
        // the read must come before the delete.
        for s in 0..100 {
            let ops = order(counts(1, 1, 0, 1), 0, s);
            assert_eq!(ops, [Operation::Create, Operation::Read, Operation::Delete]);
        }
    }

    #[test]
    fn the_seed_reproduces_the_order_and_different_seeds_differ() {
        let c = counts(250, 250, 250, 250);
        assert_eq!(order(c, 100, 7), order(c, 100, 7));
        assert_ne!(order(c, 100, 7), order(c, 100, 8));
    }

    #[test]
    fn endless_orders_follow_the_weights_and_never_delete_what_is_not_there() {
        let weights = counts(1, 0, 1, 2);
        let ops: Vec<Operation> = OperationOrder::by_weights(weights, 0, seed::rng(3))
            .take(10_000)
            .collect();
        let mut known = 0i64;
        for op in &ops {
            match op {
                Operation::Create => known += 1,
                Operation::Delete => known -= 1,
                _ => {}
            }
            assert!(known >= 0);
        }
        let creates = ops.iter().filter(|&&o| o == Operation::Create).count();
        assert!(
            creates > 3000,
            "creates are drawn whenever nothing else is possible: {creates}"
        );
    }

    #[test]
    fn unconstrained_orders_look_shuffled() {
        // With plenty of documents, each position is equally likely to hold each kind.
        let c = counts(100, 100, 100, 100);
        let mut firsts = [0u32; 4];
        for s in 0..4000 {
            let first = order(c, 1000, s)[0];
            firsts[first as usize - 1] += 1;
        }
        for n in firsts {
            assert!((850..1150).contains(&n), "{firsts:?}");
        }
    }

    #[test]
    fn shared_updates_need_no_known_document() {
        let mut order = OperationOrder::new(counts(0, 0, 5, 0), 0, seed::rng(1));
        assert_eq!(
            order.next(),
            None,
            "an update of its own needs a known document"
        );
        let shared = OperationOrder::new(counts(0, 0, 5, 0), 0, seed::rng(1))
            .with_targets(Targets::SharedUpdates);
        assert_eq!(shared.count(), 5);
        // Reads still need one: the create comes before them, updates anywhere.
        let mixed: Vec<_> = OperationOrder::new(counts(1, 2, 5, 0), 0, seed::rng(1))
            .with_targets(Targets::SharedUpdates)
            .collect();
        assert_eq!(mixed.len(), 8);
        let create = mixed
            .iter()
            .position(|&op| op == Operation::Create)
            .unwrap();
        let first_read = mixed.iter().position(|&op| op == Operation::Read).unwrap();
        assert!(create < first_read, "{mixed:?}");
        // Existing data: reads, updates and deletes need nothing of the connection's own.
        let existing = OperationOrder::new(counts(0, 3, 3, 3), 0, seed::rng(1))
            .with_targets(Targets::Existing);
        assert_eq!(existing.count(), 9);
    }
}
