//! One run from spawn to reaping: the I/O loop (with the timeout and the output cap), the
//! group kill, the reaping.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, WaitOptions};

use super::pipes;
#[cfg(test)]
use super::pipes::{CappedBuffer, TailBuffer};
use super::{Limits, RunOutcome, SpawnError, Termination, group, spawn};

/// How long to keep reaping killed group members re-parented to the grader.
const REAP_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the runner killed the program; the first reason recorded wins.
struct KillReason(AtomicU8);

impl KillReason {
    const NONE: u8 = 0;
    const TIMEOUT: u8 = 1;
    const OUTPUT: u8 = 2;

    fn set_first(&self, reason: u8) {
        let _ = self
            .0
            .compare_exchange(Self::NONE, reason, Ordering::SeqCst, Ordering::SeqCst);
    }

    fn get(&self) -> u8 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Waits for the main process to exit without reaping it (so that its pid, which is also the
/// group id, cannot be reused while the group is being killed).
enum LeaderWatch {
    PidFd(OwnedFd),
    /// Kernels without pidfds (before 5.3): poll `waitid(WNOWAIT)`.
    Polling(Pid),
}

impl LeaderWatch {
    fn new(pid: Pid) -> Self {
        match super::os::exit_fd(pid) {
            Some(fd) => LeaderWatch::PidFd(fd),
            None => LeaderWatch::Polling(pid),
        }
    }

    /// Returns `true` once the process has exited, `false` if `deadline` passed first.
    /// `None` waits without limit.
    fn wait(&self, deadline: Option<Instant>) -> bool {
        loop {
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            match self {
                LeaderWatch::PidFd(fd) => {
                    let timeout = remaining.map_or(-1, |r| {
                        r.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32
                    });
                    let mut pfd = [libc::pollfd {
                        fd: fd.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    }];
                    // SAFETY: one valid pollfd for the duration of the call; `fd` is open.
                    let n = unsafe { libc::poll(pfd.as_mut_ptr(), 1, timeout) };
                    if n > 0 {
                        return true;
                    }
                    if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                        // Should not happen; do not spin on it.
                        thread::sleep(Duration::from_millis(2));
                    }
                }
                LeaderWatch::Polling(pid) => {
                    let options =
                        WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
                    match rustix::process::waitid(WaitId::Pid(*pid), options) {
                        Ok(Some(_)) => return true,
                        Ok(None) | Err(Errno::INTR) => {}
                        // ECHILD: not our child any more (reaped elsewhere); nothing to wait for.
                        Err(_) => return true,
                    }
                    let pause = Duration::from_millis(2);
                    thread::sleep(remaining.map_or(pause, |r| r.min(pause)));
                }
            }
            if remaining.is_some_and(|r| r.is_zero()) {
                return false;
            }
        }
    }
}

/// Reaps the members of the (killed) group that were re-parented to the grader because it is
/// a child subreaper. Call it only after the main process has been reaped.
fn reap_orphans(pgid: Pid) {
    let deadline = Instant::now() + REAP_TIMEOUT;
    loop {
        match rustix::process::waitpgid(pgid, WaitOptions::NOHANG) {
            Ok(Some(_)) | Err(Errno::INTR) => {}
            // Members that are still dying (they have all been sent SIGKILL).
            Ok(None) => {
                if Instant::now() >= deadline {
                    return;
                }
                thread::sleep(Duration::from_millis(1));
            }
            // ECHILD: no child of ours is left in the group.
            Err(_) => return,
        }
    }
}

impl pipes::Leader for LeaderWatch {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            LeaderWatch::PidFd(fd) => Some(fd.as_fd()),
            LeaderWatch::Polling(_) => None,
        }
    }

    fn exited(&self) -> bool {
        self.wait(Some(Instant::now()))
    }
}

/// The supervisor's answers to what the I/O loop sees.
struct GroupControl<'a> {
    pgid: Pid,
    reason: &'a KillReason,
}

