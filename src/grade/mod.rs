//! The `test` and `show` commands: run the program on every case, compare, diagnose, report.
//!
//! Data flow of `test`: config and cases are loaded ([`crate::config`], [`crate::cases`]); the
//! optional build runs once; every case runs through [`crate::runner`] in parallel; each outcome
//! becomes a verdict and, when wrong, a first difference traced back to the input command that
//! produced the expected line ([`isr_reference::output_lines`]) with the reference's explanation
//! of it; then [`diagnosis`] names the mistake; then [`crate::report`] renders.

pub mod compare;
pub mod diagnosis;

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use isr_reference::diagnose::is_event_line;
use isr_reference::explain::explain_steps;
use isr_reference::{FaultSet, output_lines};

use crate::CmdResult;
use crate::cases::{self, BUILTIN_LABEL, Case, CaseSource, Visibility};
use crate::cli::{DemoArgs, Format, LeaderArgs, ShowArgs, TestArgs};
use crate::report::{self, BuildReport, CaseReport, Origin, Report, Verdict};
use crate::runner::{self, Limits, Program, RunOutcome, Termination};

/// What one case produced, for the diagnosis: the program's event lines (None when its output is
/// not comparable: timeout, crash, output limit).
pub struct Observation {
    /// Event lines, normalized, stray lines removed.
    pub events: Option<Vec<String>>,
    /// The expected lines, normalized.
    pub expected: Vec<String>,
}

/// `isr-grader test`.
pub fn test_cmd(args: TestArgs) -> CmdResult {
    let gradescope = args.gradescope.clone();
    let result = test_inner(args);
    if let (Err(e), Some(path)) = (&result, &gradescope) {
        let doc = report::gradescope::render_error(&e.to_string());
        let _ = cases::write_atomic(path, format!("{doc:#}\n").as_bytes());
    }
    result
}

