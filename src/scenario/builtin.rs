//! The built-in scenarios, each reproducing one reference benchmark's experiment, in one
//! table: name, the line `sofabench scenarios` prints, and how its phases are made.

use std::time::Duration;

use super::settings::{FLAGS, Keys, Layers, Origin, Origins, PerKey, Spec};
use super::{BuiltinOptions, Form, Scenario};
use crate::workload::changes::ChangesFeed;
use crate::workload::replication::ContinuousReplication;
use crate::workload::{
    Action, DocSize, IdScheme, Operation, Phase, Rate, SweepPoint, SweptSetting, Weights, limits,
};

/// Phases with where their settings came from, or what is wrong with the flags.
pub type Built = Result<Vec<(Phase, Origins)>, Vec<String>>;

/// A built-in scenario.
pub struct Builtin {
    pub name: &'static str,
    /// One line for `sofabench scenarios` and the run's header.
    pub description: &'static str,
    form: Form,
    phases: fn(&Layers, &BuiltinOptions) -> Built,
    /// Which of the [`OWN_FLAGS`] the scenario takes.
    pub takes: &'static [&'static str],
    /// The scenario's own template and its description, for a run that names none.
    template: Option<fn(&BuiltinOptions) -> super::OwnTemplate>,
}

/// Flags that only some scenarios take, the others would ignore them: their clap ids
/// (as `takes` names them) and how the user writes them.
pub const OWN_FLAGS: [(&str, &str); 15] = [
    ("num_bulk_insert_operations", "--num_bulk_insert_operations"),
    ("create_weight", "--create_weight"),
    ("read_weight", "--read_weight"),
    ("update_weight", "--update_weight"),
    ("delete_weight", "--delete_weight"),
    ("attachment_write_weight", "--attachment_write_weight"),
    ("attachment_read_weight", "--attachment_read_weight"),
    ("full", "--full"),
    ("writes", "--writes"),
    ("reads", "--reads"),
    ("batch_sizes", "--batch-sizes"),
    ("query_field", "--query-field"),
    ("fabric_docs", "--fabric-docs"),
    ("fabric_single_docs", "--fabric-single-docs"),
    ("fabric_doc_size", "--fabric-doc-size"),
];

const WEIGHTS: [&str; 6] = [
    "create_weight",
    "read_weight",
    "update_weight",
    "delete_weight",
    "attachment_write_weight",
    "attachment_read_weight",
];

impl Builtin {
    /// The reference benchmark's result form the scenario adds to the standard report.
    pub fn form(&self) -> Form {
        self.form
    }

    /// The scenario, with the flags and defaults applied.
    pub fn build(
        &self,
        layers: &Layers,
        options: &BuiltinOptions,
    ) -> Result<Scenario, Vec<String>> {
        let planned = (self.phases)(layers, options)?;
        let scenario = Scenario::new(self.name, self.description, self.form, planned);
        Ok(Scenario {
            queries: super::queries::of_phases(&scenario.phases),
            template: self.template.map(|template| template(options)),
            ..scenario
        })
    }
}

