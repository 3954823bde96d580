//! One run from spawn to reaping: the timeout, the group kill, the pipe threads, the reaping.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, WaitOptions};

use super::pipes::{self, CappedBuffer, Flow, TailBuffer};
use super::{Limits, RunOutcome, SpawnError, Termination, group, spawn};

/// Stack size of the pipe threads: their buffers are on the heap.
const PIPE_THREAD_STACK: usize = 256 * 1024;
/// How long to keep reaping killed group members re-parented to the grader.
const REAP_TIMEOUT: Duration = Duration::from_secs(2);
/// Least time given to the pipes to reach end of file once the group has been killed.
const MIN_DRAIN: Duration = Duration::from_millis(250);

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
        match rustix::process::pidfd_open(pid, PidfdFlags::empty()) {
            Ok(fd) => LeaderWatch::PidFd(fd),
            Err(_) => LeaderWatch::Polling(pid),
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

/// Starts a pipe thread. If the system refuses, records the error and kills the group so
/// that the run ends at once (the closure, and the pipe it owns, are dropped).
fn pipe_thread<'scope, T, F>(
    scope: &'scope Scope<'scope, '_>,
    name: &str,
    pgid: Pid,
    error: &mut Option<io::Error>,
    body: F,
) -> Option<ScopedJoinHandle<'scope, T>>
where
    T: Send + 'scope,
    F: FnOnce() -> T + Send + 'scope,
{
    match thread::Builder::new()
        .name(name.into())
        .stack_size(PIPE_THREAD_STACK)
        .spawn_scoped(scope, body)
    {
        Ok(handle) => Some(handle),
        Err(err) => {
            error.get_or_insert(err);
            group::signal_group(pgid, Signal::KILL);
            None
        }
    }
}

/// Waits for the main process to exit, enforcing the timeout (TERM, grace, KILL). Returns
/// the time from `start` to its exit.
fn wait_for_exit(
    watch: &LeaderWatch,
    pgid: Pid,
    start: Instant,
    limits: &Limits,
    reason: &KillReason,
) -> Duration {
    if !watch.wait(start.checked_add(limits.timeout)) {
        reason.set_first(KillReason::TIMEOUT);
        group::signal_group(pgid, Signal::TERM);
        if !watch.wait(Instant::now().checked_add(limits.grace)) {
            group::signal_group(pgid, Signal::KILL);
            // Also the main process itself, in case it moved to another group.
            let _ = rustix::process::kill_process(pgid, Signal::KILL);
            watch.wait(None);
        }
    }
    start.elapsed()
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

/// Spawns `command` and sees the run through. See the module documentation of `runner`.
pub(super) fn supervise(
    command: &mut Command,
    exe: &Path,
    stdin: &[u8],
    limits: &Limits,
) -> Result<RunOutcome, SpawnError> {
    // Closing the write end wakes every pipe thread that is still waiting.
    let (cancel_rx, cancel_tx) = pipe_with(PipeFlags::CLOEXEC).map_err(io::Error::from)?;
    let start = Instant::now();
    let (mut child, pgid) =
        group::spawn_registered(command).map_err(|err| spawn::classify(err, exe))?;
    let watch = LeaderWatch::new(pgid);
    let stdin_pipe = child.stdin.take().map(OwnedFd::from);
    let stdout_pipe = child.stdout.take().map(OwnedFd::from);
    let stderr_pipe = child.stderr.take().map(OwnedFd::from);
    let reason = KillReason(AtomicU8::new(KillReason::NONE));
    let mut thread_error = None;

    let (stdin_complete, stdout, stderr, elapsed) = thread::scope(|scope| {
        // Never sent on: the receiver sees `Disconnected` once every pipe thread has ended.
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let cancel = cancel_rx.as_fd();
        let reason = &reason;

        let writer = stdin_pipe.and_then(|pipe| {
            let done = done_tx.clone();
            pipe_thread(scope, "isr-run-stdin", pgid, &mut thread_error, move || {
                let _done = done;
                pipes::write_all(pipe, stdin, cancel)
            })
        });
        let out_reader = stdout_pipe.and_then(|pipe| {
            let done = done_tx.clone();
            pipe_thread(
                scope,
                "isr-run-stdout",
                pgid,
                &mut thread_error,
                move || {
                    let _done = done;
                    let mut out = CappedBuffer::new(limits.output_cap);
                    pipes::read_all(pipe, cancel, |chunk| {
                        if out.push(chunk) {
                            Flow::Continue
                        } else {
                            reason.set_first(KillReason::OUTPUT);
                            group::signal_group(pgid, Signal::KILL);
                            Flow::Stop
                        }
                    });
                    out.data
                },
            )
        });
        let err_reader = stderr_pipe.and_then(|pipe| {
            let done = done_tx.clone();
            pipe_thread(
                scope,
                "isr-run-stderr",
                pgid,
                &mut thread_error,
                move || {
                    let _done = done;
                    let mut err = TailBuffer::new(limits.stderr_tail);
                    pipes::read_all(pipe, cancel, |chunk| {
                        err.push(chunk);
                        Flow::Continue
                    });
                    err
                },
            )
        });
        drop(done_tx);

        let elapsed = wait_for_exit(&watch, pgid, start, limits, reason);
        // The main process has exited but is not reaped: the group id cannot be reused yet.
        // Kill what is left of the group, so that background children neither outlive the
        // run nor keep the pipes open.
        group::signal_group(pgid, Signal::KILL);
        group::unregister(pgid);

        // Let the pipe threads read to end of file, but not forever: a process that left the
        // group may still hold a pipe.
        let drain_until = Instant::now() + limits.grace.max(MIN_DRAIN);
        loop {
            let left = drain_until.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(left) {
                Ok(()) => {}
                Err(RecvTimeoutError::Disconnected | RecvTimeoutError::Timeout) => break,
            }
        }
        drop(cancel_tx);

        let stdin_complete = writer.is_some_and(|h| h.join().unwrap_or(false));
        let stdout = out_reader.map_or_else(Vec::new, |h| h.join().unwrap_or_default());
        let stderr = err_reader.map_or_else(
            || TailBuffer::new(0),
            |h| h.join().unwrap_or_else(|_| TailBuffer::new(0)),
        );
        (stdin_complete || stdin.is_empty(), stdout, stderr, elapsed)
    });

    let status = child.wait();
    reap_orphans(pgid);
    if let Some(err) = thread_error {
        return Err(SpawnError::Other(err));
    }
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
        stdout,
        stderr_bytes: stderr.total,
        stderr_tail: stderr.into_tail(),
        stdin_complete,
        elapsed,
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
