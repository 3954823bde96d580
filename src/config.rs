//! The two config files: `grader.toml` (the submission's: how to build and run the program, and
//! when a student grades themselves, cases and limits) and the instructor's config file
//! (`--instructor-config`: cases, limits, jobs, the sandbox, and whether the submission's build
//! and run commands may be used). [`crate::plan`] resolves them with the flags into one plan.
//!
//! `grader.toml`:
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
//! [explore]                                 # optional
//! traces = 12                               # generated traces after the corpus (0: none)
//! seconds = 2.0                             # start none after this long
//! points = 0                                # what each failing one costs (0: reported only)
//! shrink_seconds = 3.0                      # most time shrinking failing cases
//! ```
//! Relative paths (in `run[0]` when it contains a `/`, and in `cases`) are relative to the folder
//! of `grader.toml`; the build and the program run there too.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cases::CaseError;
use crate::values::{Jobs, MemoryMib, OutputKib, RunAs, TimeoutSecs};

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
    pub jobs: Option<Jobs>,
    /// Limits per case.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Exploration beyond the corpus and shrinking.
    #[serde(default)]
    pub explore: ExploreConfig,
}

/// `[explore]` (in `grader.toml` when a student grades themselves, in the instructor's file
/// otherwise): what `--explore`, `--explore-seconds`, `--explore-points` and `--shrink-seconds`
/// set.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExploreConfig {
    /// Generated traces per grading (0: none).
    pub traces: Option<usize>,
    /// Start no explored trace after this many seconds.
    pub seconds: Option<f64>,
    /// Points each failing explored trace costs.
    pub points: Option<u32>,
    /// Most seconds spent shrinking in one grading.
    pub shrink_seconds: Option<f64>,
    /// The seed of the generated traces. Default: a fresh one per grading for a student; for
    /// an instructor, one derived from the cases, so every submission of a class meets the
    /// same traces and a regrade repeats the grade.
    pub seed: Option<u64>,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Wall-clock seconds per case.
    pub timeout_secs: Option<TimeoutSecs>,
    /// Address space, MiB.
    pub memory_mb: Option<MemoryMib>,
    /// Captured stdout, KiB.
    pub output_kb: Option<OutputKib>,
}

impl LimitsConfig {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.timeout_secs.is_some() || self.memory_mb.is_some() || self.output_kb.is_some()
    }
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

fn read(path: &Path) -> Result<String, CaseError> {
    std::fs::read_to_string(path).map_err(|e| CaseError {
        path: path.to_path_buf(),
        line: None,
        message: format!("cannot read: {e}"),
    })
}

fn parent_dir(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Reads and checks a config file; errors name the file and line.
pub fn load(path: &Path) -> Result<Loaded, CaseError> {
    let err = |line, message: String| CaseError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = read(path)?;
    let config: GraderConfig =
        toml::from_str(&text).map_err(|e| crate::cases::toml_error(path, &text, &e))?;
    if config.run.is_empty() {
        return Err(err(
            None,
            "`run` is missing or empty: it names the program to grade, e.g. run = [\"python3\", \"main.py\"]".into(),
        ));
    }
    Ok(Loaded {
        config,
        dir: parent_dir(path),
        path: path.to_path_buf(),
    })
}

/// What a submission's `grader.toml` says, read without trusting it (instructor mode): only
/// `build` and `run` are taken, and only where the instructor allows them; every other key is
/// named so the report can say it was ignored. A file that does not parse gives no commands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Untrusted {
    /// `build`, when it is a string.
    pub build: Option<String>,
    /// `run`, when it is a list of strings.
    pub run: Option<Vec<String>>,
    /// The other top-level keys (`cases`, `jobs`, `limits`, ...).
    pub other_keys: Vec<String>,
    /// Why the file could not be read, if it could not.
    pub unreadable: Option<CaseError>,
}

