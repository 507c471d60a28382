//! One direction's replication as it goes on: its id, the device's own log, and the
//! session under way (where it stands, the server's log and that log's `_rev`). A session
//! starts by reading the server's log and comparing it with the device's, goes on across
//! cycles without reading it again, and ends on any failure (the next cycle starts a new
//! one, since a write whose answer was lost may have changed the server's log).

use std::time::{Instant, SystemTime};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::cycle::{Cycle, StartedFrom, ZeroBecause};
use super::error::{Step, SyncError};
use super::http::{self, DeviceHttp};
use super::log::{self, Log};
use super::replication_id::Direction;
use super::seq::Seq;
use super::spec::Checkpointing;
use crate::driver::Method;

/// The longest `_rev` of a log document kept (CouchDB writes `0-N`).
const MAX_LOG_REV: usize = 64;

/// One direction's replication.
pub struct Replication {
    pub direction: Direction,
    /// The replication id: the server's log is `_local/<id>`.
    pub id: String,
    /// The device's own log of this replication.
    own: Option<Log>,
    session: Option<Session>,
    /// Sessions started, for their ids.
    sessions: u64,
}

/// A session under way.
pub struct Session {
    id: Box<str>,
    /// Where the replication stands: the feed's sequence (pull) or the device's (push).
    pub position: Seq,
    /// The position the logs were last written at.
    written: Seq,
    last_write: Instant,
    server_log: Option<Log>,
    server_rev: Option<Box<str>>,
}

impl Replication {
    pub fn new(direction: Direction, id: String) -> Replication {
        Replication {
            direction,
            id,
            own: None,
            session: None,
            sessions: 0,
        }
    }

    /// The session under way, started if there is none: the server's log read and
    /// compared with the device's to find where to start.
    pub async fn session(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
        device: &str,
    ) -> Result<&mut Session, SyncError> {
        if self.session.is_none() {
            let (server_log, server_rev) = self.read_server_log(http, cycle, db).await?;
            let (source, target) = match self.direction {
                Direction::Pull => (server_log.as_ref(), self.own.as_ref()),
                Direction::Push => (self.own.as_ref(), server_log.as_ref()),
            };
            let (position, started) = match (source, target) {
                (Some(source), Some(target)) => match log::start_from(source, target) {
                    Some(seq) => (seq, StartedFrom::Checkpoint),
                    None => (Seq::zero(), zero(ZeroBecause::NoCommonSession)),
                },
                _ => (Seq::zero(), zero(ZeroBecause::NoLog)),
            };
            cycle.started_from = started;
            self.sessions = self.sessions.saturating_add(1);
            self.session = Some(Session {
                id: session_id(device, self.direction, self.sessions),
                written: position.clone(),
                position,
                last_write: Instant::now(),
                server_log,
                server_rev,
            });
        }
        // Just made when there was none.
        self.session
            .as_mut()
            .ok_or_else(|| SyncError::bad(Step::ReadLog, "no session"))
    }

    /// Forgets the session under way (after a failure).
    pub fn end(&mut self) {
        self.session = None;
    }

    pub fn session_mut(&mut self) -> Option<&mut Session> {
        self.session.as_mut()
    }

    pub fn position(&self) -> Option<&Seq> {
        self.session.as_ref().map(|session| &session.position)
    }

    /// Whether the profile writes the logs now: the position moved since they were last
    /// written, and (on a timer) the time has come.
    pub fn checkpoint_due(&self, checkpointing: Checkpointing) -> bool {
        let Some(session) = &self.session else {
            return false;
        };
        session.position != session.written
            && match checkpointing {
                Checkpointing::EveryBatch => true,
                Checkpointing::Every(period) => session.last_write.elapsed() >= period,
            }
    }

