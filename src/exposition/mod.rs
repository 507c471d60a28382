//! The live metrics endpoint (`--metrics-listen`): a run's figures in Prometheus's text
//! format and in OpenMetrics, so that Prometheus and Grafana follow a long run while it
//! goes.
//!
//! The monitor already sums every interval up for the live lines; the [`Board`] adds
//! those intervals up into the run's figures and publishes a copy, and the [`Server`],
//! on a thread of its own, renders the latest copy for each scrape. Nothing here is on
//! the measuring connections' path.

pub mod address;
mod board;
mod buckets;
mod figures;
mod render;
mod server;
mod text;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::engine::NodeSlice;
use crate::engine::observer::Observer;
use crate::exit::Failed;
use board::Board;
use render::RunLabels;
use server::{Content, Server};

/// The endpoint of one run.
pub struct MetricsEndpoint {
    board: Arc<Board>,
    server: Server,
    final_served: Arc<Notify>,
}

impl MetricsEndpoint {
    /// Listens on `address` and serves the figures of this node's run; a warning when
    /// the address reaches beyond this machine. An address that cannot be listened on
    /// is bad input, refused before the run starts.
    pub fn start(address: SocketAddr, node: NodeSlice) -> Result<MetricsEndpoint, Failed> {
        let listener = std::net::TcpListener::bind(address).map_err(|e| {
            Failed::bad_input(format!(
                "--metrics-listen {address}: cannot listen there: {e}; choose another port (or 0 for any free one)"
            ))
        })?;
        let board = Arc::new(Board::new());
        let final_served = Arc::new(Notify::new());
        let content = Content {
            run: RunLabels {
                version: env!("CARGO_PKG_VERSION"),
                node_index: node.index,
                node_count: node.count,
            },
            figures: board.subscribe(),
            final_served: final_served.clone(),
        };
        let server = Server::start(listener, content)
            .map_err(|e| Failed::run(format!("--metrics-listen {address}: cannot serve: {e}")))?;
        let serving = server.address();
        if !address::is_loopback(&serving) {
            crate::text::sink::err(&format!(
                "sofabench: warning: --metrics-listen {serving} is not a loopback address: whoever reaches this machine on port {} reads the run's metrics (plain HTTP, no password)",
                serving.port()
            ));
        }
        crate::text::sink::err(&format!("sofabench: metrics at http://{serving}/metrics"));
        Ok(MetricsEndpoint {
            board,
            server,
            final_served,
        })
    }

    /// The observer that feeds the endpoint: give it to the run beside the others.
    pub fn observer(&self) -> Arc<dyn Observer> {
        self.board.clone()
    }

    /// Marks the figures final, keeps serving them until a scraper has read them or
    /// `linger` has passed (or Ctrl-C), and stops. A run that never began a phase has no
    /// figures worth waiting for.
    pub fn finish(mut self, linger: Duration) {
        let ran = self.board.finish();
        if ran && !linger.is_zero() {
            wait_for_final_scrape(&self.final_served, linger);
        }
        self.server.stop();
    }
}

/// Waits until the final figures were served, at most `linger`; Ctrl-C or SIGTERM ends
/// the wait too (the run's own handling of them ended with the run).
fn wait_for_final_scrape(final_served: &Notify, linger: Duration) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut terminate) = signal(SignalKind::terminate()) else {
            return;
        };
        tokio::select! {
            () = final_served.notified() => {}
            () = tokio::time::sleep(linger) => {}
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    });
}
