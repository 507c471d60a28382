//! Reading an input file with a size limit.
//!
//! `std::fs::read` on `/dev/zero`, or on a 50 GB file named by mistake, reads until the
//! memory is gone. Here a path must be a regular file or a pipe (a FIFO, `<(…)`), and at
//! most limit + 1 bytes are read, so that a file over the limit is known without reading
//! the rest of it.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MIB: u64 = 1024 * 1024;

/// The kinds of file sofabench reads, each with its limit and how to name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A JSON or XML document template: a few kilobytes in practice.
    Template,
    /// `--config FILE`: flags and their values, a few KB (a thousand thresholds, 30 KB).
    Config,
    /// `--scenario FILE`: phases and their queries, a few KB; even long sweeps stay far
    /// below the limit.
    Scenario,
    /// A result file (`check`, `compare`, `merge`, `report`): it holds one histogram per
    /// interval and operation, so a day-long run at `--interval 100ms` is hundreds of MiB.
    Result,
    /// A PEM certificate or key (`--cacert`, `--cert`, `--key`): a CA bundle is a few
    /// hundred KB.
    Pem,
    /// A secret (`--proxy-secret-file`): one line.
    Secret,
}

impl Kind {
    /// The most bytes sofabench reads for this kind of file.
    pub const fn limit(self) -> u64 {
        match self {
            Kind::Template => 64 * MIB,
            // Parsed into a tree of TOML (or JSON) values, which takes up to 40 times the
            // text for arrays of empty tables: 64 MiB took gigabytes.
            Kind::Config | Kind::Scenario => MIB,
            Kind::Result => 1024 * MIB,
            Kind::Pem => 16 * MIB,
            Kind::Secret => 64 * 1024,
        }
    }

    /// How messages name the file.
    fn what(self) -> &'static str {
        match self {
            Kind::Template => "template file",
            Kind::Config => "config file (--config)",
            Kind::Scenario => "scenario (--scenario)",
            Kind::Result => "result file",
            Kind::Pem => "PEM file",
            Kind::Secret => "secret file (--proxy-secret-file)",
        }
    }
}

/// What pipes gave, by kind and the name they were read under. A pipe (`-`, `<(…)`, a
/// FIFO) gives its bytes once, yet a scenario is read twice: for its top-level settings,
/// which become flags before the command line is parsed, and for its phases, when the
/// run is planned. A regular file is read again instead.
static FROM_PIPES: Mutex<Vec<(Kind, PathBuf, Vec<u8>)>> = Mutex::new(Vec::new());

/// The bytes a pipe gave before under this kind and name.
fn read_before(path: &Path, kind: Kind) -> Option<Vec<u8>> {
    let kept = FROM_PIPES.lock().unwrap_or_else(|e| e.into_inner());
    kept.iter()
        .find(|(k, p, _)| *k == kind && p == path)
        .map(|(_, _, bytes)| bytes.clone())
}

/// Keeps what a pipe gave, for a second reader.
fn keep(path: &Path, kind: Kind, bytes: &[u8]) {
    let mut kept = FROM_PIPES.lock().unwrap_or_else(|e| e.into_inner());
    kept.push((kind, path.to_path_buf(), bytes.to_vec()));
}

/// Why a file was not read: displays as one line, `<file>: <problem>; <remedy>`.
#[derive(Debug)]
pub struct Unreadable {
    pub file: String,
    pub problem: String,
    pub remedy: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}; {}", self.file, self.problem, self.remedy)
    }
}

impl From<Unreadable> for String {
    fn from(e: Unreadable) -> String {
        e.to_string()
    }
}

