//! Carries out a [`Setup`]: the database before and after, the phases one after the
//! other, Ctrl-C, the result and its files, the thresholds, and the verdict.

use std::future::Future;
use std::sync::Arc;
use std::time::SystemTime;

use super::databases;
use super::device_users::{self, DeviceUsers};
use super::header::{database_line, describe};
use super::indexes::Indexes;
use super::output::OutputFiles;
use super::record::Record;
use super::repeat::{self, Pass};
use super::search::Search;
use super::settle::Settle;
use super::thresholds::failed;
use super::verdict::{Counts, Verdict, judge};
use super::{DatabasePolicy, Setup};
use crate::analysis::search::SearchPlan;
use crate::analysis::thresholds::{Threshold, evaluate_all};
use crate::driver::Endpoint;
use crate::driver::admin::{Admin, ExistingDatabase, PreparedDatabase, SetupError};
use crate::driver::auth::{self, DeviceKey};
use crate::driver::environment::{self, answers::WELCOME};
use crate::engine::observer::Observer;
use crate::engine::{Engine, PhaseOutcome, PhaseShare, RunSettings, Stop};
use crate::exit::{Failed, INTERRUPTED, RUN_FAILED};
use crate::report;
use crate::report::Detail;
use crate::report::closing::Closing;
use crate::report::repetitions::heading;
use crate::results::environment::ServerNode;
use crate::results::{
    self, BuiltWhen, IndexBuildResult, NodeInfo, PhaseResult, RunResult, SearchResult,
    SettleOutcome, SettleResult,
};
use crate::scenario::Scenario;
use crate::target::Target;
use crate::words::counted;
use crate::workload::{DocumentIds, Phase};

