//! `isr-grader batch`: grades every submission of a class, each in a child `isr-grader test`.
//!
//! ```text
//! SUBMISSIONS_DIR/NAME/ ──(sorted, dot-folders left out, --partition K/N)──► to grade
//!    │  skipped: OUT/submissions/NAME/report.json complete and batch.json's fingerprint current
//!    ▼
//! child: isr-grader test --instructor-config FILE --submission DIR --format json --jobs J
//!        --html OUT/submissions/NAME/report.html --timelines OUT/submissions/NAME/timelines
//!    │  its own process group, a wall-clock limit (--submission-timeout), N children at once
//!    ▼
//! OUT/submissions/NAME/batch.json (how it ran), then report.json (its stdout, or an error
//! document): written last, atomically, so its presence marks the submission done
//!    ▼
//! super::finish(OUT): load → gradebook.csv + class-report.html
//! ```
//!
//! The instructor's side (config file, cases, sandbox) is checked once before any child runs,
//! so a mistake there is one error (exit 2), not one per submission. A child that hangs,
//! crashes or fails is recorded as that submission's error; the batch goes on. On SIGINT or
//! SIGTERM no child starts, the running ones get SIGTERM (they kill their own cases; SIGKILL 5 s
//! later), the gradebook and class report are written for what is done, and the batch exits 130.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{REPORT_HTML, REPORT_JSON, SUBMISSIONS, TIMELINES};
use crate::cli::BatchArgs;
use crate::fnv::Fnv64;
use crate::plan::Plan;
use crate::report::json::{self, DocumentV1};
use crate::runner::{self, Limits, Program, Termination};
use crate::{CmdResult, exit_codes};

/// How a submission's grading ran, beside its report.
pub const BATCH_JSON: &str = "batch.json";
/// The most a child's JSON report may be.
const REPORT_CAP: usize = 64 << 20;
/// Between the SIGTERM an interrupt sends to running children and the SIGKILL.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);

/// What the batch knows before grading anything: checked once for the whole class.
struct Class {
    exe: PathBuf,
    instructor_config: PathBuf,
    out: PathBuf,
    cwd: PathBuf,
    filter: Option<String>,
    case_jobs: usize,
    timeout: Duration,
    /// Hash of everything but the submission that decides a grade.
    fingerprint_base: Fnv64,
}

/// How one submission's grading ended.
enum Ended {
    /// A report (`report.json` written).
    Graded {
        points: u32,
        max: u32,
        build_ok: bool,
    },
    /// An error document (`report.json` written).
    Error(String),
    /// Interrupted: nothing written, graded again next time.
    NotRun,
}

/// `isr-grader batch`.
pub fn batch_cmd(args: BatchArgs) -> CmdResult {
    // The flag first: an interrupt that closes the runner is then always seen here too.
    let interrupted = crate::grade::interrupt_flag()?;
    runner::prepare_grader_process()?;
    runner::set_interrupt_grace(INTERRUPT_GRACE);
    let cwd = std::env::current_dir()?;
    let class = check_class(&args, &cwd)?;
    let all = submissions(&args.submissions)?;
    let mine: Vec<&(String, PathBuf)> = all
        .iter()
        .filter(|(name, _)| args.partition.is_none_or(|p| p.contains(name)))
        .collect();
    let root = class.out.join(SUBMISSIONS);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    // Every submission of this part has its folder, so one never graded reads back as not run.
    for (name, _) in &mine {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut todo = Vec::new();
    let mut skipped = 0;
    for (name, dir) in &mine {
        if !args.force && is_done(&root.join(name), &class.fingerprint(dir)) {
            skipped += 1;
        } else {
            todo.push((name.clone(), dir.clone()));
        }
    }
    // Longest first: a Rust submission's build takes longer than a Python one's whole grading,
    // and a long one started last would leave a core idle at the end.
    todo.sort_by_key(|(name, dir)| (!dir.join("Cargo.toml").is_file(), name.clone()));
    let parallel = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |j| j.get(),
    );
    let part = args
        .partition
        .map(|p| format!(" (part {p}: {})", mine.len()))
        .unwrap_or_default();
    anstream::eprintln!(
        "batch: {} submissions in {}{part}; {skipped} skipped (graded before, unchanged); grading {} ({} at once, --jobs {} each)",
        all.len(),
        args.submissions.display(),
        todo.len(),
        parallel.min(todo.len().max(1)),
        class.case_jobs,
    );

    let width = todo.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let progress = Progress::new(todo.len(), width, args.quiet);
    let errors = AtomicUsize::new(0);
    runner::run_parallel(parallel, &todo, |(name, dir)| {
        if interrupted.load(Ordering::SeqCst) {
            return;
        }
        progress.start(name);
        let started = Instant::now();
        let ended = grade_one(&class, name, dir, interrupted);
        if matches!(ended, Ended::Error(_)) {
            errors.fetch_add(1, Ordering::SeqCst);
        }
        progress.finish(name, &ended, started.elapsed());
    });
    progress.done();

    let subs = super::finish(&class.out)?;
    let count = |s: super::gradebook::Status| {
        subs.iter()
            .filter(|x| super::gradebook::Status::of(x) == s)
            .count()
    };
    use super::gradebook::Status as S;
    anstream::eprintln!(
        "batch: {} graded, {} build failed, {} could not be graded, {} not run; {} and {}",
        count(S::Graded),
        count(S::BuildFailed),
        count(S::Error),
        count(S::NotRun),
        class.out.join(super::GRADEBOOK).display(),
        class.out.join(super::CLASS_REPORT).display(),
    );
    Ok(if interrupted.load(Ordering::SeqCst) {
        exit_codes::INTERRUPTED
    } else if errors.load(Ordering::SeqCst) > 0 || count(S::Error) + count(S::NotRun) > 0 {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    })
}

