//! `test`'s one resolved plan: the flags, the instructor's config file and the submission's
//! `grader.toml`, resolved once into a validated [`Plan`]. The command handler never reads raw
//! arguments after this.
//!
//! The trust boundary lives here:
//! - **student mode** (no `--instructor-config`): the person grading wrote `grader.toml`, so
//!   it is trusted whole (build, run, cases, limits, jobs), flags first.
//! - **instructor mode** (`--instructor-config FILE`): cases, limits, jobs and the sandbox come
//!   only from the flags and that file. The submission's `grader.toml` gives at most its `build`
//!   and `run` commands, and only if the file says `allow_submission_build` /
//!   `allow_submission_run`; every other key it sets is ignored, with a note in the report.
//!   Points come from the case files, which are the instructor's.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cases::{CaseError, CaseSource};
use crate::cli::{Format, TestArgs};
use crate::config;
use crate::runner::Limits;
use crate::runner::sandbox::Policy;

/// Who wrote the configuration being obeyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// A student grading their own work: `grader.toml` is trusted.
    Student,
    /// An instructor grading a submission: only the instructor's side is.
    Instructor,
}

/// The build step.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildStep {
    /// The shell command.
    pub command: String,
    /// Where it runs (the submission's folder).
    pub dir: PathBuf,
    /// The sandbox policy for it (it may write its folder; network only if allowed).
    pub policy: Policy,
}

/// Where reports go and how much they show.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The format on stdout.
    pub format: Format,
    /// Every failing case in full.
    pub verbose: bool,
    /// Less: no passing cases, no failing case in full.
    pub quiet: bool,
    /// Phase timings on stderr.
    pub timings: bool,
    /// A JUnit XML file to write.
    pub junit: Option<PathBuf>,
    /// A Gradescope results.json to write.
    pub gradescope: Option<PathBuf>,
    /// How results.json shows the grade (the instructor's `[gradescope]`; defaults otherwise).
    pub gradescope_options: crate::report::gradescope::Options,
    /// Stop starting cases after this many failures (`--max-fail`, `--fail-fast` = 1).
    pub max_fail: Option<usize>,
    /// A file to append the markdown summary to.
    pub summary: Option<PathBuf>,
    /// The HTML report to write.
    pub html: Option<PathBuf>,
    /// A folder to write each failing case's picture to, as `CASE.svg`.
    pub timelines: Option<PathBuf>,
}

/// Everything `test` does, decided.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Whose configuration this is.
    pub trust: Trust,
    /// The program and its arguments (files named relative to its folder made absolute).
    pub program: Vec<String>,
    /// The program as shown in reports (as written).
    pub shown_program: String,
    /// The build step, if any.
    pub build: Option<BuildStep>,
    /// Where the cases come from, in order.
    pub sources: Vec<CaseSource>,
    /// Only cases whose name matches this.
    pub filter: Option<String>,
    /// Limits per case.
    pub limits: Limits,
    /// Cases run at once (0: the number of cores).
    pub jobs: usize,
    /// The sandbox policy for the graded runs.
    pub sandbox: Policy,
    /// Reports.
    pub output: Output,
    /// Things the grader decided that the reader should know (settings ignored).
    pub notes: Vec<String>,
    /// Where this run's failing cases are recorded (student mode with a grader.toml only).
    pub last_run: Option<PathBuf>,
    /// `--failed`: only these cases (the last run's failures).
    pub only: Option<Vec<String>>,
    /// The folder relative program paths are taken from.
    pub program_base: PathBuf,
    /// `FILE:LINE` of the `run` the program came from, if from a config file.
    pub run_origin: Option<String>,
    /// Exploration beyond the corpus and shrinking.
    pub explore: crate::grade::explore::Settings,
    /// Reports show hidden cases in full (`--show-hidden`, or the instructor's `show_hidden`).
    pub show_hidden: bool,
}

/// Why there is no plan.
#[derive(Debug)]
pub enum PlanError {
    /// A config file is wrong (file and line).
    Config(CaseError),
    /// Nothing names a program to grade.
    NoProgram(String),
    /// The program cannot be what a grader runs (file, why).
    Program(PathBuf, String),
    /// `--failed` cannot know which cases failed last time.
    Failed(String),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Config(e) => e.fmt(f),
            PlanError::NoProgram(why) => write!(f, "no program to grade: {why}"),
            PlanError::Program(path, why) => write!(f, "{}: {why}", path.display()),
            PlanError::Failed(why) => write!(f, "--failed: {why}"),
        }
    }
}

