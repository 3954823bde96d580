//! Moving bytes to and from the program's pipes, and watching its main process, in one
//! `poll` loop on the supervising thread.
//!
//! One loop instead of a thread per pipe: a run costs no thread creation, and the timeout,
//! the output cap and the exit of the main process are all seen in the same place.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::io::Errno;

/// Size of one read or write.
const CHUNK: usize = 64 * 1024;
/// After the group was killed, how many bytes a pipe still gives (what the group wrote before
/// it died) before it is abandoned to a writer that escaped the group and keeps writing.
const FINAL_DRAIN: usize = 1 << 20;

fn set_nonblocking(fd: &OwnedFd) -> rustix::io::Result<()> {
    let flags = fcntl_getfl(fd)?;
    fcntl_setfl(fd, flags | OFlags::NONBLOCK)
}

/// What the loop is told about the main process.
pub(super) trait Leader {
    /// A descriptor that becomes readable when the main process exits, if there is one;
    /// otherwise [`Leader::exited`] is polled every few milliseconds.
    fn fd(&self) -> Option<BorrowedFd<'_>>;
    /// Whether the main process has exited (without reaping it).
    fn exited(&self) -> bool;
}

/// What the loop asks of the supervisor.
pub(super) trait Control {
    /// The wall-clock limit passed: send SIGTERM to the group.
    fn timeout(&mut self);
    /// The grace period after SIGTERM passed: send SIGKILL.
    fn kill(&mut self);
    /// Stdout went past its cap: stop the group.
    fn output_limit(&mut self);
    /// The main process exited: kill what is left of the group.
    fn exited(&mut self);
}

/// What the loop gathered.
pub(super) struct Gathered {
    /// Whether all of stdin went into the pipe.
    pub(super) stdin_complete: bool,
    /// The head of stdout.
    pub(super) stdout: CappedBuffer,
    /// The tail of stderr.
    pub(super) stderr: TailBuffer,
    /// From the start to the main process's exit.
    pub(super) elapsed: Duration,
}

/// A readable pipe and how much it may still give once the group is dead.
struct Reader {
    fd: Option<OwnedFd>,
    budget: Option<usize>,
}

impl Reader {
    fn new(fd: Option<OwnedFd>) -> Self {
        Reader {
            fd: fd.filter(|f| set_nonblocking(f).is_ok()),
            budget: None,
        }
    }

    /// Reads what is there; closes the pipe at end of file, on error, or when `sink` says
    /// stop or the final budget is spent.
    fn read(&mut self, buf: &mut [u8], mut sink: impl FnMut(&[u8]) -> bool) {
        let Some(fd) = self.fd.as_ref() else { return };
        loop {
            match rustix::io::read(fd, &mut *buf) {
                Ok(0) => break,
                Ok(n) => {
                    if !sink(&buf[..n]) {
                        break;
                    }
                    if let Some(left) = self.budget.as_mut() {
                        *left = left.saturating_sub(n);
                        if *left == 0 {
                            break;
                        }
                    }
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    if self.budget.is_none() {
                        return;
                    }
                    // The group is dead and the pipe is empty.
                    break;
                }
                Err(_) => break,
            }
        }
        self.fd = None;
    }
}