/// Every built-in scenario, the default first.
pub static BUILTINS: [Builtin; 16] = [
    Builtin {
        name: "ironcushion",
        description: "Iron Cushion's bulk insert step, then its CRUD step (the default; its flags apply)",
        form: Form::Standard,
        phases: ironcushion,
        takes: &[
            "num_bulk_insert_operations",
            WEIGHTS[0],
            WEIGHTS[1],
            WEIGHTS[2],
            WEIGHTS[3],
            WEIGHTS[4],
            WEIGHTS[5],
        ],
        template: None,
    },
    Builtin {
        name: "read-ratio-sweep",
        description: "titan-loadtest: phases of 0, 10, 25, 50, 75, 90, 95 % reads, with its tab-separated result lines",
        form: Form::Titan,
        phases: read_ratio_sweep,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "scaling",
        description: "couchbase-tests: N writes then N reads for N = 10 … 100,000 (1,000,000 with --full), with a table and weighted average",
        form: Form::Scaling,
        phases: scaling,
        takes: &["full", "writes", "reads"],
        template: None,
    },
    Builtin {
        name: "couchdb-report",
        description: "the CouchDB report: single PUTs, bulk sizes 50/100/200, reads with 1 and 10 connections, writes while compacting and replicating",
        form: Form::Standard,
        phases: couchdb_report,
        takes: &["batch_sizes"],
        template: None,
    },
    Builtin {
        name: "soak",
        description: "a fixed rate for a long time (--rate, default 100/s; --duration, default 1h), for leak and stability hunting",
        form: Form::Standard,
        phases: soak,
        takes: &WEIGHTS,
        template: None,
    },
    Builtin {
        name: "doc-size-sweep",
        description: "bulk inserts of documents padded to 256 B, 1 KiB, 4 KiB, 16 KiB and 64 KiB, one phase each",
        form: Form::Standard,
        phases: doc_size_sweep,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "id-scheme",
        description: "the same bulk load with sequential ids, with random (uuid) ids, then with ids the server gives",
        form: Form::Standard,
        phases: id_scheme,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "changes",
        description: "writers at a fixed rate (--rate, default 200/s; --duration, default 30s) with 2 _changes consumers (--changes-* flags), reporting change latency",
        form: Form::Standard,
        phases: changes,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "replication-lag",
        description: "writers at a fixed rate (--rate, default 200/s; --duration, default 30s) while the database replicates continuously to a new database of the run's own, reporting replication lag",
        form: Form::Standard,
        phases: replication_lag,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "mango",
        description: "a bulk load, a Mango index on --query-field built and timed, equality and range _find queries alone and among writes, then a second index built while writes go on",
        form: Form::Standard,
        phases: super::queries::mango,
        takes: &["query_field"],
        template: None,
    },
    Builtin {
        name: "views",
        description: "a bulk load, a view of --query-field built and timed, key and range-count queries alone, key queries among writes with update=true, false and lazy, then a second view built while writes go on",
        form: Form::Standard,
        phases: super::queries::views,
        takes: &["query_field"],
        template: None,
    },
    Builtin {
        name: "fabric-bench",
        description: "CouchDB's fabric_bench over HTTP at 1 connection: --fabric-docs documents (100,000) bulk inserted, as many random reads, _all_docs and _changes read whole, --fabric-single-docs single writes (1,000), of --fabric-doc-size",
        form: Form::Fabric,
        phases: super::fabric::fabric_bench,
        takes: &["fabric_docs", "fabric_single_docs", "fabric_doc_size"],
        template: Some(super::fabric::template),
    },
    Builtin {
        name: "steady-fleet",
        description: "50 devices (--devices) writing 0.2/s each (--device-writes) and syncing live over _doc_ids feeds, 10 % of their writes edits of 20 shared documents, for 60s (--duration): time to visible, sync cycles, convergence",
        form: Form::Standard,
        phases: super::fleets::steady_fleet,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "morning-rush",
        description: "20 devices offline for the first 45s of 50s, writing 25/s each (backlogs of ~1,100 edits per device, spread over its own ~22 documents), coming online together: catch-up time and what the server meets",
        form: Form::Standard,
        phases: super::fleets::morning_rush,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "cold-start",
        description: "10,000 documents bulk inserted (--total-operations requests of 500), then 5 devices (--devices) joining empty and pulling the whole database: initial sync time, documents per second",
        form: Form::Standard,
        phases: super::fleets::cold_start,
        takes: &[],
        template: None,
    },
    Builtin {
        name: "conflict-storm",
        description: "30 devices (--devices) editing 10 shared documents (--device-shared-docs) 0.5/s each, syncing every 5s (--device-sync), for 60s: conflicts made, seen, and matched against the server's",
        form: Form::Standard,
        phases: super::fleets::conflict_storm,
        takes: &[],
        template: None,
    },
];

/// The built-in scenario called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
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

/// `spec` as the phase of the sweep `series` where `setting` is `value`.
fn swept(spec: Spec, series: &str, setting: SweptSetting, value: u64) -> Spec {
    Spec {
        sweep: Some(SweepPoint {
            series: series.to_string(),
            setting,
            value,
        }),
        ..spec
    }
}

fn decide_all(specs: Vec<Spec>, layers: &Layers) -> Built {
    Ok(specs.into_iter().map(|s| s.decide(layers)).collect())
}

/// Iron Cushion's two steps, from its flags (`options.plan`): the rate paces the CRUD
/// step only, and the Iron Cushion rules are checked.
fn ironcushion(layers: &Layers, options: &BuiltinOptions) -> Built {
    let plan = &options.plan;
    plan.validate()?;
    let given = &layers.given;
    let from = |given: bool, flag| {
        Some(if given {
            Origin::Flag(flag)
        } else {
            Origin::Default
        })
    };
    let planned = plan.phases(given.rate).into_iter().map(|phase| {
        let bulk = phase.mix[Operation::BulkInsert] > 0;
        let bound = phase.bound;
        let origins = PerKey {
            connections: from(given.connections.is_some(), FLAGS.connections),
            batch_size: from(given.batch_size.is_some(), FLAGS.batch_size),
            operations: match (bulk, bound.per_connection) {
                (true, _) => from(
                    options.bulk_operations_given,
                    "--num_bulk_insert_operations",
                ),
                (false, Some(_)) => from(given.operations.is_some(), FLAGS.operations),
                (false, None) => None,
            },
            total: bound.total.and(from(true, FLAGS.total)),
            duration: bound.duration.and(from(true, FLAGS.duration)),
            rate: phase.rate.and(from(true, FLAGS.rate)),
        };
        (phase, origins)
    });
    Ok(planned.collect())
}