impl std::error::Error for PlanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlanError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<CaseError> for PlanError {
    fn from(e: CaseError) -> Self {
        PlanError::Config(e)
    }
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// Arguments that name existing files relative to `base` become absolute paths, since the
/// program runs in a fresh temporary folder (`python3 main.py` keeps working). A relative
/// program path (`target/release/isr-leader`) is made absolute even when it does not exist
/// yet: the build step may create it.
pub(crate) fn resolve_args(argv: &[String], base: &Path) -> Vec<String> {
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            let p = Path::new(a);
            if i == 0 && a.contains('/') && !p.is_absolute() {
                return joined(base, p).display().to_string();
            }
            if i > 0
                && !a.is_empty()
                && !a.starts_with('-')
                && !p.is_absolute()
                && base.join(p).exists()
            {
                joined(base, p).display().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// `base/p` without `.` components (`/work/./main.py` is shown as `/work/main.py`).
fn joined(base: &Path, p: &Path) -> PathBuf {
    base.join(p)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `FILE:LINE` of a top-level `key = ...` in a TOML file (`FILE` alone when not found).
fn key_location(path: &Path, key: &str) -> String {
    let line = std::fs::read_to_string(path).ok().and_then(|text| {
        text.lines().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    });
    match line {
        Some(i) => format!("{}:{}", path.display(), i + 1),
        None => path.display().to_string(),
    }
}

impl Plan {
    /// Why the program cannot start, what to do about it, and where it was named
    /// (`grader.toml:LINE: ...`).
    pub fn start_error(&self, e: &crate::runner::SpawnError) -> String {
        use crate::runner::SpawnError;
        let hint = match e {
            SpawnError::NotFound(path) => self.not_found_hint(path),
            SpawnError::NotExecutable(path) => Some(not_executable_hint(path)),
            _ => None,
        };
        let mut text = format!("cannot start the program to grade: {e}");
        if let Some(hint) = hint {
            text.push_str("\n  help: ");
            text.push_str(&hint);
        }
        self.located(text)
    }

    /// `text`, prefixed with where the program was named when it came from a config file.
    pub fn located(&self, text: String) -> String {
        match &self.run_origin {
            Some(origin) => format!("{origin}: {text}"),
            None => text,
        }
    }

    fn not_found_hint(&self, path: &Path) -> Option<String> {
        let name = path.to_string_lossy();
        if !name.contains('/') {
            // A bare name looked up in PATH: perhaps a file of the student's folder.
            let here = self.program_base.join(path);
            if !here.is_file() {
                return Some(format!(
                    "`{name}` is no command on PATH; name a file with its folder (`./{name}`), or install it"
                ));
            }
            return Some(if is_python(&here) {
                format!("`{name}` is a file here, not a command: run it as `python3 {name}`")
            } else {
                format!("`{name}` is a file here, not a command: write `./{name}`")
            });
        }
        let in_target = path.components().any(|c| c.as_os_str() == "target");
        if in_target {
            return Some(if self.build.is_some() {
                "did the build create it? Compare the build's output path with this one".into()
            } else {
                "did you build it? Run `cargo build --release` first, or let the grader do it: `build = \"cargo build --release\"` in grader.toml".into()
            });
        }
        None
    }
}

fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "py")
        || first_line(path)
            .is_some_and(|l| l.starts_with(b"#!") && l.windows(6).any(|w| w == b"python"))
}

/// The first line of a file (at most 256 bytes), without its `\n`.
fn first_line(path: &Path) -> Option<Vec<u8>> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .ok()?;
    let head = &head[..n];
    Some(head.split(|&b| b == b'\n').next().unwrap_or(head).to_vec())
}

fn not_executable_hint(path: &Path) -> String {
    let shown = path.display();
    if path.is_dir() {
        return format!("{shown} is a folder: name the program inside it");
    }
    let shebang = first_line(path).is_some_and(|l| l.starts_with(b"#!"));
    match (is_python(path), shebang) {
        (true, true) => {
            format!("make it executable: `chmod +x {shown}`, or run it as `python3 {shown}`")
        }
        (true, false) => format!(
            "run it as `python3 {shown}` (or add `#!/usr/bin/env python3` as its first line and `chmod +x {shown}`)"
        ),
        (false, _) => format!("make it executable: `chmod +x {shown}`"),
    }
}

/// The settings both modes resolve the same way once their sources are known.
struct Sides<'a> {
    /// Limits and jobs from the trusted config (student: grader.toml; instructor: its file).
    limits: Option<&'a config::LimitsConfig>,
    jobs: Option<crate::values::Jobs>,
    /// `[explore]` from the trusted config.
    explore: Option<&'a config::ExploreConfig>,
    /// The instructor's `show_hidden`.
    show_hidden: bool,
    /// The instructor's `[gradescope]`.
    gradescope: crate::report::gradescope::Options,
}

