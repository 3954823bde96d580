//! Runs untrusted programs: one process group per run, input on stdin, output captured,
//! wall-clock timeout, output cap, resource limits, and no process left behind.
//!
//! The runner knows nothing about the exercise. It is Linux-specific (process groups,
//! `PR_SET_CHILD_SUBREAPER`, pidfds with a `waitid(WNOWAIT)` fallback).
//!
//! Lifecycle of one [`run`]:
//! 1. The program is looked up (path check, `PATH` lookup for bare names) so that "not found"
//!    and "not executable" are reported as [`SpawnError`]s before anything is started.
//! 2. It is spawned in its own process group, in a fresh temporary folder (unless
//!    [`Program::cwd`] is set), with a cleared environment (only [`Program::env`]) and with
//!    `RLIMIT_AS`, `RLIMIT_FSIZE` and `RLIMIT_CORE=0` set between fork and exec.
//! 3. One `poll` loop on the calling thread moves the bytes and watches the clock: it writes
//!    stdin (a closed stdin is not an error), reads stdout up to [`Limits::output_cap`] (past
//!    it the group is killed) and stderr keeping only its tail, and waits for the main process
//!    to exit (a pidfd) for at most [`Limits::timeout`]; past it the whole group gets
//!    `SIGTERM`, then `SIGKILL` after [`Limits::grace`].
//! 4. Once the main process has exited (it is not reaped yet, so its process-group id cannot
//!    be reused), the whole group is killed with `SIGKILL`, and what is already in the pipes is
//!    read: background children cannot keep the pipes open or outlive the run, and a process
//!    that escaped the group is not waited for.
//! 5. The main process is reaped, then any orphaned member of its group that was re-parented
//!    to the grader (see [`prepare_grader_process`]).

mod group;
mod os;
mod parallel;
mod pipes;
pub mod sandbox;
mod signals;
mod spawn;
mod supervise;

use std::ffi::OsString;
use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

pub use group::{kill_live_groups, live_groups, prepare_grader_process, set_interrupt_grace};
pub use parallel::run_parallel;
pub use signals::signal_name;
pub use spawn::resolve;

/// A program to run: what to execute, with which environment, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The command line. `argv[0]` names the program: a path (containing `/`; a relative path
    /// is taken relative to the grader's current directory, not to [`Program::cwd`]) or a bare
    /// name looked up in the `PATH` of [`Program::env`] (the grader's `PATH` if `env` has
    /// none). The program sees `argv[0]` exactly as given.
    pub argv: Vec<OsString>,
    /// The program's complete environment: the grader's own environment is not inherited, so
    /// that runs do not depend on who started the grader. [`Program::new`] fills in `PATH`.
    pub env: Vec<(OsString, OsString)>,
    /// The folder to run in. `None` (the default) runs each case in a fresh, empty temporary
    /// folder that is deleted when [`run`] returns.
    pub cwd: Option<PathBuf>,
    /// The sandbox to run in (`None`: process group and limits only).
    pub sandbox: Option<std::sync::Arc<sandbox::Sandbox>>,
}

impl Program {
    /// A program with the given command line, the grader's `PATH` (or
    /// `/usr/local/bin:/usr/bin:/bin` if it has none) as its only environment variable, and a
    /// fresh temporary folder per run.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let path = std::env::var_os("PATH").unwrap_or_else(|| spawn::DEFAULT_PATH.into());
        Program {
            argv: argv.into_iter().map(Into::into).collect(),
            env: vec![("PATH".into(), path)],
            cwd: None,
            sandbox: None,
        }
    }
}

/// Resource limits for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time the program may run before its process group gets `SIGTERM`.
    pub timeout: Duration,
    /// Time between `SIGTERM` and `SIGKILL` once the timeout has passed.
    pub grace: Duration,
    /// `RLIMIT_AS` (virtual memory) in bytes; `None` keeps the grader's limit. A request above
    /// the grader's hard limit is lowered to it.
    pub memory_bytes: Option<u64>,
    /// Maximum bytes of stdout kept. One byte more and the process group is killed, and the
    /// run ends with [`Termination::OutputLimit`] (the first `output_cap` bytes are kept).
    pub output_cap: usize,
    /// How many bytes at the end of stderr are kept; stderr is read to the end and counted but
    /// never limits the run.
    pub stderr_tail: usize,
    /// `RLIMIT_FSIZE` in bytes: a program writing a larger file dies with `SIGXFSZ`. `None`
    /// keeps the grader's limit.
    pub file_size: Option<u64>,
}

impl Default for Limits {
    /// Timeout 10 s, grace 500 ms, memory 1 GiB, stdout 8 MiB, stderr tail 8 KiB, file size
    /// 64 MiB.
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(10),
            grace: Duration::from_millis(500),
            memory_bytes: Some(1 << 30),
            output_cap: 8 << 20,
            stderr_tail: 8 << 10,
            file_size: Some(64 << 20),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Termination {
    /// The program exited on its own with this exit code.
    Exited(i32),
    /// The program was killed by a signal that the runner did not send because of a limit
    /// (a crash, an abort, `SIGXFSZ`, or the interrupt handler's `SIGKILL`).
    Signaled {
        /// The signal number.
        signal: i32,
        /// The signal's name, such as `"SIGSEGV"` (see [`signal_name`]).
        name: &'static str,
    },
    /// The program ran past [`Limits::timeout`] and was killed.
    TimedOut,
    /// The program wrote more than [`Limits::output_cap`] bytes to stdout and was killed.
    OutputLimit,
}

impl Termination {
    /// Whether the program exited on its own with code 0.
    pub fn success(&self) -> bool {
        *self == Termination::Exited(0)
    }