/// The instructor's side, checked once: the config file, the cases (as `test` checks them),
/// the sandbox it asks for. Any error here is the whole batch's (exit 2).
fn check_class(args: &BatchArgs, cwd: &Path) -> Result<Class, Box<dyn std::error::Error>> {
    if !args.submissions.is_dir() {
        return Err(format!(
            "{}: no such folder (SUBMISSIONS_DIR: one folder per submission)",
            args.submissions.display()
        )
        .into());
    }
    let instructor_config = std::path::absolute(&args.instructor_config)?;
    let plan = Plan::class_side(
        &instructor_config,
        args.filter.clone(),
        &std::path::absolute(&args.submissions)?,
        cwd,
    )?;
    let cases = crate::grade::filtered_cases(&plan)?;
    crate::grade::check_cases(&cases, &plan.limits)?;
    let exe = std::env::current_exe()?;
    runner::sandbox::prepare(&plan.sandbox, &exe)?;
    let cases_hash = crate::grade::provenance::cases_hash(&cases);
    let config_bytes = std::fs::read(&instructor_config)
        .map_err(|e| format!("{}: {e}", instructor_config.display()))?;
    let mut base = Fnv64::default();
    base.field(b"isr-grader batch fingerprint 1");
    base.field(crate::version::LONG.as_bytes());
    base.field(&config_bytes);
    base.field(cases_hash.as_bytes());
    base.field(args.filter.as_deref().unwrap_or("").as_bytes());
    // Enough for the build (its own limit), every case to time out twice (the nondeterminism
    // check re-runs failing ones), exploration and shrinking, and a minute besides.
    let per_case = plan.limits.timeout + plan.limits.grace;
    let timeout = match args.submission_timeout {
        Some(secs) => Duration::from_secs(secs),
        None => {
            Duration::from_secs(900 + 60)
                + per_case * (2 * cases.len() as u32 + plan.explore.traces as u32)
                + Duration::from_secs_f64(plan.explore.seconds + plan.explore.shrink_seconds)
        }
    };
    Ok(Class {
        exe,
        instructor_config,
        out: std::path::absolute(&args.out)?,
        cwd: cwd.to_path_buf(),
        filter: args.filter.clone(),
        case_jobs: args.case_jobs.map_or(1, |j| j.get()),
        timeout,
        fingerprint_base: base,
    })
}

/// Whether a name is safe as a folder name, a CSV cell and a link: letters and digits (any
/// script), `.`, `_`, `-`, `+`, `@`; starting with a letter or digit; at most 200 bytes.
fn safe_name(name: &str) -> bool {
    name.len() <= 200
        && name.chars().next().is_some_and(char::is_alphanumeric)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@'))
}

/// The submissions: every folder in `dir` (or link to one) whose name does not start with
/// `.`, sorted by name. A name that is not [`safe_name`] is an error (rename the folder).
fn submissions(dir: &Path) -> Result<Vec<(String, PathBuf)>, Box<dyn std::error::Error>> {
    let mut found = Vec::new();
    let mut unsafe_names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        if safe_name(&name) {
            found.push((name, std::path::absolute(&path)?));
        } else {
            unsafe_names.push(format!("{name:?}"));
        }
    }
    if !unsafe_names.is_empty() {
        unsafe_names.sort();
        return Err(format!(
            "{}: submission folders whose names are not safe file names: {} (use letters, digits, `.`, `_`, `-`, `+`, `@`, starting with a letter or digit; rename them)",
            dir.display(),
            unsafe_names.join(", ")
        )
        .into());
    }
    found.sort();
    Ok(found)
}

