//! The sandbox each run goes through: what a program may see, touch and outlive.
//!
//! The runner asks the sandbox to wrap a command; the sandbox itself lives in a helper that the
//! grader re-executes (the hidden `isr-grader __sandbox` subcommand), which sets up namespaces,
//! Landlock, the uid and the limits, and then starts the program (see [`exec`]).
//!
//! What the policy asks for and what the machine allowed are two things: [`prepare`] probes the
//! machine once and returns a [`Sandbox`] whose [`Status`] says which layers are in force.

use std::fmt;
use std::path::{Path, PathBuf};

/// How strict to be about layers the machine cannot provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every layer must be in force; otherwise [`prepare`] fails before anything runs.
    Require,
    /// Use every layer the machine allows and say which were missing.
    #[default]
    BestEffort,
    /// No sandbox: process groups and limits only.
    Off,
}

/// What the instructor asks of the sandbox. Built only from instructor-side configuration,
/// never from a submission's own files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// How strict to be.
    pub mode: Mode,
    /// The uid and gid to run as when the grader is root (`None`: 65534, `nobody`).
    pub run_as: Option<(u32, u32)>,
    /// Folders and files the program may read (and execute): the submission's own folder,
    /// extra toolchain folders. System folders are always readable.
    pub read_only: Vec<PathBuf>,
    /// Folders the program may write besides its temporary folder (the build step writes its
    /// submission folder).
    pub read_write: Vec<PathBuf>,
    /// Paths that must be neither visible nor readable: case folders, report paths.
    pub hidden: Vec<PathBuf>,
    /// Whether the program may use the network (only the build step, and only if the
    /// instructor allows it).
    pub network: bool,
}

/// Which protections are in force, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    /// The layers in force, in words (`pid+net+mount namespaces`, `landlock v7`, `uid 65534`).
    pub layers: Vec<String>,
    /// The layers asked for but missing, with why.
    pub missing: Vec<String>,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.layers.is_empty() {
            f.write_str("none")?;
        } else {
            f.write_str(&self.layers.join(", "))?;
        }
        if !self.missing.is_empty() {
            write!(f, " (missing: {})", self.missing.join("; "))?;
        }
        Ok(())
    }
}

/// A prepared sandbox: the policy, what the machine allows of it, and how to start the helper.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// The policy.
    pub policy: Policy,
    /// What is in force.
    pub status: Status,
    /// The program that implements the helper (`isr-grader __sandbox`): the grader itself.
    helper: PathBuf,
    /// The layers to set up for every run, as the probe found them.
    plan: HelperPlan,
}

impl Sandbox {
    /// Whether runs go through the helper at all.
    pub fn active(&self) -> bool {
        self.policy.mode != Mode::Off && !self.status.layers.is_empty()
    }

    /// Whether runs get namespaces of their own (otherwise the runner sweeps up, after each
    /// run, processes that left the run's group; see [`sweep_orphans`]).
    pub(in crate::runner) fn has_namespaces(&self) -> bool {
        self.plan.namespaces
    }

    /// The uid and gid the program will run as, when the sandbox changes it.
    pub fn run_as(&self) -> Option<(u32, u32)> {
        self.plan.run_as.filter(|_| self.active())
    }

