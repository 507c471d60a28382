//! Writing a result file whole or not at all.
//!
//! A disk that fills up halfway through `std::fs::write` leaves half a file under the
//! final name, which a later `check` or `compare` reads as a broken result. Here the bytes
//! go to a new file beside the final one, and only a complete, flushed file is renamed
//! into place; a failure removes it and leaves the old file, or none.
//!
//! A process killed while it writes (SIGKILL, the out-of-memory killer) cannot remove its
//! temporary file. Its name says whose it is, `.result.json.sofabench-HOST-PID-N.tmp`, and
//! the next write of the same file removes those of processes of this machine that no
//! longer run. Nothing else is ever removed.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Puts `bytes` at `path`, replacing what is there (a file, or a symlink itself: the
/// file it points to is never written). A device, FIFO or socket is never replaced.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    refuse_special(path)?;
    remove_stale(path);
    let (temporary, file) = create_beside(path)?;
    let written = write_all_synced(file, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Fails when `path` is a device node, a FIFO or a socket (a symlink is not followed):
/// a rename would replace it with a regular file, and `/dev/null` replaced (as root)
/// breaks the machine. Checked before a run starts and again at each write.
pub fn refuse_special(path: &Path) -> io::Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let kind = metadata.file_type();
    let what = if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "it is {what}, not a file: sofabench writes results only to files and never replaces a device, FIFO or socket, with or without --overwrite; give the name of a file"
        ),
    ))
}

/// Makes a write past the file size limit (`ulimit -f`) fail with an error, as a full
/// disk does, instead of killing the process with SIGXFSZ before it can say so, remove
/// its temporary file, or print the verdict.
pub fn ignore_file_size_signal() {
    // SAFETY: sets the disposition of one signal to "ignore"; no handler runs, so nothing
    // else in the process can be disturbed.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The start of the temporary names of `name` written on this machine:
/// `.NAME.sofabench-HOST-`, then `PID-N.tmp`.
fn temporary_prefix(name: &OsStr) -> OsString {
    // The host as a name can hold it: no `/`, nothing that needs quoting in a listing.
    let host: String = crate::host::name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(format!(".sofabench-{host}-"));
    prefix
}

/// The process id in a temporary name made with `prefix` (`PID-N.tmp` after it, digits
/// only); `None` for any other name.
fn writer_of(file_name: &OsStr, prefix: &OsStr) -> Option<u32> {
    let rest = file_name.as_bytes().strip_prefix(prefix.as_bytes())?;
    let rest = std::str::from_utf8(rest).ok()?.strip_suffix(".tmp")?;
    let (pid, attempt) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(attempt) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` runs on this machine; in doubt (no permission to ask, a number
/// that is no process id), it does.
fn runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 delivers nothing; it only asks whether the process exists.
    let asked = unsafe { libc::kill(pid, 0) };
    asked == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes the temporary files of `path` that processes of this machine which no longer
/// run left behind: regular files named exactly as [`create_beside`] names them.
fn remove_stale(path: &Path) {
    let Some(name) = path.file_name() else {
        return;
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = temporary_prefix(name);
    for entry in entries.flatten() {
        let Some(pid) = writer_of(&entry.file_name(), &prefix) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && pid != std::process::id() && !runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A new, empty file in the same folder as `path` (a rename only moves a file within one
/// file system), under a name no one else uses.
fn create_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let prefix = temporary_prefix(name);
    let mut attempt = 0u32;
    loop {
        let mut temporary_name = prefix.clone();
        temporary_name.push(format!("{}-{attempt}.tmp", std::process::id()));
        let temporary = path.with_file_name(temporary_name);
        // create_new: never opens what is there already, a symlink included.
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Writes and flushes to the disk, so that the rename never exposes a file whose bytes a
/// crash could still lose.
fn write_all_synced(mut file: File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many names a folder holds: a temporary file left behind would be one more.
    fn count(dir: &Path) -> usize {
        std::fs::read_dir(dir).unwrap().count()
    }

    #[test]
    fn writes_a_new_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        replace(&path, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        assert_eq!(count(dir.path()), 1);
    }

    #[test]
    fn replaces_a_symlink_not_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "kept").unwrap();
        let path = dir.path().join("result.json");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        replace(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn a_fifo_or_a_socket_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only makes the file.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, what) in [(&fifo, "a FIFO"), (&socket, "a socket")] {
            let e = replace(path, b"new").unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(
            std::fs::symlink_metadata(&socket)
                .unwrap()
                .file_type()
                .is_socket()
        );
        assert_eq!(count(dir.path()), 2);
        let e = refuse_special(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
    }

    #[test]
    fn a_failed_rename_leaves_the_old_state_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty folder cannot be replaced by a file.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "x").unwrap();
        assert!(replace(&path, b"new").is_err());
        assert_eq!(count(dir.path()), 1);
        assert!(path.is_dir());
    }

    /// The id of a process that has ended.
    fn ended_process() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn leftovers_of_ended_processes_go_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        let prefix = temporary_prefix(OsStr::new("result.json"));
        let named = |rest: &str| {
            let mut name = prefix.clone();
            name.push(rest);
            dir.path().join(name)
        };
        let dead = ended_process();
        let stale = named(&format!("{dead}-0.tmp"));
        std::fs::write(&stale, "half a result").unwrap();
        let kept = [
            // A process that runs: this one's parent, and this one.
            named(&format!("{}-0.tmp", std::os::unix::process::parent_id())),
            named(&format!("{}-3.tmp", std::process::id())),
            // Not exactly the pattern.
            named(&format!("{dead}-0.tmp.bak")),
            named(&format!("{dead}-x.tmp")),
            named(&format!("{dead}.tmp")),
            // Another file's, another machine's, or an older name without our mark.
            dir.path().join(format!(
                ".result.csv.sofabench-{}-{dead}-0.tmp",
                crate::host::name()
            )),
            dir.path()
                .join(format!(".result.json.sofabench-elsewhere-{dead}-0.tmp")),
            dir.path().join(format!(".result.json.{dead}-0.tmp")),
        ];
        for path in &kept {
            std::fs::write(path, "not ours to remove").unwrap();
        }
        // A folder with the name of a leftover is not a file we wrote.
        let folder = named(&format!("{dead}-1.tmp"));
        std::fs::create_dir(&folder).unwrap();
        replace(&path, b"{}").unwrap();
        assert!(
            !stale.exists(),
            "the leftover of an ended process is removed"
        );
        for path in kept.iter().chain([&folder]) {
            assert!(path.exists(), "{} was removed", path.display());
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert_eq!(count(dir.path()), 1 + kept.len() + 1);
    }

    #[test]
    fn the_writer_is_read_from_exact_names_only() {
        let prefix = OsString::from(".r.json.sofabench-h-");
        let of = |name: &str| writer_of(OsStr::new(name), &prefix);
        assert_eq!(of(".r.json.sofabench-h-123-0.tmp"), Some(123));
        assert_eq!(of(".r.json.sofabench-h-123-45.tmp"), Some(123));
        for other in [
            ".r.json.sofabench-h-123-.tmp",
            ".r.json.sofabench-h--0.tmp",
            ".r.json.sofabench-h-1 2-0.tmp",
            ".r.json.sofabench-h-99999999999-0.tmp",
            ".r.json.sofabench-hh-1-0.tmp",
            "r.json.sofabench-h-1-0.tmp",
        ] {
            assert_eq!(of(other), None, "{other}");
        }
        assert!(runs(std::process::id()));
        assert!(!runs(ended_process()));
        assert!(runs(0) && runs(u32::MAX));
    }
}
