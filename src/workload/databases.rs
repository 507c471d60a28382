//! A run over several databases (`--databases N`): the one-database-per-user pattern,
//! where every user (or device) has a database of its own and follows its own feed.
//!
//! A new document goes to the database its number picks, so every connection writes to
//! all of them and a bulk insert to one; the connection then keeps the document's
//! database beside its revision. The databases are `NAME-0000` … `NAME-(N-1)`, always
//! four digits (as many as the most databases need), so that they sort in order and a
//! later run with another N finds the same names.

use crate::seed;

/// The most databases one run may spread over: each is created, looked at and
/// (with `--cleanup`) deleted by the run's setup, one request at a time.
pub const MOST_DATABASES: u32 = 10_000;

/// How many databases the run's documents spread over; 1 is the run's database alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Databases(u32);

impl Default for Databases {
    fn default() -> Databases {
        Databases(1)
    }
}

impl Databases {
    /// `count` databases, from 1 to [`MOST_DATABASES`].
    pub fn new(count: u32) -> Option<Databases> {
        (1..=MOST_DATABASES)
            .contains(&count)
            .then_some(Databases(count))
    }

    pub fn count(self) -> u32 {
        self.0
    }

    /// True when the run has more than its one database.
    pub fn spread(self) -> bool {
        self.0 > 1
    }

    /// The names of the databases under the run's database name `base`: `base` itself
    /// when there is one.
    pub fn names(self, base: &str) -> Vec<String> {
        if !self.spread() {
            return vec![base.to_string()];
        }
        let width = (MOST_DATABASES - 1).to_string().len();
        (0..self.0).map(|i| format!("{base}-{i:0width$}")).collect()
    }

    /// The database a new document numbered `number` goes to: its number mixed, so that
    /// every connection's documents (whose numbers step by the number of connections)
    /// spread evenly over all the databases.
    pub fn of_new(self, number: u64) -> u32 {
        if !self.spread() {
            return 0;
        }
        let mixed = seed::derive(super::ids::untagged(number), 0);
        (mixed % u64::from(self.0)) as u32
    }
}

/// Reads `--databases`.
pub fn parse(text: &str) -> Result<Databases, String> {
    text.trim()
        .parse::<u32>()
        .ok()
        .and_then(Databases::new)
        .ok_or_else(|| {
            format!("{text:?}: give a whole number of databases from 1 to {MOST_DATABASES}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_database_keeps_its_name_and_takes_every_document() {
        let one = Databases::default();
        assert_eq!(one.names("bench"), ["bench"]);
        assert!((0..1000).all(|n| one.of_new(n) == 0));
    }

    #[test]
    fn names_are_numbered_to_sort_in_order_whatever_their_count() {
        let names = parse("12").unwrap().names("db");
        assert_eq!(names.len(), 12);
        assert_eq!(
            (names[0].as_str(), names[11].as_str()),
            ("db-0000", "db-0011")
        );
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, names);
        assert_eq!(parse("2").unwrap().names("db"), ["db-0000", "db-0001"]);
        let most = Databases::new(MOST_DATABASES).unwrap().names("db");
        assert_eq!(most.last().unwrap(), "db-9999");
    }

    #[test]
    fn documents_of_one_connection_spread_over_every_database() {
        // A connection of ten numbers its documents 3, 13, 23, …: with ten databases a
        // plain remainder would send them all to one.
        let ten = parse("10").unwrap();
        let mut per_database = [0u32; 10];
        for j in 0..10_000u64 {
            per_database[ten.of_new(j * 10 + 3) as usize] += 1;
        }
        assert!(
            per_database.iter().all(|&n| (900..1100).contains(&n)),
            "{per_database:?}"
        );
    }

    #[test]
    fn a_document_always_goes_to_the_same_database() {
        let seven = parse("7").unwrap();
        let tagged = super::super::ids::tagged(41, super::super::IdScheme::Uuid);
        assert_eq!(seven.of_new(tagged), seven.of_new(41));
        assert!((0..1000).all(|n| seven.of_new(n) < 7));
    }

    #[test]
    fn counts_out_of_range_are_refused_with_the_range() {
        for bad in ["0", "10001", "-1", "many", ""] {
            assert!(parse(bad).unwrap_err().contains("from 1 to 10000"), "{bad}");
        }
        assert_eq!(parse(" 3 ").unwrap().count(), 3);
    }
}
