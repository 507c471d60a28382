//! Talking to a CouchDB-API server: HTTP/1.1 on the wire, connections that time their
//! exchanges, how requests authenticate, the shape of CouchDB's answers, and setting up
//! the database a run uses.

pub mod admin;
pub mod auth;
pub mod connection;
pub mod environment;
pub mod feed;
pub mod generated;
pub mod http1;
pub mod lines;
pub mod pinned;
pub mod responses;
pub mod rows;
pub mod stream;
pub mod tls;

/// Revisions are the documents' (`workload`); the driver reads them from answers.
pub use crate::workload::Rev;
pub use connection::{
    Call, Client, Endpoint, Exchange, ExchangeTiming, Opening, TransportError, Unanswered,
};
pub use feed::{Feed, FeedError, FeedLimits};
pub use generated::{GeneratedBody, Streaming};
pub use http1::Method;