fn test_inner(args: TestArgs) -> CmdResult {
    runner::prepare_grader_process()?;
    let mut clock = Timings::new(args.timings);
    let cwd = std::env::current_dir()?;
    let config = if let Some(p) = &args.config {
        Some(crate::config::load(p)?)
    } else if args.program.is_empty() {
        let p = Path::new("grader.toml");
        if !p.exists() {
            return Err(format!(
                "no program to grade: give one after `--` (e.g. `isr-grader test -- python3 main.py`), or run in a folder with a grader.toml (student-template/ has one; {} has none)",
                cwd.display()
            )
            .into());
        }
        Some(crate::config::load(p)?)
    } else {
        None
    };
    let (argv, base) = if !args.program.is_empty() {
        (args.program.clone(), cwd.clone())
    } else {
        let c = config.as_ref().ok_or("no program to grade")?;
        (c.config.run.clone(), absolute(&cwd, &c.dir))
    };
    let shown_program = argv.join(" ");
    let argv = resolve_args(&argv, &base);

    // Cases.
    let mut sources = Vec::new();
    if !args.cases.is_empty() {
        if args.builtin {
            sources.push(CaseSource::BuiltinPublic);
        }
        sources.extend(args.cases.iter().cloned().map(CaseSource::Dir));
    } else if let Some(c) = config.as_ref().filter(|c| !c.config.cases.is_empty()) {
        sources.extend(
            c.config
                .cases
                .iter()
                .map(|d| CaseSource::Dir(absolute(&c.dir, d))),
        );
    } else {
        sources.push(CaseSource::BuiltinPublic);
    }
    let mut all = cases::load(&sources)?;
    if let Some(f) = &args.filter {
        all.retain(|c| cases::name_matches(&c.name, f));
        if all.is_empty() {
            return Err(format!("no case matches --filter {f:?}").into());
        }
    }
    for c in &all {
        if c.expected.is_none() {
            return Err(format!(
                "{}: missing expected output (run `isr-grader bless` on its folder)",
                c.expected_path().display()
            )
            .into());
        }
    }
    clock.lap("load cases");
    let policy = sandbox_policy(&args, &sources);
    let grader_exe = std::env::current_exe()?;
    let mut sandbox = runner::sandbox::prepare(&policy, &grader_exe)?;
    let case_sources: Vec<String> = sources
        .iter()
        .map(|s| match s {
            CaseSource::BuiltinPublic => BUILTIN_LABEL.to_string(),
            CaseSource::Dir(d) => d.display().to_string(),
        })
        .collect();

    // Build.
    let mut build = None;
    if let Some(c) = &config
        && let Some(cmd) = &c.config.build
        && !args.no_build
    {
        if args.format == Format::Human {
            eprintln!("building: {cmd}");
        }
        let dir = absolute(&cwd, &c.dir);
        // The build is submission code too: the same hidden paths, writes only to its own
        // folder, and (a root grader) uid 0 without capabilities, since toolchains often live
        // in root's home.
        let build_policy = runner::sandbox::Policy {
            read_only: vec!["/".into()],
            read_write: vec![dir.clone()],
            run_as: Some((0, 0)),
            ..policy.clone()
        };
        let build_sandbox = runner::sandbox::prepare(&build_policy, &grader_exe)?;
        let b = run_build(cmd, &dir, build_sandbox)?;
        let ok = b.ok;
        build = Some(b);
        if !ok {
            let report = Report {
                program: shown_program,
                case_sources,
                sandbox: sandbox.status.to_string(),
                build,
                cases: Vec::new(),
                diagnosis: None,
            };
            emit(&report, &args)?;
            return Ok(1);
        }
    }

    clock.lap("build");
    // Run.
    let limits = limits(&args, config.as_ref().map(|c| &c.config));
    let mut program = Program::new(argv.iter().map(OsString::from));
    program.sandbox = Some(std::sync::Arc::new(sandbox.clone()));
    let exe =
        runner::resolve(&program).map_err(|e| format!("cannot start the program to grade: {e}"))?;
    sandbox.admit(&exe, &program.argv)?;
    program.sandbox = Some(std::sync::Arc::new(sandbox.clone()));
    for var in ["HOME", "LANG", "LC_ALL", "TMPDIR"] {
        if let Some(v) = std::env::var_os(var) {
            program.env.push((var.into(), v));
        }
    }
    let jobs = args
        .jobs
        .or(config.as_ref().and_then(|c| c.config.jobs))
        .unwrap_or(0);
    let outcomes = runner::run_parallel(jobs, &all, |case| {
        runner::run(&program, case.trace_text.as_bytes(), &limits)
    });
    let mut runs = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        match o {
            Ok(r) => runs.push(r),
            Err(e) => return Err(format!("cannot start the program to grade: {e}").into()),
        }
    }

    clock.lap("run");
    // Judge, diagnose, report.
    let (reports, observations): (Vec<CaseReport>, Vec<Observation>) = all
        .iter()
        .zip(&runs)
        .map(|(case, run)| judge(case, run))
        .unzip();
    clock.lap("judge");
    let diagnosis = diagnosis::diagnose(&all, &reports, &observations);
    clock.lap("diagnose");
    let report = Report {
        program: shown_program,
        case_sources,
        sandbox: sandbox.status.to_string(),
        build,
        cases: reports,
        diagnosis: Some(diagnosis),
    };
    emit(&report, &args)?;
    clock.lap("report");
    Ok(if report.all_passed() { 0 } else { 1 })
}

/// Phase timings for `--timings` (stderr only, so reports stay deterministic).
struct Timings {
    on: bool,
    last: std::time::Instant,
}

impl Timings {
    fn new(on: bool) -> Self {
        Timings {
            on,
            last: std::time::Instant::now(),
        }
    }

