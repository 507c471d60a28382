//! Result files a run or `sofabench report` writes: `--json`, `--csv`, `--html` FILE, the
//! interval logs into a folder, or `--out DIR` for every format at once. Existing files
//! (and symlinks) are never overwritten without `--overwrite`, nor two formats given one
//! file, nor a device, FIFO or socket ever, and that is checked before the run starts, not
//! after an hour of measuring. Each file is written whole or not at all (`files::replace`),
//! and held by the run from its setup to its end (`files::Lock`), so a second run given
//! the same file is refused before it sends anything.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::exit::{Failed, RUN_FAILED};
use crate::export::{Format, hlog};
use crate::files;
use crate::results::RunResult;

/// The files to write, by format.
#[derive(Debug, Default, Clone)]
pub struct OutputFiles {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// A folder for `result.<operation>.hlog`, one per operation of the result.
    pub hlog_dir: Option<PathBuf>,
    /// The locks [`OutputFiles::check`] took, held as long as the outputs are.
    held: Vec<Arc<files::Lock>>,
}

impl OutputFiles {
    /// The files `--out DIR` and the single-format flags ask for; a single-format flag wins
    /// over `--out` for its format.
    pub fn new(
        out: Option<&Path>,
        json: Option<&Path>,
        csv: Option<&Path>,
        html: Option<&Path>,
    ) -> OutputFiles {
        let pick = |flag: Option<&Path>, name: &str| {
            flag.map(Path::to_path_buf)
                .or_else(|| out.map(|dir| dir.join(name)))
        };
        OutputFiles {
            json: pick(json, "result.json"),
            csv: pick(csv, "result.csv"),
            html: pick(html, "result.html"),
            hlog_dir: out.map(Path::to_path_buf),
            held: Vec::new(),
        }
    }

    /// True when nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.json.is_none() && self.csv.is_none() && self.html.is_none() && self.hlog_dir.is_none()
    }

    /// The single-format files, each with the name of its format for messages.
    fn files(&self) -> Vec<(&PathBuf, &'static str)> {
        [
            (&self.json, "JSON"),
            (&self.csv, "CSV"),
            (&self.html, "HTML"),
        ]
        .into_iter()
        .filter_map(|(path, format)| Some((path.as_ref()?, format)))
        .collect()
    }

    /// Fails when two formats would go to one file, a file is a device, FIFO or socket,
    /// another sofabench run holds it, it exists (without `overwrite`; a symlink counts,
    /// even one that points nowhere) or a folder cannot be made; holds every file from
    /// then on. Which operations the interval logs will have is only known after the run,
    /// so any `result.*.hlog` in their folder counts as existing, and one lock holds them.
    pub fn check(&mut self, overwrite: bool) -> Result<(), Failed> {
        refuse_shared_files(&self.files())?;
        let files: Vec<PathBuf> = self.files().into_iter().map(|(p, _)| p.clone()).collect();
        for path in &files {
            refuse_kind(path)?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                create_dir(dir)?;
            }
            self.hold(path)?;
            refuse_existing(path, overwrite)?;
        }
        if let Some(dir) = self.hlog_dir.clone() {
            let existing = existing_hlogs(&dir);
            for path in &existing {
                refuse_kind(path)?;
            }
            create_dir(&dir)?;
            self.hold(&dir.join(HLOGS))?;
            if !overwrite && let Some(existing) = existing.first() {
                return Err(refuse(existing));
            }
        }
        Ok(())
    }

    /// Takes the lock of `path` for as long as the outputs last, once.
    fn hold(&mut self, path: &Path) -> Result<(), Failed> {
        let lock_path = files::lock::lock_path(path);
        if self.held.iter().any(|lock| lock.path() == lock_path) {
            return Ok(());
        }
        let lock = files::Lock::take(path).map_err(|e| not_held(path, &lock_path, e))?;
        self.held.push(Arc::new(lock));
        Ok(())
    }

    /// Writes every requested file, each whole or not at all, going on past a file that
    /// fails so that the others are still kept.
    pub fn write(&self, result: &RunResult) -> Written {
        let mut written = Written::default();
        for (path, format) in self.planned(result) {
            match write_file(&path, &format, result) {
                Ok(()) => written.paths.push(path),
                Err(message) => written.failures.push(message),
            }
        }
        written
    }

    /// Every file to write, with its format.
    fn planned(&self, result: &RunResult) -> Vec<(PathBuf, Format)> {
        let single = [
            (&self.json, Format::Json),
            (&self.csv, Format::Csv),
            (&self.html, Format::Html),
        ];
        let mut files: Vec<(PathBuf, Format)> = single
            .into_iter()
            .filter_map(|(path, format)| Some((path.clone()?, format)))
            .collect();
        if let Some(dir) = &self.hlog_dir {
            for operation in hlog::operations(result) {
                files.push((
                    dir.join(hlog::file_name(&operation)),
                    Format::Hlog { operation },
                ));
            }
        }
        files
    }
}

/// What [`OutputFiles::write`] did: the files written, and a message per file that was not.
#[derive(Debug, Default)]
pub struct Written {
    pub paths: Vec<PathBuf>,
    pub failures: Vec<String>,
}

