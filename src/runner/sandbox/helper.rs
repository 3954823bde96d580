//! The sandbox helper: the process the runner starts in place of the program (the hidden
//! `isr-grader __sandbox` subcommand), which builds the sandbox and then runs the program.
//!
//! Three processes, so that nothing the program does can outlive or escape the run:
//!
//! ```text
//! H  helper, in the grader's namespaces and process group: the runner's "main process"
//! └─ C  init (pid 1) of new user, pid, net, mount, ipc and uts namespaces: mounts, then waits
//!    └─ P  the program: rlimits, Landlock, no capabilities, another uid, then exec
//! ```
//!
//! H writes C's uid and gid maps (it is in the parent user namespace, so as root it may map
//! the unprivileged uid the program runs as), waits for C, and exits the way the program did
//! (same exit code, or the same signal). C dies with H (`PR_SET_PDEATHSIG`), and when C (the
//! namespace's init) dies the kernel kills every process left in the namespace: a daemon, a
//! `setsid`, a fork storm cannot survive the case.
//!
//! Errors go to the status descriptor (its number is an argument) as one line each,
//! `error: ...`; the runner reads it once H has exited. In probe mode the helper tries every
//! layer, reports each as `layer: ...` or `missing: ...`, and runs nothing.
//!
//! The helper runs single-threaded and forks with a raw `clone`, so allocating in the children
//! is sound.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::HelperPlan;

impl HelperPlan {
    /// The uid and gid the program runs as, as seen inside its namespace.
    fn program_ids(&self) -> (u32, u32) {
        // SAFETY: getuid and getgid cannot fail.
        let own = unsafe { (libc::getuid(), libc::getgid()) };
        if own.0 == 0 {
            self.run_as.unwrap_or((0, 0))
        } else {
            own
        }
    }
}

/// Exit code of the helper when the sandbox could not be set up (the message is on fd 3).
const SETUP_FAILED: i32 = 125;

/// Reports to the runner through the status descriptor.
struct Reporter {
    probe: bool,
    fd: i32,
}

impl Reporter {
    fn line(&self, kind: &str, text: &str) {
        let line = format!("{kind}: {}\n", text.replace('\n', " "));
        // SAFETY: writing a byte buffer to a descriptor we own (or a closed one: EBADF).
        unsafe {
            libc::write(self.fd, line.as_ptr().cast(), line.len());
        }
    }

    /// A layer in force (`key` names it for the runner, `text` for people).
    fn layer(&self, key: &str, text: &str) {
        if self.probe {
            self.line("layer", &format!("{key}|{text}"));
        }
    }

    /// A layer could not be set up: in probe mode, say so and go on; otherwise fail the run.
    fn missing(&self, key: &str, text: &str) {
        if self.probe {
            self.line("missing", &format!("{key}|{text}"));
        } else {
            self.fail(text);
        }
    }

    fn fail(&self, text: &str) -> ! {
        self.line("error", text);
        exit_now(SETUP_FAILED)
    }
}

/// Closes a raw descriptor this process owns (errors are of no use here).
fn close(fd: i32) {
    // SAFETY: the caller owns `fd` and does not use it afterwards.
    unsafe { libc::close(fd) };
}

