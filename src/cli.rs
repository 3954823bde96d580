//! The command line: every subcommand's arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::values::{Jobs, MemoryMib, OutputKib, RunAs, TimeoutSecs};

/// Grades a student's leader for the Kafka ISR / high-watermark exercise.
#[derive(Debug, Parser)]
#[command(name = "isr-grader", version = crate::version::LONG, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the output: `auto` (a terminal, unless NO_COLOR is set), `always`,
    /// `never`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = clap::ColorChoice::Auto, global = true)]
    pub color: clap::ColorChoice,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start-up; boxing would buy nothing
pub enum Command {
    /// Grade a program on every case (the main job).
    Test(TestArgs),
    /// Print a case's trace, expected output and the reference's explanation.
    Show(ShowArgs),
    /// Shrink a failing case (or trace file) to the smallest trace on which the program still
    /// differs from the reference the same way.
    Shrink(ShrinkArgs),
    /// Generate a trace from a scenario generator.
    Gen(GenArgs),
    /// Regenerate expected outputs from the reference, showing what changed.
    Bless(BlessArgs),
    /// Check that the corpus catches every known mistake and tells them apart.
    Audit(AuditArgs),
    /// Grade a whole class: every submission folder in a folder, in parallel, into an output
    /// folder with a gradebook (CSV) and a class report.
    Batch(BatchArgs),
    /// Gather the output folders of partial batches (`batch --partition K/N`) into one, with
    /// its gradebook and class report.
    Merge(MergeArgs),
    /// Grade a bundled sample student (the reference leader with a known mistake) on the
    /// built-in public cases: see what a report looks like.
    Demo(DemoArgs),
    /// Write a ready Gradescope autograder (a folder, a zip, or both) from your instructor
    /// config file: setup.sh, run_autograder, your config and a copy of its cases.
    Gradescope(GradescopeArgs),
    /// Act as a student's program: the reference leader, optionally with known mistakes
    /// (stdin in, stdout out). Used by `demo` and by the tests.
    #[command(hide = true)]
    Leader(LeaderArgs),
    /// Print shell completions or a man page, generated from these definitions (for packagers
    /// and install scripts).
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// `isr-grader generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to generate.
    #[command(subcommand)]
    pub what: Generate,
}

/// What `isr-grader generate` prints.
#[derive(Debug, Subcommand)]
pub enum Generate {
    /// Completions for SHELL, e.g. `isr-grader generate completions bash >
    /// ~/.local/share/bash-completion/completions/isr-grader`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// The man page (roff) of isr-grader, or of one of its subcommands (`isr-grader-test.1`),
    /// e.g. `isr-grader generate man test > isr-grader-test.1`.
    Man {
        /// A subcommand.
        subcommand: Option<String>,
    },
}

/// `isr-grader demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The sample student's mistakes (catalog ids, comma-separated).
    #[arg(long, default_value = "caught-up-equality-only")]
    pub fault: String,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `isr-grader leader`.
#[derive(Debug, Args)]
pub struct LeaderArgs {
    /// Known mistakes to switch on (catalog ids, comma-separated).
    #[arg(long, default_value = "")]
    pub fault: String,
}

/// How `test` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people: verdicts, the first divergence, the diagnosis.
    #[default]
    Human,
    /// One JSON document on stdout.
    Json,
    /// A markdown summary (GitHub's job summary): the result and the diagnosis, a table of
    /// cases, each failure in a `<details>` block.
    Markdown,
}

/// `--sandbox` (and `sandbox` in the instructor's config file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Every protection must be in force, or nothing runs (exit 2).
    Require,
    /// Every protection the machine allows; the report says which are missing.
    #[default]
    BestEffort,
    /// No sandbox.
    Off,
}

impl From<SandboxMode> for crate::runner::sandbox::Mode {
    fn from(mode: SandboxMode) -> Self {
        match mode {
            SandboxMode::Require => Self::Require,
            SandboxMode::BestEffort => Self::BestEffort,
            SandboxMode::Off => Self::Off,
        }
    }
}