/// Equal operation counts per phase (`--total-operations`, default 10,000), each cut
/// at `--duration` if it comes first.
fn read_ratio_sweep(layers: &Layers, _: &BuiltinOptions) -> Built {
    let specs = [0, 10, 25, 50, 75, 90, 95].into_iter().map(|r| {
        let mix = crate::workload::plan::reads_and_creates(r);
        let mut spec = Spec::new(format!("RR_{r:02}"), mix);
        spec.scenario.total = Some(10_000);
        swept(spec, "RR", SweptSetting::ReadRatio, r)
    });
    decide_all(specs.collect(), layers)
}

fn scaling(layers: &Layers, options: &BuiltinOptions) -> Built {
    let counts: Vec<(u64, u64)> = match options.writes_reads {
        Some((Some(writes), reads)) if writes > 0 => vec![(writes, reads)],
        // Its reads read the documents its writes created: no writes, nothing to read,
        // and a run of nothing would pass for a success.
        Some((Some(_), _)) => {
            return Err(vec![
                "--writes 0: scaling reads only the documents its writes created, so it needs at least one write; give --writes 1 or more (--reads 0 for writes alone)".to_string(),
            ]);
        }
        Some((None, _)) => {
            return Err(vec![
                "--reads without --writes: scaling reads only the documents its writes created; give --writes N as well, e.g. --writes 1000 --reads 1000".to_string(),
            ]);
        }
        None => {
            let mut counts = vec![10, 100, 1_000, 10_000, 25_000, 50_000, 100_000];
            if options.full {
                counts.extend([250_000, 500_000, 750_000, 1_000_000]);
            }
            counts.into_iter().map(|n| (n, n)).collect()
        }
    };
    let counted = |series: &str, mix, n| {
        let mut spec = Spec::new(format!("{series}_{n}"), mix);
        spec.own.total = Some(n);
        swept(spec, series, SweptSetting::Total, n)
    };
    let mut specs = Vec::new();
    for (writes, reads) in counts {
        specs.push(counted("write", creates(), writes));
        if reads > 0 {
            specs.push(counted("read", self::reads(), reads));
        }
    }
    let mut planned = decide_all(specs, layers)?;
    planned.retain(|(phase, _)| phase.has_work());
    Ok(planned)
}

/// A phase of the CouchDB report: its connections and batch size are the report's.
fn report_phase(name: impl Into<String>, mix: Weights, connections: u64, batch: u64) -> Spec {
    let mut spec = Spec::new(name, mix);
    spec.own.connections = Some(connections);
    spec.own.batch_size = Some(batch);
    spec
}

/// The report's runs, scaled to a first run: its 1M single PUTs and 50K bulk documents
/// become `--total-operations` (default 1,000) and 50 bulk requests per size. The replica
/// is a database name on the run's own server (see `ContinuousReplication`).
fn couchdb_report(layers: &Layers, options: &BuiltinOptions) -> Built {
    // Refused before a phase is built for each: a long list would fill memory first.
    if options.batch_sizes.len() > limits::MOST_PHASES {
        return Err(vec![format!(
            "--batch-sizes: {} sizes, at most {} (each is a phase with its own report lines and histograms); give fewer",
            options.batch_sizes.len(),
            limits::MOST_PHASES
        )]);
    }
    let mut put = report_phase("put_single_1conn", creates(), 1, 1);
    put.scenario.total = Some(1_000);
    let mut specs = vec![put];
    for &size in &options.batch_sizes {
        let mut spec = report_phase(format!("bulk_{size}"), bulk(), 1, size);
        spec.own.total = Some(50);
        specs.push(swept(spec, "bulk", SweptSetting::BatchSize, size));
    }
    for connections in [1, 10] {
        let mut spec = report_phase(format!("read_{connections}conn"), reads(), connections, 1);
        spec.scenario.total = Some(1_000);
        specs.push(swept(spec, "read", SweptSetting::Connections, connections));
    }
    let mut compacting = report_phase("bulk_50_while_compacting", bulk(), 1, 50);
    compacting.scenario.duration = Some(Duration::from_secs(5));
    compacting.action = Some(Action::Compact {
        at: Duration::from_secs(1),
    });
    specs.push(compacting);
    // Continuous replication for the whole phase, so that its lag is measured too.
    for (name, two_way) in [
        ("bulk_50_replicating_one_way", false),
        ("bulk_50_replicating_two_way", true),
    ] {
        let mut spec = report_phase(name, bulk(), 1, 50);
        spec.scenario.duration = Some(Duration::from_secs(5));
        spec.replication = Some(ContinuousReplication {
            two_way,
            ..ContinuousReplication::to(vec![options.replica.clone()])
        });
        specs.push(spec);
    }
    decide_all(specs, layers)
}