    fn from_status(status: ExitStatus) -> Self {
        if let Some(code) = status.code() {
            Termination::Exited(code)
        } else if let Some(signal) = status.signal() {
            Termination::Signaled {
                signal,
                name: signal_name(signal),
            }
        } else {
            // Not reachable for a reaped process (stopped/continued are not reported by
            // `wait`), but keep it total: report the raw status as an exit code.
            Termination::Exited(status.into_raw())
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Exited(code) => write!(f, "exited with code {code}"),
            Termination::Signaled { signal, name } => {
                write!(f, "killed by signal {signal} ({name})")
            }
            Termination::TimedOut => f.write_str("timed out"),
            Termination::OutputLimit => f.write_str("output limit exceeded"),
        }
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// How the run ended.
    pub termination: Termination,
    /// Everything written to stdout, at most [`Limits::output_cap`] bytes.
    pub stdout: Vec<u8>,
    /// The last [`Limits::stderr_tail`] bytes written to stderr.
    pub stderr_tail: Vec<u8>,
    /// How many bytes were written to stderr in total.
    pub stderr_bytes: u64,
    /// Whether all of stdin was written before the program closed it (or exited). Bytes
    /// accepted by the pipe count as written even if the program never read them.
    pub stdin_complete: bool,
    /// Wall-clock time from spawning the program to the exit of its main process.
    pub elapsed: Duration,
    /// The wall-clock limit the run had ([`Limits::timeout`]), to say it with a timeout.
    pub time_limit: Duration,
}

/// Why a program could not be started. The grader reports this once, not once per case.
#[derive(Debug)]
pub enum SpawnError {
    /// No such file, or no such program in `PATH`.
    NotFound(PathBuf),
    /// The file exists but cannot be executed (no execute permission, a directory, or the
    /// kernel refused to execute it).
    NotExecutable(PathBuf),
    /// The sandbox could not be set up for the program, or the program could not be executed
    /// inside it.
    Sandbox(String),
    /// Anything else: empty command line, missing working folder, no temporary folder, the
    /// system refused to create a process or thread, ...
    Other(std::io::Error),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NotFound(path) => write!(f, "program not found: {}", path.display()),
            SpawnError::NotExecutable(path) => {
                write!(f, "program is not executable: {}", path.display())
            }
            SpawnError::Sandbox(why) => write!(f, "sandbox: {why}"),
            SpawnError::Other(err) => write!(f, "cannot run program: {err}"),
        }
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpawnError::Other(err) => Some(err),
            _ => None,
        }
    }
}

impl From<std::io::Error> for SpawnError {
    fn from(err: std::io::Error) -> Self {
        SpawnError::Other(err)
    }
}

/// Runs `program` once with `stdin` as its standard input, under `limits`.
///
/// Never panics on anything the program does. When it returns, the program's main process
/// has been reaped and its process group killed; members re-parented to the grader are reaped
/// too (see [`prepare_grader_process`]). A process that left the group (`setsid`) is out of
/// reach: the runner stops waiting for its output shortly after the main process exits, but
/// only stronger isolation (cgroups, a separate uid) can kill it.
pub fn run(program: &Program, stdin: &[u8], limits: &Limits) -> Result<RunOutcome, SpawnError> {
    let exe = spawn::resolve(program)?;
    let (workdir, _tempdir) = match &program.cwd {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(SpawnError::Other(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("working folder {} is not a folder", dir.display()),
                )));
            }
            (dir.clone(), None)
        }
        None => {
            let temp = tempfile::Builder::new().prefix("isr-run-").tempdir()?;
            (temp.path().to_path_buf(), Some(temp))
        }
    };
    let Some(sandbox) = program.sandbox.as_deref().filter(|s| s.active()) else {
        let mut command = spawn::command(program, &exe, &workdir, limits);
        let outcome = supervise::supervise(&mut command, &exe, stdin, limits);
        if program.sandbox.is_some() {
            // A sandbox that is switched off still sweeps up what left the group.
            sandbox::sweep_orphans();
        }
        return outcome;
    };
    let channels = sandbox::Channels::new()?;
    let mut command = spawn::sandboxed_command(
        sandbox,
        program,
        &exe,
        &workdir,
        program.cwd.is_none(),
        limits,
        &channels,
    );
    let outcome = supervise::supervise(&mut command, &exe, stdin, limits);
    drop(command);
    if !sandbox.has_namespaces() {
        sandbox::sweep_orphans();
    }
    let status = channels.finish();
    if let Some(error) = status.lines().find_map(|l| l.strip_prefix("error: ")) {
        return Err(SpawnError::Sandbox(error.to_string()));
    }
    outcome
}
