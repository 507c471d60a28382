//! From the flags of `sofabench run` to one checked [`Setup`]: everything the user gave
//! is turned into typed values and checked here, before anything is sent, and the raw
//! flags go no further.

use std::sync::Arc;
use std::time::Duration;

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::RunArgs;
use super::templates;
use crate::analysis::search::SearchPlan;
use crate::analysis::thresholds::Threshold;
use crate::driver::admin::ExistingDatabase;
use crate::driver::auth::{self, Auth};
use crate::driver::tls::{self, TlsSettings};
use crate::engine::kept::MostKept;
use crate::engine::{ActionSettings, NodeSlice, ReplicationAddress, Retry429, RunSettings};
use crate::exit::Failed;
use crate::files::{self, Kind};
use crate::run::output::OutputFiles;
use crate::run::{ConfigRecord, DatabasePolicy, Setup, TlsRecord};
use crate::scenario::{self, BuiltinOptions, Keys, Layers, Scenario};
use crate::target::{Credentials, Shards, Target};
use crate::template::DocumentWriter;
use crate::workload::{
    CrudBound, DocumentIds, ExistingSource, ExistingWrites, IdScheme, KeyChoice, Operation,
    Partitions, Plan, Shape, Targets, Weights, ids,
};
use crate::workload::{limits, nodes};

/// Intervals shorter than this would make the live lines noise.
const SHORTEST_INTERVAL: Duration = Duration::from_millis(100);
/// With the hidden `--short-intervals`, for tests of many intervals.
const SHORTEST_TEST_INTERVAL: Duration = Duration::from_millis(1);

/// Which flags the user gave (on the command line, in a config file, in the
/// environment), as opposed to those left at their defaults.
pub struct Given<'a>(pub &'a ArgMatches);

impl Given<'_> {
    fn has(&self, id: &str) -> bool {
        self.0
            .value_source(id)
            .is_some_and(|source| source != ValueSource::DefaultValue)
    }
}