/// The documents' sizes doc-size-sweep pads to.
const SWEPT_SIZES: [u64; 5] = [256, 1 << 10, 4 << 10, 16 << 10, 64 << 10];

/// A bulk load of `--total-operations` requests (default 20) of 100 documents (or
/// `--num_documents_per_bulk_insert`), cut at `--duration` if it comes first.
fn shape_load(name: String) -> Spec {
    let mut spec = Spec::new(name, bulk());
    spec.scenario.batch_size = Some(100);
    spec.scenario.total = Some(20);
    spec
}

fn doc_size_sweep(layers: &Layers, _: &BuiltinOptions) -> Built {
    let specs = SWEPT_SIZES.into_iter().map(|size| {
        let mut spec = shape_load(format!("size_{size}"));
        spec.shape.doc_size = Some(DocSize::fixed(size));
        swept(spec, "size", SweptSetting::DocSize, size)
    });
    decide_all(specs.collect(), layers)
}

fn id_scheme(layers: &Layers, _: &BuiltinOptions) -> Built {
    let specs = IdScheme::ALL.into_iter().map(|scheme| {
        let mut spec = shape_load(format!("ids_{}", scheme.name()));
        spec.shape.ids = Some(scheme);
        swept(spec, "ids", SweptSetting::IdScheme, scheme.sweep_value())
    });
    decide_all(specs.collect(), layers)
}

/// A load of one bulk request per connection, then the mix at a fixed rate for long.
fn soak(layers: &Layers, options: &BuiltinOptions) -> Built {
    let mut load = Spec::new("soak_load", bulk());
    load.own.operations = Some(1);
    let mut soak = Spec::new("soak", options.plan.weights);
    soak.scenario = Keys {
        duration: Some(Duration::from_secs(3600)),
        rate: Some(Rate::constant(100.0)),
        ..Keys::default()
    };
    decide_all(vec![load, soak], layers)
}

/// A load of one bulk request per connection (so that updates and deletes find
/// documents from the start), then creates, updates and deletes at a fixed rate while two
/// consumers follow the feed: a rate the server keeps up with, so that the latency is the
/// feed's, not a queue's.
fn changes(layers: &Layers, _: &BuiltinOptions) -> Built {
    let (load, mut writes) = writers_at_rate("changes");
    writes.changes = Some(ChangesFeed::with_consumers(2));
    decide_all(vec![load, writes], layers)
}

/// `NAME_load` (one bulk request per connection) and `NAME`: creates, updates and
/// deletes at 200/s for 30 s unless the flags say otherwise.
fn writers_at_rate(name: &str) -> (Spec, Spec) {
    let mut load = Spec::new(format!("{name}_load"), bulk());
    load.own.operations = Some(1);
    let mix = Weights::from_fn(|op| match op {
        Operation::Create => 50,
        Operation::Update => 40,
        Operation::Delete => 10,
        _ => 0,
    });
    let mut writes = Spec::new(name, mix);
    writes.scenario = Keys {
        duration: Some(Duration::from_secs(30)),
        rate: Some(Rate::constant(200.0)),
        ..Keys::default()
    };
    (load, writes)
}

