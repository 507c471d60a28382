//! The built-in scenarios, each reproducing one reference benchmark's experiment.

use std::time::Duration;

use super::{Defaults, Form, Scenario};
use crate::workload::{Action, CrudBound, KeyChoice, Operation, Phase, Weights};

/// Name and one line for `sofabench scenarios`.
pub const LIST: [(&str, &str); 5] = [
    (
        "ironcushion",
        "Iron Cushion's bulk insert step, then its CRUD step (the default; its flags apply)",
    ),
    (
        "read-ratio-sweep",
        "titan-loadtest: phases of 0, 10, 25, 50, 75, 90, 95 % reads, with its tab-separated result lines",
    ),
    (
        "scaling",
        "couchbase-tests: N writes then N reads for N = 10 … 100,000 (1,000,000 with --full), with a table and weighted average",
    ),
    (
        "couchdb-report",
        "the CouchDB report: single PUTs, bulk sizes 50/100/200, reads with 1 and 10 connections, writes while compacting and replicating",
    ),
    (
        "soak",
        "a fixed rate for a long time (--rate, default 100/s; --duration, default 1h), for leak and stability hunting",
    ),
];

fn phase(name: String, mix: Weights, bound: CrudBound, connections: u64, batch_size: u64) -> Phase {
    Phase {
        name,
        mix,
        bound,
        connections,
        batch_size,
        rate: None,
        keys: KeyChoice::Uniform,
        action: None,
    }
}

fn total(n: u64) -> CrudBound {
    CrudBound {
        total: Some(n),
        ..CrudBound::default()
    }
}

fn reads() -> Weights {
    Weights::only(Operation::Read, 1)
}

fn creates() -> Weights {
    Weights::only(Operation::Create, 1)
}

fn bulk() -> Weights {
    Weights::only(Operation::BulkInsert, 1)
}

/// Equal operation count per phase (`--total-operations`, default 10,000), or equal
/// duration with `--duration`.
fn equal_bound(d: &Defaults, default_total: u64) -> CrudBound {
    match (d.duration, d.total) {
        (Some(duration), total) => CrudBound {
            duration: Some(duration),
            total,
            ..CrudBound::default()
        },
        (None, total) => total_or(total, default_total),
    }
}

fn total_or(total: Option<u64>, default: u64) -> CrudBound {
    self::total(total.unwrap_or(default))
}

pub fn read_ratio_sweep(d: &Defaults) -> Scenario {
    let phases = [0, 10, 25, 50, 75, 90, 95]
        .into_iter()
        .map(|r| {
            let mix = crate::workload::plan::reads_and_creates(r);
            let mut p = phase(
                format!("RR_{r:02}"),
                mix,
                equal_bound(d, 10_000),
                d.connections,
                d.batch_size,
            );
            p.rate = d.rate;
            p.keys = d.keys;
            p
        })
        .collect();
    Scenario {
        name: "read-ratio-sweep".to_string(),
        description: LIST[1].1.to_string(),
        phases,
        form: Form::Titan,
    }
}

pub fn scaling(d: &Defaults, full: bool, writes_reads: Option<(u64, u64)>) -> Scenario {
    let counts: Vec<(u64, u64)> = match writes_reads {
        Some(pair) => vec![pair],
        None => {
            let mut counts = vec![10, 100, 1_000, 10_000, 25_000, 50_000, 100_000];
            if full {
                counts.extend([250_000, 500_000, 750_000, 1_000_000]);
            }
            counts.into_iter().map(|n| (n, n)).collect()
        }
    };
    let mut phases = Vec::new();
    for (writes, reads) in counts {
        phases.push(phase(
            format!("write_{writes}"),
            creates(),
            total(writes),
            d.connections,
            d.batch_size,
        ));
        if reads > 0 {
            phases.push(phase(
                format!("read_{reads}"),
                self::reads(),
                total(reads),
                d.connections,
                d.batch_size,
            ));
        }
    }
    phases.retain(Phase::has_work);
    Scenario {
        name: "scaling".to_string(),
        description: LIST[2].1.to_string(),
        phases,
        form: Form::Scaling,
    }
}

/// `replica` is a database name on the run's own server (see `Action::Replicate`).
pub fn couchdb_report(d: &Defaults, batch_sizes: &[u64], replica: &str) -> Scenario {
    // The report's runs, scaled to a first run: its 1M single PUTs and 50K bulk documents
    // become --total-operations (default 1,000) and 50 bulk requests per size.
    let singles = d.total.unwrap_or(1_000);
    let mut phases = vec![phase(
        "put_single_1conn".to_string(),
        creates(),
        total(singles),
        1,
        1,
    )];
    for &size in batch_sizes {
        phases.push(phase(format!("bulk_{size}"), bulk(), total(50), 1, size));
    }
    for connections in [1, 10] {
        let bound = match d.duration {
            Some(duration) => CrudBound {
                duration: Some(duration),
                ..CrudBound::default()
            },
            None => total(singles),
        };
        phases.push(phase(
            format!("read_{connections}conn"),
            reads(),
            bound,
            connections,
            1,
        ));
    }
    let during = |name: &str, action: Action| {
        let mut p = phase(
            name.to_string(),
            bulk(),
            CrudBound {
                duration: Some(d.duration.unwrap_or(Duration::from_secs(5))),
                ..CrudBound::default()
            },
            1,
            50,
        );
        p.action = Some(action);
        p
    };
    phases.push(during(
        "bulk_50_while_compacting",
        Action::Compact {
            at: Duration::from_secs(1),
        },
    ));
    phases.push(during(
        "bulk_50_replicating_one_way",
        Action::Replicate {
            at: Duration::from_secs(1),
            target: replica.to_string(),
            two_way: false,
        },
    ));
    phases.push(during(
        "bulk_50_replicating_two_way",
        Action::Replicate {
            at: Duration::from_secs(1),
            target: replica.to_string(),
            two_way: true,
        },
    ));
    Scenario {
        name: "couchdb-report".to_string(),
        description: LIST[3].1.to_string(),
        phases,
        form: Form::Standard,
    }
}

pub fn soak(d: &Defaults, weights: Weights) -> Scenario {
    let mut p = phase(
        "soak".to_string(),
        weights,
        CrudBound {
            duration: Some(d.duration.unwrap_or(Duration::from_secs(3600))),
            total: d.total,
            ..CrudBound::default()
        },
        d.connections,
        d.batch_size,
    );
    p.rate = Some(d.rate.unwrap_or(100.0));
    p.keys = d.keys;
    let load = phase(
        "soak_load".to_string(),
        bulk(),
        CrudBound {
            per_connection: Some(1),
            ..CrudBound::default()
        },
        d.connections,
        d.batch_size,
    );
    Scenario {
        name: "soak".to_string(),
        description: LIST[4].1.to_string(),
        phases: vec![load, p],
        form: Form::Standard,
    }
}
