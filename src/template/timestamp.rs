//! Generated timestamps: UTC, whole seconds, uniform over [`START`]..[`END`]
//! (2000-01-01T00:00:00Z inclusive to 2030-01-01T00:00:00Z exclusive). Reading and
//! writing them is `crate::time::rfc3339`'s.

#[cfg(test)]
pub(crate) use crate::time::rfc3339::LEN;
pub(crate) use crate::time::rfc3339::{parse, write};

/// First possible generated timestamp: 2000-01-01T00:00:00Z, in Unix seconds.
pub(crate) const START: i64 = 946_684_800;
/// End (exclusive) of generated timestamps: 2030-01-01T00:00:00Z.
pub(crate) const END: i64 = 1_893_456_000;
