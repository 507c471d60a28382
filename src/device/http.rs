//! The one thing a device needs from HTTP: send a request below the node's base path and
//! get the whole (bounded) answer. A trait, so that the protocol is tested against a
//! scripted server; [`crate::driver::Client`] is the real one.

use std::future::Future;

use bytes::Bytes;

use super::cycle::Cycle;
use super::error::{Step, SyncError};
use crate::driver::{Call, Client, Method};

/// A whole answer.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

/// How a device talks to the server.
pub trait DeviceHttp {
    /// Sends one request (a path below the node's base path, with its query) and reads its
    /// whole answer, bounded by the client's largest answer; `Err` carries why there was
    /// no answer, fit to show.
    fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> impl Future<Output = Result<Answer, String>> + Send;

    /// What the server said, made safe to show: bounded, secrets hidden, one line.
    fn quote(&self, said: &[u8]) -> String;
}

impl DeviceHttp for Client {
    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Answer, String> {
        let call = Call { method, path, body };
        match Client::send(self, &call).await {
            Ok(exchange) => Ok(Answer {
                status: exchange.status,
                body: exchange.body,
            }),
            Err(unanswered) => Err(unanswered.to_string()),
        }
    }

    fn quote(&self, said: &[u8]) -> String {
        crate::text::Quoted::new(said, &self.endpoint().credential, QUOTE).into_string()
    }
}

/// The most characters of a server's words kept in an error.
pub const QUOTE: usize = 200;

/// Sends one request of `step`, counting it and its bytes in `cycle`; a transport failure
/// becomes the step's error. The status is the caller's to judge.
pub async fn exchange(
    http: &mut impl DeviceHttp,
    cycle: &mut Cycle,
    step: Step,
    (method, path): (Method, &str),
    body: Option<&[u8]>,
) -> Result<Answer, SyncError> {
    let sent = http.send(method, path, body).await;
    answered(cycle, step, body, sent)
}

/// Counts in `cycle` one request of `step` sent with `body` and what came of it (sent
/// by [`exchange`], or by whoever held it apart from the device); a transport failure
/// becomes the step's error.
pub fn answered(
    cycle: &mut Cycle,
    step: Step,
    body: Option<&[u8]>,
    sent: Result<Answer, String>,
) -> Result<Answer, SyncError> {
    cycle.requests = cycle.requests.saturating_add(1);
    let sent_bytes = body.map_or(0, <[u8]>::len) as u64;
    cycle.bytes_sent = cycle.bytes_sent.saturating_add(sent_bytes);
    let answer = sent.map_err(|reason| SyncError::Transport { step, reason })?;
    cycle.bytes_received = cycle
        .bytes_received
        .saturating_add(answer.body.len() as u64);
    Ok(answer)
}

/// The step's error for an answer whose status it cannot go on from.
pub fn status_error(http: &impl DeviceHttp, step: Step, answer: &Answer) -> SyncError {
    SyncError::Status {
        step,
        status: answer.status,
        said: http.quote(&answer.body),
    }
}