/// Makes the run's setup, checking everything in the order a user fixes it.
pub fn build(args: &RunArgs, given: &Given) -> Result<Setup, Failed> {
    check_ranges(args).map_err(Failed::bad_input)?;
    let mut target = target(args)?;
    let auth = auth(args, &target, &|name| std::env::var(name).ok())?;
    if auth.needs_tls() && target.tls.is_none() {
        target.tls = Some(tls::client_config(&tls_settings(args)).map_err(Failed::bad_input)?);
    }
    let replication = match &args.replication_address {
        Some(text) => ReplicationAddress::parse(text, &auth).map_err(Failed::bad_input)?,
        None => ReplicationAddress::from_target(&target, &auth),
    };
    let layers = layers(args, given);
    let plan = plan(args, &layers.value());
    let prefix = args
        .id_prefix
        .clone()
        .unwrap_or_else(|| DocumentIds::random_prefix(rand::random()));
    let checks = Threshold::parse_all(&args.threshold).map_err(Failed::bad_input)?;
    let options = builtin_options(args, given, &plan, &target, &prefix);
    let mut scenario = choose_scenario(args.scenario.as_deref(), &layers, &options)?;
    let flags_shape = Shape {
        doc_size: args.doc_size,
        ids: args.id_scheme,
    };
    scenario::apply_shape(&mut scenario.phases, flags_shape)
        .map_err(|problems| Failed::bad_input(problems.join("\nsofabench: error: ")))?;
    check_server_ids(args, &scenario).map_err(Failed::bad_input)?;
    if let Some(sizes) = &args.bulk_attachment_size {
        let largest = sizes.sizes().iter().copied().max().unwrap_or(0);
        for phase in &scenario.phases {
            limits::inline_attachments(phase, largest).map_err(Failed::bad_input)?;
        }
    }
    let builtin = scenario::builtin(
        args.scenario
            .as_deref()
            .unwrap_or(scenario::BUILTINS[0].name),
    );
    args.changes
        .apply(&mut scenario, builtin.is_some())
        .map_err(Failed::bad_input)?;
    args.devices
        .apply(&mut scenario, builtin.is_some())
        .map_err(Failed::bad_input)?;
    let has_password = target
        .credentials
        .as_ref()
        .is_some_and(|c| !c.password.is_empty());
    super::devices::check_users_across_machines(&scenario, args.node_count, has_password)
        .map_err(Failed::bad_input)?;
    spread_over_databases(args, &scenario).map_err(Failed::bad_input)?;
    warn_of_unused(given, args.scenario.as_deref());
    for (flag, why) in
        scenario::flags_no_phase_takes(&layers.given, &scenario.phases, &scenario.origins)
    {
        crate::text::sink::err(&format!(
            "sofabench: warning: {flag} does nothing here: {why} (see the header's settings lines)"
        ));
    }
    check_threshold_phases(&checks, &scenario).map_err(Failed::bad_input)?;
    let node = node(args)?;
    check_runs(args, &prefix).map_err(Failed::bad_input)?;
    let search = search_plan(args, given, &scenario, &checks, node).map_err(Failed::bad_input)?;
    let (template, template_name) = templates::load_or(
        args.json_document_schema_filename.as_deref(),
        args.xml_document_schema_filename.as_deref(),
        scenario.template.as_ref(),
    )?;
    if let Some(prefix) = &args.id_prefix {
        ids::validate_prefix(prefix).map_err(Failed::bad_input)?;
    }
    let mut outputs = OutputFiles::new(
        args.out.as_deref(),
        args.json.as_deref(),
        args.csv.as_deref(),
        args.html.as_deref(),
    );
    outputs.check(args.overwrite)?;
    let seed = args.seed.unwrap_or_else(rand::random);
    let engine = RunSettings {
        target,
        auth,
        writer: Arc::new(DocumentWriter::new(template, seed)),
        seed,
        ids: DocumentIds::new(&prefix).with_partitions(partitions(args)?),
        // A server that never answers must not hang the run.
        timeout: Some(args.timeout).filter(|t| !t.is_zero()),
        max_response_size: args.max_response_size,
        most_kept: MostKept(usize::try_from(args.max_kept_value).unwrap_or(usize::MAX)),
        late_threshold: args.late_threshold,
        interval: args.interval,
        max_intervals: args.max_intervals,
        reconnect_for: args.reconnect_for,
        failover: args.failover,
        retry_429: args.retry_429.map(|most| Retry429 { most }),
        busy_poll: args.busy_poll,
        attachment_sizes: args.attachment_size.clone(),
        hot_docs: args.hot_docs,
        existing: existing_source(args, given).map_err(Failed::bad_input)?,
        bulk_attachment_sizes: args.bulk_attachment_size.clone(),
        // With several client machines, the first looks at the servers for all of them.
        server_stats: !args.no_server_stats && args.node_index == 0,
        client_nodes: args.node_count,
        feeds_here: args.node_index == 0,
        node_index: args.node_index,
        // Known once the database is prepared (the runner sets it).
        started_empty: false,
        device_logins: None,
        actions: ActionSettings {
            replication,
            wait: Some(args.action_timeout).filter(|t| !t.is_zero()),
        },
    };
    check_template_batches(&engine, &scenario, &template_name).map_err(Failed::bad_input)?;
    let (scenario, shares) = Setup::slice(scenario, node);
    // The record keeps what the flags say outside any phase, a file's top level included.
    let layers = Layers {
        file: scenario.top_level,
        ..layers
    };
    let plan = self::plan(args, &layers.value());
    let config = config_record(args, &engine, &plan, &layers, &scenario, &template_name);
    Ok(Setup {
        runs: args.runs,
        threads: args.threads.unwrap_or_else(crate::cpu::machine_cores),
        engine,
        scenario,
        shares,
        node,
        template_name,
        database: database_policy(args),
        outputs,
        thresholds: checks,
        search,
        config,
        detail: detail(args.verbose),
    })
}

/// The flags' numbers out of range, refused first, before anything depends on them
/// (a huge count would otherwise spin or fill memory while the run is planned).
/// Refuses bulk inserts whose batches of the template's documents would not fit in
/// memory: one document is made, and its length taken for all.
fn check_template_batches(
    engine: &RunSettings,
    scenario: &Scenario,
    template: &str,
) -> Result<(), String> {
    let mut document = Vec::new();
    let id = engine.ids.id(0);
    engine.writer.write(&mut document, 0, 1, Some(&id), None);
    for phase in &scenario.phases {
        limits::template_batch(phase, document.len() as u64, template)?;
    }
    Ok(())
}

