//! `sofabench run`: Iron Cushion's bulk insert step, then its CRUD step.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::SystemTime;

use serde_json::json;
use std::sync::Arc;

use super::RunArgs;
use super::output::OutputFiles;
use super::templates;
use crate::analysis::nodes;
use crate::analysis::thresholds::{self, Threshold};
use crate::driver::Endpoint;
use crate::driver::admin::{Admin, ExistingDatabase, PreparedDatabase};
use crate::engine::monitor::LiveOutput;
use crate::engine::{
    ActionSettings, Engine, NodeSlice, PhaseOutcome, ReplicationAddress, RunSettings, Stop,
};
use crate::exit::{Failed, INTERRUPTED, RUN_FAILED};
use crate::report;
use crate::report::numbers::grouped;
use crate::results;
use crate::results::NodeInfo;
use crate::scenario::{self, BuiltinOptions, Defaults, Form, Scenario, forms};
use crate::target::{Credentials, Target};
use crate::template::DocumentWriter;
use crate::workload::{CrudBound, DocumentIds, KeyChoice, Operation, Plan, Weights, ids};

fn plan_from(args: &RunArgs) -> Plan {
    Plan {
        connections: args.num_connections,
        documents_per_bulk_insert: args.num_documents_per_bulk_insert,
        bulk_inserts_per_connection: args.num_bulk_insert_operations,
        crud: CrudBound {
            per_connection: args
                .num_crud_operations
                .or((args.duration.is_none() && args.total_operations.is_none()).then_some(1000)),
            total: args.total_operations,
            duration: args.duration,
        },
        weights: Weights::from_fn(|op| match op {
            Operation::BulkInsert => 0,
            Operation::Create => args.create_weight,
            Operation::Read => args.read_weight,
            Operation::Update => args.update_weight,
            Operation::Delete => args.delete_weight,
        }),
    }
}

fn existing_policy(args: &RunArgs) -> ExistingDatabase {
    if args.recreate {
        ExistingDatabase::Recreate
    } else if args.reuse {
        ExistingDatabase::Reuse
    } else {
        ExistingDatabase::Refuse
    }
}

pub fn execute(args: RunArgs) -> Result<(), Failed> {
    // Everything the user gave is checked before anything is sent.
    let mut target =
        Target::parse(&args.database_address, &args.database_name).map_err(Failed::bad_input)?;
    if target.credentials.is_none()
        && let Some(user) = &args.user
    {
        target.credentials = Some(Credentials {
            user: user.clone(),
            password: args.password.clone().unwrap_or_default(),
        });
    }
    let replication = match &args.replication_address {
        Some(text) => ReplicationAddress::parse(text, &target).map_err(Failed::bad_input)?,
        None => ReplicationAddress::from_target(&target),
    };
    let plan = plan_from(&args);
    let prefix = args
        .id_prefix
        .clone()
        .unwrap_or_else(|| DocumentIds::random_prefix(rand::random()));
    let checks = Threshold::parse_all(&args.threshold).map_err(Failed::bad_input)?;
    let mut scenario = choose_scenario(&args, &plan, &target, &prefix)?;
    check_threshold_phases(&checks, &scenario).map_err(Failed::bad_input)?;
    // N nodes together run the workload one node would with N times the connections.
    for phase in &mut scenario.phases {
        phase.connections *= args.node_count.max(1);
    }
    nodes::validate(args.node_index, args.node_count, args.num_connections)
        .map_err(Failed::bad_input)?;
    if args.node_count > 1 && (args.recreate || args.cleanup) {
        return Err(Failed::bad_input(format!(
            "--{} with --node-count {}: one node would delete the database while the others use it; give every node --reuse, and create or delete the database before and after the run",
            if args.recreate { "recreate" } else { "cleanup" },
            args.node_count
        )));
    }
    let (template, template_name) = templates::load(
        args.json_document_schema_filename.as_deref(),
        args.xml_document_schema_filename.as_deref(),
    )?;
    if let Some(prefix) = &args.id_prefix {
        ids::validate_prefix(prefix).map_err(Failed::bad_input)?;
    }
    let outputs = OutputFiles::new(
        args.out.as_deref(),
        args.json.as_deref(),
        args.csv.as_deref(),
        args.html.as_deref(),
    );
    outputs.check(args.overwrite)?;
    let seed = args.seed.unwrap_or_else(rand::random);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed::run(format!("cannot start the runtime: {e}")))?;
    let settings = RunSettings {
        target,
        writer: Arc::new(DocumentWriter::new(template, seed)),
        seed,
        ids: DocumentIds::new(&prefix),
        // A server that never answers must not hang the run.
        timeout: Some(args.timeout).filter(|t| !t.is_zero()),
        late_threshold: args.late_threshold,
        interval: args.interval.max(std::time::Duration::from_millis(100)),
        show_progress: !args.quiet,
        live: if args.quiet {
            LiveOutput::Silent
        } else {
            LiveOutput::Lines
        },
        stop: Stop::default(),
        node: NodeSlice {
            index: args.node_index,
            count: args.node_count,
        },
        reconnect_for: args.reconnect_for,
        failover: args.failover,
        actions: ActionSettings {
            replication,
            wait: Some(args.action_timeout).filter(|t| !t.is_zero()),
        },
    };
    let config = config_record(&args, &settings, &plan, &scenario, &template_name);
    runtime.block_on(run(
        settings,
        scenario,
        &template_name,
        &args,
        config,
        &outputs,
        &checks,
    ))
}