impl Class {
    /// The fingerprint of grading `dir` now: the grader, the instructor's file, the cases and
    /// the submission's files (in path order, each its relative path and bytes; a link its
    /// target; `target/` at its root, `__pycache__/` and `.git/` left out: the build writes the
    /// first, Python the second, and grading reads neither the second nor the third).
    fn fingerprint(&self, dir: &Path) -> String {
        let mut h = self.fingerprint_base;
        let walk = walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name();
                !(e.file_type().is_dir()
                    && (name == "__pycache__"
                        || name == ".git"
                        || (e.depth() == 1 && name == "target")))
            });
        for entry in walk {
            let Ok(entry) = entry else {
                h.field(b"(unreadable)");
                continue;
            };
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            h.field(rel.as_os_str().as_encoded_bytes());
            let kind = entry.file_type();
            if kind.is_symlink() {
                let target = std::fs::read_link(entry.path()).unwrap_or_default();
                h.field(target.as_os_str().as_encoded_bytes());
            } else if kind.is_file() {
                match std::fs::read(entry.path()) {
                    Ok(bytes) => h.field(&bytes),
                    Err(_) => h.field(b"(unreadable)"),
                }
            }
        }
        h.hex()
    }
}

/// Whether `dir` (under `OUT/submissions`) holds a complete report whose fingerprint is
/// `fingerprint`.
fn is_done(dir: &Path, fingerprint: &str) -> bool {
    let recorded = std::fs::read_to_string(dir.join(BATCH_JSON))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["fingerprint"].as_str().map(str::to_string));
    recorded.as_deref() == Some(fingerprint)
        && std::fs::read_to_string(dir.join(REPORT_JSON)).is_ok_and(|t| json::parse(&t).is_ok())
}