/// Runs the program's I/O until its main process exits: writes `stdin`, reads stdout (up to
/// `cap`) and stderr (keeping `tail`), and enforces `timeout`, then `grace` after SIGTERM.
#[allow(clippy::too_many_arguments)]
pub(super) fn drive(
    stdin_fd: Option<OwnedFd>,
    stdout_fd: Option<OwnedFd>,
    stderr_fd: Option<OwnedFd>,
    stdin: &[u8],
    leader: &impl Leader,
    control: &mut impl Control,
    start: Instant,
    (timeout, grace): (Duration, Duration),
    (cap, tail): (usize, usize),
) -> Gathered {
    let mut writer = stdin_fd.filter(|f| set_nonblocking(f).is_ok());
    let mut written = 0usize;
    let mut stdin_complete = stdin.is_empty();
    if stdin.is_empty() {
        writer = None;
    }
    let mut out = Reader::new(stdout_fd);
    let mut err = Reader::new(stderr_fd);
    let mut stdout = CappedBuffer::new(cap);
    let mut stderr = TailBuffer::new(tail);
    let mut buf = vec![0u8; CHUNK];

    let mut deadline = start.checked_add(timeout);
    let mut terminated = false;
    let mut over_cap = false;

    let elapsed = loop {
        if leader.exited() {
            let elapsed = start.elapsed();
            // Kill what is left of the group, then take what is already in the pipes: the
            // main process wrote everything before it exited, and the killed members write
            // nothing more. A process that escaped the group and still holds a pipe is not
            // waited for.
            control.exited();
            out.budget = Some(FINAL_DRAIN);
            err.budget = Some(FINAL_DRAIN);
            out.read(&mut buf, |c| stdout.push(c));
            err.read(&mut buf, |c| {
                stderr.push(c);
                true
            });
            break elapsed;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            if !terminated {
                terminated = true;
                control.timeout();
                deadline = Instant::now().checked_add(grace);
            } else {
                control.kill();
                deadline = None;
            }
        }

        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(4);
        let mut slots = [usize::MAX; 4];
        let mut add = |slot: usize,
                       fd: BorrowedFd<'_>,
                       events: libc::c_short,
                       fds: &mut Vec<libc::pollfd>| {
            slots[slot] = fds.len();
            fds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
                events,
                revents: 0,
            });
        };
        if let Some(w) = writer.as_ref() {
            add(0, w.as_fd(), libc::POLLOUT, &mut fds);
        }
        if let Some(r) = out.fd.as_ref() {
            add(1, r.as_fd(), libc::POLLIN, &mut fds);
        }
        if let Some(r) = err.fd.as_ref() {
            add(2, r.as_fd(), libc::POLLIN, &mut fds);
        }
        let leader_fd = leader.fd();
        if let Some(fd) = leader_fd {
            add(3, fd, libc::POLLIN, &mut fds);
        }
        let mut wait = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if leader_fd.is_none() {
            // No descriptor for the exit: look again soon.
            wait = Some(wait.map_or(Duration::from_millis(2), |w| {
                w.min(Duration::from_millis(2))
            }));
        }
        let timeout_ms = wait.map_or(-1, |w| {
            w.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32
        });
        // SAFETY: `fds` is a valid array of pollfd structures for the duration of the call,
        // and every descriptor in it is borrowed from an open OwnedFd.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // Should not happen; do not spin on it.
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        let ready = |slot: usize| slots[slot] != usize::MAX && fds[slots[slot]].revents != 0;
        if ready(0)
            && let Some(w) = writer.as_ref()
        {
            loop {
                let end = stdin.len().min(written + CHUNK);
                match rustix::io::write(w, &stdin[written..end]) {
                    Ok(k) => {
                        written += k;
                        if written == stdin.len() {
                            stdin_complete = true;
                            writer = None;
                            break;
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(Errno::AGAIN) => break,
                    // EPIPE: the program closed its stdin or exited. Anything else: give up.
                    Err(_) => {
                        writer = None;
                        break;
                    }
                }
            }
        }
        if ready(1) {
            out.read(&mut buf, |c| {
                let fits = stdout.push(c);
                if !fits && !over_cap {
                    over_cap = true;
                    control.output_limit();
                }
                fits
            });
        }
        if ready(2) {
            err.read(&mut buf, |c| {
                stderr.push(c);
                true
            });
        }
    };
    Gathered {
        stdin_complete,
        stdout,
        stderr,
        elapsed,
    }
}

/// Keeps the first `cap` bytes of stdout; reports when more arrive.
pub(super) struct CappedBuffer {
    pub(super) data: Vec<u8>,
    cap: usize,
}

impl CappedBuffer {
    pub(super) fn new(cap: usize) -> Self {
        CappedBuffer {
            data: Vec::new(),
            cap,
        }
    }

    /// Appends `chunk`; returns `false` (keeping only what fits) if it goes past the cap.
    pub(super) fn push(&mut self, chunk: &[u8]) -> bool {
        let room = self.cap - self.data.len();
        if chunk.len() > room {
            self.data.extend_from_slice(&chunk[..room]);
            false
        } else {
            self.data.extend_from_slice(chunk);
            true
        }
    }
}

/// Keeps the last `keep` bytes of stderr and counts all of them.
pub(super) struct TailBuffer {
    buf: Vec<u8>,
    keep: usize,
    pub(super) total: u64,
}

impl TailBuffer {
    pub(super) fn new(keep: usize) -> Self {
        TailBuffer {
            buf: Vec::new(),
            keep,
            total: 0,
        }
    }

    pub(super) fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.keep == 0 {
            return;
        }
        self.buf.extend_from_slice(chunk);
        // Trim only once the buffer is well past `keep`, so trimming costs O(1) per byte.
        if self.buf.len() >= 2 * self.keep + CHUNK {
            let excess = self.buf.len() - self.keep;
            self.buf.drain(..excess);
        }
    }

    pub(super) fn into_tail(mut self) -> Vec<u8> {
        let excess = self.buf.len().saturating_sub(self.keep);
        self.buf.drain(..excess);
        self.buf
    }
}
