//! Carries out a [`Setup`]: the database before and after, the phases one after the
//! other, Ctrl-C, the result and its files, the thresholds, and the verdict.

use std::io::Write;
use std::sync::Arc;
use std::time::SystemTime;

use super::Setup;
use super::header::{database_line, describe};
use super::output::OutputFiles;
use super::search::Search;
use super::thresholds::print_outcomes;
use super::verdict::verdict;
use crate::analysis::search::SearchPlan;
use crate::analysis::thresholds::Threshold;
use crate::driver::Endpoint;
use crate::driver::admin::{Admin, PreparedDatabase, SetupError};
use crate::driver::auth;
use crate::engine::observer::Observer;
use crate::engine::{Engine, PhaseOutcome, PhaseShare, Stop};
use crate::exit::{Failed, INTERRUPTED, RUN_FAILED};
use crate::report;
use crate::report::forms;
use crate::results::{self, NodeInfo, PhaseResult, RunResult, SearchResult};
use crate::scenario::{Form, Scenario};
use crate::target::Target;

/// Runs `setup`, telling `observer` of progress and intervals, on a runtime of its own.
pub fn run(setup: Setup, observer: Arc<dyn Observer>) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed::run(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(carry_out(setup, observer))
}

pub(super) fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn setup_failed(e: SetupError) -> Failed {
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

async fn carry_out(setup: Setup, observer: Arc<dyn Observer>) -> Result<(), Failed> {
    let started = SystemTime::now();
    let target = setup.engine.target.clone();
    let endpoints = Endpoint::all(&target, &setup.engine.auth, setup.engine.max_response_size);
    log_in(&endpoints).await?;
    let setup_node = live_nodes(&target, setup.engine.failover, &endpoints)
        .await
        .map_err(setup_failed)?;
    let mut admin = Admin::new(&target, setup_node);
    let prepared = admin
        .prepare(setup.database.existing)
        .await
        .map_err(setup_failed)?;
    print(&describe(&setup));
    print(&database_line(&target, &prepared));
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
        ..
    } = setup;
    let node = NodeInfo {
        index: node.index,
        count: node.count,
        host: crate::host::name(),
    };
    let config = config.to_map();
    // A run killed before its end keeps the phases it finished: the result files are
    // rewritten after every phase (as hyperfine rewrites its exports after every
    // benchmark), marked as not finished. A file that cannot be written is reported by
    // the last write, which fails the same way.
    let checkpoint = |measured: &Measured| {
        if !outputs.is_empty() {
            let now = SystemTime::now();
            let mut so_far = results::build::run(
                config.clone(),
                started,
                now,
                true,
                node.clone(),
                measured.phases.clone(),
            );
            so_far.search = measured.search.clone();
            let _ = outputs.write(&so_far);
        }
    };
    let mut engine = Engine::new(engine, endpoints.clone(), observer, stop.clone());
    let searching = search.as_ref().map(|plan| (plan, thresholds.as_slice()));
    let measured = run_phases(&mut engine, &scenario, &shares, searching, &checkpoint).await?;
    drop(engine);
    print_form(&scenario, &measured.phases);
    if database.cleanup {
        let database = (&target, &prepared);
        clean_up(&mut admin, database, &endpoints[0], &measured.outcomes).await?;
    }
    let interrupted = stop.stop.is_raised();
    let mut result = results::build::run(
        config,
        started,
        SystemTime::now(),
        interrupted,
        node,
        measured.phases,
    );
    result.search = measured.search;
    finish(
        &outputs,
        &thresholds,
        &result,
        &measured.outcomes,
        interrupted,
    )
}

/// The phase loop: connections opened once for the largest phase, then each phase in
/// turn, its report printed and `checkpoint` given the phases so far as it ends; Ctrl-C
/// ends the loop after the phase it stopped. With a rate search (`searching`: its plan
/// and thresholds), the last phase is searched rather than run once.
async fn run_phases(
    engine: &mut Engine,
    scenario: &Scenario,
    shares: &[PhaseShare],
    searching: Option<(&SearchPlan, &[Threshold])>,
    checkpoint: &dyn Fn(&Measured),
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
        });
    let plain = scenario.phases.len() - usize::from(search.is_some());
    for (phase, share) in scenario.phases.iter().zip(shares).take(plain) {
        let outcome = engine.run(phase, *share).await.map_err(Failed::run)?;
        let result = results::build::phase(&outcome);
        print(&report::phase_text(&result, outcome.interrupted));
        measured.phases.push(result);
        // A phase whose connections gave up does not stop the run: the next phase tries
        // again, and what it cannot run is counted there.
        let interrupted = outcome.interrupted;
        measured.outcomes.push(outcome);
        if interrupted {
            measured.search = search.as_ref().map(Search::stopped_before_its_steps);
            return Ok(measured);
        }
        if measured.phases.len() < scenario.phases.len() {
            checkpoint(&measured);
        }
    }
    if let Some(search) = search {
        search.run(engine, &mut measured, checkpoint).await?;
    }
    Ok(measured)
}

