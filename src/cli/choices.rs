//! The values a flag takes from a fixed list, each with what it means: help lists them
//! (`--help` one a line, `-h` on the flag's line) and completion scripts offer them, while
//! the flag's own parser still reads the value and words the error.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};

/// A value and what it means.
pub type Choice = (&'static str, &'static str);

/// A value parser that reads with `parse` and tells clap the values in `values`.
#[derive(Clone)]
pub struct Choices<T> {
    parse: fn(&str) -> Result<T, String>,
    values: &'static [Choice],
}

impl<T> Choices<T> {
    pub fn new(parse: fn(&str) -> Result<T, String>, values: &'static [Choice]) -> Choices<T> {
        Choices { parse, values }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // The function's own parser: the same error as a plain `value_parser = parse`.
        self.parse.parse_ref(command, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values.iter().map(|(name, meaning)| {
            PossibleValue::new(*name).help(*meaning)
        })))
    }
}

/// `--fabric-doc-size`: `fabric_bench`'s three bodies, as their bytes.
pub const FABRIC_SIZES: [Choice; 3] = [
    ("small", "335 bytes: fabric_bench's 13 short members"),
    (
        "medium",
        "about 15,050 bytes (fabric_bench's: 14,555): its hex blobs, text, tags and 2,000 numbers (the default)",
    ),
    (
        "large",
        "145,874 bytes: medium and 32 blobs of 4,096 hex characters",
    ),
];

/// `compare --test`: every [`Test`](crate::analysis::compare::judge::Test).
pub const COMPARE_TESTS: [Choice; 2] = [
    (
        "u",
        "Mann-Whitney U test on the medians: no distribution assumed (the default)",
    ),
    (
        "welch",
        "Welch's t-test on the means, as sofabench did before",
    ),
];

/// `--id-scheme`: every [`IdScheme`](crate::workload::IdScheme).
pub const ID_SCHEMES: [Choice; 3] = [
    (
        "sequential",
        "<prefix>-<number>, ten digits: ids in insertion order (the default)",
    ),
    (
        "uuid",
        "32 hex digits that look random, reproducible from the prefix",
    ),
    (
        "server",
        "ids the server gives: creates are POST /db, bulk documents carry no _id",
    ),
];

/// `--auth`: every [`Mode`](crate::driver::auth::Mode).
pub const AUTH_MODES: [Choice; 6] = [
    ("basic", "the user and password on every request"),
    (
        "cookie",
        "one POST /_session login per node, its session cookie renewed",
    ),
    ("jwt", "a token from SOFABENCH_TOKEN"),
    ("proxy", "CouchDB's X-Auth-CouchDB-* headers for --user"),
    (
        "iam",
        "an IBM Cloud API key from SOFABENCH_IAM_API_KEY, for Cloudant",
    ),
    ("none", "no credentials"),
];

/// `--changes-feed`: every [`FeedKind`](crate::workload::changes::FeedKind).
pub const FEED_KINDS: [Choice; 3] = [
    (
        "continuous",
        "one endless answer, a line per change (the default)",
    ),
    (
        "longpoll",
        "one answer per batch of changes, held until there is one",
    ),
    ("normal", "one answer per request, at once; asked again"),
];

/// `--existing-writes`: every [`ExistingWrites`](crate::workload::ExistingWrites).
pub const EXISTING_WRITES: [Choice; 2] = [
    (
        "fetch",
        "GET the current revision first, then write over it",
    ),
    (
        "blind",
        "send none; a 409 is counted as a conflict, not a failure",
    ),
];

/// `--partition-keys`: uniform, or zipfian with its exponent or the default one.
pub const PARTITION_SPREADS: [Choice; 2] = [
    ("uniform", "every partition alike (the default)"),
    (
        "zipfian",
        "partition k holds a share ∝ 1/(k+1)^0.99; zipfian:C for another C between 0 and 1",
    ),
];

/// `--device-scope`: every [`FleetScope`](crate::workload::fleet::FleetScope).
pub const DEVICE_SCOPES: [Choice; 3] = [
    (
        "own-database",
        "a database per user: the run's --databases dealt out round robin (the default)",
    ),
    (
        "doc-ids",
        "the run's first database, each device following its own and the shared documents (filter=_doc_ids)",
    ),
    (
        "selector",
        "the run's first database, each device following a Mango selector (filter=_selector; CouchDB only)",
    ),
];

/// `--device-profile`: every [`ClientProfile`](crate::workload::fleet::ClientProfile).
pub const DEVICE_PROFILES: [Choice; 2] = [
    (
        "pouchdb",
        "PouchDB's replicate(): batches of 100, a checkpoint after every batch (the default)",
    ),
    (
        "replicator",
        "CouchDB's replicator: batches of 500, a checkpoint every 5 s",
    ),
];

/// `--device-feed`: the feed a device reads.
pub const DEVICE_FEEDS: [Choice; 3] = [
    (
        "longpoll",
        "one answer per batch of changes, held until there is one (the default, as PouchDB)",
    ),
    ("continuous", "one endless answer, a line per change"),
    (
        "normal",
        "what is there, at once (with --device-sync TIME only)",
    ),
];
