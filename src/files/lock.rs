//! One run at a time per result file.
//!
//! A run rewrites its result files after every phase, each time as a new file renamed
//! into place ([`super::replace`]), so a lock on the result file itself would be on a
//! file that the next rewrite swaps out. The lock is instead on a file of its own beside
//! it, `.NAME.sofabench.lock`, held (`flock`) from the run's setup to its end: a second
//! run given the same path finds it held and is refused before it sends anything. The
//! kernel lets go of the lock when its process ends, however it ends.
//!
//! The holder removes the lock file as it lets go, so nothing is left for the user to
//! clean. A process killed (SIGKILL) cannot remove it: the file stays, unlocked, and the
//! next run of the same path takes it over and removes it in its turn. Whoever locks it
//! checks that the file it locked is still the one under the name: a holder may have
//! removed it between another's open and lock, and a lock on a removed file holds nothing.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A held lock on a result file's name; dropping it removes the lock file and lets go.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    /// Held open: closing it lets go of the lock.
    _file: File,
}

/// Why a result file's lock was not taken.
#[derive(Debug)]
pub enum NotLocked {
    /// Another process (another sofabench run) holds it.
    Held,
    /// The lock file could not be made or locked.
    Failed(io::Error),
}

/// The lock file of `path`: `.NAME.sofabench.lock` in the same folder.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or(path.as_os_str()));
    name.push(".sofabench.lock");
    path.with_file_name(name)
}

impl Lock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Locks the name `path` for this process until the [`Lock`] is dropped; fails at once
    /// (never waits) when another process holds it.
    pub fn take(path: &Path) -> Result<Lock, NotLocked> {
        let lock_path = lock_path(path);
        // A holder may remove the file between our open and our lock; a few tries see it
        // made again.
        for _ in 0..16 {
            let file = open(&lock_path).map_err(NotLocked::Failed)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(NotLocked::Held),
                Err(TryLockError::Error(e)) => return Err(NotLocked::Failed(e)),
            }
            if still_named(&file, &lock_path) {
                return Ok(Lock {
                    path: lock_path,
                    _file: file,
                });
            }
        }
        Err(NotLocked::Failed(io::Error::other(
            "it kept being removed and made again",
        )))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still locked: anyone who opened it before sees it gone once they
        // hold it, and tries again with a new one.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Opens the lock file, making it if need be; never through a symlink, and only a
/// regular file.
fn open(lock_path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(lock_path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// Whether `file` is still the file named `lock_path` (not removed or replaced since it
/// was opened).
fn still_named(file: &File, lock_path: &Path) -> bool {
    let (Ok(held), Ok(named)) = (file.metadata(), std::fs::symlink_metadata(lock_path)) else {
        return false;
    };
    held.dev() == named.dev() && held.ino() == named.ino()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_until_the_first_lets_go_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        let first = Lock::take(&path).unwrap();
        assert!(matches!(Lock::take(&path), Err(NotLocked::Held)));
        assert!(lock_path(&path).exists());
        drop(first);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let again = Lock::take(&path).unwrap();
        drop(again);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_lock_file_left_by_a_killed_run_is_taken_over_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::write(lock_path(&path), "").unwrap();
        drop(Lock::take(&path).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_symlink_as_the_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, lock_path(&path)).unwrap();
        assert!(matches!(Lock::take(&path), Err(NotLocked::Failed(_))));
        assert!(!target.exists());
    }

    #[test]
    fn each_file_has_its_own_lock() {
        assert_eq!(
            lock_path(Path::new("out/result.json")),
            Path::new("out/.result.json.sofabench.lock")
        );
        let dir = tempfile::tempdir().unwrap();
        let json = Lock::take(&dir.path().join("a.json")).unwrap();
        let csv = Lock::take(&dir.path().join("a.csv")).unwrap();
        drop((json, csv));
    }
}
