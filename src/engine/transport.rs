//! The seam between a worker and the world: the connection it sends through and the
//! clock it reads and waits on.
//!
//! A run drives [`Client`] and [`SystemClock`]; the engine's unit tests drive a scripted
//! server and a virtual clock instead (`engine::scripted`), so that the worker's
//! bookkeeping, pacing and reconnection can be checked without a server and without
//! waiting. The worker is generic over both, not boxed behind `dyn`: each request goes
//! straight to `Client::send`, as fast as before the seam existed.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::alarm::Alarm;
use crate::driver::{
    Call, Client, Endpoint, Exchange, Opening, Streaming, TransportError, Unanswered,
};

#[cfg(test)]
pub mod scripted;

/// One connection to one node of the target, as a worker uses it.
pub trait Transport: Send {
    /// Sends one request and reads its response (see [`Client::send_streaming`]): whole,
    /// or counted, with the call's body or one made as it is written, as `streaming` says.
    fn send(
        &mut self,
        call: &Call<'_>,
        streaming: Streaming,
    ) -> impl Future<Output = Result<Exchange, Unanswered>> + Send;

    /// Opens the connection now, to learn whether the node can be reached.
    fn open(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// The node the connection goes to.
    fn endpoint(&self) -> &Arc<Endpoint>;

    /// Points the connection at another node; the next request connects there.
    fn move_to(&mut self, endpoint: Arc<Endpoint>);

    /// Hands over each connection opened since the last call.
    fn take_openings(&mut self, take: impl FnMut(Opening));
}

impl Transport for Client {
    #[inline]
    fn send(
        &mut self,
        call: &Call<'_>,
        streaming: Streaming,
    ) -> impl Future<Output = Result<Exchange, Unanswered>> + Send {
        Client::send_streaming(self, call, streaming)
    }

    fn open(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        Client::open(self)
    }

    fn endpoint(&self) -> &Arc<Endpoint> {
        self.endpoint_arc()
    }

    fn move_to(&mut self, endpoint: Arc<Endpoint>) {
        Client::move_to(self, endpoint);
    }

    #[inline]
    fn take_openings(&mut self, take: impl FnMut(Opening)) {
        Client::take_openings(self, take);
    }
}

/// The time as a worker sees it: what it reads to time operations and what it waits on
/// for a scheduled start or a retry.
pub trait Clock: Send {
    fn now(&self) -> Instant;

    /// The wall-clock time, for a server's dates (a 429's `Retry-After`).
    fn wall(&self) -> SystemTime;

    /// Resolves at `at` (at once if it has passed).
    fn sleep_until(&mut self, at: Instant) -> impl Future<Output = ()> + Send;
}

/// The real clock: `Instant` and a precise [`Alarm`].
#[derive(Default)]
pub struct SystemClock {
    /// Made at the first wait: it may hold a file descriptor, and a closed-model run
    /// whose server never goes away never waits.
    alarm: Option<Alarm>,
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }

    /// tokio's timer would wake a millisecond late; see [`Alarm`].
    fn sleep_until(&mut self, at: Instant) -> impl Future<Output = ()> + Send {
        self.alarm.get_or_insert_with(Alarm::new).sleep_until(at)
    }
}
