//! Linux: pidfds, the child subreaper, the parent-death signal, `pipe2`.

use std::io;
use std::os::fd::OwnedFd;

use rustix::process::{Pid, PidfdFlags, Signal};

/// What the runner cannot guarantee here: nothing.
pub(crate) const GAPS: &[&str] = &[];

/// A descriptor that becomes readable when process `pid` exits (kernels since 5.3).
pub(crate) fn exit_fd(pid: Pid) -> Option<OwnedFd> {
    rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok()
}

/// Makes the grader the reaper of its descendants' orphans. Returns whether it worked.
pub(crate) fn become_subreaper() -> bool {
    // The argument is a flag (any non-zero value sets it); the current pid is non-zero.
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

/// Between fork and exec (no allocation): the child dies with the thread that spawned it;
/// fails if `parent` is already gone.
pub(crate) fn die_with_parent(parent: Pid) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if rustix::process::getppid() != Some(parent) {
        // The grader died before the death signal was armed.
        return Err(io::Error::from(rustix::io::Errno::SRCH));
    }
    Ok(())
}

/// Keeps other processes of the same uid from reading the grader's memory (`/proc/PID/mem`,
/// ptrace). Returns whether it worked.
pub(crate) fn make_undumpable() -> bool {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable).is_ok()
}

/// A pipe whose two ends are close-on-exec (and non-blocking, if asked).
pub(crate) fn pipe(nonblocking: bool) -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::pipe::{PipeFlags, pipe_with};
    let mut flags = PipeFlags::CLOEXEC;
    if nonblocking {
        flags |= PipeFlags::NONBLOCK;
    }
    Ok(pipe_with(flags)?)
}

/// Names of the signals only this platform has.
pub(crate) fn platform_signal_name(signal: i32) -> Option<&'static str> {
    match signal {
        libc::SIGSTKFLT => Some("SIGSTKFLT"),
        libc::SIGPWR => Some("SIGPWR"),
        _ => None,
    }
}
