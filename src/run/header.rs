//! What a run prints before its first phase: the target, the scenario, each phase with
//! where its settings came from, the template, the seed; then the database's state.

use super::Setup;
use crate::driver::admin::PreparedDatabase;
use crate::driver::auth::{Auth, Mode};
use crate::report::numbers::grouped;
use crate::scenario::settings;
use crate::target::Target;

/// The run's description, as printed at its start.
pub fn describe(setup: &Setup) -> String {
    let engine = &setup.engine;
    let scenario = &setup.scenario;
    let mut text = format!(
        "sofabench {}: {}\n  scenario: {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        engine.target.describe(),
        scenario.name,
        scenario.description
    );
    text.push_str(&connection_line(setup));
    text.push_str(&auth_line(&engine.auth));
    let node = setup.node;
    if node.count > 1 {
        text.push_str(&format!(
            "  node {} of {}: this machine drives its share of each phase's connections (counted over all nodes below)\n",
            node.index, node.count
        ));
    }
    for (phase, origins) in scenario.phases.iter().zip(&scenario.origins) {
        text.push_str(&format!("  phase {}\n", phase.describe()));
        text.push_str(&format!(
            "    settings: {}\n",
            settings::describe(phase, origins)
        ));
    }
    if let (Some(plan), Some(last)) = (&setup.search, scenario.phases.last()) {
        text.push_str(&format!(
            "  rate search: phase {} in steps of {:?} between {}/s and {}/s, at most {} steps, until within {}% (--search-rate); the phases before it run once\n",
            last.name,
            plan.step,
            plan.low,
            plan.high,
            plan.most_steps,
            (plan.precision * 100_000.0).round() / 1_000.0
        ));
    }
    let estimate = super::length::Estimate::of(&scenario.phases, setup.search.as_ref(), setup.runs);
    text.push_str(&estimate.line());
    let ids = if setup.runs > 1 {
        format!("{}-r<N>-NNNNNNNNNN in repetition N", engine.ids.prefix())
    } else {
        format!("{}-NNNNNNNNNN", engine.ids.prefix())
    };
    let mut ids = ids;
    let uuid = Some(crate::workload::IdScheme::Uuid);
    if scenario.phases.iter().any(|p| p.shape.ids == uuid) {
        ids.push_str(", or 32 hex digits in uuid phases");
    }
    if scenario
        .phases
        .iter()
        .any(|p| p.shape.ids == Some(crate::workload::IdScheme::Server))
    {
        ids.push_str(", or the server's in server phases (POST /db, bulk documents without _id: a bulk answer's rows are paired with the documents by position, as the server answers them, and must be one per document)");
    }
    if let Some(partitions) = engine.ids.partitions() {
        ids = format!("p<K>:{ids} ({})", partitions.describe());
    }
    text.push_str(&format!(
        "  template: {}\n  seed: {} (--seed={} repeats this run); document ids: {ids}\n",
        setup.template_name, engine.seed, engine.seed,
    ));
    text.push_str(&repetitions_line(setup));
    if let Some(retry) = engine.retry_429 {
        text.push_str(&format!(
            "  429 Too Many Requests: the operation is sent again, up to {} times, after the server's Retry-After (at most {} s) or a backoff (--retry-429)\n",
            retry.most,
            crate::engine::rate_limit::MOST_WAIT.as_secs()
        ));
    }
    text
}

/// With `--runs N`: the repetitions, each on a database of its own.
fn repetitions_line(setup: &Setup) -> String {
    let runs = setup.runs;
    if runs <= 1 {
        return String::new();
    }
    let target = &setup.engine.target;
    // With --databases, a repetition's databases are named after its own name.
    let names = |index| {
        let name = crate::run::repeat::suffixed(&target.database, index);
        target.databases.names(&name)
    };
    let (first, last) = (names(1), names(runs));
    let what = if target.databases.spread() {
        "fresh databases of its own"
    } else {
        "a fresh database of its own"
    };
    format!(
        "  repetitions: {runs} (--runs), one after the other, each on {what} ({:?} … {:?}) from the same seed\n",
        first.first().map_or("", String::as_str),
        last.last().map_or("", String::as_str)
    )
}

/// How the nodes are spoken to and how the client runs: a connection per request and TLS
/// without checks when asked for, always the client's threads, and busy polling.
fn connection_line(setup: &Setup) -> String {
    let mut text = String::new();
    if !setup.config.keep_alive {
        text.push_str("  connections: a new one for every request (--disable-keepalive)\n");
    }
    text.push_str(&threads_line(setup.threads));
    if setup.config.busy_poll {
        text.push_str("  client: its threads poll for answers instead of sleeping, each one fully busy (--busy-poll)\n");
    }
    if setup.config.tls.as_ref().is_some_and(|tls| !tls.verified) {
        text.push_str("  WARNING: --insecure: the servers' TLS certificates are not checked\n");
    }
    let pinned = crate::driver::pinned::pinned_hosts();
    if !pinned.is_empty() {
        text.push_str(&format!(
            "  TLS: {} presented a certificate given in --cacert: trusted as that server's own (pinned; the names in it are not checked)\n",
            pinned.join(", ")
        ));
    }
    text
}

/// The threads the client runs on, and whether they are the default.
fn threads_line(threads: usize) -> String {
    let cores = crate::cpu::machine_cores();
    let how = if threads == cores {
        "one per core of this machine".to_string()
    } else {
        format!(
            "this machine has {}",
            crate::words::counted(cores as u64, "core")
        )
    };
    format!(
        "  client: {} ({how}; --threads)\n",
        crate::words::counted(threads as u64, "thread")
    )
}

/// How requests authenticate, when they do: the mode, and for the modes that log in,
/// where and how often.
fn auth_line(auth: &Auth) -> String {
    let how = match auth.mode {
        Mode::None => return String::new(),
        Mode::Basic => "the user and password on every request".to_string(),
        Mode::Cookie => {
            "a session cookie per node from POST /_session, renewed ahead of its expiry and after a 401".to_string()
        }
        Mode::Jwt => format!(
            "the token in SOFABENCH_TOKEN as a bearer token, {}",
            auth.token_expiry().unwrap_or_default()
        ),
        Mode::Proxy => format!(
            "proxy authentication headers for user {:?}",
            auth.user().unwrap_or_default()
        ),
        Mode::Iam => format!(
            "bearer tokens from {} for the API key in SOFABENCH_IAM_API_KEY, renewed ahead of their expiry and after a 401",
            auth.iam_token_url().unwrap_or_default()
        ),
    };
    format!("  auth: {} ({how})\n", auth.mode)
}

/// Whether the run created the database, or how many documents it found.
pub fn database_line(target: &Target, prepared: &PreparedDatabase) -> String {
    if prepared.created && target.shards.is_given() {
        format!(
            "  database {:?}: created by this run with {}\n",
            target.database,
            target.shards.describe()
        )
    } else if prepared.created {
        format!("  database {:?}: created by this run\n", target.database)
    } else {
        format!(
            "  database {:?}: existing, {} documents before the run\n",
            target.database,
            grouped(prepared.documents_before)
        )
    }
}
