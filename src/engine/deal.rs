//! Dealing the documents the connections know out to another number of connections.
//!
//! Every document keeps exactly one owner, so no two connections ever race for one, and
//! the shares differ by at most one document, so no connection runs out of documents to
//! read, update or delete long before the others.

use crate::workload::DocumentPool;

/// The documents of `pools`, dealt round robin into `count` pools (at least one): the
/// `i`-th document, counted through the pools in order, goes to pool `i % count`.
pub fn deal(pools: Vec<DocumentPool>, count: usize) -> Vec<DocumentPool> {
    let count = count.max(1);
    let total: usize = pools.iter().map(DocumentPool::len).sum();
    let mut dealt: Vec<DocumentPool> = (0..count)
        .map(|_| DocumentPool::with_capacity(total / count + 1))
        .collect();
    let documents = pools.into_iter().flat_map(DocumentPool::into_documents);
    for (i, document) in documents.enumerate() {
        dealt[i % count].add(document.number, document.rev);
    }
    dealt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Rev;

    /// Pools holding the numbers of `sizes` consecutive runs: [2, 0, 3] holds 0–1, none, 2–4.
    fn pools(sizes: &[u64]) -> Vec<DocumentPool> {
        let mut next = 0;
        let mut all = Vec::new();
        for &size in sizes {
            let mut pool = DocumentPool::default();
            for number in next..next + size {
                pool.add(number, Rev::parse(&format!("{}-abc", number + 1)).unwrap());
            }
            next += size;
            all.push(pool);
        }
        all
    }

    fn numbers(pool: &DocumentPool) -> Vec<u64> {
        pool.iter().map(|d| d.number).collect()
    }

    #[test]
    fn every_document_has_exactly_one_owner_with_its_revision() {
        for (sizes, count) in [(&[7, 0, 5][..], 2), (&[1, 1, 1, 1], 3), (&[10], 4)] {
            let dealt = deal(pools(sizes), count);
            assert_eq!(dealt.len(), count);
            let mut owned: Vec<u64> = dealt.iter().flat_map(numbers).collect();
            owned.sort_unstable();
            let total: u64 = sizes.iter().sum();
            assert_eq!(
                owned,
                (0..total).collect::<Vec<_>>(),
                "{sizes:?} into {count}"
            );
            for document in dealt.iter().flat_map(DocumentPool::iter) {
                let expected = Rev::parse(&format!("{}-abc", document.number + 1));
                assert_eq!(Some(&document.rev), expected.as_ref());
            }
        }
    }

    #[test]
    fn deals_round_robin_in_the_order_of_the_pools() {
        let dealt = deal(pools(&[3, 0, 4]), 3);
        assert_eq!(numbers(&dealt[0]), [0, 3, 6]);
        assert_eq!(numbers(&dealt[1]), [1, 4]);
        assert_eq!(numbers(&dealt[2]), [2, 5]);
    }

    #[test]
    fn shares_differ_by_at_most_one_document() {
        for count in 1..12 {
            let dealt = deal(pools(&[13, 2, 0, 9]), count);
            let sizes: Vec<usize> = dealt.iter().map(DocumentPool::len).collect();
            let (most, least) = (sizes.iter().max(), sizes.iter().min());
            assert!(most.unwrap() - least.unwrap() <= 1, "{count}: {sizes:?}");
        }
    }

    #[test]
    fn more_connections_than_documents_leaves_the_rest_empty_and_none_is_at_least_one() {
        let dealt = deal(pools(&[2]), 5);
        assert_eq!(dealt.iter().map(DocumentPool::len).sum::<usize>(), 2);
        assert!(dealt[2..].iter().all(DocumentPool::is_empty));
        let one = deal(pools(&[2, 3]), 0);
        assert_eq!(one.len(), 1);
        assert_eq!(numbers(&one[0]), [0, 1, 2, 3, 4]);
    }
}