fn check_ranges(args: &RunArgs) -> Result<(), String> {
    check_too_little(args)?;
    check_too_much(args)?;
    check_attachment_reads(args)?;
    check_counts(args)
}

/// Values that would make a run do nothing, or nothing useful.
fn check_too_little(args: &RunArgs) -> Result<(), String> {
    let zero = |flag: &str, what: &str| {
        format!("{flag} 0: {what} would run nothing; give more, or leave the flag out")
    };
    if args.duration.is_some_and(|d| d.is_zero()) {
        return Err(zero("--duration", "a CRUD step of no time"));
    }
    if args.total_operations == Some(0) {
        return Err(zero("--total-operations", "no operations in total"));
    }
    let shortest = if args.short_intervals {
        SHORTEST_TEST_INTERVAL
    } else {
        SHORTEST_INTERVAL
    };
    if args.interval < shortest {
        return Err(format!(
            "--interval {:?}: at least {shortest:?} (shorter intervals make the live lines noise and cost the run time); give e.g. --interval 100ms",
            args.interval
        ));
    }
    if args.num_connections == 0 {
        // Every scenario needs a connection; some would otherwise drop their phases.
        return Err("--num_connections=0: a run needs at least one connection; set --num_connections to 1 or more".to_string());
    }
    Ok(())
}

/// Attachment reads get attachments the run wrote: standalone, or inline in its bulk
/// documents.
fn check_attachment_reads(args: &RunArgs) -> Result<(), String> {
    let read = args.attachment_read_weight;
    if read > 0 && args.attachment_write_weight == 0 && args.bulk_attachment_size.is_none() {
        return Err(format!(
            "--attachment_read_weight={read} needs --attachment_write_weight above 0 or --bulk-attachment-size: a read gets an attachment the run wrote; give one of them, or leave --attachment_read_weight out"
        ));
    }
    Ok(())
}

/// Sizes past what the machine holds or a mix needs.
fn check_too_much(args: &RunArgs) -> Result<(), String> {
    let open_files = limits::open_files();
    limits::connections("--num_connections", args.num_connections, open_files)?;
    limits::batch_size(
        "--num_documents_per_bulk_insert",
        args.num_documents_per_bulk_insert,
    )?;
    for (flag, w) in [
        ("--create_weight", args.create_weight),
        ("--read_weight", args.read_weight),
        ("--update_weight", args.update_weight),
        ("--delete_weight", args.delete_weight),
        ("--attachment_write_weight", args.attachment_write_weight),
        ("--attachment_read_weight", args.attachment_read_weight),
    ] {
        limits::weight(flag, w)?;
    }
    Ok(())
}

/// Operations and documents of a phase, with every product checked.
fn check_counts(args: &RunArgs) -> Result<(), String> {
    let per_connection = |n: u64| n.checked_mul(args.num_connections);
    limits::operations(
        "--num_bulk_insert_operations x --num_connections",
        per_connection(args.num_bulk_insert_operations),
    )?;
    limits::operations(
        "--num_crud_operations x --num_connections",
        per_connection(args.num_crud_operations.unwrap_or(0)),
    )?;
    if let Some(total) = args.total_operations {
        limits::operations("--total-operations", Some(total))?;
    }
    let bulk = args
        .num_bulk_insert_operations
        .checked_mul(args.num_documents_per_bulk_insert)
        .and_then(|n| n.checked_mul(args.num_connections));
    limits::new_documents(
        "--num_bulk_insert_operations x --num_documents_per_bulk_insert x --num_connections",
        bulk,
    )
}

/// The target, with `--user` and `--password` when the address carries no credentials.
fn target(args: &RunArgs) -> Result<Target, Failed> {
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
    let tls = tls_settings(args);
    // Made even without an https:// node when TLS flags are given, so that a wrong file
    // is reported before it matters.
    if target.uses_tls() || tls != TlsSettings::default() {
        target.tls = Some(tls::client_config(&tls).map_err(Failed::bad_input)?);
    }
    target.keep_alive = !args.disable_keepalive;
    target.shards = Shards {
        q: args.db_q,
        n: args.db_n,
    };
    target.partitioned = args.db_partitioned;
    target.databases = args.databases;
    if let Some(last) = target.databases.names(&target.database).pop() {
        crate::target::check_name_length(&last).map_err(Failed::bad_input)?;
    }
    Ok(target)
}