/// `isr-grader test`.
#[derive(Debug, Args, Default)]
pub struct TestArgs {
    /// A case folder (repeatable). Replaces the built-in public cases unless --builtin is given.
    #[arg(long = "cases", value_name = "DIR")]
    pub cases: Vec<PathBuf>,
    /// Also use the built-in public cases when --cases is given.
    #[arg(long)]
    pub builtin: bool,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Cases run at once, 1 to 256 (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<Jobs>,
    /// Wall-clock limit per case, in seconds: more than 0, at most 3600 (default 10).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<TimeoutSecs>,
    /// Address-space limit per case, in MiB: 16 to 1048576 (default 1024).
    #[arg(long, value_name = "MIB")]
    pub memory: Option<MemoryMib>,
    /// Most stdout kept per case, in KiB: 1 to 65536 (default 8192); past it the program is
    /// stopped.
    #[arg(long, value_name = "KIB")]
    pub output_limit: Option<OutputKib>,
    /// Only cases whose name matches PATTERN somewhere: `*` matches any run of characters, `?`
    /// one character (`worked`, `worked*` and `0*trace` all select 001-worked-trace).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Read this grader config instead of ./grader.toml (with --instructor-config: the
    /// submission's, instead of SUBMISSION/grader.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The instructor's config file: cases, limits, jobs and the sandbox come only from it and
    /// the flags; the submission's grader.toml gives at most its build and run commands, and
    /// only where this file allows them. Use it whenever you grade someone else's work.
    #[arg(long, value_name = "FILE")]
    pub instructor_config: Option<PathBuf>,
    /// The submission's folder (default: the current folder): where its grader.toml is, where
    /// it is built and where relative program paths point.
    #[arg(long, value_name = "DIR")]
    pub submission: Option<PathBuf>,
    /// Skip the config's build step.
    #[arg(long)]
    pub no_build: bool,
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write a Gradescope results.json to FILE.
    #[arg(long, value_name = "FILE")]
    pub gradescope: Option<PathBuf>,
    /// Also append the markdown summary (as --format markdown prints it) to FILE, e.g.
    /// "$GITHUB_STEP_SUMMARY".
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Also write the HTML report to FILE: one self-contained page to open in a browser, with
    /// a picture of each failing case (its replicas' LEOs, the HW, the ISR and your output
    /// against the expected one).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the picture of each failing case to DIR/CASE.svg (DIR is created).
    #[arg(long, value_name = "DIR")]
    pub timelines: Option<PathBuf>,
    /// How strictly the program is sandboxed: `require` refuses to grade when a protection is
    /// missing (use it to grade a class), `best-effort` uses what the machine allows and says
    /// what is missing, `off` runs the program with process groups and limits only.
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxMode>,
    /// Who the program runs as when the grader is root: UID or UID:GID (default 65534, nobody).
    #[arg(long, value_name = "UID[:GID]")]
    pub sandbox_uid: Option<RunAs>,
    /// Stop starting cases after the first failure (the others are reported as not run; no
    /// diagnosis).
    #[arg(long, conflicts_with = "max_fail")]
    pub fail_fast: bool,
    /// Stop starting cases after N failures.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fail: Option<u64>,
    /// Show every failing case in full, not only the first three.
    #[arg(long, short = 'v', conflicts_with = "quiet")]
    pub verbose: bool,
    /// Say less: no line for passing cases, no failing case in full, no build notice (the
    /// result, the failing cases' verdicts and the diagnosis remain).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Only the cases that failed in the last run (recorded in .isr-grader/last-run.json beside
    /// the grader.toml in use).
    #[arg(long)]
    pub failed: bool,
    /// List the cases that would run (after --filter), one per line with its title, and run
    /// nothing.
    #[arg(long)]
    pub list: bool,
    /// Print how long each phase took (load, build, run and judge, diagnose, report) to stderr.
    #[arg(long)]
    pub timings: bool,
    #[command(flatten)]
    pub explore: ExploreArgs,
    /// The program and its arguments (after `--`).
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
}

/// Seconds: a finite number, 0 or more.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a number of seconds (0 or more)")),
    }
}

/// Exploration beyond the corpus, shrinking, and who reads the report (`test`).
#[derive(Debug, Args, Default, Clone)]
pub struct ExploreArgs {
    /// Generated traces to run after the corpus, each compared with the reference (0: none;
    /// default 12, or `[explore] traces`).
    #[arg(long, value_name = "N", help_heading = "Exploration")]
    pub explore: Option<usize>,
    /// Start no explored trace after this long (default 2, or `[explore] seconds`).
    #[arg(long, value_name = "SECS", value_parser = seconds, help_heading = "Exploration")]
    pub explore_seconds: Option<f64>,
    /// Points each failing explored trace costs (default 0: reported only, or
    /// `[explore] points`).
    #[arg(long, value_name = "POINTS", help_heading = "Exploration")]
    pub explore_points: Option<u32>,
    /// Replay the exploration of the grading that printed this seed.
    #[arg(long, value_name = "SEED", help_heading = "Exploration")]
    pub seed: Option<u64>,
    /// Most time spent shrinking failing cases in one grading (default 3, or
    /// `[explore] shrink_seconds`; 0: no shrinking).
    #[arg(long, value_name = "SECS", value_parser = seconds, help_heading = "Exploration")]
    pub shrink_seconds: Option<f64>,
    /// Show hidden cases in full (their traces, expected lines and diffs): for instructors'
    /// eyes only (or `show_hidden = true` in the instructor's config). Without it a failing
    /// hidden case shows its shrunk trace and the mistake's name only, in every format.
    #[arg(long, help_heading = "Exploration")]
    pub show_hidden: bool,
}