    /// Admits a program: its own folder (and, for a script, its interpreter's) and the
    /// folders of the files its arguments name (`python3 main.py`) become readable, and, if
    /// the sandbox's uid cannot execute it, the uid change is given up (best effort, said in
    /// the status) or refused ([`Mode::Require`]).
    pub fn admit(&mut self, exe: &Path, argv: &[std::ffi::OsString]) -> Result<(), SandboxError> {
        if !self.active() {
            return Ok(());
        }
        // Files the arguments name, but never one the program must not see (a report path).
        let hidden = self.policy.hidden.clone();
        let named = move || {
            argv.iter()
                .skip(1)
                .map(Path::new)
                .filter(|p| p.is_absolute() && p.is_file())
                .filter(|p| !hidden.iter().any(|h| p.starts_with(h)))
                .collect::<Vec<_>>()
        };
        let named_files = named().into_iter();
        let paths = program_paths(exe).into_iter().chain(
            named_files
                .flat_map(|f| [f.to_path_buf(), f.canonicalize().unwrap_or(f.to_path_buf())])
                .filter_map(|f| f.parent().map(Path::to_path_buf)),
        );
        for path in paths.collect::<Vec<_>>() {
            if !self.plan.read_only.contains(&path) {
                self.plan.read_only.push(path);
            }
        }
        let closed = self
            .plan
            .run_as
            .filter(|&(uid, _)| uid != 0)
            .and_then(|(uid, gid)| {
                // The program and its script (`python3 main.py`) must be reachable.
                let script = named()
                    .into_iter()
                    .take(1)
                    .filter(|p| argv.get(1).is_some_and(|a| Path::new(a) == *p));
                std::iter::once((exe, true))
                    .chain(script.map(|p| (p, false)))
                    .find(|(p, execute)| !reachable_by(p, uid, gid, *execute))
                    .map(|(p, execute)| (uid, p.to_path_buf(), execute))
            });
        if let Some((uid, path, execute)) = closed {
            let why = format!(
                "uid {uid}: it cannot {} {} (a folder on the way is closed to it; put the submission and its interpreter where every user can reach them, or choose the uid with --sandbox-uid)",
                if execute { "execute" } else { "read" },
                path.display()
            );
            if self.policy.mode == Mode::Require {
                return Err(SandboxError(format!("--sandbox require: {why}")));
            }
            self.plan.run_as = Some((0, 0));
            self.status.layers.retain(|l| !l.starts_with("uid "));
            self.status.layers.push("uid 0 without capabilities".into());
            self.status.missing.push(why);
        }
        Ok(())
    }

    /// The command that runs `argv` (whose file is `exe`) in this sandbox, in `workdir`.
    pub(in crate::runner) fn helper_command(
        &self,
        exe: &Path,
        argv: &[std::ffi::OsString],
        workdir: &Path,
        private_workdir: bool,
        memory_bytes: Option<u64>,
        channels: &Channels,
    ) -> std::process::Command {
        let mut plan = self.plan.clone();
        plan.exe = exe.to_path_buf();
        plan.argv = argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        plan.workdir = Some(workdir.to_path_buf());
        plan.private_workdir = private_workdir.then(|| workdir.to_path_buf());
        if !private_workdir && !plan.read_write.iter().any(|p| workdir.starts_with(p)) {
            plan.read_only.push(workdir.to_path_buf());
        }
        plan.memory_bytes = memory_bytes;
        channels.command(&self.helper, &plan, false)
    }
}

/// The two pipes between the runner and the helper: the plan goes in through one (not on the
/// command line, where the program could read it in `/proc`), errors come back through the
/// other. Both descriptors must stay open across the helper's exec ([`Channels::keep`]).
pub(in crate::runner) struct Channels {
    status_read: std::os::fd::OwnedFd,
    status_write: std::os::fd::OwnedFd,
    plan_read: std::os::fd::OwnedFd,
    plan_write: std::os::fd::OwnedFd,
}

impl Channels {
    pub(in crate::runner) fn new() -> std::io::Result<Self> {
        let (status_read, status_write) = super::os::pipe(true)?;
        let (plan_read, plan_write) = super::os::pipe(false)?;
        Ok(Channels {
            status_read,
            status_write,
            plan_read,
            plan_write,
        })
    }

    /// The descriptors the helper needs across exec.
    pub(in crate::runner) fn keep(&self) -> [i32; 2] {
        use std::os::fd::AsRawFd as _;
        [self.status_write.as_raw_fd(), self.plan_read.as_raw_fd()]
    }

    /// The helper's command line, with the plan written into its pipe.
    fn command(&self, helper: &Path, plan: &HelperPlan, probe: bool) -> std::process::Command {
        let json = serde_json::to_vec(plan).unwrap_or_default();
        // The plan is small (paths); a pipe holds 64 KiB. A plan that does not fit arrives cut
        // and the helper refuses it.
        let _ = rustix::io::write(&self.plan_write, &json[..json.len().min(60 << 10)]);
        let [status, plan_fd] = self.keep();
        let mut command = std::process::Command::new(helper);
        command.args([
            HELPER_SUBCOMMAND,
            "--status-fd",
            &status.to_string(),
            "--plan-fd",
            &plan_fd.to_string(),
        ]);
        if probe {
            command.arg("--probe");
        }
        command
    }