/// With `--db-partitioned`: how ids spread over the partitions.
fn partitions(args: &RunArgs) -> Result<Option<Partitions>, Failed> {
    if !args.db_partitioned {
        return match (args.partitions, args.partition_keys) {
            (None, None) => Ok(None),
            (Some(_), _) => Err(Failed::bad_input(
                "--partitions needs --db-partitioned: partitioned ids only work in a partitioned database; add --db-partitioned or leave --partitions out".to_string(),
            )),
            (None, Some(_)) => Err(Failed::bad_input(
                "--partition-keys needs --db-partitioned: partitioned ids only work in a partitioned database; add --db-partitioned or leave --partition-keys out".to_string(),
            )),
        };
    }
    let count = args.partitions.unwrap_or(DEFAULT_PARTITIONS);
    Ok(Some(match args.partition_keys {
        Some(KeyChoice::Zipfian(c)) => Partitions::zipfian(count, c),
        _ => Partitions::uniform(count),
    }))
}

/// Ids the server gives cannot name a partition: a partitioned database refuses a
/// document without a `partition:` id.
fn check_server_ids(args: &RunArgs, scenario: &Scenario) -> Result<(), String> {
    let server = Some(ids::IdScheme::Server);
    match scenario.phases.iter().find(|p| p.shape.ids == server) {
        Some(phase) if args.db_partitioned => Err(format!(
            "phase {} stores documents under ids the server gives (id scheme server), which a partitioned database refuses: every id must name its partition; use --id-scheme sequential or uuid, or leave --db-partitioned out",
            phase.name
        )),
        _ => Ok(()),
    }
}

/// Partitions of a partitioned run without `--partitions`.
const DEFAULT_PARTITIONS: u64 = 16;

