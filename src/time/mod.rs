//! Time as users write it and as files record it: durations on the command line and in
//! scenario files (`30s`), RFC 3339 timestamps in templates and result files. Below every
//! other part, so that none of them borrows it from another.

pub mod duration;
pub mod rfc3339;