/// Runs `setup`, telling `observer` of progress and intervals, on a runtime of its own.
pub fn run(setup: Setup, observer: Arc<dyn Observer>) -> Result<(), Failed> {
    crate::cpu::set_threads(setup.threads);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(setup.threads)
        .enable_all()
        .build()
        .map_err(|e| Failed::run(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(carry_out(setup, observer))
}

pub(crate) fn print(text: &str) {
    let _ = crate::text::sink::out(text);
}

pub(super) fn setup_failed(e: SetupError) -> Failed {
    if e.bad_input {
        Failed::bad_input(e.message)
    } else {
        Failed::run(e.message)
    }
}

/// The phases' outcomes, and their results as the report and the result file show them.
pub(super) struct Measured {
    pub outcomes: Vec<PhaseOutcome>,
    pub phases: Vec<PhaseResult>,
    /// A rate search's steps (among `phases`) and answer.
    pub search: Option<SearchResult>,
}

/// What every pass of the run (the plain run, or each repetition) shares.
struct Run {
    /// The engine's settings; each pass gives them its database and document ids.
    settings: RunSettings,
    scenario: Scenario,
    shares: Vec<PhaseShare>,
    database: DatabasePolicy,
    target: Target,
    endpoints: Vec<Arc<Endpoint>>,
    /// The node that sets the databases up.
    setup_node: Arc<Endpoint>,
    observer: Arc<dyn Observer>,
    stop: Stop,
    outputs: OutputFiles,
    /// `--search-rate`: how the last phase is searched, and the thresholds judging it.
    search: Option<SearchPlan>,
    thresholds: Vec<Threshold>,
    /// How much the phases' blocks and the ending say (`-v`).
    detail: Detail,
    /// What `--device-users`' passwords are derived from, and whether this machine
    /// makes the users (the first does, as it makes the feeds).
    device_key: DeviceKey,
    provisions: bool,
}

async fn carry_out(setup: Setup, observer: Arc<dyn Observer>) -> Result<(), Failed> {
    let started = SystemTime::now();
    let target = setup.engine.target.clone();
    let endpoints = Endpoint::all(&target, &setup.engine.auth, setup.engine.max_response_size);
    log_in(&endpoints).await?;
    let (setup_node, answered) = live_nodes(&target, setup.engine.failover, &endpoints)
        .await
        .map_err(setup_failed)?;
    let server = environment::capture(&setup_node, answered).await;
    let passes = repeat::passes(&target.database, setup.engine.ids.prefix(), setup.runs);
    if passes.len() > 1 {
        refuse_filled(&target, &setup_node, &passes, setup.database.existing).await?;
    }
    print(&describe(&setup));
    let threads = setup.threads;
    let stop = Stop::default();
    listen_for_interrupts(stop.clone());
    let Setup {
        engine,
        scenario,
        shares,
        node,
        database,
        outputs,
        thresholds,
        search,
        config,
        detail,
        ..
    } = setup;
    let node = NodeInfo {
        index: node.index,
        count: node.count,
        host: crate::host::name(),
        client: Some(crate::host::client::capture(threads)),
        server: None,
    };
    let provisions = node.index == 0;
    let device_key = DeviceKey::new(target.credentials.as_ref().map(|c| c.password.as_str()));
    let mut record = Record::new(config.to_map(), started, node, passes.len() > 1);
    record.found_server(server);
    let run = Run {
        settings: engine,
        scenario,
        shares,
        database,
        target,
        endpoints,
        setup_node,
        observer,
        stop,
        outputs,
        search,
        thresholds,
        detail,
        device_key,
        provisions,
    };
    for pass in &passes {
        // Ctrl-C between repetitions: the ones that ended are kept, no other starts.
        if run.stop.stop.is_raised() {
            break;
        }
        run_pass(&run, pass, &mut record).await?;
    }
    let interrupted = run.stop.stop.is_raised();
    let result = record.result(interrupted);
    finish(&run, &result, interrupted)
}

/// With `--runs`, before anything is sent: a repetition's database that already holds
/// documents is refused unless `--recreate` says to start it over, naming all such.
async fn refuse_filled(
    target: &Target,
    setup_node: &Arc<Endpoint>,
    passes: &[Pass],
    existing: ExistingDatabase,
) -> Result<(), Failed> {
    if existing == ExistingDatabase::Recreate {
        return Ok(());
    }
    let mut filled = Vec::new();
    for pass in passes {
        let own = Target {
            database: pass.database.clone(),
            ..target.clone()
        };
        filled.extend(databases::filled(&own.each(), setup_node).await?);
    }
    if filled.is_empty() {
        return Ok(());
    }
    Err(Failed::bad_input(format!(
        "--runs {}: each repetition needs a fresh database of its own, but {} already {} documents; add --recreate to delete and create them anew, or give another --database_name",
        passes.len(),
        filled.join(", "),
        if filled.len() == 1 { "holds" } else { "hold" }
    )))
}

/// One pass of the run: its database made ready, the phases on an engine of its own
/// (fresh connections), its database cleaned up if asked; the result files rewritten
/// when more passes follow.
async fn run_pass(run: &Run, pass: &Pass, record: &mut Record) -> Result<(), Failed> {
    let target = Target {
        database: pass.database.clone(),
        ..run.target.clone()
    };
    crate::query::setup::check_fields(&run.settings.writer, &run.scenario.queries)
        .map_err(Failed::bad_input)?;
    let partitioned = run.settings.ids.partitions().is_some();
    crate::query::setup::check_partitions(partitioned, &run.scenario.queries)
        .map_err(Failed::bad_input)?;
    let prepared = databases::prepare(&target, &run.setup_node, run.database.existing).await?;
    // The result records one database's shape: the first repetition's (each is made
    // alike), or with --databases the first of them.
    if pass.index == 1 {
        let (first, made) = &prepared.each[0];
        let found = environment::database(&run.setup_node, first, made.created).await;
        record.found_database(found);
        // Said once the database's shape is known, so that the line has its q and n.
        let node = std::slice::from_ref(record.node());
        print(&report::environment::header(node, run.detail));
    }
    // What works on one database (hot documents, existing data) works on the first: a
    // run over several refuses it.
    let mut admin = Admin::new(&prepared.each[0].0, run.setup_node.clone());
    if pass.is_repetition() {
        let (index, count) = (pass.index, pass.count);
        print(&heading(index, count, &pass.database, &pass.id_prefix));
    }
    match prepared.each.as_slice() {
        [(_, one)] => print(&database_line(&target, one)),
        _ => print(&prepared.line()),
    }
    let users = if device_users::wanted(&run.scenario) {
        let max_response = run.settings.max_response_size;
        let (node, key) = (&run.setup_node, &run.device_key);
        Some(device_users::provision(&prepared, node, key, run.provisions, max_response).await?)
    } else {
        None
    };
    let settings = RunSettings {
        device_logins: users.as_ref().map(|u| u.logins.clone()),
        target: target.clone(),
        ids: DocumentIds::new(&pass.id_prefix)
            .with_partitions(run.settings.ids.partitions().cloned()),
        started_empty: prepared.documents_before() == 0,
        ..run.settings.clone()
    };
    let scenario = pass.scenario(&run.scenario);
    record.start(pass);
    let observer = run.observer.clone();
    let hot = match settings.hot_docs {
        Some(count) => {
            let hot = (count, settings.most_kept);
            Some(super::hot::make(&mut admin, &settings.writer, &settings.ids, hot).await?)
        }
        None => None,
    };
    let existing = match settings.existing {
        Some(source) => {
            let (existing, note) =
                super::existing::find(&mut admin, source, settings.seed, settings.most_kept)
                    .await?;
            if let Some(note) = note {
                print(&format!("  {note}\n"));
            }
            Some(existing)
        }
        None => None,
    };
    let mut engine = Engine::new(settings, run.endpoints.clone(), observer, run.stop.clone());
    if let Some(hot) = hot {
        engine.heat(hot);
    }
    if let Some(existing) = existing {
        engine.target_existing(existing);
    }
    let outputs = &run.outputs;
    let searching = run
        .search
        .as_ref()
        .map(|plan| (plan, run.thresholds.as_slice()));
    let partitions = run.settings.ids.partitions().map(|p| p.count);
    let stop = run.stop.stop.clone();
    let indexes = Indexes::new(&target, run.setup_node.clone(), &scenario, partitions, stop)?;
    let mut settle = scenario
        .phases
        .iter()
        .any(|p| p.settle)
        .then(|| Settle::new(&target, run.setup_node.clone()));
    let measured = run_phases(
        &mut engine,
        &scenario,
        (&run.shares, &indexes, &mut settle),
        record,
        (outputs, run.detail),
        searching,
    )
    .await;
    drop(engine);
    let measured = match measured {
        Ok(measured) => measured,
        Err(failed) => {
            // `--cleanup` still deletes what the run made; the run's failure is the one
            // to show, a failed deletion is said beside it.
            if run.database.cleanup
                && let Err(Failed::Message { text, .. }) =
                    clean_up_after(&mut admin, (&prepared, &target, &users), run, &[]).await
            {
                crate::text::sink::err(&format!("sofabench: {text}"));
            }
            return Err(failed);
        }
    };
    print(&report::ending::form_lines(
        record.config(),
        &measured.phases,
    ));
    let deleted = if run.database.cleanup {
        let made = (&prepared, &target, &users);
        clean_up_after(&mut admin, made, run, &measured.outcomes).await?
    } else {
        false
    };
    let interrupted = measured.outcomes.iter().any(|o| o.interrupted);
    record.end(interrupted, deleted);
    if pass.index < pass.count && !interrupted {
        checkpoint(outputs, record);
    }
    Ok(())
}

/// A run killed before its end keeps the phases it finished: the result files are
/// rewritten after every phase but the run's last (as hyperfine rewrites its exports
/// after every benchmark), marked as not finished. A file that cannot be written is
/// reported by the last write, which fails the same way.
pub(super) fn checkpoint(outputs: &OutputFiles, record: &Record) {
    if !outputs.is_empty() {
        let _ = outputs.write(&record.result(true));
    }
}

/// The phase loop: connections opened once for the largest phase, then each phase in
/// turn, its report printed, its result recorded and the files rewritten as it ends
/// (unless it is the run's last); Ctrl-C ends the loop after the phase it stopped.
async fn run_phases(
    engine: &mut Engine,
    scenario: &Scenario,
    (shares, indexes, settle): (&[PhaseShare], &Indexes, &mut Option<Settle>),
    record: &mut Record,
    (outputs, detail): (&OutputFiles, Detail),
    searching: Option<(&SearchPlan, &[Threshold])>,
) -> Result<Measured, Failed> {
    let most = shares.iter().map(|s| s.connections).max().unwrap_or(1);
    engine.connect(most).await.map_err(Failed::run)?;
    let mut measured = Measured {
        outcomes: Vec::new(),
        phases: Vec::new(),
        search: None,
    };
    let search = searching
        .zip(scenario.phases.iter().zip(shares).next_back())
        .map(|((plan, checks), (phase, share))| Search {
            plan,
            checks,
            phase,
            share: *share,
            detail,
        });
    let plain = scenario.phases.len() - usize::from(search.is_some());
    for (k, (phase, share)) in scenario.phases.iter().zip(shares).take(plain).enumerate() {
        let mut index_builds = indexes.before(k).await?;
        let settled = match settle.as_mut().filter(|_| phase.settle) {
            Some(settle) => Some(settle_before(settle, &phase.name).await?),
            None => None,
        };
        let (outcome, built) = run_building(engine, (phase, *share), indexes.during(k)).await?;
        index_builds.extend(built);
        let mut result = results::build::phase(&outcome, phase.sweep.clone());
        result.index_builds = index_builds;
        result.settle = match (settle.as_mut(), settled) {
            (Some(settle), Some(settled)) => Some(settle_after(settle, settled).await?),
            _ => None,
        };
        print(&report::phase_text(&result, outcome.interrupted, detail));
        record.add(result.clone()).map_err(Failed::run)?;
        measured.phases.push(result);
        // A phase whose connections gave up does not stop the run: the next phase tries
        // again, and what it cannot run is counted there.
        let interrupted = outcome.interrupted;
        measured.outcomes.push(outcome);
        if interrupted {
            measured.search = search.as_ref().map(Search::stopped_before_its_steps);
            record.search.clone_from(&measured.search);
            return Ok(measured);
        }
        if measured.phases.len() < scenario.phases.len() {
            checkpoint(outputs, record);
        }
    }
    if let Some(search) = search {
        // Its steps' results have no place for them: the lines say what was built.
        let last = scenario.phases.len() - 1;
        print(&report::indexes::lines(&indexes.before_search(last).await?));
        search.run(engine, &mut measured, record, outputs).await?;
    }
    Ok(measured)
}

/// The wait for the server to settle before a phase, said as it ends.
async fn settle_before(settle: &mut Settle, phase: &str) -> Result<SettleResult, Failed> {
    let settled = settle.wait().await?;
    print(&super::settle::line(phase, &settled));
    Ok(settled)
}

/// The wait's result with the compactions running at the phase's end, said when any
/// was (the phase's figures include it).
async fn settle_after(
    settle: &mut Settle,
    mut settled: SettleResult,
) -> Result<SettleResult, Failed> {
    if settled.outcome != SettleOutcome::NotVisible {
        settled.compactions_at_end = settle.compactions_now().await?;
        if settled.compactions_at_end > 0 {
            print(&format!(
                "  a compaction of the database was running as the phase ended ({} at once): its figures include it\n",
                settled.compactions_at_end
            ));
        }
    }
    Ok(settled)
}

/// Runs a phase while `building` builds its indexes, if it has any to build then. A
/// build that fails does not cut the phase short (its operations are measured to their
/// end); the run then stops with the build's failure. A phase interrupted by Ctrl-C
/// does not wait for its build.
async fn run_building(
    engine: &mut Engine,
    (phase, share): (&Phase, PhaseShare),
    building: Option<impl Future<Output = Result<Vec<IndexBuildResult>, Failed>>>,
) -> Result<(PhaseOutcome, Vec<IndexBuildResult>), Failed> {
    let stop = engine.stop_signal();
    let Some(building) = building else {
        let outcome = engine.run(phase, share).await;
        return Ok((outcome.map_err(|e| phase_failed(&stop, e))?, Vec::new()));
    };
    let run = engine.run(phase, share);
    tokio::pin!(run, building);
    let mut built = None;
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            result = &mut building, if built.is_none() => built = Some(result),
        }
    };
    let outcome = outcome.map_err(|e| phase_failed(&stop, e))?;
    let (mut builds, when) = match built {
        Some(result) => (result?, BuiltWhen::WhilePhaseRan),
        None if outcome.interrupted => return Ok((outcome, Vec::new())),
        None => (building.await?, BuiltWhen::PhaseEndedFirst),
    };
    for build in &mut builds {
        build.when = when;
    }
    Ok((outcome, builds))
}