/// A threshold for a phase the scenario does not have could never be met: refused
/// before anything is sent, like any other mistake in it.
fn check_threshold_phases(checks: &[Threshold], scenario: &Scenario) -> Result<(), String> {
    for check in checks {
        let Some(phase) = &check.phase else { continue };
        let known = scenario
            .phases
            .iter()
            .any(|p| crate::analysis::base_name(&p.name) == phase || &p.name == phase);
        if !known {
            let names: Vec<&str> = scenario.phases.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "--threshold {:?}: the scenario has no phase {phase:?}; its phases are {}",
                check.expression,
                names.join(", ")
            ));
        }
    }
    Ok(())
}

/// The phases to run: a scenario file, a built-in scenario, or Iron Cushion's two steps
/// from the flags. Everything is checked before anything is sent.
fn choose_scenario(
    args: &RunArgs,
    plan: &Plan,
    target: &Target,
    prefix: &str,
) -> Result<Scenario, Failed> {
    let fail = |problems: Vec<String>| Failed::bad_input(problems.join("\nsofabench: error: "));
    let name = args.scenario.as_deref().unwrap_or("ironcushion");
    if name == "ironcushion" {
        plan.validate().map_err(fail)?;
        return Ok(Scenario {
            name: "ironcushion".to_string(),
            description: scenario::LIST[0].1.to_string(),
            phases: plan.phases(args.rate),
            form: Form::Standard,
        });
    }
    let defaults = Defaults {
        connections: args.num_connections,
        batch_size: args.num_documents_per_bulk_insert,
        duration: args.duration,
        total: args.total_operations,
        rate: args.rate,
        keys: KeyChoice::Uniform,
    };
    let options = BuiltinOptions {
        full: args.full,
        writes_reads: match (args.writes, args.reads) {
            (None, None) => None,
            (w, r) => Some((w.unwrap_or(0), r.unwrap_or(0))),
        },
        batch_sizes: args.batch_sizes.clone(),
        replica: replica_name(&target.database, prefix),
        weights: plan.weights,
    };
    if let Some(found) = scenario::builtin(name, &defaults, &options) {
        scenario::check_documents(&found.phases).map_err(fail)?;
        return Ok(found);
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        let names: Vec<&str> = scenario::LIST.iter().map(|(n, _)| *n).collect();
        return Err(Failed::bad_input(format!(
            "--scenario {name:?} is neither a built-in scenario ({}) nor a file; `sofabench scenarios` lists the built-in ones",
            names.join(", ")
        )));
    }
    let found = scenario::from_file(path, &defaults).map_err(fail)?;
    scenario::check_documents(&found.phases).map_err(|problems| {
        fail(
            problems
                .into_iter()
                .map(|p| format!("{name}: {p}"))
                .collect(),
        )
    })?;
    Ok(found)
}

