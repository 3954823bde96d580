//! The sandbox each run goes through: what a program may see, touch and outlive.
//!
//! The runner asks the sandbox to wrap a command; the sandbox itself lives in a helper that the
//! grader re-executes (the hidden `isr-grader __sandbox` subcommand), which sets up namespaces,
//! Landlock, the uid and the limits, and then starts the program (see [`exec`]).
//!
//! What the policy asks for and what the machine allowed are two things: [`prepare`] probes the
//! machine once and returns a [`Sandbox`] whose [`Status`] says which layers are in force.

use std::fmt;
use std::path::PathBuf;

/// How strict to be about layers the machine cannot provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every layer must be in force; otherwise [`prepare`] fails before anything runs.
    Require,
    /// Use every layer the machine allows and say which were missing.
    #[default]
    BestEffort,
    /// No sandbox: process groups and limits only.
    Off,
}

/// What the instructor asks of the sandbox. Built only from instructor-side configuration,
/// never from a submission's own files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// How strict to be.
    pub mode: Mode,
    /// The uid and gid to run as when the grader is root (`None`: 65534, `nobody`).
    pub run_as: Option<(u32, u32)>,
    /// Folders and files the program may read (and execute): the submission's own folder,
    /// extra toolchain folders. System folders are always readable.
    pub read_only: Vec<PathBuf>,
    /// Folders the program may write besides its temporary folder (the build step writes its
    /// submission folder).
    pub read_write: Vec<PathBuf>,
    /// Paths that must be neither visible nor readable: case folders, report paths.
    pub hidden: Vec<PathBuf>,
    /// Whether the program may use the network (only the build step, and only if the
    /// instructor allows it).
    pub network: bool,
}

/// Which protections are in force, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    /// The layers in force, in words (`pid+net+mount namespaces`, `landlock v7`, `uid 65534`).
    pub layers: Vec<String>,
    /// The layers asked for but missing, with why.
    pub missing: Vec<String>,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.layers.is_empty() {
            f.write_str("none")?;
        } else {
            f.write_str(&self.layers.join(", "))?;
        }
        if !self.missing.is_empty() {
            write!(f, " (missing: {})", self.missing.join("; "))?;
        }
        Ok(())
    }
}

/// A prepared sandbox: the policy and what the machine allows of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// The policy.
    pub policy: Policy,
    /// What is in force.
    pub status: Status,
}

/// Why the sandbox cannot be used.
#[derive(Debug)]
pub struct SandboxError(pub String);

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxError {}

/// Probes the machine for the layers `policy` asks for. With [`Mode::Require`], a missing
/// layer is an error; with [`Mode::BestEffort`] it is listed in [`Status::missing`].
pub fn prepare(policy: &Policy) -> Result<Sandbox, SandboxError> {
    let mut status = Status::default();
    if policy.mode != Mode::Off {
        status
            .missing
            .push("sandbox not implemented yet".to_string());
    }
    if policy.mode == Mode::Require && !status.missing.is_empty() {
        return Err(SandboxError(format!(
            "--sandbox require: {}",
            status.missing.join("; ")
        )));
    }
    Ok(Sandbox {
        policy: policy.clone(),
        status,
    })
}
