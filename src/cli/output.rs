//! Result files a run writes: `--json FILE`, or `--out DIR` for every format at once.
//! Existing files are never overwritten without `--overwrite`, and that is checked before
//! the run starts, not after an hour of measuring.

use std::path::{Path, PathBuf};

use crate::exit::Failed;
use crate::results::RunResult;

/// The files to write, by format.
#[derive(Debug, Default, Clone)]
pub struct OutputFiles {
    pub json: Option<PathBuf>,
}

impl OutputFiles {
    /// The files `--out DIR` and the single-format flags ask for.
    pub fn new(out: Option<&Path>, json: Option<&Path>) -> OutputFiles {
        let in_dir = |name: &str| out.map(|dir| dir.join(name));
        OutputFiles {
            json: json
                .map(Path::to_path_buf)
                .or_else(|| in_dir("result.json")),
        }
    }

    fn all(&self) -> Vec<&PathBuf> {
        self.json.iter().collect()
    }

    /// Fails when a file exists (without `overwrite`) or its folder cannot be made.
    pub fn check(&self, overwrite: bool) -> Result<(), Failed> {
        for path in self.all() {
            if path.exists() && !overwrite {
                return Err(Failed::bad_input(format!(
                    "{} already exists; sofabench does not overwrite files unless told: add --overwrite, or choose another name",
                    path.display()
                )));
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    Failed::bad_input(format!("cannot create the folder {}: {e}", dir.display()))
                })?;
            }
        }
        Ok(())
    }

    /// Writes every requested file; returns the paths written.
    pub fn write(&self, result: &RunResult) -> Result<Vec<PathBuf>, Failed> {
        let mut written = Vec::new();
        if let Some(path) = &self.json {
            write_file(path, result.to_json().as_bytes())?;
            written.push(path.clone());
        }
        Ok(written)
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failed> {
    std::fs::write(path, bytes)
        .map_err(|e| Failed::run(format!("cannot write {}: {e}", path.display())))
}