/// The reference benchmark's own output, for scenarios that reproduce one.
fn print_form(scenario: &Scenario, phases: &[PhaseResult]) {
    match scenario.form {
        Form::Standard => {}
        Form::Titan => print(&format!(
            "TITAN LOADTEST LINES (phase, duration s, writes, write rate, reads, read rate, hits):\n{}",
            forms::titan(phases)
        )),
        Form::Scaling => print(&format!("SCALING TABLE:\n{}", forms::scaling(phases))),
    }
}

/// `--cleanup`: deletes the replicas the run's actions created, and the database if the
/// run created it, never one it found.
async fn clean_up(
    admin: &mut Admin,
    (target, prepared): (&Target, &PreparedDatabase),
    endpoint: &Arc<Endpoint>,
    outcomes: &[PhaseOutcome],
) -> Result<(), Failed> {
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
    Ok(())
}

/// Writes the result files, checks the thresholds, and gives the verdict.
fn finish(
    outputs: &OutputFiles,
    checks: &[Threshold],
    result: &RunResult,
    outcomes: &[PhaseOutcome],
    interrupted: bool,
) -> Result<(), Failed> {
    // A file that cannot be written (a full disk) does not hide the thresholds and the
    // verdict: the measurements are in the report printed above.
    let written = outputs.write(result);
    for path in &written.paths {
        print(&format!("wrote {}\n", path.display()));
    }
    let writing = written.report_failures();
    if let Some(search) = &result.search {
        // The steps were judged one by one; the phases before them as any run's are.
        let before = outcomes.len().saturating_sub(search.steps.len());
        return finish_search(search, &outcomes[..before], interrupted, writing);
    }
    let failed_checks = if checks.is_empty() {
        0
    } else {
        print_outcomes(checks, result)?.failed
    };
    if interrupted {
        eprintln!("sofabench: interrupted; the figures above cover what was done");
        return Err(Failed::Quiet { code: INTERRUPTED });
    }
    if failed_checks > 0 {
        eprintln!(
            "sofabench: {failed_checks} of {} thresholds failed (see THRESHOLDS above)",
            checks.len()
        );
        verdict(outcomes)?;
        return Err(Failed::Quiet { code: RUN_FAILED });
    }
    verdict(outcomes)?;
    writing
}

/// A rate search's end: its block, and the verdict: no rate met, or a phase before the
/// steps failed, fails the run.
fn finish_search(
    search: &SearchResult,
    before: &[PhaseOutcome],
    interrupted: bool,
    writing: Result<(), Failed>,
) -> Result<(), Failed> {
    print(&report::search::block(search));
    if interrupted {
        eprintln!("sofabench: interrupted; the rate search's steps above are what was done");
        return Err(Failed::Quiet { code: INTERRUPTED });
    }
    verdict(before)?;
    if search.answer.is_none() {
        eprintln!(
            "sofabench: no rate of the range met (see RATE SEARCH above); lower --search-rate's LOW"
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
/// database up. With `--failover`, nodes down at the start are named and left to the
/// connections' failover, and the first live node sets up.
async fn live_nodes(
    target: &Target,
    failover: bool,
    endpoints: &[Arc<Endpoint>],
) -> Result<Arc<Endpoint>, SetupError> {
    let mut first_live = None;
    let mut first_problem = None;
    for endpoint in endpoints {
        match Admin::new(target, endpoint.clone()).check_server().await {
            Ok(()) => {
                first_live.get_or_insert_with(|| endpoint.clone());
            }
            Err(problem) if failover && endpoints.len() > 1 && !problem.bad_input => {
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

/// Deletes the replicas this run's actions created, and only those.
async fn delete_replicas(
    target: &Target,
    endpoint: &Arc<Endpoint>,
    outcomes: &[PhaseOutcome],
) -> Result<(), SetupError> {
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
