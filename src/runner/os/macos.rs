//! macOS: no pidfds (the exit is polled with `waitid(WNOWAIT)`), no subreaper, no
//! parent-death signal; what that leaves unguaranteed is in [`GAPS`].

use std::io;
use std::os::fd::OwnedFd;

use rustix::process::Pid;

/// What the runner cannot guarantee here.
pub(crate) const GAPS: &[&str] = &[
    "no sandbox: namespaces and Landlock are Linux's",
    "a process that leaves its group (setsid) may outlive its case",
    "a grader killed with SIGKILL leaves its running cases behind",
];

/// No pidfds: the runner polls for the exit instead.
pub(crate) fn exit_fd(_pid: Pid) -> Option<OwnedFd> {
    None
}

/// No child subreaper on macOS.
pub(crate) fn become_subreaper() -> bool {
    false
}

/// No parent-death signal on macOS: the child does not die with the grader (see [`GAPS`]).
pub(crate) fn die_with_parent(_parent: Pid) -> io::Result<()> {
    Ok(())
}

/// Not available here (macOS protects a process's memory from other processes by default).
pub(crate) fn make_undumpable() -> bool {
    false
}

/// A pipe whose two ends are close-on-exec (and non-blocking, if asked): `pipe` then `fcntl`,
/// since macOS has no `pipe2`.
pub(crate) fn pipe(nonblocking: bool) -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    use rustix::io::{FdFlags, fcntl_setfd};
    let (read, write) = rustix::pipe::pipe()?;
    for fd in [&read, &write] {
        fcntl_setfd(fd, FdFlags::CLOEXEC)?;
        if nonblocking {
            fcntl_setfl(fd, fcntl_getfl(fd)? | OFlags::NONBLOCK)?;
        }
    }
    Ok((read, write))
}

/// Names of the signals only this platform has.
pub(crate) fn platform_signal_name(_signal: i32) -> Option<&'static str> {
    None
}
