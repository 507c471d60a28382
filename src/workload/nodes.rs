//! Running one workload on many machines (nodes).
//!
//! `N` nodes together run exactly the workload one node would run with `N` times the
//! connections: with `C` connections per node (`--num_connections`), the whole run has
//! `N × C` connections with global indexes `0 .. N×C`, and node `I` runs the connections
//! `I×C .. I×C+C`. Everything a connection does derives from the seed and its *global*
//! index (its operation order, its documents), so with the same `--seed` on every node,
//! the merged result (`sofabench merge`) is the result of one big run.

use std::ops::Range;

/// The global indexes of the connections node `node_index` of `node_count` runs, with
/// `connections` connections per node.
///
/// ```
/// use sofabench::workload::nodes::node_slice;
/// assert_eq!(node_slice(0, 3, 10), 0..10);
/// assert_eq!(node_slice(2, 3, 10), 20..30);
/// ```
///
/// # Panics
/// When `node_index >= node_count` (see [`validate`], which the command line applies).
pub fn node_slice(node_index: u64, node_count: u64, connections: u64) -> Range<u64> {
    assert!(
        node_index < node_count,
        "node index {node_index} out of 0..{node_count}"
    );
    let first = node_index * connections;
    first..first + connections
}

/// Connections of all nodes together.
pub fn total_connections(node_count: u64, connections: u64) -> u64 {
    node_count * connections
}

/// Checks `--node-index` against `--node-count`; the message says what to change.
pub fn validate(node_index: u64, node_count: u64, connections: u64) -> Result<(), String> {
    super::limits::node_count(node_count)?;
    if node_index >= node_count {
        return Err(format!(
            "--node-index {node_index} is not below --node-count {node_count}: nodes are numbered 0 to {} (JOB_COMPLETION_INDEX, SOFABENCH_NODE_COUNT)",
            node_count - 1
        ));
    }
    if node_count.checked_mul(connections).is_none() {
        return Err(format!(
            "--node-count {node_count} x --num_connections {connections} is too many connections"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_every_connection_once() {
        let (nodes, per_node) = (4, 7);
        let mut seen = Vec::new();
        for index in 0..nodes {
            let slice = node_slice(index, nodes, per_node);
            assert_eq!(slice.end - slice.start, per_node);
            seen.extend(slice);
        }
        let all: Vec<u64> = (0..total_connections(nodes, per_node)).collect();
        assert_eq!(seen, all);
        assert_eq!(node_slice(0, 1, 10), 0..10, "one node runs everything");
        assert_eq!(node_slice(1, 2, 0), 0..0);
    }

    #[test]
    #[should_panic(expected = "out of 0..3")]
    fn an_index_past_the_count_panics() {
        node_slice(3, 3, 10);
    }

    #[test]
    fn validation_names_the_flags() {
        assert!(validate(0, 1, 10).is_ok());
        assert!(validate(2, 3, 10).is_ok());
        let err = validate(3, 3, 10).unwrap_err();
        assert!(
            err.contains("--node-index 3") && err.contains("0 to 2"),
            "{err}"
        );
        assert!(validate(0, 0, 10).unwrap_err().contains("--node-count 0"));
        assert!(
            validate(0, 100_000, u64::MAX)
                .unwrap_err()
                .contains("too many")
        );
        assert!(
            validate(0, u64::MAX, 2)
                .unwrap_err()
                .contains("1 to 100000")
        );
    }
}
