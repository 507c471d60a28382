//! The ranges of a workload's numbers and names. Every value a user gives is checked
//! against them before anything is sent, so that no number can make sofabench spin,
//! run out of memory or overflow, and no name can garble a terminal. Each message names
//! the input (`what`), the range and why.

use super::phase::KeyChoice;
use super::{Operation, Phase, Rate};

/// Documents per `_bulk_docs` request. A request is built in memory whole (documents ×
/// template size), and servers refuse bodies far smaller than a million documents
/// (CouchDB's `max_http_request_size` is 4 GiB).
pub const MOST_DOCUMENTS_PER_REQUEST: u64 = 1_000_000;

/// Operations per second of a phase: far beyond any server, and every scheduled start
/// stays a whole nanosecond apart per connection.
pub const MOST_RATE: f64 = 10_000_000.0;

/// Phases of a run (a sweep's values included): every phase has its own report lines
/// and histograms, so more would only fill memory and the report.
pub const MOST_PHASES: usize = 1_000;

/// Nodes running one workload together: far beyond any cluster, and small enough that
/// every global connection index fits.
pub const MOST_NODES: u64 = 100_000;

/// The slowest rate: one operation every 1,000 seconds. Slower ones are mistakes (a
/// phase bounded by a count would wait for days).
pub const LEAST_RATE: f64 = 0.001;

/// Documents a phase may add (bulk inserted and created, all connections together): the
/// engine numbers each phase's documents in a block of this many, so more would reuse
/// the next phase's ids.
pub const MOST_NEW_DOCUMENTS: u64 = 1_000_000_000_000;

/// Operations of one phase, all connections together: days at any server's speed, and
/// the documents they create stay within the phase's block of ids.
pub const MOST_OPERATIONS: u64 = MOST_NEW_DOCUMENTS;

/// A relative weight of an operation: a millionth is finer than any mix needs, and sums
/// and products of weights stay far inside 64 bits.
pub const MOST_WEIGHT: u64 = 1_000_000;

/// Files sofabench opens besides its connections (result files, the template, the
/// alarm's timer, standard streams), kept free under the open-files limit.
const FILES_OF_ITS_OWN: u64 = 64;

/// The soft open-files limit (`ulimit -n`), when the system tells it.
pub fn open_files() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Connections: each is one open socket, so they must fit under the open-files limit
/// (`open_files`), which the message says how to raise.
pub fn connections(what: &str, n: u64, open_files: Option<u64>) -> Result<(), String> {
    let Some(limit) = open_files else {
        return Ok(());
    };
    let most = limit.saturating_sub(FILES_OF_ITS_OWN);
    if n <= most {
        return Ok(());
    }
    Err(format!(
        "{what} {n}: more connections than this process may open (each is a socket; the open-files limit is {limit}, and sofabench keeps {FILES_OF_ITS_OWN} for itself); give at most {most}, or raise the limit with `ulimit -n {}`",
        n.saturating_add(FILES_OF_ITS_OWN)
    ))
}

/// Documents per bulk insert, at most [`MOST_DOCUMENTS_PER_REQUEST`].
pub fn batch_size(what: &str, n: u64) -> Result<(), String> {
    if n <= MOST_DOCUMENTS_PER_REQUEST {
        return Ok(());
    }
    Err(format!(
        "{what} {n}: at most 1000000 documents per bulk insert (a request is built whole in memory, documents x template size, and servers refuse far smaller bodies); send more requests instead"
    ))
}

/// A rate: from [`LEAST_RATE`] to [`MOST_RATE`].
pub fn rate(what: &str, r: f64) -> Result<(), String> {
    if (LEAST_RATE..=MOST_RATE).contains(&r) {
        return Ok(());
    }
    Err(format!(
        "{what} {r:?}: give operations per second from 0.001 (one every 1000 s) to 10000000 (far beyond any server)"
    ))
}

