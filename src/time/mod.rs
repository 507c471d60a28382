//! Time as users write it and as files record it: durations on the command line and in
//! scenario files (`30s`), RFC 3339 timestamps in templates and result files, HTTP dates
//! in a server's `Retry-After`. Below every other part, so that none of them borrows it
//! from another.

pub mod duration;
pub mod http_date;
pub mod rfc3339;
