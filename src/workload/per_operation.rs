//! One value per kind of operation: the shape of every per-operation figure (a mix's
//! weights, a connection's counts, the tallies, the interval rows), written once.
//!
//! Code reads and writes entries by [`Operation`] and walks them in [`Operation::ALL`]
//! order, never by position or by field name. The entries live in a fixed array today;
//! when scenarios declare named queries and the set of operations is known only at run
//! time, this file is the one that changes to a growable table.

use std::ops::{Index, IndexMut};

use super::operation::Operation;

/// A value for each kind of operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerOperation<T> {
    values: [T; Operation::COUNT],
}

impl<T> PerOperation<T> {
    /// The table whose entry for each operation is `value(operation)`.
    pub fn from_fn(mut value: impl FnMut(Operation) -> T) -> PerOperation<T> {
        PerOperation {
            values: std::array::from_fn(|i| value(Operation::ALL[i])),
        }
    }

    /// The entries with their operation, in [`Operation::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Operation, &T)> {
        Operation::ALL.into_iter().zip(self.values.iter())
    }

    /// The entries with their operation, to change them.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Operation, &mut T)> {
        Operation::ALL.into_iter().zip(self.values.iter_mut())
    }

    /// The entries without their operation.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.values.iter()
    }

    /// A table of `f` of each entry.
    pub fn map<U>(&self, mut f: impl FnMut(Operation, &T) -> U) -> PerOperation<U> {
        PerOperation::from_fn(|op| f(op, &self[op]))
    }

    /// Folds `other`'s entries into this table's, entry by entry (merging tallies).
    pub fn merge_with<U>(&mut self, other: &PerOperation<U>, mut f: impl FnMut(&mut T, &U)) {
        for (mine, theirs) in self.values.iter_mut().zip(other.values.iter()) {
            f(mine, theirs);
        }
    }
}

impl PerOperation<u64> {
    /// A table with `value` for `operation` and 0 for every other.
    pub fn only(operation: Operation, value: u64) -> PerOperation<u64> {
        let mut table = PerOperation::default();
        table[operation] = value;
        table
    }

    /// The sum of the entries. Sums saturate rather than wrap: entries may come from a
    /// result file, which anyone can write.
    pub fn total(&self) -> u64 {
        self.values.iter().fold(0, |sum, n| sum.saturating_add(*n))
    }

    /// Adds `other`'s entries to this table's, saturating.
    pub fn add(&mut self, other: &PerOperation<u64>) {
        self.merge_with(other, |mine, theirs| *mine = mine.saturating_add(*theirs));
    }
}

impl<T> Index<Operation> for PerOperation<T> {
    type Output = T;

    fn index(&self, operation: Operation) -> &T {
        &self.values[operation.index()]
    }
}

impl<T> IndexMut<Operation> for PerOperation<T> {
    fn index_mut(&mut self, operation: Operation) -> &mut T {
        &mut self.values[operation.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_operation_and_walked_in_order() {
        let mut table = PerOperation::from_fn(|op| op.index() as u64 * 10);
        table[Operation::Read] += 1;
        assert_eq!(table[Operation::Read], 21);
        assert_eq!(table[Operation::BulkInsert], 0);
        let walked: Vec<(Operation, u64)> = table.iter().map(|(op, n)| (op, *n)).collect();
        assert_eq!(walked.len(), Operation::COUNT);
        assert_eq!(walked[2], (Operation::Read, 21));
        let tens: u64 = (0..Operation::COUNT as u64).map(|i| i * 10).sum();
        assert_eq!(table.total(), tens + 1);
    }

    #[test]
    fn tables_add_and_map_entry_by_entry() {
        let mut a = PerOperation::only(Operation::Create, 3);
        a.add(&PerOperation::only(Operation::Create, 4));
        a.add(&PerOperation::only(Operation::Delete, 1));
        assert_eq!(a[Operation::Create], 7);
        assert_eq!(a[Operation::Delete], 1);
        let names = a.map(|op, n| format!("{op}={n}"));
        assert_eq!(names[Operation::Delete], "delete=1");
    }
}
