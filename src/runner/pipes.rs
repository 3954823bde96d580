//! Moving bytes to and from the program's pipes, each pipe on its own thread.
//!
//! Every loop waits with `poll` on its pipe *and* on a shared cancel pipe, so that the
//! supervisor can stop all of them at once even when a process that escaped the group still
//! holds a pipe open (a blocking `read` could not be interrupted).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::io::Errno;

/// Size of one read or write.
const CHUNK: usize = 64 * 1024;
/// After cancellation, how many bytes a reader still takes from its pipe (what the killed
/// group wrote before it died) before giving up on a writer that keeps writing.
const FINAL_DRAIN: usize = 1 << 20;

/// What a reader's sink wants next.
#[derive(PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    Stop,
}

enum Ready {
    /// The pipe is ready (or at end of file / broken): try the I/O again.
    Pipe,
    /// The supervisor cancelled, or waiting failed.
    Cancelled,
}

fn set_nonblocking(fd: &OwnedFd) -> rustix::io::Result<()> {
    let flags = fcntl_getfl(fd)?;
    fcntl_setfl(fd, flags | OFlags::NONBLOCK)
}

/// Waits until `fd` is ready for `events` or `cancel` becomes readable (the supervisor closed
/// its write end).
fn wait_ready(fd: BorrowedFd<'_>, events: libc::c_short, cancel: BorrowedFd<'_>) -> Ready {
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: cancel.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: `fds` is a valid array of two pollfd structures for the duration of the
        // call, and both descriptors are borrowed, hence open.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Ready::Cancelled;
        }
        if fds[1].revents != 0 {
            return Ready::Cancelled;
        }
        if fds[0].revents != 0 {
            return Ready::Pipe;
        }
    }
}

/// Writes `data` to the program's stdin, then closes it. Returns whether everything was
/// written; a program that closed its stdin (`EPIPE`) or a cancellation ends the writing
/// early.
pub(super) fn write_all(pipe: OwnedFd, data: &[u8], cancel: BorrowedFd<'_>) -> bool {
    if data.is_empty() {
        return true;
    }
    if set_nonblocking(&pipe).is_err() {
        return false;
    }
    let mut written = 0;
    while written < data.len() {
        let end = data.len().min(written + CHUNK);
        match rustix::io::write(&pipe, &data[written..end]) {
            Ok(n) => written += n,
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => match wait_ready(pipe.as_fd(), libc::POLLOUT, cancel) {
                Ready::Pipe => {}
                Ready::Cancelled => return false,
            },
            // EPIPE: the program closed its stdin or exited. Anything else: give up too.
            Err(_) => return false,
        }
    }
    true
}

/// Reads the pipe until end of file, the sink says stop, or a cancellation (after which what
/// is already in the pipe is still read, up to a bound).
pub(super) fn read_all(pipe: OwnedFd, cancel: BorrowedFd<'_>, mut sink: impl FnMut(&[u8]) -> Flow) {
    if set_nonblocking(&pipe).is_err() {
        return;
    }
    let mut buf = vec![0u8; CHUNK];
    let mut budget: Option<usize> = None;
    loop {
        match rustix::io::read(&pipe, &mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if sink(&buf[..n]) == Flow::Stop {
                    return;
                }
                if let Some(left) = budget.as_mut() {
                    *left = left.saturating_sub(n);
                    if *left == 0 {
                        return;
                    }
                }
            }
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                if budget.is_some() {
                    // Cancelled and the pipe is empty.
                    return;
                }
                match wait_ready(pipe.as_fd(), libc::POLLIN, cancel) {
                    Ready::Pipe => {}
                    Ready::Cancelled => budget = Some(FINAL_DRAIN),
                }
            }
            Err(_) => return,
        }
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