/// A phase's rate: a constant one as [`rate`]; each end of a ramp 0 or in that range, as
/// long as one is above 0 (a ramp from or down to 0 is a ramp, one of 0 to 0 runs nothing).
pub fn rate_of(what: &str, rate: Rate) -> Result<(), String> {
    if !rate.is_ramp() {
        return self::rate(what, rate.from);
    }
    let in_range = |r: f64| r == 0.0 || (LEAST_RATE..=MOST_RATE).contains(&r);
    if in_range(rate.from) && in_range(rate.to) && rate.peak() >= LEAST_RATE {
        return Ok(());
    }
    Err(format!(
        "{what} {rate}: a ramp goes from one rate to another, each 0 or from 0.001 to 10000000 operations per second, e.g. 100..1000"
    ))
}

/// An operation's relative weight, at most [`MOST_WEIGHT`].
pub fn weight(what: &str, w: u64) -> Result<(), String> {
    if w <= MOST_WEIGHT {
        return Ok(());
    }
    Err(format!(
        "{what} {w}: weights are relative, at most 1000000 (a millionth is finer than any mix needs); divide the weights by a common factor"
    ))
}

/// A count past `most`, as a message shows it; `None` (a product that overflowed) is past
/// every bound.
fn past(n: Option<u64>, most: u64) -> Option<String> {
    match n {
        Some(n) if n <= most => None,
        Some(n) => Some(n.to_string()),
        None => Some("more than 2^64".to_string()),
    }
}

/// Documents a phase adds, at most [`MOST_NEW_DOCUMENTS`].
pub fn new_documents(what: &str, documents: Option<u64>) -> Result<(), String> {
    past(documents, MOST_NEW_DOCUMENTS).map_or(Ok(()), |shown| Err(format!(
        "{what}: {shown} new documents in one phase; at most 1000000000000 (document ids are numbered per phase in blocks of that many, so more would reuse the next phase's ids); give fewer operations or smaller batches"
    )))
}

/// Operations of one phase, at most [`MOST_OPERATIONS`].
pub fn operations(what: &str, n: Option<u64>) -> Result<(), String> {
    past(n, MOST_OPERATIONS).map_or(Ok(()), |shown| Err(format!(
        "{what}: {shown} operations in one phase; at most 1000000000000 (days at any server's speed, and the documents they create must fit the phase's block of ids); give fewer, or bound the phase by --duration"
    )))
}

/// An upper bound of the documents a phase adds: connection 0's share (the largest)
/// times the connections, with every product checked.
fn phase_documents(phase: &Phase) -> Option<u64> {
    let Some(counts) = phase.counts_of(0) else {
        return Some(0);
    };
    let bulk = counts[Operation::BulkInsert].checked_mul(phase.batch_size)?;
    bulk.checked_add(counts[Operation::Create])?
        .checked_mul(phase.connections)
}

/// The number of nodes, 1 to [`MOST_NODES`].
pub fn node_count(n: u64) -> Result<(), String> {
    if (1..=MOST_NODES).contains(&n) {
        return Ok(());
    }
    Err(format!(
        "--node-count {n}: give the number of nodes running together, 1 to {MOST_NODES} (SOFABENCH_NODE_COUNT)"
    ))
}

/// A zipfian constant: YCSB's formula divides by `1 - constant`, so it must lie
/// strictly between 0 and 1.
/// The most bytes of padded documents one bulk insert may carry: the body is built in
/// memory, once per connection.
pub const MOST_PADDED_BATCH: u64 = 256 << 20;