/// The run's auth mode from the flags, with its secrets from the environment (`env`
/// looks a variable up) or a file: never from the command line, where process lists and
/// shell history would show them.
fn auth(
    args: &RunArgs,
    target: &Target,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Auth, Failed> {
    let proxy_secret = match &args.proxy_secret_file {
        Some(path) => Some(
            files::read_text(path, Kind::Secret).map_err(|e| Failed::bad_input(e.to_string()))?,
        ),
        None => env("SOFABENCH_PROXY_SECRET"),
    };
    let given = auth::Given {
        mode: args.auth,
        credentials: target.credentials.clone(),
        token: env("SOFABENCH_TOKEN"),
        api_key: env("SOFABENCH_IAM_API_KEY"),
        iam_token_url: args.iam_token_url.clone(),
        proxy_roles: args.proxy_roles.clone(),
        proxy_secret,
    };
    let (auth, warnings) = Auth::choose(given).map_err(Failed::bad_input)?;
    for warning in warnings {
        crate::text::sink::err(&format!("sofabench: warning: {warning}"));
    }
    Ok(auth)
}

fn tls_settings(args: &RunArgs) -> TlsSettings {
    TlsSettings {
        cacert: args.cacert.clone(),
        insecure: args.insecure,
        client_identity: args.cert.clone().zip(args.key.clone()),
    }
}

/// The settings phases take, kept apart by who gave them: the user, or the defaults.
fn layers(args: &RunArgs, given: &Given) -> Layers {
    let user = |id: &str, value: u64| given.has(id).then_some(value);
    Layers {
        given: Keys {
            connections: user("num_connections", args.num_connections),
            batch_size: user(
                "num_documents_per_bulk_insert",
                args.num_documents_per_bulk_insert,
            ),
            operations: args.num_crud_operations,
            total: args.total_operations,
            duration: args.duration,
            rate: args.rate,
        },
        file: Keys::default(),
        default: Keys {
            connections: Some(args.num_connections),
            batch_size: Some(args.num_documents_per_bulk_insert),
            ..Keys::default()
        },
    }
}

/// The existing data the reads, updates and deletes target (`--key-range`,
/// `--key-sample`), with how writes learn revisions (`--existing-writes`).
fn existing_source(
    args: &RunArgs,
    given: &Given,
) -> Result<Option<(ExistingSource, ExistingWrites)>, String> {
    let scheme = args.id_scheme.unwrap_or_default();
    let targeted = args.key_range.is_some() || args.key_sample.is_some();
    if targeted && args.runs > 1 {
        return Err(format!(
            "--key-range or --key-sample with --runs {}: each repetition runs on a fresh database of its own, where no existing data is; run once per measurement instead",
            args.runs
        ));
    }
    let source = match (args.key_range, args.key_sample) {
        (Some(_), _) if scheme == IdScheme::Server => {
            return Err("--key-range with --id-scheme server: the server gave those documents their ids, so no number names them; use --key-sample N to target ids sampled from the database instead".to_string());
        }
        (Some((low, high)), _) => ExistingSource::Range { low, high, scheme },
        (None, Some(n)) => ExistingSource::Sample(n),
        (None, None) if given.has("existing_writes") => {
            return Err("--existing-writes says how writes into existing data learn revisions, but no existing data is targeted; add --key-range LOW-HIGH or --key-sample N (with --reuse)".to_string());
        }
        (None, None) => return Ok(None),
    };
    Ok(Some((source, args.existing_writes)))
}

/// Iron Cushion's workload from its flags; `values` are the layered settings outside any
/// phase. The CRUD step does 1,000 operations per connection unless something bounds it.
fn plan(args: &RunArgs, values: &Keys) -> Plan {
    let unbounded = values.duration.is_none() && values.total.is_none();
    Plan {
        connections: values.connections.unwrap_or(args.num_connections),
        documents_per_bulk_insert: values
            .batch_size
            .unwrap_or(args.num_documents_per_bulk_insert),
        bulk_inserts_per_connection: args.num_bulk_insert_operations,
        crud: CrudBound {
            per_connection: values.operations.or(unbounded.then_some(1000)),
            total: values.total,
            duration: values.duration,
        },
        weights: Weights::from_fn(|op| match op {
            // Queries are declared by scenario files, never by Iron Cushion's flags.
            Operation::BulkInsert
            | Operation::Find
            | Operation::View
            | Operation::AllDocs
            | Operation::ChangesRead => 0,
            Operation::Create => args.create_weight,
            Operation::Read => args.read_weight,
            Operation::Update => args.update_weight,
            Operation::Delete => args.delete_weight,
            Operation::AttachmentWrite => args.attachment_write_weight,
            Operation::AttachmentRead => args.attachment_read_weight,
        }),
        targets: if args.key_range.is_some() || args.key_sample.is_some() {
            Targets::Existing
        } else if args.hot_docs.is_some() {
            Targets::SharedUpdates
        } else {
            Targets::Own
        },
    }
}

fn builtin_options(
    args: &RunArgs,
    given: &Given,
    plan: &Plan,
    target: &Target,
    prefix: &str,
) -> BuiltinOptions {
    BuiltinOptions {
        plan: plan.clone(),
        bulk_operations_given: given.has("num_bulk_insert_operations"),
        full: args.full,
        writes_reads: match (args.writes, args.reads) {
            (None, None) => None,
            (w, r) => Some((w, r.unwrap_or(0))),
        },
        batch_sizes: args.batch_sizes.clone(),
        replica: replica_name(&target.database, prefix),
        query_field: args.query_field.clone(),
        fabric: crate::scenario::fabric::FabricOptions {
            docs: args.fabric_docs,
            single_docs: args.fabric_single_docs,
            size: args.fabric_doc_size,
        },
    }
}

/// The phases to run: a built-in scenario (Iron Cushion's two steps by default) or a
/// scenario file. Everything is checked before anything is sent.
fn choose_scenario(
    name: Option<&str>,
    layers: &Layers,
    options: &BuiltinOptions,
) -> Result<Scenario, Failed> {
    let fail = |problems: Vec<String>| Failed::bad_input(problems.join("\nsofabench: error: "));
    let name = name.unwrap_or(scenario::BUILTINS[0].name);
    if let Some(builtin) = scenario::builtin(name) {
        let built = builtin.build(layers, options).map_err(fail)?;
        scenario::check_limits(&built.phases).map_err(fail)?;
        return Ok(built);
    }
    let path = std::path::Path::new(name);
    if name != "-" && !path.exists() {
        let names: Vec<&str> = scenario::BUILTINS.iter().map(|b| b.name).collect();
        return Err(Failed::bad_input(format!(
            "--scenario {name:?} is neither a built-in scenario ({}) nor a file; `sofabench scenarios` lists the built-in ones",
            names.join(", ")
        )));
    }
    let found = scenario::from_file(path, layers).map_err(fail)?;
    let in_file = |problems: Vec<String>| {
        fail(
            problems
                .into_iter()
                .map(|p| format!("{name}: {p}"))
                .collect(),
        )
    };
    scenario::check_limits(&found.phases).map_err(in_file)?;
    scenario::check_documents(&found.phases).map_err(in_file)?;
    let units = crate::query::builds::units(&found.queries);
    crate::query::builds::plan(&found.phases, &units).map_err(in_file)?;
    Ok(found)
}

/// Names the flags the user gave that the chosen scenario does not take (`--full` with
/// `soak`, weights with a file), so that none is ignored silently.
fn warn_of_unused(given: &Given, name: Option<&str>) {
    let name = name.unwrap_or(scenario::BUILTINS[0].name);
    let takes = scenario::builtin(name).map_or(&[][..], |b| b.takes);
    for (id, flag) in scenario::OWN_FLAGS {
        if given.has(id) && !takes.contains(&id) {
            let takers: Vec<&str> = scenario::BUILTINS
                .iter()
                .filter(|b| b.takes.contains(&id))
                .map(|b| b.name)
                .collect();
            crate::text::sink::err(&format!(
                "sofabench: warning: {flag} does nothing with --scenario {name}; it is for {}",
                takers.join(" and ")
            ));
        }
    }
}

/// A threshold for a phase the scenario does not have, or for an operation none of its
/// phases performs, could never be met: refused before anything is sent (rather than
/// failing after the whole run), like any other mistake in it.
fn check_threshold_phases(checks: &[Threshold], scenario: &Scenario) -> Result<(), String> {
    for check in checks {
        check_threshold_operation(check, scenario)?;
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

/// Refuses a threshold on an operation that no phase it looks at performs.
fn check_threshold_operation(check: &Threshold, scenario: &Scenario) -> Result<(), String> {
    let Some(operation) = check.operation.as_deref().and_then(Operation::named) else {
        return Ok(());
    };
    let mut looked_at = scenario.phases.iter().filter(|p| {
        check
            .phase
            .as_deref()
            .is_none_or(|name| crate::analysis::base_name(&p.name) == name || p.name == name)
    });
    if looked_at.clone().next().is_none() || looked_at.any(|p| p.mix[operation] > 0) {
        return Ok(());
    }
    Err(format!(
        "--threshold {:?}: no phase {}performs {operation}, so it could only fail after the run; check the weights or the threshold",
        check.expression,
        check
            .phase
            .as_deref()
            .map_or(String::new(), |name| format!("named {name:?} "))
    ))
}

/// Steps shorter than this would measure their own start more than the rate.
const SHORTEST_STEP: Duration = Duration::from_secs(1);

/// `--search-rate` and its flags, checked: one machine searches the scenario's last
/// phase, and the thresholds judge that phase's steps (a threshold on another phase
/// could not judge them).
fn search_plan(
    args: &RunArgs,
    given: &Given,
    scenario: &Scenario,
    checks: &[Threshold],
    node: NodeSlice,
) -> Result<Option<SearchPlan>, String> {
    let Some((low, high)) = args.search_rate else {
        let stray = ["step_duration", "search_steps", "search_precision"]
            .into_iter()
            .find(|id| given.has(id));
        return match stray {
            Some(id) => Err(format!(
                "--{} only shapes a rate search; give --search-rate LOW..HIGH too, or leave it out",
                id.replace('_', "-")
            )),
            None => Ok(None),
        };
    };
    if args.step_duration < SHORTEST_STEP {
        return Err(format!(
            "--step-duration {:?}: at least 1s (a shorter step measures its own start more than the rate); give e.g. --step-duration 10s",
            args.step_duration
        ));
    }
    if !(2..=100).contains(&args.search_steps) {
        return Err(format!(
            "--search-steps {}: from 2 (LOW and HIGH) to 100; give e.g. --search-steps 12",
            args.search_steps
        ));
    }
    if node.count > 1 {
        return Err(format!(
            "--search-rate with --node-count {}: each step's rate depends on the step before, which one machine decides; search from one machine",
            node.count
        ));
    }
    let Some(last) = scenario.phases.last() else {
        return Err("--search-rate: the scenario has no phase to search".to_string());
    };
    let searched = last.name.as_str();
    let elsewhere = |c: &&Threshold| {
        c.phase.as_deref().is_some_and(|name| name != searched)
            || c.operation
                .as_deref()
                .and_then(Operation::named)
                .is_some_and(|op| last.mix[op] == 0)
    };
    if let Some(check) = checks.iter().find(elsewhere) {
        return Err(format!(
            "--threshold {:?}: in a rate search the thresholds judge the steps of the scenario's last phase, {searched:?}, and this one looks elsewhere; give one on {searched:?} and its operations",
            check.expression
        ));
    }
    Ok(Some(SearchPlan {
        low,
        high,
        step: args.step_duration,
        most_steps: args.search_steps,
        precision: args.search_precision,
    }))
}

/// This node's slice, checked, and refused with flags that would make one node delete
/// what the others use.
fn node(args: &RunArgs) -> Result<NodeSlice, Failed> {
    nodes::validate(args.node_index, args.node_count, args.num_connections)
        .map_err(Failed::bad_input)?;
    if args.node_count > 1 && (args.recreate || args.cleanup) {
        return Err(Failed::bad_input(format!(
            "--{} with --node-count {}: one node would delete the database while the others use it; give every node --reuse, and create or delete the database before and after the run",
            if args.recreate { "recreate" } else { "cleanup" },
            args.node_count
        )));
    }
    Ok(NodeSlice {
        index: args.node_index,
        count: args.node_count,
    })
}

/// `--runs` with what it cannot honour: a database to reuse (each repetition needs a
/// fresh one), several nodes (which share one database), a name or id prefix too long
/// once a repetition's number is added.
fn check_runs(args: &RunArgs, prefix: &str) -> Result<(), String> {
    let runs = args.runs;
    if runs == 1 {
        return Ok(());
    }
    if args.reuse {
        return Err(format!(
            "--reuse with --runs {runs}: each repetition runs on a fresh database of its own ({}), so there is none to reuse; leave out --reuse (--recreate starts such databases over)",
            repetition_names(&args.database_name, runs)
        ));
    }
    if args.node_count > 1 {
        return Err(format!(
            "--runs {runs} with --node-count {}: the nodes of a run share one database, which each repetition would need fresh; run the nodes' whole run again instead, and merge each",
            args.node_count
        ));
    }
    let last = crate::run::repeat::passes(&args.database_name, prefix, runs).pop();
    if let Some(last) = last
        && args.id_prefix.is_some()
    {
        ids::validate_prefix(&last.id_prefix)
            .map_err(|e| format!("with --runs {runs}, ids start {:?}: {e}", last.id_prefix))?;
    }
    Ok(())
}

/// `bench-run1 … bench-run3`, for messages.
fn repetition_names(database: &str, runs: u64) -> String {
    use crate::run::repeat::suffixed;
    format!("{} … {}", suffixed(database, 1), suffixed(database, runs))
}

fn database_policy(args: &RunArgs) -> DatabasePolicy {
    let existing = if args.recreate {
        ExistingDatabase::Recreate
    } else if args.reuse {
        ExistingDatabase::Reuse
    } else {
        ExistingDatabase::Refuse
    };
    DatabasePolicy {
        existing,
        cleanup: args.cleanup,
    }
}

/// `--databases` above 1 spreads the documents over many databases, which what works on
/// the run's one database cannot follow: the first such setting is refused, by name.
fn spread_over_databases(args: &RunArgs, scenario: &Scenario) -> Result<(), String> {
    let count = args.databases.count();
    if count == 1 {
        return Ok(());
    }
    let flags = [
        ("--hot-docs", args.hot_docs.is_some()),
        ("--key-range", args.key_range.is_some()),
        ("--key-sample", args.key_sample.is_some()),
    ];
    if let Some((flag, _)) = flags.iter().find(|(_, given)| *given) {
        return Err(format!(
            "--databases {count} with {flag}: shared and existing documents live in one database; leave out one of the two"
        ));
    }
    for phase in &scenario.phases {
        let what = if !phase.queries.is_empty() {
            "queries an index, which lives in one database"
        } else if phase.replication.is_some() {
            "replicates its database"
        } else if phase.action.is_some() {
            "compacts or replicates its database"
        } else {
            continue;
        };
        return Err(format!(
            "--databases {count}: phase {:?} {what}; run it over one database (leave out --databases), or in a scenario file of your own leave that out of the phase",
            phase.name
        ));
    }
    Ok(())
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

/// How much the report says: everything with `-v`.
pub(super) fn detail(verbose: bool) -> crate::report::Detail {
    if verbose {
        crate::report::Detail::Verbose
    } else {
        crate::report::Detail::Brief
    }
}

/// The run's settings as the result file records them: no password.
fn config_record(
    args: &RunArgs,
    engine: &RunSettings,
    plan: &Plan,
    layers: &Layers,
    scenario: &Scenario,
    template_name: &str,
) -> ConfigRecord {
    let target = &engine.target;
    let nodes: Vec<String> = target.nodes.iter().map(|n| n.to_string()).collect();
    let seconds = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    ConfigRecord {
        database_address: nodes.join(","),
        database_name: target.database.clone(),
        user: engine.auth.user().map(str::to_string),
        auth: engine.auth.mode.name().to_string(),
        iam_token_url: engine.auth.iam_token_url(),
        proxy_roles: engine.auth.proxy_roles().map(str::to_string),
        num_connections: plan.connections,
        template: template_name.to_string(),
        seed: engine.seed,
        num_documents_per_bulk_insert: plan.documents_per_bulk_insert,
        num_bulk_insert_operations: plan.bulk_inserts_per_connection,
        num_crud_operations: plan.crud.per_connection,
        total_operations: plan.crud.total,
        duration_seconds: seconds(plan.crud.duration),
        create_weight: plan.weights[Operation::Create],
        read_weight: plan.weights[Operation::Read],
        update_weight: plan.weights[Operation::Update],
        delete_weight: plan.weights[Operation::Delete],
        attachment_write_weight: Some(plan.weights[Operation::AttachmentWrite]).filter(|&w| w > 0),
        attachment_read_weight: Some(plan.weights[Operation::AttachmentRead]).filter(|&w| w > 0),
        rate: layers.value().rate,
        scenario: scenario.name.clone(),
        phases: scenario.phases.iter().map(|p| p.describe()).collect(),
        timeout_seconds: seconds(engine.timeout),
        reconnect_for_seconds: engine.reconnect_for.as_secs_f64(),
        failover: engine.failover,
        tls: target.uses_tls().then(|| TlsRecord {
            verified: !args.insecure,
            cacert: args.cacert.as_ref().map(|path| path.display().to_string()),
            client_certificate: args.cert.is_some(),
        }),
        keep_alive: target.keep_alive,
        busy_poll: engine.busy_poll,
        // The run's setting, alike on every client machine (merge checks), though only the
        // first asks.
        server_stats: !args.no_server_stats,
        id_prefix: engine.ids.prefix().to_string(),
        reuse: args.reuse,
        recreate: args.recreate,
        node_index: args.node_index,
        node_count: args.node_count,
        replication_address: engine.actions.replication.describe().to_string(),
        action_timeout_seconds: seconds(engine.actions.wait),
        max_response_size: args.max_response_size,
        interval_seconds: args.interval.as_secs_f64(),
        max_intervals: args.max_intervals as u64,
        retry_429: engine.retry_429.map(|r| r.most),
        threads: args.threads.unwrap_or_else(crate::cpu::machine_cores) as u64,
        db_q: args.db_q,
        db_n: args.db_n,
        partitions: engine.ids.partitions().map(Partitions::describe),
        hot_docs: engine.hot_docs,
        databases: Some(engine.target.databases.count()).filter(|&n| n > 1),
        existing: engine
            .existing
            .map(|(source, writes)| source.describe(writes)),
        doc_size: args.doc_size.map(|s| s.to_string()),
        id_scheme: args.id_scheme.map(|s| s.name().to_string()),
        bulk_attachment_size: args.bulk_attachment_size.as_ref().map(|sizes| {
            let sizes: Vec<String> = sizes.sizes().iter().map(u64::to_string).collect();
            sizes.join(",")
        }),
        runs: (args.runs > 1).then_some(args.runs),
        thresholds: args.threshold.clone(),
    }
}