/// A phase that could not run: interrupted (exit 130) when Ctrl-C came first, e.g. while
/// its consumers were starting, else failed.
pub(super) fn phase_failed(stop: &crate::engine::stop::Signal, problem: String) -> Failed {
    if stop.is_raised() {
        Failed::Message {
            text: problem,
            code: INTERRUPTED,
        }
    } else {
        Failed::run(problem)
    }
}

/// `--cleanup`: deletes what the run made (its databases, the replicas of `outcomes`'
/// phases); true when it deleted every database.
async fn clean_up_after(
    admin: &mut Admin,
    (prepared, target, users): (&databases::Prepared, &Target, &Option<DeviceUsers>),
    run: &Run,
    outcomes: &[PhaseOutcome],
) -> Result<bool, Failed> {
    if run.stop.given_up.is_raised() {
        print("kept what the run made: a second Ctrl-C skipped --cleanup\n");
        return Ok(false);
    }
    if let Some(users) = users {
        users.clean_up(&run.setup_node).await?;
    }
    match prepared.each.as_slice() {
        [(_, one)] => clean_up(admin, (target, one), &run.endpoints[0], outcomes).await,
        _ => databases::clean_up(prepared, &run.setup_node).await,
    }
}

/// `--cleanup`: deletes the replicas the run's actions created, and the database if the
/// run created it, never one it found; true when it deleted the database.
async fn clean_up(
    admin: &mut Admin,
    (target, prepared): (&Target, &PreparedDatabase),
    endpoint: &Arc<Endpoint>,
    outcomes: &[PhaseOutcome],
) -> Result<bool, Failed> {
    delete_replicas(target, endpoint, outcomes)
        .await
        .map_err(setup_failed)?;
    if prepared.created {
        admin.delete().await.map_err(setup_failed)?;
        print(&format!(
            "deleted database {:?} (--cleanup)\n",
            target.database
        ));
    } else {
        print(&format!(
            "kept database {:?}: --cleanup only deletes a database the run created\n",
            target.database
        ));
    }
    Ok(prepared.created)
}

