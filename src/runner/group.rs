//! The registry of live process groups, killing groups, and the grader's interrupt handler.
//!
//! An interrupt (`SIGINT`/`SIGTERM`) closes the registry: every live group is killed and no
//! program starts afterwards (a spawn fails with [`io::ErrorKind::Interrupted`]), so the caller
//! can finish on its own terms (write its reports) and exit. A second interrupt exits at once.

use std::collections::BTreeSet;
use std::io;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::Duration;

use rustix::process::{Pid, Signal};

/// Held for reading while a program is spawned and registered, for writing while every live
/// group is killed: a Ctrl-C can never fall between a spawn and its registration.
static SPAWN_GATE: RwLock<()> = RwLock::new(());
/// Process-group ids of runs whose groups may still have members.
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Main processes of runs that have been spawned and not yet reaped (their pids are their
/// group ids, but they stay here after the group is unregistered, until they are reaped).
static IN_FLIGHT: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Set (under the spawn gate held for writing) by the first interrupt: nothing starts after it.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Milliseconds between the first interrupt's `SIGTERM` and its `SIGKILL` (0: `SIGKILL` at
/// once, the default). See [`set_interrupt_grace`].
static INTERRUPT_GRACE_MS: AtomicU64 = AtomicU64::new(0);

/// Spawns `command` (which must put the child in a new process group of its own) and
/// registers the group. Returns the child and its process-group id.
pub(super) fn spawn_registered(command: &mut Command) -> io::Result<(Child, Pid)> {
    let _gate = SPAWN_GATE.read().unwrap_or_else(PoisonError::into_inner);
    if CLOSED.load(Ordering::SeqCst) {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "the grader was interrupted",
        ));
    }
    let mut child = command.spawn()?;
    // `spawn` returns after exec succeeded, so the child already leads its own group.
    let Some(pgid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        // Not reachable on Linux (pids fit in i32 and are never 0); do not leak the child.
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("child has an invalid process id"));
    };
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(pgid.as_raw_nonzero().get());
    IN_FLIGHT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(pgid.as_raw_nonzero().get());
    Ok((child, pgid))
}

/// The main process `pid` of a run has been reaped.
pub(super) fn landed(pid: Pid) {
    IN_FLIGHT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pid.as_raw_nonzero().get());
}

/// Runs `f` with no program being spawned meanwhile, giving it the process-group ids of the
/// live runs and the pids of the main processes not yet reaped: what a sweep must not touch.
pub(super) fn with_spawns_paused<R>(f: impl FnOnce(&BTreeSet<i32>, &BTreeSet<i32>) -> R) -> R {
    let _gate = SPAWN_GATE.write().unwrap_or_else(PoisonError::into_inner);
    let live = LIVE_GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let in_flight = IN_FLIGHT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    f(&live, &in_flight)
}

/// Removes a group from the registry. Call it right after the group was killed with
/// `SIGKILL` and before its leader is reaped (after which the id may be reused).
pub(super) fn unregister(pgid: Pid) {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pgid.as_raw_nonzero().get());
}

/// Sends `signal` to every process of the group; a group with no process left is not an
/// error.
pub(super) fn signal_group(pgid: Pid, signal: Signal) {
    let _ = rustix::process::kill_process_group(pgid, signal);
}

/// The process-group ids of the runs in progress (their programs have been spawned and their
/// groups not yet killed), in ascending order.
pub fn live_groups() -> Vec<i32> {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .copied()
        .collect()
}

/// Kills (with `SIGKILL`) every process group of the runs in progress, and returns how many
/// groups were signalled. The runs in progress then end with
/// [`Termination::Signaled`](super::Termination::Signaled) `SIGKILL`.
///
/// This is what the interrupt handler installed by [`prepare_grader_process`] does before
/// exiting; it is public so that a caller can abort every run on its own terms.
pub fn kill_live_groups() -> usize {
    let _gate = SPAWN_GATE.write().unwrap_or_else(PoisonError::into_inner);
    kill_all_registered()
}