impl pipes::Control for GroupControl<'_> {
    fn timeout(&mut self) {
        self.reason.set_first(KillReason::TIMEOUT);
        group::signal_group(self.pgid, Signal::TERM);
    }

    fn kill(&mut self) {
        group::signal_group(self.pgid, Signal::KILL);
        // Also the main process itself, in case it moved to another group.
        let _ = rustix::process::kill_process(self.pgid, Signal::KILL);
    }

    fn output_limit(&mut self) {
        self.reason.set_first(KillReason::OUTPUT);
        group::signal_group(self.pgid, Signal::KILL);
    }

    fn exited(&mut self) {
        // The main process has exited but is not reaped: the group id cannot be reused yet.
        // Kill what is left of the group, so that background children neither outlive the run
        // nor keep the pipes open.
        group::signal_group(self.pgid, Signal::KILL);
        group::unregister(self.pgid);
    }
}

/// Spawns `command` and sees the run through. See the module documentation of `runner`.
pub(super) fn supervise(
    command: &mut Command,
    exe: &Path,
    stdin: &[u8],
    limits: &Limits,
) -> Result<RunOutcome, SpawnError> {
    let start = Instant::now();
    let (mut child, pgid) =
        group::spawn_registered(command).map_err(|err| spawn::classify(err, exe))?;
    let watch = LeaderWatch::new(pgid);
    let reason = KillReason(AtomicU8::new(KillReason::NONE));
    let gathered = pipes::drive(
        child.stdin.take().map(OwnedFd::from),
        child.stdout.take().map(OwnedFd::from),
        child.stderr.take().map(OwnedFd::from),
        stdin,
        &watch,
        &mut GroupControl {
            pgid,
            reason: &reason,
        },
        start,
        (limits.timeout, limits.grace),
        (limits.output_cap, limits.stderr_tail),
    );
    let status = child.wait();
    group::landed(pgid);
    reap_orphans(pgid);
    let status = status.map_err(|err| {
        SpawnError::Other(io::Error::new(
            err.kind(),
            format!("cannot wait for {}: {err}", exe.display()),
        ))
    })?;
    let termination = match reason.get() {
        KillReason::TIMEOUT => Termination::TimedOut,
        KillReason::OUTPUT => Termination::OutputLimit,
        _ => Termination::from_status(status),
    };
    Ok(RunOutcome {
        termination,
        stdout: gathered.stdout.data,
        stderr_bytes: gathered.stderr.total,
        stderr_tail: gathered.stderr.into_tail(),
        stdin_complete: gathered.stdin_complete,
        elapsed: gathered.elapsed,
        time_limit: limits.timeout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watches(pid: Pid) -> [LeaderWatch; 2] {
        let pidfd = LeaderWatch::new(pid);
        assert!(
            matches!(pidfd, LeaderWatch::PidFd(_)),
            "kernel without pidfd?"
        );
        [pidfd, LeaderWatch::Polling(pid)]
    }

    #[test]
    fn watching_the_leader_does_not_reap_it() {
        let mut child = Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        for watch in watches(pid) {
            assert!(watch.wait(None));
        }
        // std still gets the exit status.
        assert_eq!(child.wait().unwrap().code(), Some(7));
    }

    #[test]
    fn watching_a_running_leader_times_out() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        for watch in watches(pid) {
            let deadline = Instant::now() + Duration::from_millis(50);
            assert!(!watch.wait(Some(deadline)));
            assert!(Instant::now() >= deadline);
        }
        child.kill().unwrap();
        for watch in watches(pid) {
            assert!(watch.wait(Some(Instant::now() + Duration::from_secs(5))));
        }
        assert!(child.wait().unwrap().code().is_none());
    }

    #[test]
    fn buffers_keep_the_head_of_stdout_and_the_tail_of_stderr() {
        let mut out = CappedBuffer::new(5);
        assert!(out.push(b"abc"));
        assert!(out.push(b"de"));
        assert!(!out.push(b"f"));
        assert_eq!(out.data, b"abcde");

        let mut err = TailBuffer::new(4);
        for _ in 0..100_000 {
            err.push(b"xy");
        }
        err.push(b"END");
        assert_eq!(err.total, 200_003);
        assert_eq!(err.into_tail(), b"yEND");
    }
}
