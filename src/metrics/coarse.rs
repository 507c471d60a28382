//! A per-interval series whose memory does not grow with the length of a run.
//!
//! A series keeps at most `bound` entries. When a new interval would make one more, the
//! entries are merged pairwise, oldest first (an odd last one stays as it is), so each
//! entry then covers twice as many live intervals: the series' `width` doubles, and later
//! intervals are merged into the last entry until it holds `width` of them. A one-second
//! interval over a day thus ends in entries of 128 s, at most `bound` of them. Each kind of
//! entry says how two adjacent ones become one ([`Coarsen`]): counts and histograms add
//! exactly, states at an interval's end take the later one's.

/// The default bound on a phase's intervals (`--max-intervals`).
pub const DEFAULT_BOUND: usize = 1_000;

/// The fewest intervals a bound may hold: two, so that merging pairs leaves room.
pub const SMALLEST_BOUND: usize = 2;

/// An entry of a series: two adjacent entries become one covering both.
pub trait Coarsen {
    /// Takes in `later`, the entry right after this one.
    fn absorb(&mut self, later: Self);
}

/// A series of at most `bound` entries, coarsened as it fills.
#[derive(Clone, Debug)]
pub struct Series<T> {
    /// Each entry with the number of live intervals it covers.
    entries: Vec<(T, u64)>,
    bound: usize,
    width: u64,
}

impl<T: Coarsen> Series<T> {
    /// An empty series of at most `bound` entries (at least [`SMALLEST_BOUND`]).
    pub fn new(bound: usize) -> Series<T> {
        Series {
            entries: Vec::new(),
            bound: bound.max(SMALLEST_BOUND),
            width: 1,
        }
    }

    /// Adds the next live interval.
    pub fn push(&mut self, interval: T) {
        if let Some((last, covers)) = self.entries.last_mut()
            && *covers < self.width
        {
            last.absorb(interval);
            *covers += 1;
            return;
        }
        if self.entries.len() == self.bound {
            self.halve();
            return self.push(interval);
        }
        self.entries.push((interval, 1));
    }

    /// Merges the entries pairwise: half as many, each twice as wide.
    fn halve(&mut self) {
        let mut merged = Vec::with_capacity(self.bound);
        let mut entries = std::mem::take(&mut self.entries).into_iter();
        while let Some((mut first, mut covers)) = entries.next() {
            if let Some((second, more)) = entries.next() {
                first.absorb(second);
                covers += more;
            }
            merged.push((first, covers));
        }
        self.entries = merged;
        self.width *= 2;
    }

    /// How many live intervals each entry covers (the last may cover fewer): 1 until the
    /// bound was first reached.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// The most entries it keeps.
    pub fn bound(&self) -> usize {
        self.bound
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The newest entry.
    pub fn last(&self) -> Option<&T> {
        self.entries.last().map(|(entry, _)| entry)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(entry, _)| entry)
    }

    /// The entries, oldest first, and the width they reached.
    pub fn into_parts(self) -> (Vec<T>, u64) {
        (
            self.entries.into_iter().map(|(entry, _)| entry).collect(),
            self.width,
        )
    }
}

impl<T> Series<T> {
    /// An empty series of the default bound.
    fn empty() -> Series<T> {
        Series {
            entries: Vec::new(),
            bound: DEFAULT_BOUND,
            width: 1,
        }
    }
}

impl<T> Default for Series<T> {
    fn default() -> Series<T> {
        Series::empty()
    }
}

/// Parses `--max-intervals`.
pub fn parse_bound(text: &str) -> Result<usize, String> {
    let bound: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of intervals (e.g. 1000)"))?;
    if bound < SMALLEST_BOUND {
        return Err(format!(
            "{bound}: at least {SMALLEST_BOUND} (past the bound, intervals are merged in pairs)"
        ));
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interval as a count and the span of live intervals it covers.
    #[derive(Clone, Debug, PartialEq)]
    struct Span {
        from: u64,
        to: u64,
        count: u64,
    }

    impl Coarsen for Span {
        fn absorb(&mut self, later: Span) {
            assert_eq!(later.from, self.to + 1, "only adjacent entries merge");
            self.to = later.to;
            self.count += later.count;
        }
    }

    fn filled(bound: usize, intervals: u64) -> Series<Span> {
        let mut series = Series::new(bound);
        for i in 0..intervals {
            series.push(Span {
                from: i,
                to: i,
                count: i + 1,
            });
            assert!(series.len() <= bound.max(SMALLEST_BOUND));
        }
        series
    }

    #[test]
    fn stays_within_its_bound_and_keeps_every_count_in_time_order() {
        for bound in [2, 3, 7, 8, 1_000] {
            for intervals in [0, 1, 2, 3, 9, 64, 65, 1_001, 5_000] {
                let series = filled(bound, intervals);
                let (entries, width) = series.into_parts();
                assert!(entries.len() <= bound);
                let total: u64 = entries.iter().map(|e| e.count).sum();
                assert_eq!(total, intervals * (intervals + 1) / 2);
                // The entries tile the live intervals without gap or overlap.
                let mut next = 0;
                for e in &entries {
                    assert_eq!(e.from, next);
                    assert!(e.to - e.from < width, "no entry wider than the width");
                    next = e.to + 1;
                }
                assert_eq!(next, intervals);
            }
        }
    }

    #[test]
    fn doubles_its_width_each_time_the_bound_is_reached() {
        let series = filled(4, 4);
        assert_eq!((series.len(), series.width()), (4, 1));
        let series = filled(4, 5);
        // Two pairs and the fifth interval on its own.
        assert_eq!((series.len(), series.width()), (3, 2));
        let spans: Vec<(u64, u64)> = series.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(spans, [(0, 1), (2, 3), (4, 4)]);
        let series = filled(4, 17);
        assert_eq!((series.len(), series.width()), (3, 8));
    }

    #[test]
    fn an_odd_bound_leaves_its_last_entry_to_fill_up() {
        // 3 entries of 1, merged: (0-1), (2); the next joins (2) before a new one starts.
        let series = filled(3, 5);
        let spans: Vec<(u64, u64)> = series.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(spans, [(0, 1), (2, 3), (4, 4)]);
        assert_eq!(series.width(), 2);
    }

    #[test]
    fn a_bound_is_a_whole_number_of_at_least_two() {
        assert_eq!(parse_bound("1000"), Ok(1_000));
        assert!(parse_bound("1").unwrap_err().contains("at least 2"));
        assert!(parse_bound("many").unwrap_err().contains("whole number"));
    }
}