/// The `changes` scenario's writers, followed on a replica instead of the feed: the lag
/// from a write's answer to its sighting on `<db>-replica-<id prefix>`. The load phase
/// replicates too (its grace waits until the replica has caught up), so that the writers'
/// replication starts from its checkpoint, not from a replica still filling.
fn replication_lag(layers: &Layers, options: &BuiltinOptions) -> Built {
    let (mut load, mut writes) = writers_at_rate("replication_lag");
    let replication = ContinuousReplication::to(vec![options.replica.clone()]);
    load.replication = Some(replication.clone());
    writes.replication = Some(replication);
    decide_all(vec![load, writes], layers)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn every_flag_a_scenario_takes_is_one_of_the_own_flags_and_names_are_unique() {
        for builtin in &BUILTINS {
            for id in builtin.takes {
                assert!(OWN_FLAGS.iter().any(|(own, _)| own == id), "{id}");
            }
            assert_eq!(
                find(builtin.name).map(|b| b.description),
                Some(builtin.description)
            );
        }
        assert_eq!(BUILTINS[0].name, "ironcushion", "the default comes first");
    }

    pub(in crate::scenario) fn options() -> BuiltinOptions {
        BuiltinOptions {
            plan: crate::workload::Plan {
                connections: 2,
                documents_per_bulk_insert: 10,
                bulk_inserts_per_connection: 1,
                crud: crate::workload::CrudBound::default(),
                weights: reads(),
                targets: crate::workload::Targets::Own,
            },
            bulk_operations_given: false,
            full: false,
            writes_reads: None,
            batch_sizes: vec![50, 100],
            replica: "replica".to_string(),
            query_field: "integer1".to_string(),
            fabric: crate::scenario::fabric::FabricOptions::default(),
        }
    }

    fn layers(duration: Option<Duration>) -> Layers {
        Layers {
            given: Keys {
                duration,
                ..Keys::default()
            },
            default: Keys {
                connections: Some(2),
                batch_size: Some(10),
                ..Keys::default()
            },
            ..Layers::default()
        }
    }

    /// `--duration` given to a built-in scenario keeps each phase's count and ends it at
    /// the duration if that comes first (never later than without it), and a phase with
    /// no count runs for the duration. Iron Cushion's CRUD step is the exception its flags
    /// define: its 1,000 operations per connection apply only when nothing else bounds it.
    #[test]
    fn a_given_duration_bounds_every_phase_and_lengthens_none() {
        let given = Some(Duration::from_secs(2));
        for builtin in BUILTINS.iter().filter(|b| b.name != "ironcushion") {
            let plain = builtin.build(&layers(None), &options()).unwrap();
            let bounded = builtin.build(&layers(given), &options()).unwrap();
            assert_eq!(plain.phases.len(), bounded.phases.len(), "{}", builtin.name);
            for (without, with) in plain.phases.iter().zip(&bounded.phases) {
                let what = format!("{} {}", builtin.name, with.name);
                assert_eq!(
                    with.bound.per_connection, without.bound.per_connection,
                    "{what}"
                );
                assert_eq!(with.bound.total, without.bound.total, "{what}");
                assert_eq!(with.bound.duration, given, "{what}");
            }
        }
        let ironcushion = find("ironcushion").unwrap();
        let phases = ironcushion
            .build(&layers(given), &options())
            .unwrap()
            .phases;
        assert_eq!(
            phases[0].bound.duration, None,
            "the bulk insert step is counted"
        );
    }

    /// Each phase's place in its sweep, as `name series setting value`.
    fn points(name: &str) -> Vec<String> {
        let layers = Layers {
            default: Keys {
                connections: Some(2),
                batch_size: Some(10),
                ..Keys::default()
            },
            ..Layers::default()
        };
        let scenario = find(name).unwrap().build(&layers, &options()).unwrap();
        scenario
            .phases
            .iter()
            .filter_map(|p| {
                let s = p.sweep.as_ref()?;
                Some(format!(
                    "{} {} {:?} {}",
                    p.name, s.series, s.setting, s.value
                ))
            })
            .collect()
    }

    #[test]
    fn the_built_in_sweeps_say_what_they_sweep() {
        let ratios = points("read-ratio-sweep");
        assert_eq!(ratios.len(), 7);
        assert_eq!(ratios[1], "RR_10 RR ReadRatio 10");
        let scaling = points("scaling");
        assert_eq!(
            scaling[..2],
            ["write_10 write Total 10", "read_10 read Total 10"]
        );
        assert_eq!(
            points("couchdb-report"),
            [
                "bulk_50 bulk BatchSize 50",
                "bulk_100 bulk BatchSize 100",
                "read_1conn read Connections 1",
                "read_10conn read Connections 10"
            ]
        );
        assert!(points("ironcushion").is_empty() && points("soak").is_empty());
        assert_eq!(
            points("id-scheme"),
            [
                "ids_sequential ids IdScheme 0",
                "ids_uuid ids IdScheme 1",
                "ids_server ids IdScheme 2"
            ]
        );
        let sizes = points("doc-size-sweep");
        assert_eq!(
            (sizes.len(), sizes[4].as_str()),
            (5, "size_65536 size DocSize 65536")
        );
    }
}
