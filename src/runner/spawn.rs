//! Finding the program and building the `Command` (process group, environment, rlimits).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rustix::fs::{Access, access};
use rustix::process::{Pid, Resource, Rlimit};

use super::{Limits, Program, SpawnError};

/// `PATH` used when neither the program's environment nor the grader's has one.
pub(super) const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Finds the file `program.argv[0]` names, so that "not found" and "not executable" are told
/// apart before anything is spawned. Returns an absolute path (or one relative to the grader's
/// current directory if that cannot be read).
///
/// When the program's sandbox runs it as another user, a bare name is looked up among the
/// files that user can execute (Debian's `/usr/bin/python3` rather than a pyenv shim in
/// root's home).
pub fn resolve(program: &Program) -> Result<PathBuf, SpawnError> {
    let run_as = program.sandbox.as_deref().and_then(|s| s.run_as());
    let Some(name) = program.argv.first().filter(|name| !name.is_empty()) else {
        return Err(SpawnError::Other(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty command line",
        )));
    };
    if name.as_bytes().contains(&b'/') {
        let path = Path::new(name);
        let path = match std::env::current_dir() {
            Ok(cwd) if path.is_relative() => cwd.join(path),
            _ => path.to_path_buf(),
        };
        return match check_executable(&path) {
            Check::Executable => Ok(path),
            Check::NotExecutable => Err(SpawnError::NotExecutable(path)),
            Check::Missing => Err(SpawnError::NotFound(path)),
        };
    }
    let search_path = program
        .env
        .iter()
        .rev()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    let mut not_executable = None;
    // Empty components (the current directory) are skipped on purpose: the program's
    // folder is untrusted.
    for dir in search_path
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|dir| !dir.is_empty())
    {
        let candidate = Path::new(OsStr::from_bytes(dir)).join(name);
        match check_executable(&candidate) {
            Check::Executable
                if run_as.is_some_and(|(uid, gid)| {
                    !super::sandbox::reachable_by(&candidate, uid, gid, true)
                }) =>
            {
                not_executable.get_or_insert(candidate);
            }
            Check::Executable => return Ok(candidate),
            Check::NotExecutable => {
                not_executable.get_or_insert(candidate);
            }
            Check::Missing => {}
        }
    }
    Err(match not_executable {
        Some(path) => SpawnError::NotExecutable(path),
        None => SpawnError::NotFound(PathBuf::from(name)),
    })
}

enum Check {
    Executable,
    NotExecutable,
    Missing,
}

fn check_executable(path: &Path) -> Check {
    match std::fs::metadata(path) {
        Err(_) => Check::Missing,
        // `access(X_OK)` succeeds on folders, and for root on any file with one execute bit.
        Ok(meta) if !meta.is_file() => Check::NotExecutable,
        Ok(_) if access(path, Access::EXEC_OK).is_err() => Check::NotExecutable,
        Ok(_) => Check::Executable,
    }
}

/// The limits to set in the child, computed in the parent so that the child only makes
/// system calls (no allocation between fork and exec).
#[derive(Clone, Copy)]
struct RlimitPlan {
    memory: Option<u64>,
    /// A descriptor to keep open across exec (the sandbox helper's status pipe).
    keep_fds: [i32; 2],
    file_size: Option<u64>,
    /// Signals the grader has ignored (SIG_IGN), as a bit set: the child resets just these.
    ignored: u64,
}

impl RlimitPlan {
    fn new(limits: &Limits) -> Self {
        RlimitPlan {
            memory: limits.memory_bytes.map(|v| cap_to_hard(Resource::As, v)),
            keep_fds: [-1; 2],
            file_size: limits.file_size.map(|v| cap_to_hard(Resource::Fsize, v)),
            ignored: *IGNORED.get_or_init(ignored_signals),
        }
    }

    /// Runs in the child between fork and exec: raw system calls only.
    fn apply(self, parent: Pid) -> io::Result<()> {
        if let Some(v) = self.memory {
            set_both(Resource::As, v)?;
        }
        if let Some(v) = self.file_size {
            set_both(Resource::Fsize, v)?;
        }
        set_both(Resource::Core, 0)?;
        for fd in self.keep_fds.into_iter().filter(|&fd| fd >= 0) {
            // SAFETY: fcntl is async-signal-safe; clearing FD_CLOEXEC on an open descriptor.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
        }
        reset_signal_dispositions(self.ignored);
        // If the grader dies (even by SIGKILL), its main child goes with it. Only the main
        // child: the rest of the group is the interrupt handler's job. The signal is sent when
        // the *thread* that forked exits, and `run` blocks that thread until the child is
        // reaped, so this cannot fire early.
        super::os::die_with_parent(parent)
    }
}