    /// After the helper was started: closes the parent's copies of its ends, then (after the
    /// run) reads what the helper reported.
    pub(in crate::runner) fn finish(self) -> String {
        let Channels {
            status_read,
            status_write,
            plan_read,
            plan_write,
        } = self;
        drop((status_write, plan_read, plan_write));
        let mut status = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = rustix::io::read(&status_read, &mut buf) {
            if n == 0 || status.len() > 64 << 10 {
                break;
            }
            status.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&status).into_owned()
    }
}

/// The hidden subcommand of the grader that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "__sandbox";

/// Runs the helper: the body of `isr-grader __sandbox`. Never returns.
pub fn helper_main(plan_fd: i32, status_fd: i32, probe: bool) -> ! {
    #[cfg(target_os = "linux")]
    {
        helper::main(plan_fd, status_fd, probe)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // `prepare` never starts the helper where there is no sandbox to build.
        let _ = (plan_fd, status_fd, probe);
        eprintln!("isr-grader: the sandbox exists only on Linux");
        std::process::exit(125)
    }
}

#[cfg(target_os = "linux")]
mod helper;

/// What the helper is told for one run (serialized into its command line).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
struct HelperPlan {
    /// New pid, mount, ipc, uts (and net) namespaces.
    namespaces: bool,
    /// A new user namespace too (needed unless the grader is root).
    user_namespace: bool,
    /// Keep the network (no new net namespace, no Landlock TCP rules).
    network: bool,
    /// Landlock rules.
    landlock: bool,
    /// The ids to switch to when the helper is root in its namespace.
    run_as: Option<(u32, u32)>,
    /// Covered by empty mounts.
    hidden: Vec<PathBuf>,
    /// Readable and executable.
    read_only: Vec<PathBuf>,
    /// Writable.
    read_write: Vec<PathBuf>,
    /// Where the program starts.
    workdir: Option<PathBuf>,
    /// A folder to cover with a private, size-capped tmpfs (the program's temporary folder).
    private_workdir: Option<PathBuf>,
    /// The size of that tmpfs.
    tmp_bytes: u64,
    /// `RLIMIT_AS`.
    memory_bytes: Option<u64>,
    /// `RLIMIT_NPROC` (per user namespace since Linux 5.14).
    max_processes: Option<u64>,
    /// The program's file.
    exe: PathBuf,
    /// Its command line, `argv[0]` included.
    argv: Vec<String>,
}

/// Without namespaces, a process that left its run's group (`setsid`, a double fork) is out of
/// the group kill's reach; the grader is a child subreaper, so once its parent is gone it is
/// the grader's child. Kills and reaps every child of the grader that belongs to no live run's
/// group, until none is left (their own children come next).
pub(in crate::runner) fn sweep_orphans() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while super::group::with_spawns_paused(sweep_once) && std::time::Instant::now() < deadline {}
}

/// One pass of [`sweep_orphans`]; returns whether it found anything.
fn sweep_once(
    live: &std::collections::BTreeSet<i32>,
    in_flight: &std::collections::BTreeSet<i32>,
) -> bool {
    let mut found = false;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    for task in tasks.flatten() {
        let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            if in_flight.contains(&pid) {
                continue;
            }
            let Some(pgid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(") ")?.1.to_string();
                    rest.split_whitespace().nth(2)?.parse::<i32>().ok()
                })
            else {
                continue;
            };
            if live.contains(&pgid) {
                continue;
            }
            found = true;
            // SAFETY: signalling and reaping a child of ours that no run is waiting for.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    found
}

/// System folders every program may read and execute.
const SYSTEM_READ_ONLY: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// An environment variable of the grader (never the program's) that pretends layers are
/// missing, to test the fallbacks and measure each layer's cost: a comma-separated list of
/// `userns`, `namespaces`, `netns`, `landlock`.
pub const DENY_ENV: &str = "ISR_GRADER_SANDBOX_DENY";

/// The uid and gid a root grader runs programs as by default (`nobody`).
pub const DEFAULT_RUN_AS: (u32, u32) = (65534, 65534);

/// Size of the program's private temporary folder.
const TMP_BYTES: u64 = 64 << 20;

/// Processes (and threads) the program may have at once.
const MAX_PROCESSES: u64 = 64;