/// Ends this process at once: no destructors, no atexit handlers (it may be a forked copy).
fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` is always sound to call.
    unsafe { libc::_exit(code) }
}

/// Writes `bytes` to a raw descriptor, ignoring errors (the reader may be gone).
fn write_raw(fd: i32, bytes: &[u8]) {
    // SAFETY: a valid buffer of `bytes.len()` bytes.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// Entry point of `isr-grader __sandbox`: never returns.
pub fn main(plan_fd: i32, status_fd: i32, probe: bool) -> ! {
    let reporter = Reporter {
        probe,
        fd: status_fd,
    };
    // The status descriptor must not reach the program.
    // SAFETY: fcntl on a descriptor number; failure (not open) is harmless.
    unsafe {
        libc::fcntl(status_fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    let mut json = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reading into our buffer from the plan pipe.
        let n = unsafe { libc::read(plan_fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        json.extend_from_slice(&buf[..n as usize]);
        if json.last() == Some(&b'}') && serde_json::from_slice::<HelperPlan>(&json).is_ok() {
            break;
        }
    }
    // The plan pipe is ours to close; nothing after this reads it.
    close(plan_fd);
    let plan: HelperPlan = match serde_json::from_slice(&json) {
        Ok(p) => p,
        Err(e) => reporter.fail(&format!("bad sandbox plan: {e}")),
    };
    if !plan.namespaces {
        // No namespaces: this process becomes the program.
        program(&plan, &reporter, false);
    }
    run_in_namespaces(&plan, &reporter)
}

/// H: clone C into new namespaces, map its ids, wait for it, exit as the program did.
fn run_in_namespaces(plan: &HelperPlan, reporter: &Reporter) -> ! {
    let mut go = [0i32; 2];
    let mut result = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors of each array.
    if unsafe {
        libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) != 0
            || libc::pipe2(result.as_mut_ptr(), libc::O_CLOEXEC) != 0
    } {
        reporter.fail(&format!("pipe: {}", errno()));
    }
    let real_uid = rustix::process::getuid().as_raw();
    let real_gid = rustix::process::getgid().as_raw();
    let mut flags = libc::CLONE_NEWPID
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::SIGCHLD;
    if !plan.network {
        flags |= libc::CLONE_NEWNET;
    }
    if plan.user_namespace {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: a raw clone without CLONE_VM behaves like fork; this process is single-threaded.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        reporter.fail(&format!("cannot create namespaces: {}", errno()));
    }
    if pid == 0 {
        // C.
        close(go[1]);
        close(result[0]);
        init(plan, reporter, go[0], result[1]);
    }
    let child = pid as libc::pid_t;
    close(go[0]);
    close(result[1]);
    if plan.user_namespace {
        let uid_map;
        let gid_map;
        if real_uid == 0 {
            let (u, g) = plan.run_as.unwrap_or((0, 0));
            uid_map = if u == 0 {
                "0 0 1\n".to_string()
            } else {
                format!("0 0 1\n{u} {u} 1\n")
            };
            gid_map = if g == 0 {
                "0 0 1\n".to_string()
            } else {
                format!("0 0 1\n{g} {g} 1\n")
            };
        } else {
            let _ = std::fs::write(format!("/proc/{child}/setgroups"), "deny");
            uid_map = format!("{real_uid} {real_uid} 1\n");
            gid_map = format!("{real_gid} {real_gid} 1\n");
        }
        for (file, map) in [("uid_map", &uid_map), ("gid_map", &gid_map)] {
            if let Err(e) = std::fs::write(format!("/proc/{child}/{file}"), map) {
                // SAFETY: killing our own child.
                unsafe { libc::kill(child, libc::SIGKILL) };
                reporter.fail(&format!("cannot write the user namespace's {file}: {e}"));
            }
        }
    }
    // Let C go on.
    write_raw(go[1], b"g");
    close(go[1]);
    // The program gets SIGTERM from the runner through the process group; the helper waits
    // for it to end instead of dying first. (Set after the clone: C and P keep the default.)
    // SAFETY: SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    // The helper holds no pipe of the program's: ends of files, and a stdin writer that sees
    // EPIPE, behave as if the program ran alone.
    close_stdio();
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child || (r < 0 && errno().raw_os_error() != Some(libc::EINTR)) {
            break;
        }
    }
    // C sends the program's wait status; if it sent nothing, C itself failed.
    let mut buf = [0u8; 4];
    let n = read_full(result[0], &mut buf);
    if n == 4 {
        exit_like(i32::from_ne_bytes(buf));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == SETUP_FAILED {
        exit_now(SETUP_FAILED);
    }
    exit_like(status)
}

fn read_full(fd: i32, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the rest of our buffer.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || errno().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    got
}

/// Exits with the same exit code as `status`, or dies of the same signal.
fn exit_like(status: i32) -> ! {
    // SAFETY: plain system calls on values of this function; the sigset is initialized by
    // sigemptyset before use.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            let limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &limit);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

fn close_stdio() {
    // SAFETY: /dev/null over the standard descriptors; failures leave them as they were.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// C: init of the new namespaces. Mounts, then runs P and reaps everything until P ends.
fn init(plan: &HelperPlan, reporter: &Reporter, go: i32, result: i32) -> ! {
    // Die with H. If H is already gone, the read below sees the end of the pipe.
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    let mut byte = [0u8; 1];
    if read_full(go, &mut byte) != 1 {
        exit_now(SETUP_FAILED);
    }
    close(go);
    reporter.layer(
        "namespaces",
        if plan.network {
            "pid+mount namespaces (network allowed)"
        } else {
            "pid+net+mount namespaces"
        },
    );
    let proc_fresh = mounts(plan, reporter);
    // SAFETY: fork in a single-threaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        reporter.fail(&format!("fork: {}", errno()));
    }
    if pid == 0 {
        close(result);
        program(plan, reporter, proc_fresh);
    }
    close(reporter.fd);
    close_stdio();
    // Reap everything (this is the namespace's init) until the program itself ends.
    loop {
        let mut status = 0;
        // SAFETY: waiting for any child.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == pid {
            write_raw(result, &status.to_ne_bytes());
            // Everything else in the namespace dies with this process.
            exit_now(0);
        }
        if r < 0 && errno().raw_os_error() != Some(libc::EINTR) {
            exit_now(SETUP_FAILED);
        }
    }
}

fn mount(
    source: &str,
    target: &Path,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> std::io::Result<()> {
    let source = CString::new(source).unwrap_or_default();
    let fstype = CString::new(fstype).unwrap_or_default();
    let data = CString::new(data).unwrap_or_default();
    let target = cstr(target);
    // SAFETY: valid NUL-terminated strings for the duration of the call.
    let r = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

/// The mount namespace: nothing propagates out, the program gets a private, size-capped `/tmp`
/// with its folder in it, the hidden paths are covered, and it gets its own `/proc`. Returns
/// whether a fresh `/proc` is mounted.
///
/// Mounts are few on purpose: every tmpfs costs its namespace's teardown a grace period, and
/// one tmpfs per folder made the sandbox cost 2 ms more per case here. One tmpfs on `/tmp`
/// holds the program's folder (its size is the cap) and the empty folder that covers the
/// hidden paths (bind mounts).
fn mounts(plan: &HelperPlan, reporter: &Reporter) -> bool {
    if let Err(e) = mount(
        "none",
        Path::new("/"),
        "",
        libc::MS_REC | libc::MS_PRIVATE,
        "",
    ) {
        reporter.fail(&format!("cannot make the mounts private: {e}"));
    }
    let tmp = Path::new("/tmp");
    // What the program needs from under /tmp is carried over with bind mounts: opened before
    // /tmp is covered, mounted back after.
    let carried: Vec<(&PathBuf, bool, i32)> = plan
        .read_write
        .iter()
        .map(|p| (p, true))
        .chain(plan.read_only.iter().map(|p| (p, false)))
        .chain(std::iter::once((&plan.exe, false)))
        .filter(|(p, _)| p.starts_with(tmp) && *p != tmp)
        .filter_map(|(p, writable)| {
            let c = cstr(p);
            // SAFETY: a valid path; an O_PATH descriptor closed below.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            (fd >= 0).then_some((p, writable, fd))
        })
        .collect();
    let tmp_opts = format!("size={},mode=1777", plan.tmp_bytes);
    let tmp_ok = mount(
        "none",
        tmp,
        "tmpfs",
        libc::MS_NOSUID | libc::MS_NODEV,
        &tmp_opts,
    );
    if let Err(e) = &tmp_ok {
        reporter.missing("tmp", &format!("a private /tmp: {e}"));
    }
    for &(path, writable, fd) in &carried {
        let source = format!("/proc/self/fd/{fd}");
        if Path::new(&source).is_dir() {
            let _ = std::fs::create_dir_all(path);
        } else {
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::File::create(path);
        }
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | libc::MS_NODEV;
        let bound = mount(&source, path, "", libc::MS_BIND | libc::MS_REC, "").and_then(|()| {
            if writable {
                Ok(())
            } else {
                mount("none", path, "", flags | libc::MS_RDONLY, "")
            }
        });
        if let Err(e) = bound {
            reporter.missing("tmp", &format!("carrying {} over: {e}", path.display()));
        }
        close(fd);
    }
    if tmp_ok.is_ok() {
        if let Some(workdir) = &plan.private_workdir {
            let (uid, gid) = plan.program_ids();
            let made = std::fs::create_dir_all(workdir).and_then(|()| {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(workdir, std::fs::Permissions::from_mode(0o700))?;
                std::os::unix::fs::chown(workdir, Some(uid), Some(gid))
            });
            match made {
                Ok(()) => reporter.layer(
                    "tmp",
                    &format!("private /tmp of {} MiB", plan.tmp_bytes >> 20),
                ),
                Err(e) => reporter.missing("tmp", &format!("its own folder in /tmp: {e}")),
            }
        } else {
            reporter.layer(
                "tmp",
                &format!("private /tmp of {} MiB", plan.tmp_bytes >> 20),
            );
        }
    }
    // The hidden paths: an empty, closed folder (or /dev/null) bound over each. Without
    // Landlock, the shared folders a program could write outside /tmp are covered too.
    let empty = Path::new("/tmp/.isr-hidden");
    let _ = std::fs::create_dir(empty).and_then(|()| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(empty, std::fs::Permissions::from_mode(0o000))
    });
    let shared: &[&str] = if plan.landlock {
        &[]
    } else {
        &["/var/tmp", "/dev/shm"]
    };
    let mut hidden_ok = true;
    let cover = plan
        .hidden
        .iter()
        .filter(|p| !p.starts_with(tmp) || tmp_ok.is_err())
        .chain(
            shared
                .iter()
                .map(Path::new)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
                .iter(),
        )
        .cloned()
        .collect::<Vec<PathBuf>>();
    for path in &cover {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let source: &Path = if meta.is_dir() {
            empty
        } else {
            Path::new("/dev/null")
        };
        if let Err(e) = mount(&source.to_string_lossy(), path, "", libc::MS_BIND, "") {
            hidden_ok = false;
            reporter.missing("hidden", &format!("hiding {}: {e}", path.display()));
        }
    }
    if hidden_ok && !plan.hidden.is_empty() {
        reporter.layer("hidden", "case folders and reports hidden");
    }
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // `hidepid=invisible`: the program does not even see this init process, only its own.
    let fresh = mount(
        "proc",
        Path::new("/proc"),
        "proc",
        proc_flags,
        "hidepid=invisible",
    )
    .or_else(|_| mount("proc", Path::new("/proc"), "proc", proc_flags, ""));
    match fresh {
        Ok(()) => true,
        Err(e) => {
            // A /proc that shows the grader would undo the pid namespace: cover it instead.
            let covered = mount(
                "none",
                Path::new("/proc"),
                "tmpfs",
                proc_flags | libc::MS_RDONLY,
                "size=4k",
            );
            if covered.is_err() {
                reporter.missing("proc", &format!("a /proc of the sandbox's own: {e}"));
            }
            false
        }
    }
}

/// P: limits, Landlock, capabilities and uid, then exec the program (or, in probe mode, exit).
fn program(plan: &HelperPlan, reporter: &Reporter, proc_fresh: bool) -> ! {
    // Signals the helper ignored must not stay ignored.
    // SAFETY: SIG_DFL installs no handler code.
    unsafe {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
    if let Some(bytes) = plan.memory_bytes {
        set_limit(libc::RLIMIT_AS, bytes, "memory", reporter);
    }
    if let Some(n) = plan.max_processes {
        set_limit(libc::RLIMIT_NPROC, n, "pids", reporter);
        reporter.layer("pids", &format!("pids ≤ {n}"));
    }
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        reporter.missing("nnp", &format!("no_new_privs: {}", errno()));
    }
    if !plan.namespaces
        && let Some(workdir) = &plan.private_workdir
    {
        // No tmpfs of its own: the runner's temporary folder becomes the program's.
        let (uid, gid) = plan.program_ids();
        let path = cstr(workdir);
        // SAFETY: a valid path; chown of a folder the grader created.
        unsafe { libc::chown(path.as_ptr(), uid, gid) };
    }
    if plan.landlock {
        landlock(plan, reporter, proc_fresh);
    }
    drop_privileges(plan, reporter);
    if reporter.probe {
        exit_now(0);
    }
    let workdir = plan.workdir.as_deref().unwrap_or(Path::new("/"));
    if plan.private_workdir.is_some() {
        // SAFETY: this process is single-threaded.
        unsafe { std::env::set_var("TMPDIR", workdir) };
    }
    if let Err(e) = std::env::set_current_dir(workdir) {
        reporter.fail(&format!("cannot enter {}: {e}", workdir.display()));
    }
    let exe = cstr(&plan.exe);
    let argv: Vec<CString> = plan
        .argv
        .iter()
        .map(|a| CString::new(OsString::from(a.clone()).into_vec()).unwrap_or_default())
        .collect();
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // The environment is the one the runner gave the helper.
    // SAFETY: valid NUL-terminated arrays; `environ` is the process's environment.
    unsafe {
        unsafe extern "C" {
            static environ: *const *const libc::c_char;
        }
        libc::execve(exe.as_ptr(), argv_ptrs.as_ptr(), environ);
    }
    let err = errno();
    let who = match plan.run_as {
        Some((u, _)) if u != 0 => format!(" as uid {u}"),
        _ => String::new(),
    };
    reporter.fail(&format!(
        "cannot execute {}{who}: {err}",
        plan.exe.display()
    ))
}

/// `setrlimit`'s resource type: glibc's own, an int on musl (the static release builds).
#[cfg(target_env = "gnu")]
type RlimitResource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type RlimitResource = libc::c_int;

fn set_limit(resource: RlimitResource, value: u64, key: &str, reporter: &Reporter) {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: a valid rlimit structure.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        reporter.missing(key, &format!("rlimit {resource}: {}", errno()));
    }
}

fn landlock(plan: &HelperPlan, reporter: &Reporter, proc_fresh: bool) {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };
    let abi = ABI::V6;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut read_paths: Vec<PathBuf> = plan.read_only.clone();
    if proc_fresh {
        read_paths.push("/proc".into());
    }
    // A command run in a folder (the build) has a private, writable /tmp.
    let private_tmp: Vec<PathBuf> = if plan.private_workdir.is_none() && plan.namespaces {
        vec!["/tmp".into(), "/var/tmp".into()]
    } else {
        Vec::new()
    };
    let devices = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/urandom",
        "/dev/random",
    ];
    let build = || -> Result<landlock::RestrictionStatus, landlock::RulesetError> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)?;
        if !plan.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
        }
        ruleset
            .scope(Scope::from_all(abi))?
            .create()?
            .add_rules(path_beneath_rules(
                read_paths.iter().filter(|p| p.exists()),
                read,
            ))?
            .add_rules(path_beneath_rules(
                plan.read_write
                    .iter()
                    .chain(
                        plan.workdir
                            .iter()
                            .filter(|_| plan.private_workdir.is_some()),
                    )
                    .chain(private_tmp.iter())
                    .filter(|p| p.exists()),
                all,
            ))?
            .add_rules(path_beneath_rules(
                devices.iter().filter(|p| Path::new(p).exists()),
                AccessFs::from_file(abi),
            ))?
            .restrict_self()
    };
    match build() {
        Ok(status) => {
            let version = match status.landlock {
                LandlockStatus::Available {
                    effective_abi,
                    kernel_abi,
                } => format!("v{}", kernel_abi.unwrap_or(effective_abi as i32)),
                _ => String::new(),
            };
            match status.ruleset {
                RulesetStatus::FullyEnforced => {
                    reporter.layer("landlock", &format!("landlock {version}"))
                }
                RulesetStatus::PartiallyEnforced => reporter.layer(
                    "landlock",
                    &format!("landlock {version} (partial: an older kernel)"),
                ),
                RulesetStatus::NotEnforced => {
                    reporter.missing("landlock", "landlock: not supported by this kernel")
                }
            }
        }
        Err(e) => reporter.missing("landlock", &format!("landlock: {e}")),
    }
}

/// Drops every capability (bounding set too, so that exec cannot give them back) and, where
/// this process is root in its namespace, switches to the unprivileged uid and gid.
fn drop_privileges(plan: &HelperPlan, reporter: &Reporter) {
    // SAFETY: prctl with integer arguments; dropping a capability we lack is harmless.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    let (uid, gid) = plan.program_ids();
    // SAFETY: plain system calls with integer arguments.
    if rustix::process::getuid().is_root() {
        // SAFETY: plain system calls with integer arguments.
        let ok = unsafe {
            libc::setgroups(0, std::ptr::null()) == 0
                && libc::setresgid(gid, gid, gid) == 0
                && libc::setresuid(uid, uid, uid) == 0
        };
        if !ok {
            reporter.missing("uid", &format!("running as uid {uid}: {}", errno()));
            return;
        }
    }
    // Whatever the uid, no capability is left: clear the sets explicitly.
    let header = CapHeader {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: capset with a valid header and two data structures (version 3).
    let r = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if r != 0 {
        reporter.missing("uid", &format!("dropping capabilities: {}", errno()));
    }
    let shown_uid = rustix::process::getuid().as_raw();
    reporter.layer("uid", &format!("uid {shown_uid}"));
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
