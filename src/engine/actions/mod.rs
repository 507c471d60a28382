//! Background actions a phase starts on the server while its operations run: compaction
//! (`POST /db/_compact`, followed until it has finished) and replication
//! (`POST /_replicate`, one-way or two-way), as the CouchDB benchmark report measured
//! throughput during them.

mod address;
mod compact;
mod follow;
mod replicate;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinHandle;

pub use crate::metrics::ActionReport;
pub use address::ReplicationAddress;
pub(crate) use replicate::{Form, Side, create, form};

use crate::driver::{Call, Client, Endpoint, Method};
use crate::target::Target;
use crate::text::Quoted;
use crate::workload::Action;

use super::Stop;
use super::stop::Signal;

/// What every action of a run needs besides the phase.
#[derive(Clone, Debug)]
pub struct ActionSettings {
    /// Where the server reaches the run's database (`--replication-address`).
    pub replication: ReplicationAddress,
    /// How long an action is waited for (`--action-timeout`); `None` waits forever.
    pub wait: Option<Duration>,
}

/// Where an action talks to, and how it tells time.
struct Context {
    client: Client,
    target: Target,
    settings: ActionSettings,
    stop: Stop,
    phase_start: Instant,
}

impl Context {
    /// Seconds from the phase's start.
    fn since(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.phase_start).as_secs_f64()
    }

    /// When sofabench stops waiting for an action started at `started`.
    fn deadline(&self, started: Instant) -> Option<Instant> {
        self.settings
            .wait
            .map(|w| crate::time::duration::after(started, w))
    }

    /// `message`, which quotes an answer, made safe to show: every secret an answer could
    /// echo hidden (the run's, and those the replication address carries), control
    /// characters escaped.
    fn quote(&self, message: &str) -> String {
        let replication = self.settings.replication.auth();
        let secrets = (&self.client.endpoint().credential, replication.as_slice());
        Quoted::message(message, &secrets)
    }
}

/// Starts `action` at its moment after the phase's start, or when the phase's operations
/// end (`phase.1` is raised then) if that comes first: the run never waits idle for an
/// action's moment, and the report says the action started early.
pub fn spawn(
    action: Action,
    target: &Target,
    endpoint: Arc<Endpoint>,
    settings: &ActionSettings,
    stop: Stop,
    phase: (Instant, Signal),
) -> JoinHandle<ActionReport> {
    let (phase_start, operations_ended) = phase;
    let context = Context {
        // A one-shot `_replicate` answers when the replication is done: the request may
        // take as long as the action may.
        client: Client::new(endpoint, settings.wait),
        target: target.clone(),
        settings: settings.clone(),
        stop,
        phase_start,
    };
    let abandon = context.stop.abandon.raised();
    let stopped = context.stop.stop.raised();
    let kind = kind(&action);
    tokio::spawn(async move {
        let mut context = context;
        let work = async {
            let at = match &action {
                Action::Compact { at } | Action::Replicate { at, .. } => *at,
            };
            // A run stopped before the action's moment does not start it: Ctrl-C ends the
            // phase's operations too, which would otherwise start it early.
            let early = tokio::select! {
                biased;
                () = stopped => return not_started(kind, at),
                () = tokio::time::sleep_until(crate::time::duration::after(phase_start, at).into()) => None,
                () = operations_ended.raised() => Some(early_note(kind, at, phase_start)),
            };
            let mut report = match action {
                Action::Compact { .. } => compact::run(&mut context).await,
                Action::Replicate {
                    target, two_way, ..
                } => replicate::run(&mut context, &target, two_way).await,
            };
            if let Some(early) = early {
                report.note = Some(match report.note.take() {
                    Some(note) => format!("{early}; {note}"),
                    None => early,
                });
            }
            report
        };
        // A second Ctrl-C (or the grace after the first) gives up on a long `_replicate`
        // too, so the report still prints.
        tokio::select! {
            report = work => report,
            () = abandon => ActionReport {
                kind: kind.to_string(),
                note: Some(
                    "given up when the run was stopped, before it ended; its times are unknown"
                        .to_string(),
                ),
                ..ActionReport::default()
            },
        }
    })
}

/// The report of an action the run was stopped before.
fn not_started(kind: &str, at: Duration) -> ActionReport {
    ActionReport {
        kind: kind.to_string(),
        note: Some(format!(
            "not started: the run was stopped before its moment ({} = {:.1} s)",
            moment_key(kind),
            at.as_secs_f64()
        )),
        ..ActionReport::default()
    }
}

fn moment_key(kind: &str) -> &'static str {
    if kind == "compact" {
        "compact_at"
    } else {
        "replicate_at"
    }
}

/// What the report says of an action started when its phase's operations ended, before
/// its moment: it ran with no load beside it.
fn early_note(kind: &str, at: Duration, phase_start: Instant) -> String {
    let key = moment_key(kind);
    format!(
        "started when the phase's operations ended ({:.1} s), before {key} = {:.1} s: it ran without load; give the phase more operations or a duration past {key} to measure it under load",
        phase_start.elapsed().as_secs_f64(),
        at.as_secs_f64()
    )
}

fn kind(action: &Action) -> &'static str {
    match action {
        Action::Compact { .. } => "compact",
        Action::Replicate { two_way, .. } => replicate_kind(*two_way),
    }
}

fn replicate_kind(two_way: bool) -> &'static str {
    if two_way {
        "replicate (two-way)"
    } else {
        "replicate"
    }
}

/// A server's answer: its status, its body as JSON (`Null` if it is not), and a short
/// description of it for messages.
pub(crate) struct Answer {
    pub status: u16,
    pub json: Value,
    pub text: String,
}

impl Answer {
    /// `error: reason` of a CouchDB error body, or the start of the body.
    pub fn reason(&self) -> String {
        match (self.json["error"].as_str(), self.json["reason"].as_str()) {
            (Some(e), Some(r)) => format!("{e}: {r}"),
            (Some(e), None) => e.to_string(),
            _ => self.text.clone(),
        }
    }
}

pub(crate) async fn request(
    client: &mut Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<Answer, String> {
    let body = body.map(Value::to_string);
    let call = Call {
        method,
        path,
        body: body.as_deref().map(str::as_bytes),
    };
    let answer = client.send(&call).await.map_err(|e| e.to_string())?;
    // Not cut to its quoted length here: a secret across the cut would leave its start
    // behind; the message that quotes it hides, then cuts.
    let text = String::from_utf8_lossy(
        &answer.body[..answer.body.len().min(Quoted::window(Quoted::MESSAGE))],
    )
    .trim()
    .to_string();
    Ok(Answer {
        status: answer.status,
        json: serde_json::from_slice(&answer.body).unwrap_or(Value::Null),
        text,
    })
}
