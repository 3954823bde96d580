//! `isr-grader merge SHARD_OUT... --out OUT`: the output folders of partial batches
//! (`batch --partition K/N` on several machines) gathered into one, then finished exactly as
//! `batch` finishes ([`super::finish`]), so the gradebook and class report equal one machine's.
//!
//! Refused (exit 2, saying which): a submission in two shards with different reports, and
//! shards graded by different graders or against different cases (their reports'
//! `grader_version`, which carries the revision and the cases hash, differ).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Outcome, REPORT_JSON, SUBMISSIONS};
use crate::cli::MergeArgs;
use crate::{CmdResult, exit_codes};

/// `isr-grader merge`.
pub fn merge_cmd(args: MergeArgs) -> CmdResult {
    let out = std::path::absolute(&args.out)?;
    // name → (shard, its folder), and grader_version → the first shard that used it.
    let mut found: BTreeMap<String, (PathBuf, PathBuf)> = BTreeMap::new();
    let mut versions: BTreeMap<String, (PathBuf, String)> = BTreeMap::new();
    for shard in &args.shards {
        let shard = std::path::absolute(shard)?;
        if same_folder(&shard, &out) {
            return Err(format!(
                "{}: --out is one of the shards; merge into a new folder",
                shard.display()
            )
            .into());
        }
        if !shard.join(SUBMISSIONS).is_dir() {
            // A part that held no submission (an artifact keeps no empty folder) is no error.
            if shard.join(super::GRADEBOOK).is_file() {
                continue;
            }
            return Err(format!(
                "{}: not a batch's output folder (no {SUBMISSIONS}/ nor {} in it)",
                shard.display(),
                super::GRADEBOOK
            )
            .into());
        }
        let subs = super::load(&shard)
            .map_err(|e| format!("{}: {e}", shard.join(SUBMISSIONS).display()))?;
        for sub in subs {
            if let Outcome::Graded(r) = &sub.outcome {
                versions
                    .entry(r.grader_version.clone())
                    .or_insert_with(|| (shard.clone(), sub.name.clone()));
            }
            if let Some((other, other_dir)) = found.get(&sub.name) {
                if read(other_dir) != read(&sub.dir) {
                    return Err(format!(
                        "{} is in {} and in {} with different reports: merge shards of one class's batch, each submission graded in one of them",
                        sub.name,
                        other.display(),
                        shard.display()
                    )
                    .into());
                }
                continue;
            }
            found.insert(sub.name.clone(), (shard.clone(), sub.dir.clone()));
        }
    }
    if versions.len() > 1 {
        let list: Vec<String> = versions
            .iter()
            .map(|(v, (shard, name))| format!("{} ({name}): {v}", shard.display()))
            .collect();
        return Err(format!(
            "the shards were graded by different graders or against different cases; grade every part with the same grader and instructor's files:\n  {}",
            list.join("\n  ")
        )
        .into());
    }
    let root = out.join(SUBMISSIONS);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    for (name, (_, dir)) in &found {
        copy_submission(dir, &root, name)?;
    }
    let subs = super::finish(&out)?;
    let extra = subs.iter().filter(|s| !found.contains_key(&s.name)).count();
    anstream::eprintln!(
        "merge: {} submissions from {} shards{}; {} and {}",
        found.len(),
        args.shards.len(),
        if extra > 0 {
            format!(" ({extra} more already in {})", root.display())
        } else {
            String::new()
        },
        out.join(super::GRADEBOOK).display(),
        out.join(super::CLASS_REPORT).display(),
    );
    Ok(exit_codes::OK)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A submission folder's report, as bytes (None: none).
fn read(dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(dir.join(REPORT_JSON)).ok()
}

/// Copies `from` (a shard's `submissions/NAME`) to `root/NAME`: into a dot-folder first (which
/// [`super::load`] leaves out), then renamed into place, replacing an older copy.
fn copy_submission(from: &Path, root: &Path, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempdir_in(root)
        .map_err(|e| format!("{}: {e}", root.display()))?;
    for entry in walkdir::WalkDir::new(from).sort_by_file_name() {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = staging.path().join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &dest)
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        }
    }
    let target = root.join(name);
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, &target).map_err(|e| format!("{}: {e}", target.display()))?;
    Ok(())
}
