//! Every file sofabench reads or writes goes through here, so that no input can make it
//! eat the machine and no failed write leaves half a file.
//!
//! [`read`]: templates, `--config`, scenarios and result files, each kind with a size
//! limit, from a regular file or a pipe (`-` for standard input where it makes sense);
//! directories and devices are refused. [`write`]: result files, written under a
//! temporary name in their folder and renamed into place once complete, never over a
//! device, FIFO or socket. [`lock`]: a run holds each result file it writes for its
//! whole run, so a second run given the same file is refused at its start.

pub mod lock;
pub mod read;
pub mod write;

pub use lock::{Lock, NotLocked};
pub use read::{Kind, Unreadable, read, read_text};
pub use write::{ignore_file_size_signal, refuse_special, replace};