/// Why the sandbox cannot be used.
#[derive(Debug)]
pub struct SandboxError(pub String);

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxError {}

/// Probes the machine for the layers `policy` asks for, by running the helper (`helper` is
/// the grader's own executable) once in probe mode. With [`Mode::Require`], a missing layer is
/// an error; with [`Mode::BestEffort`] it is listed in [`Status::missing`].
pub fn prepare(policy: &Policy, helper: &Path) -> Result<Sandbox, SandboxError> {
    let absolute = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths
            .iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect()
    };
    let policy = &Policy {
        read_only: absolute(&policy.read_only),
        read_write: absolute(&policy.read_write),
        hidden: absolute(&policy.hidden),
        ..policy.clone()
    };
    let mut sandbox = Sandbox {
        policy: policy.clone(),
        status: Status::default(),
        helper: helper.to_path_buf(),
        plan: HelperPlan::default(),
    };
    if policy.mode == Mode::Off {
        sandbox
            .status
            .missing
            .push("switched off (--sandbox off)".into());
        return Ok(sandbox);
    }
    if !cfg!(target_os = "linux") {
        sandbox
            .status
            .missing
            .extend(super::os::GAPS.iter().map(|g| g.to_string()));
        return finish(sandbox);
    }
    // The grader's memory holds the expected outputs: no process of the same uid may read it
    // through /proc/PID/mem or ptrace.
    if !super::os::make_undumpable() {
        sandbox.status.missing.push("grader not dumpable".into());
    }
    // For testing the fallbacks on a machine that has every layer: pretend some are missing.
    let deny = std::env::var(DENY_ENV).unwrap_or_default();
    let denied = |layer: &str| deny.split(',').any(|d| d.trim() == layer);
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    let mut read_only: Vec<PathBuf> = SYSTEM_READ_ONLY.iter().map(PathBuf::from).collect();
    read_only.extend(policy.read_only.iter().cloned());
    let probe_dir = tempfile::Builder::new()
        .prefix("isr-probe-")
        .tempdir()
        .map_err(|e| SandboxError(format!("cannot make a temporary folder: {e}")))?;
    let base = HelperPlan {
        namespaces: true,
        user_namespace: true,
        network: policy.network,
        landlock: true,
        run_as: root.then(|| policy.run_as.unwrap_or(DEFAULT_RUN_AS)),
        hidden: policy.hidden.clone(),
        read_only,
        read_write: policy.read_write.clone(),
        workdir: Some(probe_dir.path().to_path_buf()),
        private_workdir: Some(probe_dir.path().to_path_buf()),
        tmp_bytes: TMP_BYTES,
        memory_bytes: None,
        max_processes: Some(MAX_PROCESSES),
        exe: PathBuf::new(),
        argv: Vec::new(),
    };
    // With a user namespace (even for a root grader: the process limit then counts this run's
    // processes alone, not every process of the uid on the machine, and capabilities stay
    // inside); without one (root only); with no namespace at all.
    let mut attempts = vec![base.clone()];
    if root {
        attempts.push(HelperPlan {
            user_namespace: false,
            // RLIMIT_NPROC would count every process of the uid on the machine.
            max_processes: None,
            ..base.clone()
        });
    }
    attempts.push(HelperPlan {
        namespaces: false,
        user_namespace: false,
        ..base.clone()
    });
    let mut why_not = Vec::new();
    for mut plan in attempts {
        if plan.user_namespace && denied("userns") || plan.namespaces && denied("namespaces") {
            let why = format!("namespaces denied by {DENY_ENV}");
            if !why_not.contains(&why) {
                why_not.push(why);
            }
            continue;
        }
        plan.landlock &= !denied("landlock");
        plan.network |= denied("netns");
        let lines = probe(helper, &plan)?;
        if let Some(error) = lines.iter().find_map(|l| l.strip_prefix("error: ")) {
            why_not.push(error.to_string());
            continue;
        }
        let mut status = Status::default();
        if !plan.landlock {
            status
                .missing
                .push(format!("landlock denied by {DENY_ENV}"));
        }
        for line in &lines {
            if let Some(rest) = line.strip_prefix("layer: ") {
                let (_, text) = rest.split_once('|').unwrap_or(("", rest));
                status.layers.push(text.to_string());
            } else if let Some(rest) = line.strip_prefix("missing: ") {
                let (key, text) = rest.split_once('|').unwrap_or(("", rest));
                match key {
                    "landlock" => plan.landlock = false,
                    "uid" => plan.run_as = None,
                    "pids" => plan.max_processes = None,
                    "tmp" => plan.private_workdir = None,
                    _ => {}
                }
                status.missing.push(text.to_string());
            }
        }
        status.missing.append(&mut why_not);
        if plan.max_processes.is_none() {
            status
                .missing
                .push("a process limit (it needs a user namespace)".into());
        }
        if !plan.namespaces {
            status
                .missing
                .push("namespaces (processes that leave the group are swept up instead)".into());
        }
        plan.workdir = None;
        plan.private_workdir = plan.private_workdir.is_some().then(PathBuf::new);
        sandbox.plan = plan;
        sandbox.status = status;
        return finish(sandbox);
    }
    sandbox.status.missing.extend(why_not);
    finish(sandbox)
}