/// The file's bytes; `-` is standard input. A pipe read before under the same kind and
/// name gives the same bytes again.
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, Unreadable> {
    let unreadable = |problem: String, remedy: &str| Unreadable {
        file: path.display().to_string(),
        problem,
        remedy: remedy.to_string(),
    };
    let what = kind.what();
    let cannot = |e: std::io::Error| {
        unreadable(
            format!("cannot read the {what}: {e}"),
            "check the file name and that the file is readable",
        )
    };
    let refused = |refusal: Refusal| match refusal {
        Refusal::Io(e) => cannot(e),
        Refusal::TooBig => unreadable(
            format!(
                "the {what} is larger than {} MiB, the most sofabench reads for one",
                kind.limit() / MIB
            ),
            "give a smaller file",
        ),
        Refusal::NotAFile(problem) => unreadable(
            format!("the {what} {problem}"),
            "give a regular file or a pipe",
        ),
    };
    if let Some(bytes) = read_before(path, kind) {
        return Ok(bytes);
    }
    if path.as_os_str() == "-" {
        let bytes = read_at_most(std::io::stdin().lock(), kind).map_err(refused)?;
        keep(path, kind, &bytes);
        return Ok(bytes);
    }
    // Looked at before opening: opening some devices (a tape, a terminal) does something.
    let metadata = std::fs::metadata(path).map_err(cannot)?;
    refuse_kind(&metadata, kind).map_err(refused)?;
    let file = File::open(path).map_err(cannot)?;
    // Looked at again on the file opened, in case the name now points elsewhere.
    let opened = file.metadata().map_err(cannot)?;
    refuse_kind(&opened, kind).map_err(refused)?;
    let bytes = read_at_most(file, kind).map_err(refused)?;
    if opened.file_type().is_fifo() {
        keep(path, kind, &bytes);
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, kind: Kind) -> Result<String, Unreadable> {
    let bytes = read(path, kind)?;
    String::from_utf8(bytes).map_err(|e| Unreadable {
        file: path.display().to_string(),
        problem: format!(
            "the {} is not UTF-8 text (byte {})",
            kind.what(),
            e.utf8_error().valid_up_to()
        ),
        remedy: "save it as UTF-8".to_string(),
    })
}

/// Why reading stopped, or did not start.
#[derive(Debug)]
enum Refusal {
    Io(std::io::Error),
    TooBig,
    NotAFile(&'static str),
}

/// Refuses what is neither a regular file nor a pipe, before reading a byte of it.
fn refuse_kind(metadata: &Metadata, kind: Kind) -> Result<(), Refusal> {
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        Err(Refusal::NotAFile("is a folder"))
    } else if !file_type.is_file() && !file_type.is_fifo() {
        Err(Refusal::NotAFile("is a device or socket"))
    } else if metadata.len() > kind.limit() {
        Err(Refusal::TooBig)
    } else {
        Ok(())
    }
}

/// Reads to the end, but no more than one byte past the limit.
fn read_at_most(source: impl Read, kind: Kind) -> Result<Vec<u8>, Refusal> {
    let mut bytes = Vec::new();
    source
        .take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() as u64 > kind.limit() {
        return Err(Refusal::TooBig);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(read_text(&path, Kind::Config).unwrap(), "x = 1\n");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        // Sparse: the length says it is too big, no disk is used.
        File::create(&path)
            .unwrap()
            .set_len(Kind::Template.limit() + 1)
            .unwrap();
        let e = read(&path, Kind::Template).unwrap_err().to_string();
        assert!(
            e.contains("big.json: the template file is larger than 64 MiB"),
            "{e}"
        );
        assert!(e.contains("give a smaller file"), "{e}");
    }

    #[test]
    fn the_limit_holds_however_the_length_is_given() {
        let exact = [b'x'; 100];
        let kind = Kind::Config;
        assert_eq!(read_at_most(&exact[..], kind).unwrap().len(), 100);
        let endless = std::io::repeat(b'x');
        assert!(matches!(read_at_most(endless, kind), Err(Refusal::TooBig)));
    }

    #[test]
    fn a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path(), Kind::Scenario).unwrap_err().to_string();
        assert!(
            e.contains("is a folder; give a regular file or a pipe"),
            "{e}"
        );
        assert!(e.contains("--scenario"), "{e}");
    }

    #[test]
    fn a_device_is_refused_without_reading() {
        let e = read(Path::new("/dev/zero"), Kind::Result)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/dev/zero: the result file is a device"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_file_says_so() {
        let e = read(Path::new("/nonexistent/r.json"), Kind::Result)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/nonexistent/r.json: cannot read the result file: "),
            "{e}"
        );
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latin1.toml");
        std::fs::write(&path, b"a = \"\xe9\"").unwrap();
        let e = read_text(&path, Kind::Config).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text (byte 5)"), "{e}");
    }

    #[test]
    fn reads_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to test
        }
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            let mut fifo = std::fs::OpenOptions::new()
                .write(true)
                .open(writer_path)
                .unwrap();
            fifo.write_all(b"phase = []\n").unwrap();
        });
        assert_eq!(read_text(&path, Kind::Scenario).unwrap(), "phase = []\n");
        writer.join().unwrap();
        // The pipe is empty now, and nobody writes to it again: the second reader (a
        // scenario's phases, after its settings) gets what the first one got.
        assert_eq!(read_text(&path, Kind::Scenario).unwrap(), "phase = []\n");
        // Another kind read under the same name is not given a scenario's text.
        assert!(read_before(&path, Kind::Config).is_none());
    }
}