/// [`ignored_signals`], read once: the grader sets its own dispositions at start-up
/// ([`super::prepare_grader_process`]) and does not change them afterwards.
static IGNORED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The signals the grader currently ignores, as a bit set (bit `n` for signal `n`). Read in the
/// parent so that the child makes one system call per ignored signal (usually none besides
/// SIGPIPE) instead of one per signal: the child's work between fork and exec is on the path
/// of every run.
fn ignored_signals() -> u64 {
    let mut set = 0u64;
    for signal in 1..=63 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: querying (null new action) fills `old`, a valid zeroed structure.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        };
        if ignored {
            set |= 1 << signal;
        }
    }
    set
}

/// Gives the signals in `ignored` their default disposition. `exec` already resets caught
/// signals, and std resets the mask and `SIGPIPE`, but other ignored signals would be
/// inherited: a grader started with `nohup`, from a non-interactive shell's `&` (SIGINT,
/// SIGQUIT ignored) or by a `posix_spawn` that ignores glibc's internal signals would hand that
/// on to every program. glibc refuses to touch its two internal signals (32 and 33); those
/// errors are ignored.
fn reset_signal_dispositions(ignored: u64) {
    for signal in 1..=63 {
        if ignored & (1 << signal) == 0 {
            continue;
        }
        // SAFETY: `sigaction` is async-signal-safe; the zeroed structure with `SIG_DFL` as
        // handler is a valid argument, and no old action is requested.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

fn cap_to_hard(resource: Resource, value: u64) -> u64 {
    match rustix::process::getrlimit(resource).maximum {
        Some(hard) => value.min(hard),
        None => value,
    }
}

fn set_both(resource: Resource, value: u64) -> io::Result<()> {
    let limit = Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    rustix::process::setrlimit(resource, limit).map_err(io::Error::from)
}

/// Builds the command: own process group, cleared environment, piped stdio, rlimits.
pub(super) fn command(program: &Program, exe: &Path, workdir: &Path, limits: &Limits) -> Command {
    let mut command = Command::new(exe);
    command.arg0(&program.argv[0]).args(&program.argv[1..]);
    finish(command, program, workdir, RlimitPlan::new(limits))
}

/// Builds the command that starts the sandbox helper for `program`: the same process group,
/// environment, stdio and rlimits, except that the memory limit is the helper's to set (on
/// the program alone) and the helper's channels stay open across exec.
pub(super) fn sandboxed_command(
    sandbox: &super::sandbox::Sandbox,
    program: &Program,
    exe: &Path,
    workdir: &Path,
    private_workdir: bool,
    limits: &Limits,
    channels: &super::sandbox::Channels,
) -> Command {
    let mut plan = RlimitPlan::new(limits);
    let memory = plan.memory.take();
    plan.keep_fds = channels.keep();
    let command = sandbox.helper_command(
        exe,
        &program.argv,
        workdir,
        private_workdir,
        memory,
        channels,
    );
    finish(command, program, workdir, plan)
}

fn finish(mut command: Command, program: &Program, workdir: &Path, plan: RlimitPlan) -> Command {
    command
        .env_clear()
        .envs(program.env.iter().map(|(k, v)| (k, v)))
        .current_dir(workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let parent = rustix::process::getpid();
    // SAFETY: the closure only makes system calls (prlimit64, fcntl, sigaction, prctl, getppid) on
    // values copied into it; it neither allocates nor takes locks, so it is async-signal-safe
    // as required between fork and exec. Errors are built from errno
    // values (`io::Error::from(Errno)` does not allocate).
    unsafe {
        command.pre_exec(move || plan.apply(parent));
    }
    command
}

/// Maps a failed `spawn` (after `resolve` found an executable file) to a `SpawnError`.
pub(super) fn classify(err: io::Error, exe: &Path) -> SpawnError {
    let refused = err.kind() == io::ErrorKind::PermissionDenied
        || err.raw_os_error() == Some(rustix::io::Errno::NOEXEC.raw_os_error());
    if refused {
        SpawnError::NotExecutable(exe.to_path_buf())
    } else {
        SpawnError::Other(io::Error::new(
            err.kind(),
            format!("cannot start {}: {err}", exe.display()),
        ))
    }
}