fn finish(sandbox: Sandbox) -> Result<Sandbox, SandboxError> {
    if sandbox.policy.mode == Mode::Require && !sandbox.status.missing.is_empty() {
        return Err(SandboxError(format!(
            "--sandbox require: this machine cannot provide every protection: {}",
            sandbox.status.missing.join("; ")
        )));
    }
    Ok(sandbox)
}

/// Runs the helper in probe mode and returns the lines it reported.
fn probe(helper: &Path, plan: &HelperPlan) -> Result<Vec<String>, SandboxError> {
    use std::os::unix::process::CommandExt as _;
    let channels = Channels::new().map_err(|e| SandboxError(format!("pipe: {e}")))?;
    let mut command = channels.command(helper, plan, true);
    command
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let keep = channels.keep();
    // SAFETY: fcntl is async-signal-safe; the descriptors are open in the child.
    unsafe {
        command.pre_exec(move || {
            for fd in keep {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| SandboxError(format!("cannot start {}: {e}", helper.display())))?;
    let _ = child.wait();
    let text = channels.finish();
    Ok(text.lines().map(str::to_owned).collect())
}

/// The folders a program needs to read besides the system's: its own, and for a `#!` script
/// its interpreter's. A folder named `bin`, `sbin` or `shims` stands for its parent (a
/// toolchain's prefix, such as pyenv's).
fn program_paths(exe: &Path) -> Vec<PathBuf> {
    let mut files = vec![exe.to_path_buf()];
    if let Ok(bytes) = std::fs::read(exe).map(|b| b.into_iter().take(256).collect::<Vec<u8>>())
        && let Some(line) = bytes.strip_prefix(b"#!")
    {
        let line =
            String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or(&[])).into_owned();
        if let Some(interpreter) = line.split_whitespace().next() {
            files.push(PathBuf::from(interpreter));
        }
    }
    let mut out = Vec::new();
    for file in files {
        for path in [file.clone(), file.canonicalize().unwrap_or(file)] {
            let Some(dir) = path.parent() else { continue };
            let named = |n: &str| dir.file_name().is_some_and(|f| f == n);
            let dir = if named("bin") || named("sbin") || named("shims") {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            };
            if dir != Path::new("/") && !out.iter().any(|p: &PathBuf| p == dir) {
                out.push(dir.to_path_buf());
            }
        }
    }
    out
}

/// Whether `uid`/`gid` may reach `path` (search every folder on the way) and read it (and
/// execute it, with `execute`), by the permission bits.
pub fn reachable_by(path: &Path, uid: u32, gid: u32, execute: bool) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let allowed = |meta: &std::fs::Metadata, bit: u32| {
        let mode = meta.mode();
        let shift = if meta.uid() == uid {
            6
        } else if meta.gid() == gid {
            3
        } else {
            0
        };
        mode & (bit << shift) != 0
    };
    if uid == 0 {
        return true;
    }
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    for dir in real.ancestors().skip(1) {
        match std::fs::metadata(dir) {
            Ok(meta) if allowed(&meta, 0o1) => {}
            _ => return false,
        }
    }
    match std::fs::metadata(&real) {
        Ok(meta) => allowed(&meta, 0o4) && (!execute || allowed(&meta, 0o1)),
        Err(_) => false,
    }
}