/// A bulk insert of `batch_size` documents padded to at most the phase's largest size
/// must fit in [`MOST_PADDED_BATCH`].
pub fn padded_batch(phase: &Phase) -> Result<(), String> {
    let Some(size) = phase.shape.doc_size else {
        return Ok(());
    };
    if phase.mix[Operation::BulkInsert] == 0 {
        return Ok(());
    }
    let bytes = size.max.saturating_mul(phase.batch_size);
    if bytes <= MOST_PADDED_BATCH {
        return Ok(());
    }
    Err(format!(
        "phase {:?}: bulk inserts of {} documents of up to {} bytes make requests of {bytes} bytes; at most {MOST_PADDED_BATCH} (256 MiB): give a smaller batch size or document size",
        phase.name, phase.batch_size, size.max
    ))
}

/// A bulk insert of `batch_size` documents made from a template whose one document is
/// `document` bytes must fit in [`MOST_PADDED_BATCH`] too: a large template makes large
/// documents whatever `--doc-size` says. `template` names it.
pub fn template_batch(phase: &Phase, document: u64, template: &str) -> Result<(), String> {
    if phase.mix[Operation::BulkInsert] == 0 {
        return Ok(());
    }
    let bytes = document.saturating_mul(phase.batch_size);
    if bytes <= MOST_PADDED_BATCH {
        return Ok(());
    }
    Err(format!(
        "phase {:?}: bulk inserts of {} documents made from the template {template} (one document is {document} bytes) make requests of {bytes} bytes; at most {MOST_PADDED_BATCH} (256 MiB): give a batch size of at most {} (--num_documents_per_bulk_insert, or batch_size in a scenario file) or a smaller template",
        phase.name,
        phase.batch_size,
        (MOST_PADDED_BATCH / document.max(1)).max(1)
    ))
}

/// A bulk insert whose documents each carry an inline attachment of up to `largest`
/// bytes (base64: 4 bytes for every 3) must fit in [`MOST_PADDED_BATCH`] too.
pub fn inline_attachments(phase: &Phase, largest: u64) -> Result<(), String> {
    if phase.mix[Operation::BulkInsert] == 0 {
        return Ok(());
    }
    let document = phase.shape.doc_size.map_or(0, |size| size.max);
    let encoded = largest.div_ceil(3).saturating_mul(4);
    let bytes = encoded
        .saturating_add(document)
        .saturating_mul(phase.batch_size);
    if bytes <= MOST_PADDED_BATCH {
        return Ok(());
    }
    Err(format!(
        "phase {:?}: bulk inserts of {} documents with inline attachments of up to {largest} bytes ({encoded} in base64) make requests of over {bytes} bytes; at most {MOST_PADDED_BATCH} (256 MiB): give a smaller --bulk-attachment-size or batch size",
        phase.name, phase.batch_size
    ))
}

pub fn zipfian(c: f64) -> Result<(), String> {
    if c > 0.0 && c < 1.0 {
        return Ok(());
    }
    Err(format!(
        "keys: zipfian constant {c}: give a number strictly between 0 and 1, e.g. {{ zipfian = 0.99 }} (YCSB's formula divides by 1 - constant)"
    ))
}

/// A phase name: not empty, and without control characters (a name is printed on the
/// terminal, where an escape sequence would act instead of showing).
pub fn phase_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(
            "name: give the phase a name; reports and --threshold refer to phases by name"
                .to_string(),
        );
    }
    if name.chars().any(char::is_control) {
        return Err(
            "name: control characters are not allowed (they would act on the terminal that shows the report); use letters, digits, _ or -".to_string(),
        );
    }
    Ok(())
}

