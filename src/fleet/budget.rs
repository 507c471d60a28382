//! The requests a sync cycle may send: what a replication client needs and no more.
//!
//! A pull reads the feed once per batch (and once more after a last full batch: the
//! client cannot know the feed ended there, PouchDB reads it again too), fetches with one `_bulk_get` per batch that
//! lacked anything, and writes the profile's checkpoints (PouchDB: one per batch that
//! moved the log on, rows or not: a filtered feed may answer 0 rows with a newer
//! `last_seq`, and the log follows it); a push asks `_revs_diff` once per batch, writes with one
//! `_bulk_docs` per batch the server lacked anything of, and writes its checkpoints; a push
//! with nothing to push sends nothing. A cycle that started by reading the replication
//! log (a device starting or starting again) may read it once more. Anything above is
//! over budget, counted and shown.

/// What the budget of one cycle depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleShape {
    /// Changes the cycle read (pull: feed rows; push: local changes).
    pub changes_read: u64,
    /// Revisions the other side lacked.
    pub missing: u64,
    /// Revisions written (pull: stored; push: taken by the server).
    pub written: u64,
    /// Whether the cycle began by reading the replication log.
    pub read_log: bool,
    /// Whether the cycle's position moved on (its log was due a write), rows or not.
    pub log_moved: bool,
}

/// Which way a cycle went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Push,
    Pull,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Push => "push",
            Direction::Pull => "pull",
        }
    }
}

/// The most requests a cycle of `shape` may send with batches of `batch_size`.
pub fn budget(direction: Direction, shape: CycleShape, batch_size: u32) -> u64 {
    let batch = u64::from(batch_size.max(1));
    if direction == Direction::Push && shape.changes_read == 0 && shape.missing == 0 {
        // Nothing to push: nothing sent, not even the log.
        return 0;
    }
    // A pull with nothing new still reads its feed once.
    let batches = shape.changes_read.div_ceil(batch).max(1);
    let reads = match direction {
        // After a full batch the feed is read again, whether it ended there or not.
        Direction::Pull => shape.changes_read / batch + 1,
        Direction::Push => batches,
    };
    let fetches_or_writes = if shape.missing > 0 {
        batches.min(shape.missing)
    } else {
        0
    };
    let moved_on = shape.log_moved
        || match direction {
            Direction::Pull => shape.changes_read > 0,
            Direction::Push => shape.written > 0 || shape.changes_read > 0,
        };
    let checkpoints = if moved_on { batches } else { 0 };
    u64::from(shape.read_log) + reads + fetches_or_writes + checkpoints
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(changes_read: u64, missing: u64, written: u64, read_log: bool) -> CycleShape {
        CycleShape {
            changes_read,
            missing,
            written,
            read_log,
            log_moved: changes_read > 0,
        }
    }

    #[test]
    fn an_idle_pull_is_one_feed_read_and_an_idle_push_nothing() {
        assert_eq!(budget(Direction::Pull, shape(0, 0, 0, false), 100), 1);
        assert_eq!(budget(Direction::Push, shape(0, 0, 0, false), 100), 0);
        assert_eq!(budget(Direction::Push, shape(0, 0, 0, true), 100), 0);
    }

    #[test]
    fn a_pull_of_one_change_reads_fetches_and_checkpoints_once() {
        assert_eq!(budget(Direction::Pull, shape(1, 1, 1, false), 100), 3);
        // Nothing missing (it had it already): no _bulk_get.
        assert_eq!(budget(Direction::Pull, shape(1, 0, 0, false), 100), 2);
        // Starting again: the log read too.
        assert_eq!(budget(Direction::Pull, shape(1, 1, 1, true), 100), 4);
    }

    #[test]
    fn batches_multiply_the_budget() {
        // 250 changes in batches of 100: 3 feed reads, 3 fetches, 3 checkpoints.
        assert_eq!(budget(Direction::Pull, shape(250, 250, 250, false), 100), 9);
        // Only 2 lacked anything: at most 2 fetches.
        assert_eq!(budget(Direction::Pull, shape(250, 2, 2, false), 100), 8);
        // A push of 3 documents: _revs_diff, _bulk_docs, the checkpoint.
        assert_eq!(budget(Direction::Push, shape(3, 3, 3, false), 100), 3);
        // The server had them all: no _bulk_docs.
        assert_eq!(budget(Direction::Push, shape(3, 0, 0, false), 100), 2);
        // A batch size of 0 is read as 1, not a division by zero.
        assert_eq!(budget(Direction::Pull, shape(2, 0, 0, false), 0), 5);
    }

    #[test]
    fn a_pull_of_exact_full_batches_may_read_the_feed_once_more() {
        // A cold device pulling 10,000 changes in batches of 100: the log read, 100 full
        // batches (read, fetch, checkpoint), then the feed read that finds it ended.
        assert_eq!(
            budget(Direction::Pull, shape(10_000, 10_000, 10_000, true), 100),
            302
        );
        assert_eq!(budget(Direction::Pull, shape(100, 100, 100, false), 100), 4);
        // One short of a full batch: no read after it.
        assert_eq!(budget(Direction::Pull, shape(99, 99, 99, false), 100), 3);
    }

    #[test]
    fn a_log_that_moved_on_without_rows_may_be_written() {
        // A filtered feed: 0 rows, a newer last_seq, the log written.
        let moved = CycleShape {
            log_moved: true,
            ..shape(0, 0, 0, false)
        };
        assert_eq!(budget(Direction::Pull, moved, 100), 2);
        // The log did not move: the feed read only.
        assert_eq!(budget(Direction::Pull, shape(0, 0, 0, false), 100), 1);
    }
}