/// Grades one submission in a child `isr-grader test`, and records the outcome in
/// `OUT/submissions/NAME/` (nothing when interrupted).
fn grade_one(
    class: &Class,
    name: &str,
    dir: &Path,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Ended {
    let out = class.out.join(SUBMISSIONS).join(name);
    // What an earlier grading left is no longer this submission's.
    for stale in [REPORT_JSON, BATCH_JSON, REPORT_HTML] {
        let _ = std::fs::remove_file(out.join(stale));
    }
    let _ = std::fs::remove_dir_all(out.join(TIMELINES));
    let mut argv: Vec<String> = vec![
        class.exe.display().to_string(),
        "--color".into(),
        "never".into(),
        "test".into(),
        "--instructor-config".into(),
        class.instructor_config.display().to_string(),
        "--submission".into(),
        dir.display().to_string(),
        "--format".into(),
        "json".into(),
        "--jobs".into(),
        class.case_jobs.to_string(),
    ];
    argv.extend(["--html".into(), out.join(REPORT_HTML).display().to_string()]);
    argv.extend([
        "--timelines".into(),
        out.join(TIMELINES).display().to_string(),
    ]);
    if let Some(f) = &class.filter {
        argv.extend(["--filter".into(), f.clone()]);
    }
    let mut program = Program::new(&argv);
    // The child is the grader: it needs the batch's environment (cargo, rustup, python).
    program.env = std::env::vars_os().collect();
    program.cwd = Some(class.cwd.clone());
    let limits = Limits {
        timeout: class.timeout,
        grace: INTERRUPT_GRACE,
        memory_bytes: None,
        output_cap: REPORT_CAP,
        stderr_tail: 16 << 10,
        file_size: None,
    };
    let started = Instant::now();
    let run = runner::run(&program, b"", &limits);
    let is_interrupted = || interrupted.load(Ordering::SeqCst);
    let (ended, document, termination) = match run {
        Err(_) if is_interrupted() => (Ended::NotRun, None, String::new()),
        Err(e) => {
            let why = format!("cannot start the grader for this submission: {e}");
            let doc = json::render_error(&why);
            (Ended::Error(why), Some(doc), String::new())
        }
        Ok(run) => {
            let termination = run.termination.to_string();
            let stderr = String::from_utf8_lossy(&run.stderr_tail);
            let last_stderr = stderr
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            let text = String::from_utf8_lossy(&run.stdout).into_owned();
            let error = |why: String| {
                let doc = json::render_error(&why);
                (Ended::Error(why), Some(doc), termination.clone())
            };
            match run.termination {
                _ if is_interrupted()
                    && matches!(
                        run.termination,
                        Termination::Exited(130) | Termination::Signaled { .. }
                    ) =>
                {
                    (Ended::NotRun, None, termination.clone())
                }
                Termination::TimedOut => error(format!(
                    "grading took longer than {} s (--submission-timeout): stopped",
                    class.timeout.as_secs()
                )),
                Termination::OutputLimit => error(format!(
                    "the grader's report was larger than {} MiB",
                    REPORT_CAP >> 20
                )),
                Termination::Signaled { name, .. } => error(format!(
                    "the grader grading this submission was killed by {name}{}",
                    if last_stderr.is_empty() {
                        String::new()
                    } else {
                        format!(": {last_stderr}")
                    }
                )),
                Termination::Exited(code) => match json::parse(&text) {
                    Ok(DocumentV1::Report(r)) if !r.interrupted && (code == 0 || code == 1) => (
                        Ended::Graded {
                            points: r.summary.points,
                            max: r.summary.max_points,
                            build_ok: r.build.as_ref().is_none_or(|b| b.ok),
                        },
                        Some(text),
                        termination.clone(),
                    ),
                    Ok(DocumentV1::Report(_)) => error(format!(
                        "the grading was interrupted from outside the batch (exit {code})"
                    )),
                    Ok(DocumentV1::Error(e)) => {
                        (Ended::Error(e.error), Some(text), termination.clone())
                    }
                    Err(e) => error(format!(
                        "the grader exited with code {code} without a JSON report ({e}){}",
                        if last_stderr.is_empty() {
                            String::new()
                        } else {
                            format!(": {last_stderr}")
                        }
                    )),
                },
            }
        }
    };
    let Some(document) = document else {
        // Not run: nothing of this grading stays (its HTML would show an interrupted run).
        let _ = std::fs::remove_file(out.join(REPORT_HTML));
        let _ = std::fs::remove_dir_all(out.join(TIMELINES));
        return ended;
    };
    let record = serde_json::json!({
        "command": argv,
        "termination": termination,
        "duration_secs": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        // Taken after grading: the build may add files (Cargo.lock) that the next check sees.
        "fingerprint": class.fingerprint(dir),
        "grader_version": crate::version::LONG,
    });
    let record = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
    let document = if document.ends_with('\n') {
        document
    } else {
        document + "\n"
    };
    // batch.json first, report.json last: a report.json present is a grading complete.
    let written = crate::cases::write_atomic(&out.join(BATCH_JSON), record.as_bytes())
        .and_then(|()| crate::cases::write_atomic(&out.join(REPORT_JSON), document.as_bytes()));
    match written {
        Ok(()) => ended,
        Err(e) => Ended::Error(format!("{}: {e}", out.display())),
    }
}

/// The batch's progress on stderr: a bar on a terminal (done/total, the submissions being
/// graded, failures so far) with each finished submission's line above it, as `test`'s live
/// view does; one plain line per finished submission otherwise; none with `--quiet`.
struct Progress {
    bar: Option<ProgressBar>,
    /// The longest name's length, for aligned lines.
    width: usize,
    quiet: bool,
    state: Mutex<(Vec<String>, usize)>,
}

impl Progress {
    fn new(total: usize, width: usize, quiet: bool) -> Self {
        let bar =
            (std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()).then(|| {
                let bar =
                    ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {pos}/{len} submissions [{bar:30}] {elapsed} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar.enable_steady_tick(Duration::from_millis(120));
                bar
            });
        Progress {
            bar,
            width,
            quiet,
            state: Mutex::new((Vec::new(), 0)),
        }
    }

    fn message(&self, state: &(Vec<String>, usize)) {
        if let Some(bar) = &self.bar {
            let failures = match state.1 {
                0 => String::new(),
                n => format!(" · {n} not graded"),
            };
            bar.set_message(format!("{}{failures}", state.0.join(", ")));
        }
    }

    fn start(&self, name: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0.push(name.to_string());
        self.message(&state);
    }

    fn finish(&self, name: &str, ended: &Ended, took: Duration) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0.retain(|n| n != name);
        if matches!(ended, Ended::Error(_)) {
            state.1 += 1;
        }
        self.message(&state);
        let secs = took.as_secs_f64();
        let width = self.width;
        let line = match ended {
            Ended::Graded {
                points,
                max,
                build_ok: true,
            } => format!("graded        {name:width$}  {points}/{max} points ({secs:.1} s)"),
            Ended::Graded { .. } => format!("build-failed  {name:width$}  ({secs:.1} s)"),
            Ended::Error(why) => format!(
                "error         {name:width$}  {} ({secs:.1} s)",
                crate::report::visible(why.lines().next().unwrap_or(""))
            ),
            Ended::NotRun => format!("not-run       {name:width$}  (interrupted)"),
        };
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if !self.quiet {
                bar.println(line);
            }
        } else if !self.quiet {
            anstream::eprintln!("{line}");
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_file_names() {
        for good in ["alice", "bob.smith", "s_01-b+c@x", "Élodie", "42"] {
            assert!(safe_name(good), "{good}");
        }
        for bad in [
            "", ".hidden", "-rf", "=cmd", "a b", "a/b", "a\nb", "a,b", "a\"b",
        ] {
            assert!(!safe_name(bad), "{bad:?}");
        }
    }
}
