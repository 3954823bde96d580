//! The last run's failing cases, for `test --failed`: `.isr-grader/last-run.json` in the folder
//! of the `grader.toml` in use (student mode only; an instructor's run writes nothing into a
//! submission). Written atomically after each whole run; a run of some cases only updates those
//! (the others keep their last result).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The state file's place beside a `grader.toml` in `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(".isr-grader").join("last-run.json")
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct State {
    schema_version: u32,
    /// The cases that did not pass, by name, sorted.
    failed: Vec<String>,
}

/// The cases that failed last time (None: no run recorded yet).
pub fn failed(path: &Path) -> Result<Option<Vec<String>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let state: State = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: {e} (delete it; the next run writes it again)",
            path.display()
        )
    })?;
    Ok(Some(state.failed))
}

/// Records a run: the cases in `ran` now failed iff they are in `failed`; other cases recorded
/// before keep their state.
pub fn record(path: &Path, ran: &[&str], failed_now: &[&str]) -> std::io::Result<()> {
    let mut failed: Vec<String> = self::failed(path)
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .filter(|name| !ran.contains(&name.as_str()))
        .chain(failed_now.iter().map(|s| s.to_string()))
        .collect();
    failed.sort();
    failed.dedup();
    let state = State {
        schema_version: 1,
        failed,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(&state).map_err(std::io::Error::other)? + "\n";
    crate::cases::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_run_updates_only_its_cases() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        assert_eq!(failed(&path), Ok(None));
        record(&path, &["a", "b", "c"], &["a", "c"]).unwrap();
        assert_eq!(failed(&path), Ok(Some(vec!["a".into(), "c".into()])));
        // Re-running `a` and `c`: `a` now passes.
        record(&path, &["a", "c"], &["c"]).unwrap();
        assert_eq!(failed(&path), Ok(Some(vec!["c".into()])));
        std::fs::write(&path, "{").unwrap();
        assert!(failed(&path).unwrap_err().contains("delete it"));
    }
}