impl Plan {
    /// Resolves `args` (and the config files they name) in `cwd`.
    pub fn resolve(args: &TestArgs, cwd: &Path) -> Result<Plan, PlanError> {
        match &args.instructor_config {
            Some(_) if args.failed => Err(PlanError::Failed(
                "not in instructor mode: a grade covers every case".into(),
            )),
            Some(path) => Self::instructor(args, cwd, path),
            None => Self::student(args, cwd),
        }
    }

    /// The plan every submission of a class shares, resolved once before any is graded
    /// (`batch`): the instructor's config file read and checked, and the case sources, filter,
    /// limits and sandbox policy it gives. Its program is a placeholder that is never run (each
    /// submission's is its own), and `submissions` (the class's folder) stands for the
    /// submission.
    pub fn class_side(
        instructor_config: &Path,
        filter: Option<String>,
        submissions: &Path,
        cwd: &Path,
    ) -> Result<Plan, PlanError> {
        let args = TestArgs {
            instructor_config: Some(instructor_config.to_path_buf()),
            submission: Some(submissions.to_path_buf()),
            filter,
            program: vec!["(each submission's program)".into()],
            ..TestArgs::default()
        };
        Self::instructor(&args, cwd, instructor_config)
    }

    fn student(args: &TestArgs, cwd: &Path) -> Result<Plan, PlanError> {
        let sub_dir = args
            .submission
            .as_ref()
            .map_or_else(|| cwd.to_path_buf(), |d| absolute(cwd, d));
        let loaded = if let Some(p) = &args.config {
            Some(config::load(p)?)
        } else if args.program.is_empty() {
            // The current folder's grader.toml, or the nearest parent's (as cargo finds
            // Cargo.toml); a --submission folder's own only.
            let found = if args.submission.is_some() {
                Some(sub_dir.join("grader.toml")).filter(|p| p.is_file())
            } else {
                sub_dir
                    .ancestors()
                    .map(|d| d.join("grader.toml"))
                    .find(|p| p.is_file())
            };
            let Some(p) = found else {
                return Err(PlanError::NoProgram(format!(
                    "give one after `--` (e.g. `isr-grader test -- python3 main.py`), or run in a folder with a grader.toml (student-template/ has one; neither {} nor a parent folder has one)",
                    sub_dir.display()
                )));
            };
            Some(config::load(&p)?)
        } else {
            None
        };
        let config_dir = loaded.as_ref().map(|c| absolute(cwd, &c.dir));
        let (argv, base) = match (&loaded, &config_dir) {
            (Some(c), Some(dir)) if args.program.is_empty() => (c.config.run.clone(), dir.clone()),
            _ => (args.program.clone(), cwd.to_path_buf()),
        };
        let mut sources = cli_sources(args);
        if sources.is_empty() {
            if let (Some(c), Some(dir)) = (&loaded, &config_dir)
                && !c.config.cases.is_empty()
            {
                sources.extend(
                    c.config
                        .cases
                        .iter()
                        .map(|d| CaseSource::Dir(absolute(dir, d))),
                );
            } else {
                sources.push(CaseSource::BuiltinPublic);
            }
        }
        let program_dir = config_dir.clone().unwrap_or_else(|| sub_dir.clone());
        let mut sandbox = base_policy(args, None, &sources);
        sandbox.read_only.push(program_dir.clone());
        let build = match (&loaded, &config_dir) {
            (Some(c), Some(dir)) if !args.no_build => c
                .config
                .build
                .clone()
                .map(|command| build_step(command, dir.clone(), &sandbox, false)),
            _ => None,
        };
        let sides = Sides {
            limits: loaded.as_ref().map(|c| &c.config.limits),
            jobs: loaded.as_ref().and_then(|c| c.config.jobs),
            explore: loaded.as_ref().map(|c| &c.config.explore),
            show_hidden: false,
            gradescope: Default::default(),
        };
        let mut plan = Self::finish(
            args,
            Trust::Student,
            &argv,
            &base,
            build,
            sources,
            sandbox,
            &sides,
            Vec::new(),
        );
        plan.last_run = config_dir.as_deref().map(crate::last_run::path_in);
        if args.program.is_empty() {
            plan.run_origin = loaded.as_ref().map(|c| key_location(&c.path, "run"));
        }
        if args.failed {
            let Some(path) = &plan.last_run else {
                return Err(PlanError::Failed(
                    "the last run's failures are kept beside grader.toml: run in a folder with one (not with a program after `--`)".into(),
                ));
            };
            match crate::last_run::failed(path) {
                Ok(Some(names)) => plan.only = Some(names),
                Ok(None) => {
                    return Err(PlanError::Failed(format!(
                        "no run recorded yet ({} does not exist): run `isr-grader test` once",
                        path.display()
                    )));
                }
                Err(e) => return Err(PlanError::Failed(e)),
            }
        }
        Ok(plan)
    }