/// Reads a submission's `grader.toml` leniently (see [`Untrusted`]).
pub fn load_untrusted(path: &Path) -> Untrusted {
    let text = match read(path) {
        Ok(t) => t,
        Err(e) => {
            return Untrusted {
                unreadable: Some(e),
                ..Untrusted::default()
            };
        }
    };
    let table: toml::Table = match toml::from_str(&text) {
        Ok(t) => t,
        Err(e) => {
            return Untrusted {
                unreadable: Some(crate::cases::toml_error(path, &text, &e)),
                ..Untrusted::default()
            };
        }
    };
    let mut u = Untrusted::default();
    for (key, value) in &table {
        match key.as_str() {
            "build" => u.build = value.as_str().map(str::to_string),
            "run" => {
                u.run = value.as_array().and_then(|a| {
                    a.iter()
                        .map(|v| v.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                });
            }
            other => u.other_keys.push(other.to_string()),
        }
    }
    u
}

/// The instructor's config file (`--instructor-config FILE`). Everything in it is trusted;
/// relative paths in `cases` and `allow_read` are relative to its folder.
///
/// ```toml
/// cases = ["cases/public", "cases/hidden"]  # default: the built-in public cases
/// builtin = false                  # also the built-in public cases
/// run = ["target/release/isr-leader"]   # optional: the program, in the submission folder
/// build = "cargo build --release"  # optional: run once in the submission folder
/// allow_submission_run = false     # use the submission's grader.toml `run` (when `run` is unset)
/// allow_submission_build = false  # use the submission's grader.toml `build` (when `build` is unset)
/// languages = ["rust", "python"]   # recognized when nothing else names the program (default: both)
/// build_network = false            # the build step may use the network
/// allow_read = ["/opt/toolchain"]  # extra folders the program may read
/// jobs = 2
/// sandbox = "require"              # require | best-effort | off
/// sandbox_uid = "65534:65534"      # who the program runs as when the grader is root
/// show_hidden = false              # true: reports show hidden cases in full
/// [gradescope]                     # results.json: see GradescopeConfig
/// [explore]                        # as in grader.toml
/// [limits]
/// timeout_secs = 5.0
/// memory_mb = 1024
/// output_kb = 4096
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructorConfig {
    /// Case folders.
    #[serde(default)]
    pub cases: Vec<PathBuf>,
    /// Also grade on the built-in public cases.
    #[serde(default)]
    pub builtin: bool,
    /// The program and its arguments (relative to the submission folder).
    pub run: Option<Vec<String>>,
    /// A shell command run once in the submission folder before grading.
    pub build: Option<String>,
    /// Whether the submission's own `run` may be used.
    #[serde(default)]
    pub allow_submission_run: bool,
    /// Whether the submission's own `build` may be used.
    #[serde(default)]
    pub allow_submission_build: bool,
    /// Whether the build step may use the network.
    #[serde(default)]
    pub build_network: bool,
    /// The languages a submission is recognized by when neither this file nor (where allowed)
    /// the submission names its program (None: every language the grader knows; `[]`: none).
    pub languages: Option<Vec<crate::detect::Language>>,
    /// Extra paths the program may read.
    #[serde(default)]
    pub allow_read: Vec<PathBuf>,
    /// Cases run at once.
    pub jobs: Option<Jobs>,
    /// How strictly the program is sandboxed.
    pub sandbox: Option<crate::cli::SandboxMode>,
    /// Who the program runs as when the grader is root.
    pub sandbox_uid: Option<RunAs>,
    /// Limits per case.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Exploration beyond the corpus and shrinking.
    #[serde(default)]
    pub explore: ExploreConfig,
    /// Reports show hidden cases in full (for instructors' eyes only; default false: a failing
    /// hidden case shows its shrunk trace and the mistake's name).
    #[serde(default)]
    pub show_hidden: bool,
    /// Gradescope's `results.json`.
    #[serde(default)]
    pub gradescope: GradescopeConfig,
}

/// `[gradescope]` in the instructor's config: how `results.json` shows the grade.
///
/// ```toml
/// [gradescope]
/// hidden_visibility = "after_published"  # hidden | after_due_date | after_published | visible
/// output_format = "text"                 # text | md
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GradescopeConfig {
    /// When students see the hidden cases' tests (default `after_published`).
    pub hidden_visibility: Option<crate::report::gradescope::Visibility>,
    /// How every `output` is rendered (default `text`).
    pub output_format: Option<crate::report::gradescope::TextFormat>,
}

impl GradescopeConfig {
    /// The options for the renderer, defaults filled in.
    pub fn options(&self) -> crate::report::gradescope::Options {
        let d = crate::report::gradescope::Options::default();
        crate::report::gradescope::Options {
            hidden_visibility: self.hidden_visibility.unwrap_or(d.hidden_visibility),
            format: self.output_format.unwrap_or(d.format),
        }
    }
}

/// A loaded instructor config and its folder.
#[derive(Debug, Clone)]
pub struct LoadedInstructor {
    /// The config.
    pub config: InstructorConfig,
    /// The folder holding the file.
    pub dir: PathBuf,
    /// The file.
    pub path: PathBuf,
}

/// Reads and checks the instructor's config file; errors name the file and line.
pub fn load_instructor(path: &Path) -> Result<LoadedInstructor, CaseError> {
    let text = read(path)?;
    let config: InstructorConfig =
        toml::from_str(&text).map_err(|e| crate::cases::toml_error(path, &text, &e))?;
    if let Some(run) = &config.run
        && run.is_empty()
    {
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with("run"))
            .map(|i| i + 1);
        return Err(CaseError {
            path: path.to_path_buf(),
            line,
            message: "`run` is empty: name the program, or leave `run` out".into(),
        });
    }
    Ok(LoadedInstructor {
        config,
        dir: parent_dir(path),
        path: path.to_path_buf(),
    })
}