/// A replica of the run's own, never an existing database: `<db>-replica-<id prefix>`,
/// with the prefix made a valid part of a CouchDB database name.
fn replica_name(database: &str, prefix: &str) -> String {
    let prefix: String = prefix
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    format!("{database}-replica-{prefix}")
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn describe(settings: &RunSettings, scenario: &Scenario, template_name: &str) -> String {
    let mut text = format!(
        "sofabench {}: {}\n  scenario: {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        settings.target.describe(),
        scenario.name,
        scenario.description
    );
    let node = settings.node;
    if node.count > 1 {
        text.push_str(&format!(
            "  node {} of {}: this machine drives its share of each phase's connections (counted over all nodes below)\n",
            node.index, node.count
        ));
    }
    for phase in &scenario.phases {
        text.push_str(&format!("  phase {}\n", phase.describe()));
    }
    text.push_str(&format!(
        "  template: {}\n  seed: {} (--seed={} repeats this run); document ids: {}-NNNNNNNNNN\n",
        template_name,
        settings.seed,
        settings.seed,
        settings.ids.prefix()
    ));
    text
}

/// The run's settings as the result file records them: no password.
fn config_record(
    args: &RunArgs,
    settings: &RunSettings,
    p: &Plan,
    scenario: &Scenario,
    template_name: &str,
) -> BTreeMap<String, serde_json::Value> {
    let nodes: Vec<String> = settings
        .target
        .nodes
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut config = BTreeMap::new();
    let mut set = |key: &str, value: serde_json::Value| {
        config.insert(key.to_string(), value);
    };
    set("database_address", json!(nodes.join(",")));
    set("database_name", json!(settings.target.database));
    set(
        "user",
        json!(settings.target.credentials.as_ref().map(|c| c.user.clone())),
    );
    set("num_connections", json!(p.connections));
    set("template", json!(template_name));
    set("seed", json!(settings.seed));
    set(
        "num_documents_per_bulk_insert",
        json!(p.documents_per_bulk_insert),
    );
    set(
        "num_bulk_insert_operations",
        json!(p.bulk_inserts_per_connection),
    );
    set("num_crud_operations", json!(p.crud.per_connection));
    set("total_operations", json!(p.crud.total));
    set(
        "duration_seconds",
        json!(p.crud.duration.map(|d| d.as_secs_f64())),
    );
    for operation in Operation::CRUD {
        set(&format!("{operation}_weight"), json!(p.weights[operation]));
    }
    set("rate", json!(args.rate));
    set("scenario", json!(scenario.name));
    set(
        "phases",
        json!(
            scenario
                .phases
                .iter()
                .map(|ph| ph.describe())
                .collect::<Vec<_>>()
        ),
    );
    set(
        "timeout_seconds",
        json!(settings.timeout.map(|d| d.as_secs_f64())),
    );
    set(
        "reconnect_for_seconds",
        json!(settings.reconnect_for.as_secs_f64()),
    );
    set("failover", json!(settings.failover));
    set("id_prefix", json!(settings.ids.prefix()));
    set("reuse", json!(args.reuse));
    set("recreate", json!(args.recreate));
    set("node_index", json!(args.node_index));
    set("node_count", json!(args.node_count));
    set(
        "replication_address",
        json!(settings.actions.replication.describe()),
    );
    set(
        "action_timeout_seconds",
        json!(settings.actions.wait.map(|d| d.as_secs_f64())),
    );
    config
}

async fn run(
    settings: RunSettings,
    scenario: Scenario,
    template_name: &str,
    args: &RunArgs,
    config: BTreeMap<String, serde_json::Value>,
    outputs: &OutputFiles,
    checks: &[Threshold],
) -> Result<(), Failed> {
    let run_started = SystemTime::now();
    let endpoints = Endpoint::all(&settings.target);
    let setup_failed = |e: crate::driver::admin::SetupError| {
        if e.bad_input {
            Failed::bad_input(e.message)
        } else {
            Failed::run(e.message)
        }
    };
    let setup_node = live_nodes(&settings, &endpoints)
        .await
        .map_err(setup_failed)?;
    let mut admin = Admin::new(&settings.target, setup_node);
    let prepared = admin
        .prepare(existing_policy(args))
        .await
        .map_err(setup_failed)?;
    print(&describe(&settings, &scenario, template_name));
    print(&database_line(&settings.target, &prepared));

    let stop = settings.stop.clone();
    let settings_target = settings.target.clone();
    listen_for_interrupts(stop.clone());
    let mut engine = Engine::new(settings);
    let most = scenario
        .phases
        .iter()
        .map(|p| p.connections)
        .max()
        .unwrap_or(1);
    engine.connect(most).await.map_err(Failed::run)?;
    let mut outcomes: Vec<PhaseOutcome> = Vec::new();
    let mut phases = Vec::new();
    for phase in &scenario.phases {
        let outcome = engine.run(phase).await.map_err(Failed::run)?;
        let result = results::build::phase(&outcome);
        print(&report::phase_text(&result, outcome.interrupted));
        phases.push(result);
        // A phase whose connections gave up does not stop the run: the next phase tries
        // again, and what it cannot run is counted there.
        let interrupted = outcome.interrupted;
        outcomes.push(outcome);
        if interrupted {
            break;
        }
    }
    match scenario.form {
        Form::Standard => {}
        Form::Titan => print(&format!(
            "TITAN LOADTEST LINES (phase, duration s, writes, write rate, reads, read rate, hits):\n{}",
            forms::titan(&phases)
        )),
        Form::Scaling => print(&format!("SCALING TABLE:\n{}", forms::scaling(&phases))),
    }
    drop(engine);

    if args.cleanup {
        delete_replicas(&settings_target, &endpoints[0], &outcomes)
            .await
            .map_err(setup_failed)?;
        if prepared.created {
            admin.delete().await.map_err(setup_failed)?;
            print(&format!(
                "deleted database {:?} (--cleanup)\n",
                args.database_name
            ));
        } else {
            print(&format!(
                "kept database {:?}: --cleanup only deletes a database the run created\n",
                args.database_name
            ));
        }
    }
    let node = NodeInfo {
        index: args.node_index,
        count: args.node_count,
        host: hostname(),
    };
    let result = results::build::run(
        config,
        run_started,
        SystemTime::now(),
        stop.stop.is_raised(),
        node,
        phases,
    );
    for path in outputs.write(&result)? {
        print(&format!("wrote {}\n", path.display()));
    }
    let failed_checks = if checks.is_empty() {
        0
    } else {
        let outcomes = thresholds::evaluate_all(checks, &result);
        print(&thresholds::report(&outcomes));
        outcomes.iter().filter(|o| !o.passed).count()
    };
    if stop.stop.is_raised() {
        eprintln!("sofabench: interrupted; the figures above cover what was done");
        return Err(Failed::Quiet { code: INTERRUPTED });
    }
    if failed_checks > 0 {
        eprintln!(
            "sofabench: {failed_checks} of {} thresholds failed (see THRESHOLDS above)",
            checks.len()
        );
        verdict(&outcomes)?;
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    verdict(&outcomes)
}

/// Checks that every node answers like CouchDB, and returns the node that sets the
/// database up. With `--failover`, nodes down at the start are named and left to the
/// connections' failover, and the first live node sets up.
async fn live_nodes(
    settings: &RunSettings,
    endpoints: &[Arc<Endpoint>],
) -> Result<Arc<Endpoint>, crate::driver::admin::SetupError> {
    let mut first_live = None;
    let mut first_problem = None;
    for endpoint in endpoints {
        match Admin::new(&settings.target, endpoint.clone())
            .check_server()
            .await
        {
            Ok(()) => {
                first_live.get_or_insert_with(|| endpoint.clone());
            }
            Err(problem) if settings.failover && endpoints.len() > 1 && !problem.bad_input => {
                eprintln!(
                    "sofabench: warning: {} is down at the start ({}); its connections fail over to the next node (--failover)",
                    endpoint.node, problem.message
                );
                first_problem.get_or_insert(problem);
            }
            Err(problem) => return Err(problem),
        }
    }
    match (first_live, first_problem) {
        (Some(node), _) => Ok(node),
        (None, Some(problem)) => Err(problem),
        (None, None) => Ok(endpoints[0].clone()),
    }
}

/// How long requests in flight may finish after Ctrl-C before they are given up.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// On Ctrl-C or SIGTERM: stop sending and let requests in flight finish; on a second
/// signal, or after [`GRACE`], give them up. The report still prints.
fn listen_for_interrupts(stop: Stop) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut terminate) = signal(SignalKind::terminate()) else {
        return;
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        stop.stop.raise();
        eprintln!(
            "\nsofabench: stopping: letting requests in flight finish (again to give up now)"
        );
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
            () = tokio::time::sleep(GRACE) => {}
        }
        stop.abandon.raise();
    });
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn database_line(target: &Target, prepared: &PreparedDatabase) -> String {
    if prepared.created {
        format!("  database {:?}: created by this run\n", target.database)
    } else {
        format!(
            "  database {:?}: existing, {} documents before the run\n",
            target.database,
            grouped(prepared.documents_before)
        )
    }
}

