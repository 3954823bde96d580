//! The isr-grader library: the parts of the grader that the binary and the tests share.
//!
//! - [`cli`]: command-line arguments; [`values`]: bounded setting values parsed at the edge.
//! - [`config`], [`plan`]: the config files, resolved with the flags into one validated plan;
//!   [`detect`]: a submission's language when nothing names its program.
//! - [`cases`]: the case corpus on disk and built in.
//! - [`runner`]: runs untrusted programs (knows nothing about the exercise).
//! - [`last_run`]: the last run's failing cases (`test --failed`).
//! - [`grade`]: the `test` and `show` commands: run, compare, diagnose, report.
//! - [`corpus`]: the `gen`, `bless` and `audit` commands.
//! - [`class`]: a class of submissions: `batch`, `merge`, the gradebook and the class report.
//! - [`version`]: the version, git revision and corpus hash (recorded by `build.rs`).
//! - [`autograder`]: `isr-grader gradescope`, a ready Gradescope autograder.
//! - [`generate`]: shell completions and man pages from the command-line definitions.

pub mod autograder;
pub mod cases;
pub mod class;
pub mod cli;
pub mod config;
pub mod corpus;
pub mod detect;
pub mod fnv;
pub mod generate;
pub mod grade;
pub mod last_run;
pub mod plan;
pub mod report;
pub mod runner;
pub mod values;
pub mod version;

/// The grader's exit codes (an API: CI scripts and platforms read them).
pub mod exit_codes {
    /// Every case passed (or the command's check succeeded).
    pub const OK: i32 = 0;
    /// Some case failed, the build failed, or a check failed.
    pub const FAILED: i32 = 1;
    /// The grader could not do its job: bad flag, config or case file, program not found.
    pub const ERROR: u8 = 2;
    /// SIGINT or SIGTERM: the reports asked for were still written, cases not run marked so.
    pub const INTERRUPTED: i32 = 130;
}

/// A command's result: the process exit code (0 all good, 1 some case failed or a check failed),
/// or an error that stops the grader (exit 2).
pub type CmdResult = Result<i32, Box<dyn std::error::Error>>;