/// Caller holds `SPAWN_GATE` for writing.
fn kill_all_registered() -> usize {
    let groups = LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    for &pgid in groups.iter() {
        if let Some(pgid) = Pid::from_raw(pgid) {
            signal_group(pgid, Signal::KILL);
        }
    }
    groups.len()
}

/// The first interrupt: closes the registry (no program starts after it) and kills every live
/// group, both under the spawn gate, so no spawn can fall between them.
fn interrupted() {
    let grace = INTERRUPT_GRACE_MS.load(Ordering::SeqCst);
    let _gate = SPAWN_GATE.write().unwrap_or_else(PoisonError::into_inner);
    CLOSED.store(true, Ordering::SeqCst);
    if grace == 0 {
        kill_all_registered();
        return;
    }
    // Programs that clean up after themselves (a child grader kills its own cases' groups
    // and writes its reports) get SIGTERM first; what is still registered after the grace
    // gets SIGKILL. The wait is on a thread of its own, so a second interrupt still exits at
    // once.
    let groups = LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    for pgid in groups.iter().copied().filter_map(Pid::from_raw) {
        signal_group(pgid, Signal::TERM);
    }
    let _ = std::thread::Builder::new()
        .name("isr-grader-interrupt-kill".into())
        .spawn(move || {
            std::thread::sleep(Duration::from_millis(grace));
            kill_live_groups();
        });
}

/// Makes the first interrupt send `SIGTERM` to every live group and `SIGKILL` only to those
/// still running `grace` later (default: `SIGKILL` at once). For programs that are graders
/// themselves (`batch` runs one `isr-grader test` per submission): `SIGTERM` lets each kill its
/// own cases. The registry is closed at once either way.
pub fn set_interrupt_grace(grace: Duration) {
    let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
    INTERRUPT_GRACE_MS.store(ms, Ordering::SeqCst);
}

/// A second interrupt: the caller is taking too long to finish; kill again and exit now.
fn interrupted_again() -> ! {
    // Not through the gate: a caller stuck holding it must not keep the grader alive.
    let groups: Vec<i32> = live_groups();
    for pgid in groups.into_iter().filter_map(Pid::from_raw) {
        signal_group(pgid, Signal::KILL);
    }
    std::process::exit(130)
}

/// Prepares the grader process for running untrusted programs. Call it once at startup,
/// before running anything; later calls do nothing and return `Ok(())`.
///
/// - Ignores `SIGPIPE`, so writing to a program that closed its stdin gives `EPIPE` instead of
///   killing the grader (the programs themselves start with the default disposition).
/// - Makes the grader a child subreaper (`PR_SET_CHILD_SUBREAPER`), so that background
///   processes orphaned by a program's exit are re-parented to the grader, which reaps them,
///   instead of to PID 1, which may not (in a container it often does not).
/// - Starts a thread that, on `SIGINT` or `SIGTERM`, kills every live process group (see
///   [`kill_live_groups`]) and refuses every later spawn ([`super::run`] then fails with a
///   [`super::SpawnError::Other`] of kind [`io::ErrorKind::Interrupted`]); the caller learns of
///   the interrupt from its own signal flag or that error, finishes, and exits. A second
///   `SIGINT`/`SIGTERM` kills the groups again and exits with code 130 at once. The programs
///   run in their own process groups, so a Ctrl-C at the terminal does not reach them by
///   itself.
///
/// Returns an error if the interrupt handler cannot be installed; the other two steps are
/// best effort.
pub fn prepare_grader_process() -> io::Result<()> {
    static PREPARED: AtomicBool = AtomicBool::new(false);
    if PREPARED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code; it is
    // sound at any time.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // The argument is a flag (any non-zero value sets it); the current pid is non-zero.
    let _ = super::os::become_subreaper();
    let result = install_interrupt_handler();
    if result.is_err() {
        // Let a later call try again.
        PREPARED.store(false, Ordering::SeqCst);
    }
    result
}

fn install_interrupt_handler() -> io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM])?;
    std::thread::Builder::new()
        .name("isr-grader-interrupt".into())
        .spawn(move || {
            let mut signals = signals.forever();
            if signals.next().is_some() {
                interrupted();
            }
            if signals.next().is_some() {
                interrupted_again();
            }
        })?;
    Ok(())
}