/// `--cleanup`: deletes the replicas this run's actions created, and only those.
async fn delete_replicas(
    target: &Target,
    endpoint: &Arc<Endpoint>,
    outcomes: &[PhaseOutcome],
) -> Result<(), crate::driver::admin::SetupError> {
    let created = outcomes
        .iter()
        .filter_map(|o| o.action.as_ref()?.created_database.clone());
    for name in created {
        let replica = Target {
            database: name.clone(),
            ..target.clone()
        };
        Admin::new(&replica, endpoint.clone()).delete().await?;
        print(&format!("deleted replica {name:?} (--cleanup)\n"));
    }
    Ok(())
}

/// Background actions that failed, one line each.
fn action_failures(outcomes: &[PhaseOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter_map(|o| {
            let action = o.action.as_ref()?;
            let error = action.error.as_ref()?;
            Some(format!(
                "background action {} of phase {} failed: {error}",
                action.kind, o.name
            ))
        })
        .collect()
}

/// The run failed when any operation failed, left its outcome unknown or was not run,
/// or a background action failed.
fn verdict(outcomes: &[PhaseOutcome]) -> Result<(), Failed> {
    let actions = action_failures(outcomes);
    for line in &actions {
        eprintln!("sofabench: {line}");
    }
    let operations = || {
        outcomes
            .iter()
            .flat_map(|o| o.tally.operations.values())
            .map(|op| &op.counts)
    };
    // Operations, and a bulk insert's documents refused one by one: apart, never added.
    let failed: u64 = operations().map(|op| op.failures.total()).sum();
    let failed_operations: u64 = operations().map(|m| m.failures.of_operations()).sum();
    let unknown: u64 = operations().map(|op| op.unknown).sum();
    let not_run: u64 = operations().map(|op| op.not_run).sum();
    let aborted = outcomes.iter().any(|o| !o.aborted.is_empty());
    if failed + unknown + not_run == 0 && !aborted {
        return if actions.is_empty() {
            Ok(())
        } else {
            Err(Failed::Quiet { code: RUN_FAILED })
        };
    }
    let mut parts = Vec::new();
    if failed_operations > 0 {
        parts.push(format!("{} operations failed", grouped(failed_operations)));
    }
    if failed > failed_operations {
        parts.push(format!(
            "{} documents failed in bulk insert answers",
            grouped(failed - failed_operations)
        ));
    }
    if unknown > 0 {
        parts.push(format!(
            "{} documents have an unknown outcome",
            grouped(unknown)
        ));
    }
    if not_run > 0 {
        parts.push(format!(
            "{} planned operations were not run",
            grouped(not_run)
        ));
    }
    if aborted {
        parts.push("connections stopped early".to_string());
    }
    eprintln!(
        "sofabench: {} (see \"failed\", \"unknown\", \"not run\" and \"stopped early\" lines above)",
        parts.join("; ")
    );
    Err(Failed::Quiet { code: RUN_FAILED })
}
