//! Writing a result file whole or not at all.
//!
//! A disk that fills up halfway through `std::fs::write` leaves half a file under the
//! final name, which a later `check` or `compare` reads as a broken result. Here the bytes
//! go to a new file beside the final one, and only a complete, flushed file is renamed
//! into place; a failure removes it and leaves the old file, or none.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Puts `bytes` at `path`, replacing what is there (a file, or a symlink itself: the
/// file it points to is never written).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (temporary, file) = create_beside(path)?;
    let written = write_all_synced(file, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
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

/// A new, empty file in the same folder as `path` (a rename only moves a file within one
/// file system), under a name no one else uses.
fn create_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let mut attempt = 0u32;
    loop {
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".{}-{attempt}.tmp", std::process::id()));
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
}
