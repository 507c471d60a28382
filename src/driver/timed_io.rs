//! A TCP stream that notes when a request's bytes start and finish going out and when the
//! first byte of the response comes in.
//!
//! hyper only tells us when a response's head has been parsed; Iron Cushion's `sendData`,
//! `remoteProcessing` and `receiveData` need the moments in between, so the socket itself
//! keeps them. The clock is shared with the connection task hyper drives, hence atomics
//! (uncontended: one writer at a time).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

const UNSET: u64 = u64::MAX;

/// Moments of one exchange, in nanoseconds since the clock's epoch.
#[derive(Debug)]
pub struct IoClock {
    epoch: Instant,
    first_write_start: AtomicU64,
    last_write_end: AtomicU64,
    first_read: AtomicU64,
}

/// What the clock saw of one exchange, as nanoseconds since its epoch.
#[derive(Clone, Copy, Debug, Default)]
pub struct IoMoments {
    pub first_write_start: Option<u64>,
    pub last_write_end: Option<u64>,
    pub first_read: Option<u64>,
}

impl IoClock {
    pub fn new(epoch: Instant) -> Arc<IoClock> {
        Arc::new(IoClock {
            epoch,
            first_write_start: AtomicU64::new(UNSET),
            last_write_end: AtomicU64::new(UNSET),
            first_read: AtomicU64::new(UNSET),
        })
    }

    /// Forgets the previous exchange; call before sending a request.
    pub fn reset(&self) {
        self.first_write_start.store(UNSET, Ordering::Relaxed);
        self.last_write_end.store(UNSET, Ordering::Relaxed);
        self.first_read.store(UNSET, Ordering::Relaxed);
    }

    pub fn moments(&self) -> IoMoments {
        let get = |a: &AtomicU64| Some(a.load(Ordering::Relaxed)).filter(|&v| v != UNSET);
        IoMoments {
            first_write_start: get(&self.first_write_start),
            last_write_end: get(&self.last_write_end),
            first_read: get(&self.first_read),
        }
    }

    /// Nanoseconds from the epoch to `instant`.
    pub fn since_epoch(&self, instant: Instant) -> u64 {
        instant.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    fn now(&self) -> u64 {
        self.since_epoch(Instant::now())
    }
}

/// A `TcpStream` that reports to an [`IoClock`].
pub struct TimedStream {
    inner: TcpStream,
    clock: Arc<IoClock>,
}

impl TimedStream {
    pub fn new(inner: TcpStream, clock: Arc<IoClock>) -> TimedStream {
        TimedStream { inner, clock }
    }

    fn before_write(&self) {
        if self.clock.first_write_start.load(Ordering::Relaxed) == UNSET {
            self.clock
                .first_write_start
                .store(self.clock.now(), Ordering::Relaxed);
        }
    }

    fn after_write<T>(&self, result: &Poll<io::Result<T>>) {
        if let Poll::Ready(Ok(_)) = result {
            self.clock
                .last_write_end
                .store(self.clock.now(), Ordering::Relaxed);
        }
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let _ = self.clock.first_read.compare_exchange(
                UNSET,
                self.clock.now(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        result
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.before_write();
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.after_write(&result);
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.before_write();
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.after_write(&result);
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