    fn lap(&mut self, phase: &str) {
        let now = std::time::Instant::now();
        if self.on {
            eprintln!(
                "timing: {phase:<10} {:>8.1} ms",
                (now - self.last).as_secs_f64() * 1e3
            );
        }
        self.last = now;
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
/// program runs in a fresh temporary folder (`python3 main.py` keeps working).
fn resolve_args(argv: &[String], base: &Path) -> Vec<String> {
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            let p = Path::new(a);
            let looks_like_path = i > 0 || a.contains('/');
            if looks_like_path && !a.starts_with('-') && !p.is_absolute() && base.join(p).exists() {
                base.join(p).display().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// The sandbox policy: instructor-side settings only (flags), never the submission's files.
fn sandbox_policy(args: &TestArgs, sources: &[CaseSource]) -> runner::sandbox::Policy {
    let mut hidden: Vec<PathBuf> = sources
        .iter()
        .filter_map(|s| match s {
            CaseSource::Dir(d) => Some(d.clone()),
            CaseSource::BuiltinPublic => None,
        })
        .collect();
    hidden.extend(args.junit.iter().cloned());
    hidden.extend(args.gradescope.iter().cloned());
    runner::sandbox::Policy {
        mode: args.sandbox.unwrap_or_default().into(),
        hidden,
        ..Default::default()
    }
}

fn limits(args: &TestArgs, config: Option<&crate::config::GraderConfig>) -> Limits {
    let mut l = Limits::default();
    let c = config.map(|c| &c.limits);
    if let Some(t) = args.timeout.or(c.and_then(|c| c.timeout_secs))
        && t > 0.0
        && t.is_finite()
    {
        l.timeout = Duration::from_secs_f64(t);
    }
    if let Some(m) = args.memory.or(c.and_then(|c| c.memory_mb)) {
        l.memory_bytes = Some(m.saturating_mul(1 << 20));
    }
    if let Some(k) = args.output_limit.or(c.and_then(|c| c.output_kb)) {
        l.output_cap = usize::try_from(k.saturating_mul(1024)).unwrap_or(usize::MAX);
    }
    l
}

fn run_build(
    cmd: &str,
    dir: &Path,
    sandbox: runner::sandbox::Sandbox,
) -> Result<BuildReport, Box<dyn std::error::Error>> {
    let mut program = Program::new(["sh", "-c", cmd]);
    program.env = std::env::vars_os().collect();
    program.cwd = Some(dir.to_path_buf());
    program.sandbox = Some(std::sync::Arc::new(sandbox));
    let limits = Limits {
        timeout: Duration::from_secs(900),
        memory_bytes: None,
        output_cap: 64 << 20,
        stderr_tail: 64 << 10,
        file_size: None,
        ..Limits::default()
    };
    let out = runner::run(&program, b"", &limits)
        .map_err(|e| format!("cannot run the build command `{cmd}`: {e}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr_tail));
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    Ok(BuildReport {
        command: cmd.to_string(),
        ok: out.termination == Termination::Exited(0),
        output_tail: tail,
    })
}

/// Turns one run into a verdict and, when it failed, the details a student needs.
pub fn judge(case: &Case, run: &RunOutcome) -> (CaseReport, Observation) {
    let expected_text = case.expected.as_deref().unwrap_or("");
    let expected: Vec<String> = compare::normalize(expected_text.as_bytes())
        .into_iter()
        .map(|l| l.text)
        .collect();
    let actual_lines = compare::normalize(&run.stdout);
    let actual: Vec<String> = actual_lines.iter().map(|l| l.text.clone()).collect();
    let stray_lines: Vec<(usize, String)> = actual_lines
        .iter()
        .filter(|l| !is_event_line(&l.text))
        .map(|l| (l.number, l.text.clone()))
        .collect();
    let events: Vec<String> = actual
        .iter()
        .filter(|l| is_event_line(l))
        .cloned()
        .collect();
    let matches = expected == actual;
    let comparable = matches!(run.termination, Termination::Exited(_));
    let verdict = match &run.termination {
        Termination::TimedOut => Verdict::Timeout,
        Termination::OutputLimit => Verdict::OutputLimit,
        Termination::Signaled { name, .. } => Verdict::Crash {
            signal: (*name).to_string(),
        },
        Termination::Exited(code) if *code != 0 => Verdict::ExitCode { code: *code },
        Termination::Exited(_) if matches => Verdict::Pass,
        Termination::Exited(_) if actual.is_empty() => Verdict::NoOutput,
        Termination::Exited(_) => Verdict::Wrong,
    };
    let first_diff = if matches || matches!(verdict, Verdict::OutputLimit) {
        None
    } else {
        compare::first_diff(&expected, &actual)
    };
    let origin = first_diff
        .as_ref()
        .filter(|d| d.expected.is_some())
        .and_then(|d| origin(case, d.line - 1));
    let diff = if first_diff.is_some() {
        compare::line_diff(&expected, &actual, 3, 40)
    } else {
        Vec::new()
    };
    let max_points = case.meta.points;
    let report = CaseReport {
        name: case.name.clone(),
        title: case.meta.title.clone(),
        hidden: case.meta.visibility == Visibility::Hidden,
        points: if verdict.passed() { max_points } else { 0 },
        max_points,
        verdict,
        first_diff,
        origin,
        diff,
        stray_lines,
        stderr_tail: String::from_utf8_lossy(&run.stderr_tail).into_owned(),
        show_command: show_command(case),
        elapsed: run.elapsed,
    };
    (
        report,
        Observation {
            events: comparable.then_some(events),
            expected,
        },
    )
}

/// How a student sees this case in full (public cases only).
fn show_command(case: &Case) -> Option<String> {
    if case.meta.visibility == Visibility::Hidden {
        return None;
    }
    if case.on_disk {
        let dir = case.trace_path.parent().unwrap_or(Path::new("."));
        Some(format!(
            "isr-grader show {} --cases {}",
            case.name,
            dir.display()
        ))
    } else {
        Some(format!("isr-grader show {}", case.name))
    }
}

/// The input command that printed expected line `index`, with the reference's explanation.
fn origin(case: &Case, index: usize) -> Option<Origin> {
    let lines = output_lines(&case.trace, FaultSet::NONE);
    let step_index = lines.get(index)?.step;
    let step = case.trace.steps.get(step_index)?;
    // Explaining needs the state before the step: replay the prefix.
    let prefix = isr_reference::Trace {
        name: case.trace.name.clone(),
        config: case.trace.config.clone(),
        steps: case.trace.steps[..=step_index].to_vec(),
    };
    let explained = explain_steps(&prefix, FaultSet::NONE).pop()?;
    Some(Origin {
        location: format!("{}:{}", case.trace_path.display(), step.line),
        command: step.to_string(),
        explanation: explained.notes,
    })
}

fn emit(report: &Report, args: &TestArgs) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(path) = &args.junit {
        let xml = report::junit::render(report)?;
        cases::write_atomic(path, xml.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.gradescope {
        let doc = report::gradescope::render(report);
        cases::write_atomic(path, format!("{doc:#}\n").as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match args.format {
        Format::Json => {
            let doc = report::json::render(report);
            let mut out = std::io::stdout().lock();
            writeln!(out, "{doc:#}")?;
        }
        Format::Human => {
            let opts = report::human::Options {
                details: if args.verbose { usize::MAX } else { 3 },
            };
            let text = report::human::render(report, opts);
            let mut out = anstream::stdout().lock();
            write!(out, "{text}")?;
        }
    }
    Ok(())
}

/// `isr-grader show`: a case's description, trace, expected output and explained trace.
pub fn show_cmd(args: ShowArgs) -> CmdResult {
    let sources: Vec<CaseSource> = if args.cases.is_empty() {
        vec![CaseSource::BuiltinPublic]
    } else {
        args.cases.iter().cloned().map(CaseSource::Dir).collect()
    };
    let all = cases::load(&sources)?;
    let found: Vec<&Case> = match all.iter().find(|c| c.name == args.name) {
        Some(c) => vec![c],
        None => all.iter().filter(|c| c.name.contains(&args.name)).collect(),
    };
    let case = match found.as_slice() {
        [c] => *c,
        [] => return Err(format!("no case named {:?}", args.name).into()),
        many => {
            let names: Vec<&str> = many.iter().map(|c| c.name.as_str()).collect();
            return Err(format!(
                "{:?} matches several cases: {}",
                args.name,
                names.join(", ")
            )
            .into());
        }
    };
    let mut out = anstream::stdout().lock();
    writeln!(out, "{} — {}\n", case.name, case.meta.title)?;
    writeln!(out, "{}\n", case.meta.description.trim())?;
    writeln!(out, "--- input ({})", case.trace_path.display())?;
    write!(out, "{}", case.trace_text)?;
    if !case.trace_text.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "--- expected output")?;
    write!(
        out,
        "{}",
        case.expected.as_deref().unwrap_or("(not blessed yet)\n")
    )?;
    writeln!(out, "--- explained by the reference leader")?;
    write!(
        out,
        "{}",
        isr_reference::explain::explain(&case.trace, FaultSet::NONE)
    )?;
    Ok(0)
}

/// `isr-grader demo`: grades the bundled sample student on the built-in public cases.
pub fn demo_cmd(args: DemoArgs) -> CmdResult {
    FaultSet::parse(&args.fault)?;
    let exe = std::env::current_exe()?;
    eprintln!(
        "demo: grading a sample student (the reference leader with the mistake(s) {}) on the built-in public cases",
        args.fault
    );
    let code = test_cmd(TestArgs {
        format: args.format,
        program: vec![
            exe.display().to_string(),
            "leader".into(),
            "--fault".into(),
            args.fault,
        ],
        ..TestArgs::default()
    })?;
    // The demo's job is to show a report; a failing sample student is the expected outcome.
    Ok(if code == 1 { 0 } else { code })
}

/// `isr-grader leader`: the reference leader as a program (with mistakes, if asked).
pub fn leader_cmd(args: LeaderArgs) -> CmdResult {
    let faults = FaultSet::parse(&args.fault)?;
    isr_reference::stream::run_to_stdout("<stdin>", std::io::stdin(), faults)?;
    Ok(0)
}
