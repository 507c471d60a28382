//! Many devices replicating with the database as part of a phase (see
//! `crate::workload::fleet` for the settings and `crate::device` for one device).

pub mod roster;
pub mod visible;
pub mod writes;
pub mod converge;
pub mod server_docs;
