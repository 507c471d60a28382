//! `POST /db/_compact`, followed until the compaction has finished, so that its duration,
//! the file size after it and the throughput during it are what happened.
//!
//! CouchDB answers 202 at once and compacts the shards in the background: the end shows in
//! the database's `compact_running` and in `_active_tasks` (see [`super::follow`]).
//! PouchDB Server compacts before it answers and shows neither: its answer is the end.

use std::time::{Duration, Instant};

use serde_json::json;

use super::follow::{Follow, SETTLE, compactions_of};
use super::{ActionReport, Context, Method, request};

/// How often the server is asked while a compaction runs.
const POLL: Duration = Duration::from_millis(200);

/// What `GET /db` says about compaction and size.
#[derive(Default)]
struct DatabaseInfo {
    /// `None` when the server has no such field (PouchDB Server).
    compact_running: Option<bool>,
    size: Option<u64>,
    size_field: Option<&'static str>,
}

async fn database_info(context: &mut Context) -> Option<DatabaseInfo> {
    let path = context.target.database_path();
    let answer = request(&mut context.client, Method::Get, &path, None)
        .await
        .ok()?;
    if answer.status != 200 {
        return None;
    }
    let info = answer.json;
    let (size, size_field) = if let Some(size) = info["sizes"]["file"].as_u64() {
        (Some(size), Some("sizes.file"))
    } else if let Some(size) = info["disk_size"].as_u64() {
        (Some(size), Some("disk_size"))
    } else {
        (None, None)
    };
    Some(DatabaseInfo {
        compact_running: info["compact_running"].as_bool(),
        size,
        size_field,
    })
}

/// Compactions of the database that `_active_tasks` lists; `None` when the server does not
/// say (no such resource, or the user may not see it).
async fn active_compactions(context: &mut Context) -> Option<usize> {
    let answer = request(&mut context.client, Method::Get, "/_active_tasks", None)
        .await
        .ok()?;
    if answer.status != 200 {
        return None;
    }
    compactions_of(&answer.json, &context.target.database)
}

pub async fn run(context: &mut Context) -> ActionReport {
    let before = database_info(context).await.unwrap_or_default();
    let started = Instant::now();
    let mut report = ActionReport {
        kind: "compact".to_string(),
        started: Some(context.since(started)),
        size_before: before.size,
        size_field: before.size_field.map(str::to_string),
        ..ActionReport::default()
    };
    let path = format!("{}/_compact", context.target.database_path());
    let answered = match request(&mut context.client, Method::Post, &path, Some(&json!({}))).await {
        Ok(answer) if (200..=202).contains(&answer.status) => Instant::now(),
        Ok(answer) => {
            report.error = Some(context.quote(&format!(
                "_compact answered {}: {}",
                answer.status,
                answer.reason()
            )));
            return report;
        }
        Err(e) => {
            report.error = Some(format!("_compact: {e}"));
            return report;
        }
    };
    // The bound holds even when one look hangs on a server that stopped answering.
    let followed = match context.deadline(started) {
        Some(deadline) => {
            tokio::time::timeout_at(deadline.into(), follow(context, started, answered))
                .await
                .unwrap_or_else(|_| Err(gave_up(started, Instant::now())))
        }
        None => follow(context, started, answered).await,
    };
    let end = match followed {
        Ok(end) => end,
        Err(note) => {
            report.note = Some(note);
            return report;
        }
    };
    report.finished = Some(context.since(end.at));
    report.note = end.note;
    report.size_after = database_info(context).await.and_then(|i| i.size);
    report
}

/// When the compaction ended, and a note on how that was known when it is not plain.
struct End {
    at: Instant,
    note: Option<String>,
}

/// Asks the server until the compaction has finished; `Err` with a note when sofabench
/// stopped waiting first.
async fn follow(context: &mut Context, started: Instant, answered: Instant) -> Result<End, String> {
    let deadline = context.deadline(started);
    let mut tasks_shown = true;
    let mut watch = Follow::new(SETTLE);
    loop {
        let info = database_info(context).await;
        let looked = Instant::now();
        if let Some(info) = &info
            && info.compact_running.is_none()
        {
            return Ok(End {
                at: answered,
                note: Some(
                    "the server shows no compact_running: the end is its answer to _compact (PouchDB Server compacts before answering)"
                        .to_string(),
                ),
            });
        }
        let tasks = if tasks_shown {
            active_compactions(context).await
        } else {
            None
        };
        // A server that hides `_active_tasks` (a non-admin user) is not asked again.
        tasks_shown = tasks.is_some();
        if let Some(info) = info {
            let running = info.compact_running == Some(true) || tasks.is_some_and(|n| n > 0);
            if let Some(done) = watch.look(looked, running) {
                let note = (!done.seen_running).then(|| {
                    format!(
                        "the compaction was never seen running (compact_running, _active_tasks): it ended before the first look, {:.2} s after _compact answered",
                        done.at.saturating_duration_since(answered).as_secs_f64()
                    )
                });
                return Ok(End { at: done.at, note });
            }
        }
        if context.stop.stop.is_raised() {
            return Err(format!(
                "the run was stopped while the compaction ran, {:.1} s after it started; its end and the size after are unknown",
                looked.saturating_duration_since(started).as_secs_f64()
            ));
        }
        if deadline.is_some_and(|d| looked >= d) {
            return Err(gave_up(started, looked));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The note when sofabench stops waiting at `--action-timeout`.
fn gave_up(started: Instant, at: Instant) -> String {
    format!(
        "the compaction was still running {:.0} s after it started, when sofabench stopped waiting (--action-timeout); its end and the size after are unknown",
        at.saturating_duration_since(started).as_secs_f64()
    )
}
