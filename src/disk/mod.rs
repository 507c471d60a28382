//! Disk cost: what the database's files take on the server, as `GET /db` reports it,
//! looked at before each phase, every interval while it runs (on a connection of its
//! own, so the operations' connections and the interval lines never wait for it) and at
//! its end, and the bytes per document that follow from it.

mod look;
mod sampler;
mod sizes;

pub use look::{LOOK_TIMEOUT, Looker};
pub use sampler::{DiskSampler, DiskSlot, take};
pub use sizes::{DiskSizes, PhaseDisk, growth_per_document};