    fn instructor(args: &TestArgs, cwd: &Path, path: &Path) -> Result<Plan, PlanError> {
        let inst = config::load_instructor(&absolute(cwd, path))?;
        let ic = &inst.config;
        let inst_dir = absolute(cwd, &inst.dir);
        let sub_dir = args
            .submission
            .as_ref()
            .map_or_else(|| cwd.to_path_buf(), |d| absolute(cwd, d));
        let sub_path = args
            .config
            .as_ref()
            .map_or_else(|| sub_dir.join("grader.toml"), |p| absolute(cwd, p));
        let sub = sub_path.exists().then(|| config::load_untrusted(&sub_path));
        let shown_sub = sub_path.display();
        let mut notes = Vec::new();
        if let Some(s) = &sub {
            if !s.other_keys.is_empty() {
                let keys: Vec<String> = s.other_keys.iter().map(|k| format!("`{k}`")).collect();
                notes.push(format!(
                    "{shown_sub} sets {}: ignored (cases, points, limits and jobs come only from the instructor's configuration)",
                    keys.join(", ")
                ));
            }
            if let Some(e) = &s.unreadable {
                notes.push(format!("{e}: the submission's config is ignored"));
            }
        }

        // The program: the flags, the instructor's `run`, the submission's if allowed, or what
        // the submission's files say it is.
        let mut detected_build = None;
        let sub_run = sub.as_ref().and_then(|s| s.run.clone());
        let (argv, base) = if !args.program.is_empty() {
            if sub_run.is_some() {
                notes.push(format!(
                    "{shown_sub} sets `run`: not used (the program is given on the command line)"
                ));
            }
            (args.program.clone(), cwd.to_path_buf())
        } else if let Some(run) = &ic.run {
            if sub_run.is_some() {
                notes.push(format!(
                    "{shown_sub} sets `run`: not used (the instructor's configuration sets it)"
                ));
            }
            (run.clone(), sub_dir.clone())
        } else if let Some(run) = sub_run
            .clone()
            .filter(|r| !r.is_empty() && ic.allow_submission_run)
        {
            (run, sub_dir.clone())
        } else if let Some(found) = crate::detect::detect(
            &sub_dir,
            ic.languages
                .as_deref()
                .unwrap_or(&crate::detect::Language::ALL),
            ic.build_network,
        ) {
            if sub_run.is_some() {
                notes.push(format!(
                    "{shown_sub} sets `run`: not used (the instructor's configuration does not say `allow_submission_run = true`)"
                ));
            }
            notes.push(format!(
                "a {} submission (it has {}): run `{}`{}",
                found.language,
                found.evidence,
                found.run.join(" "),
                found
                    .build
                    .as_ref()
                    .filter(|_| ic.build.is_none())
                    .map(|b| format!(", built with `{b}`"))
                    .unwrap_or_default()
            ));
            detected_build = found.build;
            (found.run, sub_dir.clone())
        } else if sub_run.as_ref().is_some_and(|r| !r.is_empty()) {
            return Err(PlanError::NoProgram(format!(
                "{} sets no `run`, and the submission's ({shown_sub}) is not used unless it says `allow_submission_run = true`",
                inst.path.display()
            )));
        } else {
            let why = match sub.as_ref().and_then(|s| s.unreadable.as_ref()) {
                Some(e) => format!("the submission's config cannot be read ({e})"),
                None => format!("{shown_sub} gives none"),
            };
            return Err(PlanError::NoProgram(format!(
                "give one after `--`, or set `run` in {} ({why}; and the submission is neither a Cargo package nor a main.py)",
                inst.path.display()
            )));
        };

        let mut sources = cli_sources(args);
        if sources.is_empty() {
            if ic.builtin || ic.cases.is_empty() {
                sources.push(CaseSource::BuiltinPublic);
            }
            sources.extend(
                ic.cases
                    .iter()
                    .map(|d| CaseSource::Dir(absolute(&inst_dir, d))),
            );
        }
        let mut sandbox = base_policy(args, Some(ic), &sources);
        sandbox.hidden.push(inst.path.clone());
        sandbox
            .read_only
            .extend(ic.allow_read.iter().map(|p| absolute(&inst_dir, p)));
        sandbox.read_only.push(sub_dir.clone());
        let folders = report_folders(args, cwd, &sandbox.read_only);
        sandbox.hidden.extend(folders);

        // The build: the instructor's, or the submission's if allowed.
        let sub_build = sub.as_ref().and_then(|s| s.build.clone());
        let command = match (&ic.build, sub_build) {
            (Some(b), other) => {
                if other.is_some() {
                    notes.push(format!(
                        "{shown_sub} sets `build`: not used (the instructor's configuration sets it)"
                    ));
                }
                Some(b.clone())
            }
            (None, Some(b)) if ic.allow_submission_build => Some(b),
            (None, Some(_)) => {
                notes.push(format!(
                    "{shown_sub} sets `build`: ignored (the instructor's configuration does not say `allow_submission_build = true`)"
                ));
                detected_build
            }
            (None, None) => detected_build,
        };
        let build = command
            .filter(|_| !args.no_build)
            .map(|c| build_step(c, sub_dir.clone(), &sandbox, ic.build_network));
        let sides = Sides {
            limits: Some(&ic.limits),
            jobs: ic.jobs,
            explore: Some(&ic.explore),
            show_hidden: ic.show_hidden,
            gradescope: ic.gradescope.options(),
        };
        Ok(Self::finish(
            args,
            Trust::Instructor,
            &argv,
            &base,
            build,
            sources,
            sandbox,
            &sides,
            notes,
        ))
    }