    /// Writes both logs at the session's position: the server's (`PUT _local/<id>` with
    /// its current `_rev`; after a 409, read again and written once more) and the
    /// device's own.
    pub async fn checkpoint(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
    ) -> Result<(), SyncError> {
        let Some(session) = &self.session else {
            return Ok(());
        };
        let (session_id, position) = (session.id.clone(), session.position.clone());
        let server_log = Log::recorded(session.server_log.as_ref(), &session_id, position.clone());
        let mut rev = session.server_rev.clone();
        let mut answer = self
            .put_log(http, cycle, db, &server_log, rev.as_deref())
            .await?;
        if answer.status == 409 {
            let (_, read_rev) = self.read_server_log(http, cycle, db).await?;
            rev = read_rev;
            answer = self
                .put_log(http, cycle, db, &server_log, rev.as_deref())
                .await?;
        }
        if !matches!(answer.status, 200..=202) {
            return Err(http::status_error(http, Step::WriteLog, &answer));
        }
        cycle.checkpoint_writes = cycle.checkpoint_writes.saturating_add(1);
        let written_rev = serde_json::from_slice::<Value>(&answer.body)
            .ok()
            .and_then(|value| rev_of(&value));
        self.own = Some(Log::recorded(
            self.own.as_ref(),
            &session_id,
            position.clone(),
        ));
        if let Some(session) = &mut self.session {
            session.server_log = Some(server_log);
            session.server_rev = written_rev;
            session.written = position;
            session.last_write = Instant::now();
        }
        Ok(())
    }

    async fn put_log(
        &self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
        log: &Log,
        rev: Option<&str>,
    ) -> Result<http::Answer, SyncError> {
        let body = log.document(&self.id, rev).to_string();
        let path = format!("{db}/_local/{}", self.id);
        http::exchange(
            http,
            cycle,
            Step::WriteLog,
            (Method::Put, &path),
            Some(body.as_bytes()),
        )
        .await
    }

    /// The server's log and its `_rev`: none when it is not there (404), or when what is
    /// there is no log (then its `_rev` still serves to replace it).
    async fn read_server_log(
        &self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
    ) -> Result<(Option<Log>, Option<Box<str>>), SyncError> {
        let path = format!("{db}/_local/{}", self.id);
        let answer = http::exchange(http, cycle, Step::ReadLog, (Method::Get, &path), None).await?;
        match answer.status {
            404 => Ok((None, None)),
            200 => {
                let doc: Value = serde_json::from_slice(&answer.body)
                    .map_err(|_| SyncError::bad(Step::ReadLog, "the log is not JSON"))?;
                Ok((Log::parse(&doc), rev_of(&doc)))
            }
            _ => Err(http::status_error(http, Step::ReadLog, &answer)),
        }
    }

    /// Bytes the logs take in memory, roughly.
    pub fn bytes(&self) -> usize {
        let own = self.own.as_ref().map_or(0, Log::bytes);
        let session = self.session.as_ref().map_or(0, |session| {
            size_of::<Session>()
                + session.id.len()
                + session.position.text_len()
                + session.written.text_len()
                + session.server_log.as_ref().map_or(0, Log::bytes)
                + session.server_rev.as_ref().map_or(0, |rev| rev.len())
        });
        size_of::<Replication>() + self.id.len() + own + session
    }
}

impl Session {
    /// Moves the position on (the logs are written when the profile says).
    pub fn advance(&mut self, to: Seq) {
        self.position = to;
    }
}

fn zero(because: ZeroBecause) -> StartedFrom {
    StartedFrom::Zero { because }
}

/// A `rev` (a write's answer) or `_rev` (a read document) within the bound.
fn rev_of(value: &Value) -> Option<Box<str>> {
    let rev = value.get("rev").or_else(|| value.get("_rev"))?.as_str()?;
    (!rev.is_empty() && rev.len() <= MAX_LOG_REV).then(|| rev.into())
}

/// A new session's id: unique to the device, the direction, the session and the time.
fn session_id(device: &str, direction: Direction, number: u64) -> Box<str> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let mut hash = Sha256::new();
    hash.update((device.len() as u64).to_le_bytes());
    hash.update(device.as_bytes());
    hash.update(direction.name());
    hash.update(number.to_le_bytes());
    hash.update(now.to_le_bytes());
    hash.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect::<String>()
        .into()
}
