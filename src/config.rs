//! `grader.toml`: how to build and run a student's program, where the cases are, the limits.
//!
//! ```toml
//! build = "cargo build --release --quiet"   # optional; a shell command run once before grading
//! run = ["target/release/isr-leader"]       # the program and its arguments
//! cases = ["../my-cases"]                   # optional; default: the built-in public cases
//! jobs = 2                                  # optional; default: the number of cores
//! [limits]                                  # optional
//! timeout_secs = 5.0
//! memory_mb = 1024
//! output_kb = 4096
//! ```
//! Relative paths (in `run[0]` when it contains a `/`, and in `cases`) are relative to the folder
//! of `grader.toml`; the build and the program run there too.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cases::CaseError;

/// The file's contents.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraderConfig {
    /// Shell command run once before grading.
    pub build: Option<String>,
    /// The program and its arguments.
    #[serde(default)]
    pub run: Vec<String>,
    /// Case folders.
    #[serde(default)]
    pub cases: Vec<PathBuf>,
    /// Cases run at once.
    pub jobs: Option<usize>,
    /// Limits per case.
    #[serde(default)]
    pub limits: LimitsConfig,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Wall-clock seconds per case.
    pub timeout_secs: Option<f64>,
    /// Address space, MiB.
    pub memory_mb: Option<u64>,
    /// Captured stdout, KiB.
    pub output_kb: Option<u64>,
}

/// A loaded config and the folder it applies to.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The config.
    pub config: GraderConfig,
    /// The folder holding the file.
    pub dir: PathBuf,
    /// The file.
    pub path: PathBuf,
}

/// Reads and checks a config file; errors name the file and line.
pub fn load(path: &Path) -> Result<Loaded, CaseError> {
    let err = |line, message: String| CaseError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(None, format!("cannot read: {e}")))?;
    let config: GraderConfig =
        toml::from_str(&text).map_err(|e| crate::cases::toml_error(path, &text, &e))?;
    if config.run.is_empty() {
        return Err(err(
            None,
            "`run` is missing or empty: it names the program to grade, e.g. run = [\"python3\", \"main.py\"]".into(),
        ));
    }
    if let Some(t) = config.limits.timeout_secs
        && !(t > 0.0 && t.is_finite())
    {
        return Err(err(
            None,
            format!("limits.timeout_secs must be a positive number, found {t}"),
        ));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok(Loaded {
        config,
        dir,
        path: path.to_path_buf(),
    })
}