/// Writes the result files, judges the thresholds, and prints the ending (the SUMMARY
/// with the verdict) as `report` prints it from the result; the exit code follows.
fn finish(run: &Run, result: &RunResult, interrupted: bool) -> Result<(), Failed> {
    // A file that cannot be written (a full disk) does not hide the thresholds and the
    // verdict: the measurements are in the report printed above.
    let written = run.outputs.write(result);
    for path in &written.paths {
        print(&format!("wrote {}\n", path.display()));
    }
    // A rate search's steps were judged one by one, by its own block.
    let thresholds = match result.search {
        Some(_) => Vec::new(),
        None => evaluate_all(&run.thresholds, result),
    };
    let verdict = judge(&Counts::of_result(result));
    let mut problems = verdict.reasons();
    if !written.failures.is_empty() {
        problems.push(format!(
            "{} could not be written",
            counted(written.failures.len() as u64, "result file")
        ));
    }
    let closing = Closing {
        result,
        thresholds: &thresholds,
        files: Some(&written.paths),
        problems: &problems,
    };
    print(&report::ending::text(&closing, run.detail));
    let writing = written.report_failures();
    if let Some(search) = &result.search {
        return finish_search(search, &verdict, interrupted, writing);
    }
    if interrupted {
        crate::text::sink::err("sofabench: interrupted; the figures above cover what was done");
        return Err(Failed::Quiet { code: INTERRUPTED });
    }
    let failed_checks = failed(&thresholds);
    if failed_checks > 0 {
        crate::text::sink::err(&format!(
            "sofabench: {failed_checks} of {} thresholds failed (see THRESHOLDS above)",
            thresholds.len()
        ));
        verdict.print()?;
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    verdict.print()?;
    writing
}

/// A rate search's end (its block printed): no rate met, or a phase before the steps
/// failed, fails the run.
fn finish_search(
    search: &SearchResult,
    before: &Verdict,
    interrupted: bool,
    writing: Result<(), Failed>,
) -> Result<(), Failed> {
    if interrupted {
        crate::text::sink::err(
            "sofabench: interrupted; the rate search's steps above are what was done",
        );
        return Err(Failed::Quiet { code: INTERRUPTED });
    }
    before.print()?;
    if search.answer.is_none() {
        crate::text::sink::err(
            "sofabench: no rate of the range met (see RATE SEARCH above); lower --search-rate's LOW",
        );
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    writing
}

/// The first login of every node, for the modes that log in (cookie, iam), before
/// anything else is sent: a refused password or API key stops the run here. A node that
/// cannot be reached is left to [`live_nodes`], which says so (or fails over); it logs in
/// when it answers.
async fn log_in(endpoints: &[Arc<Endpoint>]) -> Result<(), Failed> {
    for (node, outcome) in auth::start(endpoints).await {
        match outcome {
            Ok(()) => {}
            Err(e) if e.unreachable => {}
            Err(e) if e.bad_input => return Err(Failed::bad_input(e.message)),
            Err(e) => return Err(Failed::run(format!("{node}: {}", e.message))),
        }
    }
    Ok(())
}

/// Checks that every node answers like CouchDB, and returns the node that sets the
/// database up, and every node as it answered `GET /` (in the order given). With
/// `--failover`, nodes down at the start are named and left to the connections'
/// failover, and the first live node sets up.
async fn live_nodes(
    target: &Target,
    failover: bool,
    endpoints: &[Arc<Endpoint>],
) -> Result<(Arc<Endpoint>, Vec<ServerNode>), SetupError> {
    let mut first_live = None;
    let mut first_problem = None;
    let mut answered = Vec::with_capacity(endpoints.len());
    for endpoint in endpoints {
        match Admin::new(target, endpoint.clone()).check_server().await {
            Ok(node) => {
                first_live.get_or_insert_with(|| endpoint.clone());
                say_no_welcome(&node);
                answered.push(node);
            }
            Err(problem) if failover && endpoints.len() > 1 && !problem.bad_input => {
                crate::text::sink::err(&format!(
                    "sofabench: warning: {} is down at the start ({}); its connections fail over to the next node (--failover)",
                    endpoint.node, problem.message
                ));
                first_problem.get_or_insert(problem);
                answered.push(environment::down(endpoint));
            }
            Err(problem) => return Err(problem),
        }
    }
    match (first_live, first_problem) {
        (Some(node), _) => Ok((node, answered)),
        (None, Some(problem)) => Err(problem),
        (None, None) => Ok((endpoints[0].clone(), answered)),
    }
}

/// A node taken without a welcome (its database answers like CouchDB's) is said once:
/// the result knows nothing of its version.
fn say_no_welcome(node: &ServerNode) {
    if node.answered != WELCOME {
        crate::text::sink::err(&format!(
            "sofabench: warning: {} gave no CouchDB welcome at GET / ({}), but its database answers like CouchDB's: the run goes on, and the result records the server's version and features as unknown",
            node.address, node.answered
        ));
    }
}

/// How long requests in flight may finish after Ctrl-C before they are given up: short
/// enough that the run has ended within 2 s of Ctrl-C, whatever the server does.
const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the report may take to print after a second Ctrl-C before the process ends
/// without it.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_millis(500);

/// On Ctrl-C or SIGTERM: stop sending and let requests in flight finish; after [`GRACE`],
/// give them up. The report still prints. A second signal gives them up at once, skips
/// `--cleanup`, and ends the process within [`LAST_WORDS`].
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
        crate::text::sink::err(
            "\nsofabench: stopping: letting requests in flight finish (again to give up now)",
        );
        let again = tokio::select! {
            _ = tokio::signal::ctrl_c() => true,
            _ = terminate.recv() => true,
            () = tokio::time::sleep(GRACE) => false,
        };
        stop.abandon.raise();
        if !again {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        stop.given_up.raise();
        crate::text::sink::err("sofabench: given up: exiting now, without --cleanup");
        // On a thread of its own: nothing the runtime is busy with can hold it up.
        std::thread::spawn(|| {
            std::thread::sleep(LAST_WORDS);
            std::process::exit(i32::from(crate::exit::INTERRUPTED));
        });
    });
}

/// Deletes the replicas this run's actions and replications created, and only those.
async fn delete_replicas(
    target: &Target,
    endpoint: &Arc<Endpoint>,
    outcomes: &[PhaseOutcome],
) -> Result<(), SetupError> {
    let by_actions = outcomes
        .iter()
        .filter_map(|o| o.action.as_ref()?.created_database.clone());
    let by_replications = outcomes
        .iter()
        .filter_map(|o| o.replication.as_ref())
        .flat_map(|r| &r.replicas)
        // A replica on another server is left there.
        .filter(|r| r.created && r.url.is_none())
        .map(|r| r.database.clone());
    let mut created: Vec<String> = by_actions.chain(by_replications).collect();
    created.sort();
    created.dedup();
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
