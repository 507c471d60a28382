//! What updates of hot documents (`--hot-docs`) counted: the 409s they met, the current
//! revisions they fetched after one, and how many attempts each took. A 409 there is an
//! expected outcome, not a failure; every attempt after one is counted here.

/// The most attempts one update of a hot document makes: its first PUT and, after each
/// 409, a fetch of the current revision and another PUT. Past it the update fails as the
/// 409 it met (`409`), so contention cannot keep a connection busy forever.
pub const MOST_ATTEMPTS: usize = 10;

/// Hot-document counts of one connection (or, added up, of many).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HotCounts {
    /// PUTs sent to hot documents, every attempt counted.
    pub attempts: u64,
    /// 409 answers met, each followed by a fetch of the current revision unless it was
    /// the last attempt allowed.
    pub conflicts: u64,
    /// GETs of a hot document for its current revision.
    pub fetches: u64,
    /// Successful updates by the attempt they succeeded at: `by_attempts[0]` at the first.
    pub by_attempts: [u64; MOST_ATTEMPTS],
    /// Updates that met a 409 at every attempt allowed (also counted as failed `409`).
    pub gave_up: u64,
}

impl HotCounts {
    /// Whether any update of a hot document was tried.
    pub fn is_empty(&self) -> bool {
        *self == HotCounts::default()
    }

    /// One update succeeded at attempt `attempt` (1 for the first).
    pub fn succeeded_at(&mut self, attempt: usize) {
        let slot = attempt.clamp(1, MOST_ATTEMPTS) - 1;
        self.by_attempts[slot] = self.by_attempts[slot].saturating_add(1);
    }

    pub fn merge(&mut self, other: &HotCounts) {
        self.attempts = self.attempts.saturating_add(other.attempts);
        self.conflicts = self.conflicts.saturating_add(other.conflicts);
        self.fetches = self.fetches.saturating_add(other.fetches);
        self.gave_up = self.gave_up.saturating_add(other.gave_up);
        for (mine, theirs) in self.by_attempts.iter_mut().zip(other.by_attempts) {
            *mine = mine.saturating_add(theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successes_land_by_attempt_and_merge_adds() {
        let mut a = HotCounts::default();
        assert!(a.is_empty());
        a.succeeded_at(1);
        a.succeeded_at(3);
        a.succeeded_at(MOST_ATTEMPTS + 5);
        let mut b = HotCounts {
            conflicts: 2,
            ..HotCounts::default()
        };
        b.succeeded_at(3);
        a.merge(&b);
        assert_eq!(a.by_attempts[0], 1);
        assert_eq!(a.by_attempts[2], 2);
        assert_eq!(a.by_attempts[MOST_ATTEMPTS - 1], 1);
        assert_eq!(a.conflicts, 2);
    }
}
