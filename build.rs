//! What the binary knows of its own build, for the result's `client` environment: the git
//! commit it was built from (`SOFABENCH_COMMIT`, with `-dirty` when its sources differ
//! from that commit) and the cargo profile (`SOFABENCH_PROFILE`: `release`, `checked`,
//! `debug`). Outside a git checkout of this crate, or without git, the commit is left
//! unset (the result says "unknown"); nothing here may fail the build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The paths whose contents make the binary: a change in them may change "dirty".
const SOURCES: [&str; 5] = ["src", "build.rs", "Cargo.toml", "Cargo.lock", "assets"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if let Some(profile) = profile() {
        println!("cargo:rustc-env=SOFABENCH_PROFILE={profile}");
    }
    // Without a rerun-if-changed line cargo reruns this after any change in the package;
    // with them, only after these: a commit, a checkout, or an edit of the sources.
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    let Some(checkout) = Checkout::of(&manifest) else {
        return;
    };
    for watched in checkout.watched() {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    if let Some(commit) = checkout.commit() {
        println!("cargo:rustc-env=SOFABENCH_COMMIT={commit}");
    }
}

/// The profile's name: its directory under target/ (`OUT_DIR` is
/// `target/[TRIPLE/]PROFILE/build/CRATE-HASH/out`), which is a custom profile's own name,
/// where cargo's `PROFILE` only says `release` or `debug` (the profile it inherits from).
fn profile() -> Option<String> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    let mut up = out.ancestors().skip(2);
    let named = match (up.next()?.file_name(), up.next()?.file_name()) {
        (Some(build), Some(profile)) if build == "build" => profile.to_str().map(String::from),
        _ => None,
    };
    named.or_else(|| std::env::var("PROFILE").ok())
}

/// The git checkout this crate is the top of.
struct Checkout {
    top: PathBuf,
    /// This worktree's git directory (its HEAD) and the repository's common one (refs).
    git_dir: PathBuf,
    common_dir: PathBuf,
}

impl Checkout {
    /// `manifest`'s checkout, if git runs and `manifest` is its top: a crate vendored
    /// inside another project's repository is not built from that project's commits.
    fn of(manifest: &Path) -> Option<Checkout> {
        let top = git(manifest, &["rev-parse", "--show-toplevel"])?;
        let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
        if !same(Path::new(&top), manifest) {
            return None;
        }
        let git_dir = PathBuf::from(git(manifest, &["rev-parse", "--absolute-git-dir"])?);
        let common_dir = manifest.join(git(manifest, &["rev-parse", "--git-common-dir"])?);
        Some(Checkout {
            top: manifest.to_path_buf(),
            git_dir,
            common_dir,
        })
    }

    /// HEAD, and the branch file it names (or packed-refs, where the branch is packed):
    /// what a commit or a checkout changes. Only files that exist: cargo reruns a build
    /// script every time for a missing one.
    fn watched(&self) -> Vec<PathBuf> {
        let mut watched = vec![self.git_dir.join("HEAD")];
        if let Some(branch) = git(&self.top, &["symbolic-ref", "-q", "HEAD"]) {
            watched.push(self.common_dir.join(branch));
        }
        watched.push(self.common_dir.join("packed-refs"));
        watched.retain(|p| p.is_file());
        watched
    }

    /// The commit, 12 hex digits, with `-dirty` when the sources differ from it.
    fn commit(&self) -> Option<String> {
        let commit = git(&self.top, &["rev-parse", "--short=12", "HEAD"])?;
        let mut status = vec!["--no-optional-locks", "status", "--porcelain", "--"];
        status.extend(SOURCES);
        // `--no-optional-locks`: status would otherwise refresh the index, a change of
        // its own in the checkout.
        let dirty = git_output(&self.top, &status).map(|s| !s.trim().is_empty());
        Some(match dirty {
            Some(true) => format!("{commit}-dirty"),
            _ => commit,
        })
    }
}

/// git's answer, trimmed; `None` when git is missing, fails or says nothing.
fn git(directory: &Path, args: &[&str]) -> Option<String> {
    let out = git_output(directory, args)?;
    let out = out.trim();
    (!out.is_empty()).then(|| out.to_string())
}

fn git_output(directory: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(directory)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}