/// Problems of a run's phases as a whole: how many there are, and names that repeat
/// (results and thresholds refer to phases by name).
pub fn phases(phases: &[Phase]) -> Vec<String> {
    let mut problems = Vec::new();
    if phases.len() > MOST_PHASES {
        problems.push(format!(
            "{} phases (sweeps included): at most {MOST_PHASES} (each phase has its own report lines and histograms); sweep fewer values",
            phases.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for phase in phases {
        if !seen.insert(phase.name.as_str()) {
            problems.push(format!(
                "phase {:?} appears twice; give every phase its own name, as results and --threshold refer to phases by name (a sweep names its phases <name>_<value>)",
                phase.name
            ));
        }
    }
    problems
}

/// Problems of one phase's numbers and name (`what` names where a value came from, for
/// instance `phase "load": connections`).
pub fn phase(phase: &Phase, open_files: Option<u64>) -> Vec<String> {
    let at = |key: &str| format!("phase {:?}: {key}", phase.name);
    let mut checks = vec![
        phase_name(&phase.name).map_err(|e| format!("phase {:?}: {e}", phase.name)),
        connections(&at("connections"), phase.connections, open_files),
        batch_size(&at("batch_size"), phase.batch_size),
    ];
    if let Some(r) = phase.rate {
        checks.push(rate_of(&at("rate"), r));
        if r.is_ramp() && phase.bound.duration.is_none() {
            checks.push(Err(format!(
                "{}: a ramp ({r}) runs over the phase's duration; give the phase a duration (duration = \"60s\" in a scenario file, or --duration)",
                at("rate")
            )));
        }
    }
    if let KeyChoice::Zipfian(c) = phase.keys {
        checks.push(zipfian(c).map_err(|e| format!("phase {:?}: {e}", phase.name)));
    }
    checks.push(bound(phase));
    let most = phase
        .operations_of(0)
        .map(|n| n.checked_mul(phase.connections));
    // One message per problem: too many operations also means too many documents.
    let counted = most.map_or(Ok(()), |n| {
        operations(&format!("phase {:?}", phase.name), n)
    });
    if counted.is_ok() {
        checks.push(new_documents(
            &format!("phase {:?}", phase.name),
            phase_documents(phase),
        ));
    }
    checks.push(counted);
    checks.into_iter().filter_map(Result::err).collect()
}

/// A phase bounded to nothing (a duration of 0, 0 operations) would run nothing and
/// pass for a success: a mistake.
fn bound(phase: &Phase) -> Result<(), String> {
    let b = phase.bound;
    let zero = if b.duration.is_some_and(|d| d.is_zero()) {
        "a duration of 0"
    } else if b.total == Some(0) {
        "a total of 0 operations"
    } else if b.per_connection == Some(0) {
        "0 operations per connection"
    } else {
        return Ok(());
    };
    Err(format!(
        "phase {:?}: {zero} would run nothing; give it work or leave the phase out",
        phase.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Weights;
    use std::time::Duration;

    fn sample(name: &str) -> Phase {
        Phase::sample(name, Weights::only(Operation::Read, 1))
    }

    #[test]
    fn connections_fit_under_the_open_files_limit() {
        assert!(connections("--num_connections", 960, Some(1024)).is_ok());
        assert!(connections("--num_connections", u64::MAX, None).is_ok());
        let err = connections("--num_connections", 1_000_000_000_000, Some(1024)).unwrap_err();
        assert!(
            err.contains("--num_connections 1000000000000")
                && err.contains("at most 960")
                && err.contains("ulimit -n 1000000000064"),
            "{err}"
        );
        assert!(open_files().is_none_or(|n| n > 0));
    }

    #[test]
    fn batches_rates_nodes_and_zipfian_have_ranges() {
        assert!(batch_size("b", MOST_DOCUMENTS_PER_REQUEST).is_ok());
        assert!(
            batch_size("b", 1_000_000_000_000)
                .unwrap_err()
                .contains("1000000 documents")
        );
        assert!(rate("--rate", 10_000_000.0).is_ok());
        for bad in [0.0, -1.0, 1e-300, 1e7 + 1.0, f64::INFINITY, f64::NAN] {
            assert!(rate("--rate", bad).is_err(), "{bad}");
        }
        for good in [(0.0, 1.0), (5.0, 0.0), (0.001, 10_000_000.0), (700.0, 7.0)] {
            assert!(rate_of("r", Rate::ramp(good.0, good.1)).is_ok(), "{good:?}");
        }
        for bad in [
            (0.0, 0.0),
            (0.0, 1e-4),
            (-1.0, 5.0),
            (1.0, 1e8),
            (f64::NAN, 1.0),
        ] {
            let err = rate_of("r", Rate::ramp(bad.0, bad.1)).unwrap_err();
            assert!(err.starts_with("r "), "{bad:?}: {err}");
        }
        assert!(node_count(1).is_ok() && node_count(MOST_NODES).is_ok());
        assert!(node_count(0).is_err() && node_count(1_000_000_000_000).is_err());
        assert!(zipfian(0.99).is_ok());
        for bad in [0.0, 1.0, 1.5, -0.5, f64::NAN] {
            assert!(
                zipfian(bad).unwrap_err().contains("between 0 and 1"),
                "{bad}"
            );
        }
    }

    #[test]
    fn names_must_be_given_plain_and_once() {
        assert!(phase_name("load").is_ok());
        assert!(
            phase_name("")
                .unwrap_err()
                .contains("give the phase a name")
        );
        assert!(phase_name("\u{1b}[2Jx").unwrap_err().contains("control"));
        let twice = phases(&[sample("a"), sample("b"), sample("a")]);
        assert_eq!(twice.len(), 1);
        assert!(twice[0].contains("\"a\" appears twice"), "{twice:?}");
        let many: Vec<Phase> = (0..=MOST_PHASES)
            .map(|i| sample(&format!("p{i}")))
            .collect();
        assert!(phases(&many)[0].contains("at most 1000"));
    }

    #[test]
    fn weights_and_new_documents_have_ranges() {
        assert!(weight("--create_weight", MOST_WEIGHT).is_ok());
        assert!(
            weight("--create_weight", u64::MAX)
                .unwrap_err()
                .contains("relative")
        );
        assert!(new_documents("x", Some(MOST_NEW_DOCUMENTS)).is_ok());
        assert!(
            new_documents("x", None)
                .unwrap_err()
                .contains("more than 2^64")
        );
        let mut p = sample("load");
        p.mix = Weights::only(Operation::BulkInsert, 1);
        p.bound.per_connection = Some(1_000_000_000_000);
        p.batch_size = 1_000_000;
        let problems = phase(&p, None);
        assert!(
            problems[0].contains("2000000000000 operations"),
            "{problems:?}"
        );
        assert_eq!(problems.len(), 1, "one message per problem: {problems:?}");
        p.bound.per_connection = Some(1_000_000);
        let problems = phase(&p, None);
        assert!(problems[0].contains("blocks of that many"), "{problems:?}");
        assert!(
            operations("x", None)
                .unwrap_err()
                .contains("more than 2^64")
        );
    }

    #[test]
    fn a_phase_bounded_to_nothing_is_refused() {
        assert!(phase(&sample("ok"), Some(1024)).is_empty());
        let mut p = sample("z");
        p.bound.duration = Some(Duration::ZERO);
        assert!(phase(&p, None)[0].contains("a duration of 0 would run nothing"));
        let mut p = sample("z");
        p.bound.total = Some(0);
        assert!(phase(&p, None)[0].contains("total of 0"));
        let mut p = sample("z");
        p.keys = KeyChoice::Zipfian(1.0);
        p.connections = 5000;
        assert_eq!(phase(&p, Some(1024)).len(), 2);
    }

    #[test]
    fn a_ramp_needs_the_phase_to_have_a_duration() {
        let mut p = sample("up");
        p.rate = Some(Rate::ramp(10.0, 100.0));
        let problems = phase(&p, None);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0]
                .starts_with("phase \"up\": rate: a ramp (10..100) runs over the phase's duration"),
            "{problems:?}"
        );
        p.bound.duration = Some(Duration::from_secs(5));
        assert!(phase(&p, None).is_empty());
        p.rate = Some(Rate::ramp(0.0, 0.0));
        assert!(phase(&p, None)[0].contains("from 0.001"));
    }
}