impl Written {
    /// Prints each failure on stderr; an error to exit with when there was one.
    pub fn report_failures(&self) -> Result<(), Failed> {
        for message in &self.failures {
            crate::text::sink::err(&format!("sofabench: error: {message}"));
        }
        if self.failures.is_empty() {
            Ok(())
        } else {
            Err(Failed::Quiet { code: RUN_FAILED })
        }
    }
}

/// What the lock of the interval logs in a folder is named after: they are written
/// together, and their names are known only after the run.
const HLOGS: &str = "result.hlog";

/// The message for a result file whose lock this run could not take.
fn not_held(path: &Path, lock_path: &Path, why: files::NotLocked) -> Failed {
    match why {
        files::NotLocked::Held => Failed::bad_input(format!(
            "{} is being written by another sofabench run (it holds {} until it ends); wait for that run to end, or choose another name",
            path.display(),
            lock_path.display()
        )),
        files::NotLocked::Failed(e) => Failed::bad_input(format!(
            "cannot hold {} for this run: its lock file {}: {e}; sofabench writes its results and their lock files in that folder, so choose a folder it can write in",
            path.display(),
            lock_path.display()
        )),
    }
}

/// Refuses what a file can never replace, with or without `--overwrite`: a folder, a
/// device, a FIFO or a socket.
fn refuse_kind(path: &Path) -> Result<(), Failed> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(Failed::bad_input(format!(
            "{} is a folder; give a file name, or --out for a folder",
            path.display()
        )));
    }
    files::refuse_special(path).map_err(|e| Failed::bad_input(format!("{}: {e}", path.display())))
}

fn refuse(path: &Path) -> Failed {
    Failed::bad_input(format!(
        "{} already exists; sofabench does not overwrite files unless told: add --overwrite, or choose another name",
        path.display()
    ))
}

/// Refuses a name that something has already (a file or a symlink) unless `overwrite`.
fn refuse_existing(path: &Path, overwrite: bool) -> Result<(), Failed> {
    // symlink_metadata: a symlink is there even when what it points to is not.
    let exists = std::fs::symlink_metadata(path).is_ok();
    if overwrite || !exists {
        Ok(())
    } else {
        Err(refuse(path))
    }
}

/// Two formats given one file would leave only the last one written.
fn refuse_shared_files(files: &[(&PathBuf, &'static str)]) -> Result<(), Failed> {
    for (i, (path, format)) in files.iter().enumerate() {
        let place = where_it_goes(path);
        if let Some((_, other)) = files[..i].iter().find(|(p, _)| where_it_goes(p) == place) {
            return Err(Failed::bad_input(format!(
                "the {other} and {format} results would both be written to {}; give each format its own file",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The file a path names, whichever way it is spelt (`x`, `./x`, `dir/../x`), as far as
/// its folder exists.
fn where_it_goes(path: &Path) -> PathBuf {
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let folder = std::fs::canonicalize(folder)
        .or_else(|_| std::path::absolute(folder))
        .unwrap_or_else(|_| folder.to_path_buf());
    match path.file_name() {
        Some(name) => folder.join(name),
        None => path.to_path_buf(),
    }
}

/// The `result.*.hlog` files in `dir`, sorted.
fn existing_hlogs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("result.") && n.ends_with(".hlog"))
        })
        .collect();
    found.sort();
    found
}

fn create_dir(dir: &Path) -> Result<(), Failed> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failed::bad_input(format!("cannot create the folder {}: {e}", dir.display())))
}

fn write_file(path: &Path, format: &Format, result: &RunResult) -> Result<(), String> {
    let bytes = format
        .render(result)
        .map_err(|e| format!("cannot make {}: {e}", path.display()))?;
    files::replace(path, &bytes).map_err(|e| {
        format!(
            "cannot write {}: {e}; what was there before, if anything, is unchanged",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(failed: Failed) -> String {
        failed.to_string()
    }

    fn single(json: &Path, csv: &Path) -> OutputFiles {
        OutputFiles::new(None, Some(json), Some(csv), None)
    }

    #[test]
    fn one_file_for_two_formats_is_refused_however_it_is_spelt() {
        let dir = tempfile::tempdir().unwrap();
        let mut outputs = single(&dir.path().join("r"), &dir.path().join("./r"));
        let e = message(outputs.check(true).unwrap_err());
        assert!(
            e.contains("the JSON and CSV results would both be written to"),
            "{e}"
        );
        let mut out = OutputFiles::new(
            Some(dir.path()),
            None,
            None,
            Some(&dir.path().join("result.csv")),
        );
        let e = message(out.check(true).unwrap_err());
        assert!(e.contains("the CSV and HTML results"), "{e}");
    }

    #[test]
    fn a_dangling_symlink_exists() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("r.json");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let mut outputs = single(&link, &dir.path().join("r.csv"));
        let e = message(outputs.check(false).unwrap_err());
        assert!(e.contains("r.json already exists"), "{e}");
        assert!(outputs.check(true).is_ok());
    }

    #[test]
    fn a_folder_is_refused_even_with_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let mut outputs = single(dir.path(), &dir.path().join("r.csv"));
        let e = message(outputs.check(true).unwrap_err());
        assert!(e.contains("is a folder"), "{e}");
    }
}