    #[allow(clippy::too_many_arguments)] // one private constructor fed by the two modes above
    fn finish(
        args: &TestArgs,
        trust: Trust,
        argv: &[String],
        base: &Path,
        build: Option<BuildStep>,
        sources: Vec<CaseSource>,
        sandbox: Policy,
        sides: &Sides<'_>,
        notes: Vec<String>,
    ) -> Plan {
        let mut limits = Limits::default();
        if let Some(t) = args.timeout.or(sides.limits.and_then(|l| l.timeout_secs)) {
            limits.timeout = t.get();
        }
        if let Some(m) = args.memory.or(sides.limits.and_then(|l| l.memory_mb)) {
            limits.memory_bytes = Some(m.bytes());
        }
        if let Some(k) = args.output_limit.or(sides.limits.and_then(|l| l.output_kb)) {
            limits.output_cap = k.bytes();
        }
        Plan {
            trust,
            program: resolve_args(argv, base),
            shown_program: argv.join(" "),
            build,
            sources,
            filter: args.filter.clone(),
            limits,
            jobs: args.jobs.or(sides.jobs).map_or(0, |j| j.get()),
            sandbox,
            output: Output {
                format: args.format,
                verbose: args.verbose,
                quiet: args.quiet,
                timings: args.timings,
                junit: args.junit.clone(),
                gradescope: args.gradescope.clone(),
                gradescope_options: sides.gradescope,
                max_fail: if args.fail_fast {
                    Some(1)
                } else {
                    args.max_fail
                        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                },
                summary: args.summary.clone(),
                html: args.html.clone(),
                timelines: args.timelines.clone(),
            },
            notes,
            last_run: None,
            only: None,
            program_base: base.to_path_buf(),
            run_origin: None,
            explore: crate::grade::beyond::settings(&args.explore, sides.explore),
            show_hidden: args.explore.show_hidden || sides.show_hidden,
        }
    }
}

