//! This machine's name: a result records the node it ran on, and a temporary file says
//! which machine's process left it; and what else a result records of it ([`client`]).

pub mod client;

/// The host name, or an empty string where the system does not give it.
pub fn name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}