/// `isr-grader batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The folder of submissions: each folder in it is one submission (folders whose name
    /// starts with `.` are left out), named by its folder's name.
    #[arg(value_name = "SUBMISSIONS_DIR")]
    pub submissions: PathBuf,
    /// The instructor's config file (as for `test --instructor-config`): cases, limits, the
    /// sandbox and each submission's program come from it.
    #[arg(long, value_name = "FILE")]
    pub instructor_config: PathBuf,
    /// The output folder: gradebook.csv, class-report.html and submissions/NAME/.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Submissions graded at once, 1 to 256 (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<Jobs>,
    /// Cases each submission runs at once, 1 to 256 (default 1: the cores go to submissions).
    #[arg(long, value_name = "N")]
    pub case_jobs: Option<Jobs>,
    /// Grade only this part of the class: K of N (1-based), each submission in exactly one part,
    /// by a hash of its name (a submission stays in its part when others come or go). Gather the
    /// parts with `isr-grader merge`.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<crate::class::partition::Partition>,
    /// Grade again every submission, also those graded before and unchanged since.
    #[arg(long)]
    pub force: bool,
    /// Only cases whose name matches PATTERN (as `test --filter`).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Wall-clock limit for grading one submission (its build included), in seconds, 1 to
    /// 86400; past it the submission's grading is stopped and recorded as an error (default:
    /// enough for the build and every case to reach its own limit).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub submission_timeout: Option<u64>,
    /// No line per graded submission (the summary remains).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `isr-grader merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The output folders of the partial batches.
    #[arg(value_name = "SHARD_OUT", required = true)]
    pub shards: Vec<PathBuf>,
    /// The merged output folder (not one of the shards').
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `isr-grader shrink`.
#[derive(Debug, Args)]
pub struct ShrinkArgs {
    /// A case name (in the built-in public cases, or in --cases) or a trace file.
    pub case: String,
    /// Case folders to look the name up in (default: the built-in public cases).
    #[arg(long = "cases", value_name = "DIR")]
    pub cases: Vec<PathBuf>,
    /// Write the shrunk trace as a new hidden case (NAME.trace, NAME.toml, NAME.out) in DIR.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// The new case's name (default: shrunk-FROM).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Runs at once, 1 to 256 (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<Jobs>,
    /// Wall-clock limit per run, in seconds: more than 0, at most 3600 (default 10).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<TimeoutSecs>,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
}

/// `isr-grader show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The case's name (or a unique part of it).
    pub name: String,
    /// Case folders to look in (default: the built-in public cases).
    #[arg(long = "cases", value_name = "DIR")]
    pub cases: Vec<PathBuf>,
}

/// `isr-grader gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// The scenario generator (`isr-grader gen --list` shows them).
    #[arg(required_unless_present = "list")]
    pub scenario: Option<String>,
    /// The seed; the same seed and parameters give the same trace, bit for bit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A generator parameter, `KEY=VALUE` (repeatable).
    #[arg(long = "param", short = 'p', value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// List the generators and their parameters.
    #[arg(long)]
    pub list: bool,
    /// Write a whole case (NAME.trace, NAME.toml, NAME.out) into this folder instead of printing the trace.
    #[arg(long, value_name = "DIR")]
    pub case_dir: Option<PathBuf>,
    /// The case name when writing a case.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Visibility of the written case.
    #[arg(long, default_value = "hidden")]
    pub visibility: String,
}

/// `isr-grader bless`.
#[derive(Debug, Args)]
pub struct BlessArgs {
    /// Case folders (default: cases/public and cases/hidden).
    pub dirs: Vec<PathBuf>,
    /// Change nothing; exit 1 if any expected output is out of date.
    #[arg(long)]
    pub check: bool,
}

/// `isr-grader audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Case folders (default: cases/public and cases/hidden).
    pub dirs: Vec<PathBuf>,
    /// Also search and print the minimal witness of every mistake and pair of mistakes.
    #[arg(long)]
    pub witness: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `isr-grader gradescope`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("destination").required(true).multiple(true).args(["out", "zip"])))]
pub struct GradescopeArgs {
    /// Your instructor config file (as for `test --instructor-config`): its cases, limits and
    /// sandbox go into the autograder; every case is checked now, as `test` checks it.
    #[arg(long, value_name = "FILE")]
    pub instructor_config: PathBuf,
    /// Write the autograder as a folder (replacing one this command wrote before).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the autograder as a zip to upload to Gradescope (the same bytes for the same
    /// inputs).
    #[arg(long, value_name = "FILE")]
    pub zip: Option<PathBuf>,
    /// Put this very isr-grader into the autograder (bin/isr-grader) instead of installing a
    /// release: the most reproducible choice, and setup.sh needs no download for it. It must be
    /// a Linux x86_64 static build (the release's x86_64-unknown-linux-musl archive) to run on
    /// Gradescope's images.
    #[arg(long)]
    pub bundle_grader: bool,
    /// The toolchains setup.sh installs, comma-separated: rust (rustup, minimal profile),
    /// python (python3 from apt). Default: the config's `languages`, else both.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "LANG,...",
        hide_possible_values = true
    )]
    pub languages: Option<Vec<crate::detect::Language>>,
    /// The grader's repository, where setup.sh downloads the pinned release (or builds it
    /// from): default Cargo.toml's `repository`.
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// The Rust toolchain setup.sh installs for Rust submissions (and to build the grader when
    /// no release fits).
    #[arg(long, value_name = "VERSION", default_value = concat!(env!("CARGO_PKG_RUST_VERSION"), ".0"))]
    pub rust_toolchain: String,
}