/// The case sources the flags name, or the built-in public cases: what `test --list` shows when
/// nothing names a program (no config is read then).
pub fn flag_sources(args: &TestArgs) -> Vec<CaseSource> {
    let sources = cli_sources(args);
    if sources.is_empty() {
        vec![CaseSource::BuiltinPublic]
    } else {
        sources
    }
}

fn cli_sources(args: &TestArgs) -> Vec<CaseSource> {
    let mut sources = Vec::new();
    if !args.cases.is_empty() {
        if args.builtin {
            sources.push(CaseSource::BuiltinPublic);
        }
        sources.extend(args.cases.iter().cloned().map(CaseSource::Dir));
    }
    sources
}

/// The sandbox policy: instructor-side settings only (flags, the instructor's file), never the
/// submission's files. Hidden: the case folders and the report paths.
fn base_policy(
    args: &TestArgs,
    inst: Option<&config::InstructorConfig>,
    sources: &[CaseSource],
) -> Policy {
    let mut hidden: Vec<PathBuf> = sources
        .iter()
        .filter_map(|s| match s {
            CaseSource::Dir(d) => Some(d.clone()),
            CaseSource::BuiltinPublic => None,
        })
        .collect();
    hidden.extend(args.junit.iter().cloned());
    hidden.extend(args.gradescope.iter().cloned());
    hidden.extend(args.summary.iter().cloned());
    hidden.extend(args.html.iter().cloned());
    hidden.extend(args.timelines.iter().cloned());
    let mode = args
        .sandbox
        .or(inst.and_then(|i| i.sandbox))
        .unwrap_or_default();
    let run_as = args
        .sandbox_uid
        .or(inst.and_then(|i| i.sandbox_uid))
        .map(|r| (r.uid, r.gid));
    Policy {
        mode: mode.into(),
        run_as,
        hidden,
        ..Default::default()
    }
}

/// The folders the reports are written in (Gradescope's `/autograder/results`), to hide whole
/// in instructor mode: a hidden file that does not exist yet cannot be covered, and a program
/// must neither forge a report before the grader writes it nor leave one beside it. A folder
/// is left visible when it holds something the program needs (the submission, a readable
/// path), and so is a folder at the top of the file system (`/`, `/tmp`).
fn report_folders(args: &TestArgs, cwd: &Path, needed: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = Vec::new();
    for file in [&args.gradescope, &args.junit, &args.summary]
        .into_iter()
        .flatten()
    {
        let Some(dir) = absolute(cwd, file).parent().map(Path::to_path_buf) else {
            continue;
        };
        let deep = dir
            .components()
            .filter(|c| matches!(c, std::path::Component::Normal(_)))
            .count()
            >= 2;
        if deep && !needed.iter().any(|n| n.starts_with(&dir)) && !folders.contains(&dir) {
            folders.push(dir);
        }
    }
    folders
}

fn build_step(command: String, dir: PathBuf, runs: &Policy, network: bool) -> BuildStep {
    // The build is submission code too: the same hidden paths, writes only to its own folder,
    // and (a root grader) uid 0 without capabilities, since toolchains often live in root's
    // home; the network only if the instructor allows it.
    let policy = Policy {
        read_only: vec!["/".into()],
        read_write: vec![dir.clone()],
        run_as: Some((0, 0)),
        network,
        ..runs.clone()
    };
    BuildStep {
        command,
        dir,
        policy,
    }
}

