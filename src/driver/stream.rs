//! The byte stream under one connection: plain TCP, or TLS over TCP.
//!
//! An enum, not a boxed trait object: the plain path, which the speed comparisons with
//! wrk run on, stays a direct call into tokio's `TcpStream`.

use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => tls.get_ref().0,
        }
    }

    /// Whether the server closed (or reset) the connection, or sent data nobody asked
    /// for, as seen without waiting.
    ///
    /// Over TLS, bytes waiting in the socket are not always data: a TLS 1.3 server sends
    /// session tickets after the handshake, unasked. So when the socket has bytes, the TLS
    /// layer reads them, without waiting: tickets are taken in and leave the connection
    /// usable; data, a close_notify or an error end it.
    pub fn peer_closed(&mut self) -> bool {
        if !socket_has_bytes_or_closed(self.tcp()) {
            return false;
        }
        let Stream::Tls(tls) = self else {
            return true;
        };
        let mut byte = [0u8; 1];
        let mut unasked = ReadBuf::new(&mut byte);
        let mut nobody = Context::from_waker(Waker::noop());
        // Ready with data, an end of stream, or an error; pending after tickets.
        Pin::new(tls.as_mut())
            .poll_read(&mut nobody, &mut unasked)
            .is_ready()
    }

    pub fn set_nodelay(&self) {
        // Requests are written whole; waiting to coalesce them only adds latency.
        let _ = self.tcp().set_nodelay(true);
    }
}

/// True when the socket holds bytes or the peer closed or reset it: a non-blocking peek
/// that takes nothing from the socket.
fn socket_has_bytes_or_closed(tcp: &TcpStream) -> bool {
    let mut byte = 0u8;
    // SAFETY: `recv` writes at most one byte into `byte`, which lives across the call;
    // MSG_PEEK leaves the data in the socket and MSG_DONTWAIT never blocks the thread.
    let peeked = unsafe {
        libc::recv(
            tcp.as_raw_fd(),
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match peeked {
        // Open and quiet: the normal case.
        -1 => !matches!(
            io::Error::last_os_error().kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
        // 0: the server's FIN; more: bytes waiting.
        _ => true,
    }
}

impl AsyncRead for Stream {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
