//! Result files a run or `sofabench report` writes: `--json`, `--csv`, `--html` FILE, the
//! interval logs into a folder, or `--out DIR` for every format at once. Existing files
//! are never overwritten without `--overwrite`, and that is checked before the run starts,
//! not after an hour of measuring.

use std::path::{Path, PathBuf};

use crate::exit::Failed;
use crate::export::{Format, hlog};
use crate::results::RunResult;

/// The files to write, by format.
#[derive(Debug, Default, Clone)]
pub struct OutputFiles {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// A folder for `result.<operation>.hlog`, one per operation of the result.
    pub hlog_dir: Option<PathBuf>,
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
        }
    }

    /// True when nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.json.is_none() && self.csv.is_none() && self.html.is_none() && self.hlog_dir.is_none()
    }

    fn files(&self) -> Vec<&PathBuf> {
        [&self.json, &self.csv, &self.html]
            .into_iter()
            .flatten()
            .collect()
    }

    /// Fails when a file exists (without `overwrite`) or a folder cannot be made. Which
    /// operations the interval logs will have is only known after the run, so any
    /// `result.*.hlog` in their folder counts as existing.
    pub fn check(&self, overwrite: bool) -> Result<(), Failed> {
        let refuse = |path: &Path| {
            Failed::bad_input(format!(
                "{} already exists; sofabench does not overwrite files unless told: add --overwrite, or choose another name",
                path.display()
            ))
        };
        for path in self.files() {
            if path.exists() && !overwrite {
                return Err(refuse(path));
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                create_dir(dir)?;
            }
        }
        if let Some(dir) = &self.hlog_dir {
            if !overwrite && let Some(existing) = existing_hlogs(dir).into_iter().next() {
                return Err(refuse(&existing));
            }
            create_dir(dir)?;
        }
        Ok(())
    }

    /// Writes every requested file; returns the paths written.
    pub fn write(&self, result: &RunResult) -> Result<Vec<PathBuf>, Failed> {
        let mut files: Vec<(PathBuf, Format)> = Vec::new();
        let single = [
            (&self.json, Format::Json),
            (&self.csv, Format::Csv),
            (&self.html, Format::Html),
        ];
        for (path, format) in single {
            if let Some(path) = path {
                files.push((path.clone(), format));
            }
        }
        if let Some(dir) = &self.hlog_dir {
            for operation in hlog::operations(result) {
                files.push((
                    dir.join(hlog::file_name(&operation)),
                    Format::Hlog { operation },
                ));
            }
        }
        let mut written = Vec::new();
        for (path, format) in files {
            let bytes = format
                .render(result)
                .map_err(|e| Failed::run(format!("cannot make {}: {e}", path.display())))?;
            write_file(&path, &bytes)?;
            written.push(path);
        }
        Ok(written)
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

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failed> {
    std::fs::write(path, bytes)
        .map_err(|e| Failed::run(format!("cannot write {}: {e}", path.display())))
}