/// Checks that the program (as the runner resolved it) is something a grader can run: an ELF
/// executable or a script starting with `#!`. Anything else would go through `/bin/sh` and fail
/// on every case (exit 127), blaming the student for the instructor's command line.
pub fn check_program(path: &Path) -> Result<(), PlanError> {
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..n];
    if head.starts_with(b"#!") && first_line(path).is_some_and(|l| l.ends_with(b"\r")) {
        return Err(PlanError::Program(
            path.to_path_buf(),
            format!(
                "its `#!` line ends with a Windows line end (CRLF), so the system looks for an interpreter whose name ends in a carriage return. Save it with LF line ends (`sed -i 's/\\r$//' {}`, or your editor's line-end setting)",
                path.display()
            ),
        ));
    }
    if head.starts_with(b"\x7fELF") || head.starts_with(b"#!") {
        return Ok(());
    }
    Err(PlanError::Program(
        path.to_path_buf(),
        "neither an ELF executable nor a script starting with `#!`; it would be run by /bin/sh and fail on every case. Add a `#!` line (e.g. `#!/usr/bin/env python3`) or name its interpreter (`-- python3 FILE`)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn only_arguments_naming_files_become_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.py"), "").unwrap();
        let argv: Vec<String> = ["python3", "main.py", "", "--fault", "x"]
            .map(String::from)
            .into();
        let resolved = resolve_args(&argv, dir.path());
        assert_eq!(
            resolved[1],
            dir.path().join("main.py").display().to_string()
        );
        // An empty argument stays empty (it names no file, not the folder).
        assert_eq!(&resolved[2..], ["", "--fault", "x"]);
    }

    fn args(line: &[&str]) -> TestArgs {
        let mut argv = vec!["isr-grader", "test"];
        argv.extend_from_slice(line);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Test(a) => a,
            _ => unreachable!(),
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn instructor_mode_ignores_the_submissions_cases_and_limits() {
        let inst = tempfile::tempdir().unwrap();
        let sub = tempfile::tempdir().unwrap();
        let icfg = write(
            inst.path(),
            "instructor.toml",
            "cases = [\"hidden\"]\nallow_submission_run = true\n[limits]\ntimeout_secs = 2\n",
        );
        write(
            sub.path(),
            "grader.toml",
            "run = [\"./leader\"]\nbuild = \"make\"\ncases = [\"mine\"]\njobs = 99\n[limits]\ntimeout_secs = 0\n",
        );
        let a = args(&[
            "--instructor-config",
            icfg.to_str().unwrap(),
            "--submission",
            sub.path().to_str().unwrap(),
        ]);
        let plan = Plan::resolve(&a, Path::new("/")).unwrap();
        assert_eq!(plan.trust, Trust::Instructor);
        assert_eq!(plan.sources, [CaseSource::Dir(inst.path().join("hidden"))]);
        assert_eq!(plan.limits.timeout, std::time::Duration::from_secs(2));
        assert_eq!(plan.jobs, 0);
        assert_eq!(plan.shown_program, "./leader");
        assert_eq!(
            plan.program,
            [sub.path().join("leader").display().to_string()],
            "relative to the submission (no `./` left), though it does not exist yet"
        );
        assert!(plan.build.is_none(), "the build was not allowed");
        let notes = plan.notes.join("\n");
        assert!(
            notes.contains("`cases`, `jobs`, `limits`: ignored"),
            "{notes}"
        );
        assert!(notes.contains("`build`: ignored"), "{notes}");
        assert!(plan.sandbox.hidden.contains(&icfg));
        assert!(plan.sandbox.read_only.contains(&sub.path().to_path_buf()));
    }

    #[test]
    fn instructor_mode_hides_the_report_folders_unless_the_program_needs_them() {
        let inst = tempfile::tempdir().unwrap();
        let sub = tempfile::tempdir().unwrap();
        let icfg = write(inst.path(), "i.toml", "run = [\"./leader\"]\n");
        let results = inst.path().join("results");
        let resolve = |report: &Path| {
            let a = args(&[
                "--instructor-config",
                icfg.to_str().unwrap(),
                "--submission",
                sub.path().to_str().unwrap(),
                "--gradescope",
                report.to_str().unwrap(),
            ]);
            Plan::resolve(&a, Path::new("/")).unwrap().sandbox.hidden
        };
        let hidden = resolve(&results.join("results.json"));
        assert!(hidden.contains(&results), "{hidden:?}");
        // A report written into the submission's folder: that folder stays readable.
        let hidden = resolve(&sub.path().join("results.json"));
        assert!(!hidden.contains(&sub.path().to_path_buf()), "{hidden:?}");
        assert!(
            hidden.contains(&sub.path().join("results.json")),
            "{hidden:?}"
        );
        // Never a folder at the top of the file system.
        let hidden = resolve(Path::new("/tmp/results.json"));
        assert!(!hidden.contains(&PathBuf::from("/tmp")), "{hidden:?}");
    }

    #[test]
    fn instructor_mode_needs_permission_for_the_submissions_run() {
        let inst = tempfile::tempdir().unwrap();
        let sub = tempfile::tempdir().unwrap();
        let icfg = write(inst.path(), "i.toml", "build_network = true\n");
        write(sub.path(), "grader.toml", "run = [\"./leader\"]\n");
        let a = args(&[
            "--instructor-config",
            icfg.to_str().unwrap(),
            "--submission",
            sub.path().to_str().unwrap(),
        ]);
        let e = Plan::resolve(&a, Path::new("/")).unwrap_err().to_string();
        assert!(e.contains("allow_submission_run = true"), "{e}");
    }

    #[test]
    fn student_mode_trusts_grader_toml() {
        let sub = tempfile::tempdir().unwrap();
        write(
            sub.path(),
            "grader.toml",
            "run = [\"./leader\"]\nbuild = \"make\"\ncases = [\"mine\"]\njobs = 3\n[limits]\ntimeout_secs = 4\n",
        );
        let a = args(&["--submission", sub.path().to_str().unwrap()]);
        let plan = Plan::resolve(&a, Path::new("/")).unwrap();
        assert_eq!(plan.trust, Trust::Student);
        assert_eq!(plan.sources, [CaseSource::Dir(sub.path().join("mine"))]);
        assert_eq!(plan.jobs, 3);
        assert_eq!(plan.limits.timeout, std::time::Duration::from_secs(4));
        assert_eq!(plan.build.unwrap().command, "make");
        assert!(!plan.sandbox.network);
    }

    #[test]
    fn flags_reject_absurd_values() {
        for bad in [
            ["--timeout", "0"],
            ["--timeout", "1e300"],
            ["--timeout", "NaN"],
            ["--timeout", "-1"],
            ["--memory", "0"],
            ["--output-limit", "0"],
            ["--jobs", "0"],
            ["--sandbox-uid", "0"],
        ] {
            let mut argv = vec!["isr-grader", "test"];
            argv.extend_from_slice(&bad);
            assert!(
                crate::cli::Cli::try_parse_from(argv).is_err(),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn spawn_errors_say_what_to_do_and_where_the_program_was_named() {
        use crate::runner::SpawnError;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "grader.toml",
            "# mine\nrun = [\"./target/release/leader\"]\n",
        );
        write(d, "main.py", "print(1)\n");
        write(d, "run.sh", "#!/bin/sh\necho\n");
        write(d, "crlf.sh", "#!/bin/sh\r\necho\r\n");
        let a = args(&["--submission", d.to_str().unwrap()]);
        let plan = Plan::resolve(&a, Path::new("/")).unwrap();
        assert_eq!(
            plan.program,
            [d.join("target/release/leader").display().to_string()],
            "no `./` left in the path"
        );
        let e = plan.start_error(&SpawnError::NotFound(d.join("target/release/leader")));
        let toml = d.join("grader.toml").display().to_string();
        assert!(e.starts_with(&format!("{toml}:2: cannot start")), "{e}");
        assert!(e.contains("did you build it?"), "{e}");
        let e = plan.start_error(&SpawnError::NotFound("main.py".into()));
        assert!(e.contains("run it as `python3 main.py`"), "{e}");
        let e = plan.start_error(&SpawnError::NotExecutable(d.join("main.py")));
        assert!(e.contains("run it as `python3"), "{e}");
        let e = plan.start_error(&SpawnError::NotExecutable(d.join("run.sh")));
        assert!(e.contains("`chmod +x"), "{e}");
        let e = check_program(&d.join("crlf.sh")).unwrap_err().to_string();
        assert!(e.contains("CRLF"), "{e}");
        assert!(check_program(&d.join("run.sh")).is_ok());
    }
}
