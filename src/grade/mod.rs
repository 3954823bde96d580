//! The `test` and `show` commands: run the program on every case, compare, diagnose, report.
//!
//! Data flow of `test`: config and cases are loaded ([`crate::config`], [`crate::cases`]); the
//! optional build runs once; every case runs through [`crate::runner`] in parallel; each outcome
//! becomes a verdict and, when wrong, a first difference traced back to the input command that
//! produced the expected line ([`isr_reference::output_lines`]) with the reference's explanation
//! of it; then [`diagnosis`] names the mistake; then [`crate::report`] renders.

pub mod beyond;
pub mod compare;
pub mod diagnosis;
pub mod did_not_run;
pub mod explore;
pub mod hidden;
pub mod live;
pub mod nondeterminism;
pub mod provenance;
pub mod shrink;
pub mod shrink_cmd;
pub mod timeline;

use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use isr_reference::diagnose::is_event_line;
use isr_reference::explain::explain_steps;
use isr_reference::{FaultSet, output_lines};

use crate::cases::{self, BUILTIN_LABEL, Case, CaseError, CaseSource, Visibility};
use crate::cli::{DemoArgs, Format, LeaderArgs, ShowArgs, TestArgs};
use crate::plan::{Output, Plan, PlanError, check_program};
use crate::report::{self, BuildReport, CaseReport, FirstDiff, Origin, Report, Verdict};
use crate::runner::{self, Limits, Program, RunOutcome, Termination};
use crate::{CmdResult, exit_codes};

/// What one case produced, for the diagnosis: the program's event lines (None when its output is
/// not comparable: timeout, crash, output limit).
pub struct Observation {
    /// Event lines, normalized, stray lines removed.
    pub events: Option<Vec<String>>,
    /// The expected lines, normalized.
    pub expected: Vec<String>,
    /// How the run differs from the reference (`STATUS HW`, `crash SIGSEGV`, ...; None: it does
    /// not, or it was not run): what shrinking keeps.
    pub failure: Option<String>,
    /// The run's output in brief, for the nondeterminism check (None: it did not exit).
    pub fingerprint: Option<nondeterminism::Fingerprint>,
}

/// `isr-grader test`.
pub fn test_cmd(args: TestArgs) -> CmdResult {
    let gradescope = args.gradescope.clone();
    let json = args.format == Format::Json;
    let summary = args.summary.clone();
    let html = args.html.clone();
    // From the start: an interrupt while the plan is resolved still gets every report.
    let result = (|| -> CmdResult {
        interrupt_flag()?;
        let cwd = std::env::current_dir()?;
        if args.list {
            return list_cases(&args, &cwd);
        }
        test_plan(Plan::resolve(&args, &cwd)?)
    })();
    if let (Err(e), Some(path)) = (&result, &gradescope) {
        let doc = report::gradescope::render_error(&e.to_string());
        let _ = cases::write_atomic(path, format!("{doc:#}\n").as_bytes());
    }
    if let (Err(e), true) = (&result, json) {
        // A document on stdout also when the grader could not grade: the caller parses stdout.
        let doc = report::json::render_error(&e.to_string());
        let _ = writeln!(std::io::stdout().lock(), "{doc}");
    }
    if let (Err(e), Some(path)) = (&result, &html) {
        let _ = cases::write_atomic(
            path,
            report::html_report::render_error(&e.to_string()).as_bytes(),
        );
    }
    if let (Err(e), Some(path)) = (&result, &summary) {
        let _ = append(
            path,
            report::markdown::render_error(&e.to_string()).as_bytes(),
        );
    }
    result
}

/// `isr-grader test --list`: the cases that would run, in corpus order, and nothing run. The
/// case sources are the plan's; when nothing names a program, the flags' (default: built in).
fn list_cases(args: &TestArgs, cwd: &Path) -> CmdResult {
    let sources = match Plan::resolve(args, cwd) {
        Ok(plan) => plan.sources,
        Err(PlanError::NoProgram(_)) => crate::plan::flag_sources(args),
        Err(e) => return Err(e.into()),
    };
    let mut all = cases::load(&sources)?;
    if let Some(f) = &args.filter {
        all.retain(|c| cases::name_matches(&c.name, f));
    }
    let width = all.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut out = anstream::stdout().lock();
    let written = all.iter().try_for_each(|c| {
        let hidden = if c.meta.visibility == Visibility::Hidden {
            " (hidden)"
        } else {
            ""
        };
        writeln!(
            out,
            "{:width$}  {}{hidden}",
            c.name,
            report::visible(&c.meta.title)
        )
    });
    match written {
        // `isr-grader test --list | head`: the reader has what it wanted.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(exit_codes::OK),
    }
}

/// Set by `SIGINT`/`SIGTERM` (the runner then kills the live groups and starts no new program):
/// `test` stops starting cases, and writes every report with the cases not run marked so.
pub(crate) fn interrupt_flag() -> Result<&'static Arc<AtomicBool>, std::io::Error> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(f) = FLAG.get() {
        return Ok(f);
    }
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, flag.clone())?;
    }
    Ok(FLAG.get_or_init(|| flag))
}

fn test_plan(plan: Plan) -> CmdResult {
    // The flag first: an interrupt that closes the runner is then always seen by `test` too.
    let interrupted = interrupt_flag()?;
    let (started, started_at) = (Instant::now(), SystemTime::now());
    runner::prepare_grader_process()?;
    let mut clock = Timings::new(plan.output.timings);

    // Cases.
    let mut all = filtered_cases(&plan)?;
    if let Some(only) = &plan.only {
        all.retain(|c| only.contains(&c.name));
        if all.is_empty() {
            eprintln!(
                "no case failed in the last run: nothing to re-run (`isr-grader test` runs them all)"
            );
            return Ok(exit_codes::OK);
        }
    }
    check_cases(&all, &plan.limits)?;
    clock.lap("load cases");
    let grader_exe = std::env::current_exe()?;
    let mut sandbox = runner::sandbox::prepare(&plan.sandbox, &grader_exe)?;
    let case_sources: Vec<String> = plan
        .sources
        .iter()
        .map(|s| match s {
            CaseSource::BuiltinPublic => BUILTIN_LABEL.to_string(),
            CaseSource::Dir(d) => d.display().to_string(),
        })
        .collect();
    let cases_hash = provenance::cases_hash(&all);
    let mut report = Report {
        grader_version: crate::version::with_cases(&cases_hash),
        program: plan.shown_program.clone(),
        case_sources,
        sandbox: sandbox.status.to_string(),
        notes: plan.notes.clone(),
        interrupted: false,
        build: None,
        cases: Vec::new(),
        diagnosis: None,
        public_diagnosis: None,
        points_possible: all
            .iter()
            .fold(0u32, |sum, c| sum.saturating_add(c.meta.points)),
        started: Some(started_at),
        elapsed: Duration::ZERO,
        explored: None,
        did_not_run: None,
        settings: report::RunSettings {
            timeout_secs: plan.limits.timeout.as_secs_f64(),
            memory_mib: plan.limits.memory_bytes.map(|b| b >> 20),
            output_kib: (plan.limits.output_cap >> 10) as u64,
            seed: None,
            cases_hash,
        },
    };

    // Build (not started once interrupted; a build the interrupt stopped is no build failure).
    let is_interrupted = || interrupted.load(Ordering::SeqCst);
    if let Some(step) = plan.build.as_ref().filter(|_| !is_interrupted()) {
        if plan.output.format == Format::Human && !plan.output.quiet {
            eprintln!("building: {}", report::visible(&step.command));
        }
        let build_sandbox = runner::sandbox::prepare(&step.policy, &grader_exe)?;
        match run_build(&step.command, &step.dir, build_sandbox) {
            Ok(b) => report.build = Some(b),
            Err(_) if is_interrupted() => {}
            Err(e) => return Err(e),
        }
        if report.build.as_ref().is_some_and(|b| !b.ok) && !is_interrupted() {
            emit(&mut report, &plan.output, false, started)?;
            return Ok(exit_codes::FAILED);
        }
    }
    if is_interrupted() {
        report.interrupted = true;
        report.cases = all.iter().map(|c| not_run(c).0).collect();
        emit(&mut report, &plan.output, false, started)?;
        return Ok(exit_codes::INTERRUPTED);
    }
    clock.lap("build");

    // Run and judge each case as it ends, so that only the verdicts (bounded in size) are kept,
    // never every case's output.
    let mut program = Program::new(plan.program.iter().map(OsString::from));
    program.sandbox = Some(Arc::new(sandbox.clone()));
    let exe = runner::resolve(&program).map_err(|e| plan.start_error(&e))?;
    check_program(&exe).map_err(|e| plan.located(e.to_string()))?;
    sandbox.admit(&exe, &program.argv)?;
    report.sandbox = sandbox.status.to_string();
    program.sandbox = Some(Arc::new(sandbox));
    for var in ["HOME", "LANG", "LC_ALL", "TMPDIR"] {
        if let Some(v) = std::env::var_os(var) {
            program.env.push((var.into(), v));
        }
    }
    let limits = &plan.limits;
    // Live: the header now, each case's line as it finishes (in corpus order).
    let live = live::Live::new(all.len(), plan.output.format == Format::Human);
    report.cases = all.iter().map(|c| not_run(c).0).collect();
    live.header(&format!("{}\n", report::human::header(&report)));
    let width = report::human::name_width(&report);
    let failures = std::sync::atomic::AtomicUsize::new(0);
    let stop_after = plan.output.max_fail.unwrap_or(usize::MAX);
    let indices: Vec<usize> = (0..all.len()).collect();
    let judged = runner::run_parallel(plan.jobs, &indices, |&index| {
        let case = &all[index];
        let result = run_case(case, &program, limits, interrupted, || {
            failures.load(Ordering::SeqCst) >= stop_after
        });
        if let Ok((r, _)) = &result {
            if !r.verdict.passed() && r.verdict != report::Verdict::NotRun {
                failures.fetch_add(1, Ordering::SeqCst);
            }
            let quiet_pass = plan.output.quiet && r.verdict.passed();
            let line = if quiet_pass {
                String::new()
            } else {
                report::human::case_line(r, width)
            };
            live.finished(index, line);
        }
        result
    });
    live.done();
    let stopped_early = failures.load(Ordering::SeqCst) >= stop_after
        && judged
            .iter()
            .any(|j| matches!(j, Ok((r, _)) if r.verdict == report::Verdict::NotRun));
    let mut reports = Vec::with_capacity(judged.len());
    let mut observations = Vec::with_capacity(judged.len());
    for j in judged {
        match j {
            Ok((r, o)) => {
                reports.push(r);
                observations.push(o);
            }
            Err(e) => return Err(format!("cannot start the program to grade: {e}").into()),
        }
    }
    clock.lap("run+judge");
    report.interrupted = interrupted.load(Ordering::SeqCst);
    // Diagnose (and explore, shrink) only a whole run: a partial one would name mistakes from
    // half the evidence.
    if !report.interrupted && !stopped_early {
        let beyond = beyond::after_corpus(
            &plan,
            &program,
            &all,
            &mut reports,
            &observations,
            interrupted,
        );
        report.diagnosis = beyond.diagnosis;
        report.public_diagnosis = beyond.public_diagnosis;
        report.settings.seed = beyond.explored.as_ref().map(|e| e.seed);
        report.explored = beyond.explored;
        report.did_not_run = beyond.did_not_run;
        if plan.output.timings {
            eprintln!(
                "timing: diagnose   {:>8.1} ms (within what follows)",
                beyond.diagnose.as_secs_f64() * 1e3
            );
            eprintln!(
                "timing: beyond the corpus, the program ran {} times",
                beyond.runs
            );
        }
    } else if !plan.show_hidden {
        hidden::redact(&mut reports);
    }
    clock.lap("after the corpus");
    report.cases = reports;
    emit(&mut report, &plan.output, live.streams(), started)?;
    if let Some(path) = &plan.last_run {
        // Only the cases that ran: one not run (interrupt, --fail-fast) keeps its last state.
        let ran: Vec<&CaseReport> = report
            .cases
            .iter()
            .filter(|c| c.verdict != Verdict::NotRun)
            .collect();
        let names: Vec<&str> = ran.iter().map(|c| c.name.as_str()).collect();
        let failed: Vec<&str> = ran
            .iter()
            .filter(|c| !c.verdict.passed())
            .map(|c| c.name.as_str())
            .collect();
        if let Err(e) = crate::last_run::record(path, &names, &failed) {
            eprintln!(
                "isr-grader: warning: cannot record this run in {}: {e}",
                path.display()
            );
        }
    }
    clock.lap("report");
    // An interrupt after the last case still ends with 130: the caller asked the grader to stop.
    Ok(
        if report.interrupted || interrupted.load(Ordering::SeqCst) {
            exit_codes::INTERRUPTED
        } else if report.all_passed() {
            exit_codes::OK
        } else {
            exit_codes::FAILED
        },
    )
}

/// The plan's cases, loaded and selected by its `--filter` (not yet checked: see
/// [`check_cases`]).
pub(crate) fn filtered_cases(plan: &Plan) -> Result<Vec<Case>, Box<dyn std::error::Error>> {
    let mut all = cases::load(&plan.sources)?;
    if let Some(f) = &plan.filter {
        all.retain(|c| cases::name_matches(&c.name, f));
        if all.is_empty() {
            return Err(format!("no case matches --filter {f:?}").into());
        }
    }
    Ok(all)
}

/// Runs and judges one case; a case not started (interrupted, or `stop()` says enough cases
/// failed) is `not-run`.
fn run_case(
    case: &Case,
    program: &Program,
    limits: &Limits,
    interrupted: &AtomicBool,
    stop: impl Fn() -> bool,
) -> Result<(CaseReport, Observation), runner::SpawnError> {
    if interrupted.load(Ordering::SeqCst) || stop() {
        return Ok(not_run(case));
    }
    match runner::run(program, case.trace_text.as_bytes(), limits) {
        // Killed by the interrupt handler: not the program's doing.
        Ok(run)
            if interrupted.load(Ordering::SeqCst)
                && matches!(run.termination, Termination::Signaled { signal: 9, .. }) =>
        {
            Ok(not_run(case))
        }
        Ok(run) => Ok(judge(case, &run)),
        // Refused by the closed runner (or its sandbox set-up cut short by the kill).
        Err(_) if interrupted.load(Ordering::SeqCst) => Ok(not_run(case)),
        Err(e) => Err(e),
    }
}

/// The report of a case that was not run (the grader was interrupted, or stopped early).
fn not_run(case: &Case) -> (CaseReport, Observation) {
    let report = CaseReport::bare(
        &case.name,
        &case.meta.title,
        case.meta.visibility == Visibility::Hidden,
        Verdict::NotRun,
        case.meta.points,
    );
    (
        report,
        Observation {
            events: None,
            expected: Vec::new(),
            failure: None,
            fingerprint: None,
        },
    )
}

/// The instructor's own mistakes, refused before anything runs (each names the file, and the
/// line where there is one): a case without an expected output, an expected output that is not
/// what the reference prints for its trace (stale: a correct program would fail it), one larger
/// than the output limit (a correct program would be stopped), points that overflow.
pub(crate) fn check_cases(all: &[Case], limits: &Limits) -> Result<(), CaseError> {
    let mut total: u32 = 0;
    for c in all {
        let Some(expected) = &c.expected else {
            return Err(CaseError {
                path: c.expected_path(),
                line: None,
                message: "missing expected output (run `isr-grader bless` on its folder)".into(),
            });
        };
        if expected.len() > limits.output_cap {
            return Err(CaseError {
                path: c.expected_path(),
                line: None,
                message: format!(
                    "{} bytes, more than the output limit of {} KiB: a correct program would be stopped; raise --output-limit",
                    expected.len(),
                    limits.output_cap >> 10
                ),
            });
        }
        let reference = isr_reference::output(&c.trace, FaultSet::NONE);
        let want = compare::normalize(&reference);
        let have = compare::normalize(expected);
        let n = want.len().max(have.len());
        if let Some(i) =
            (0..n).find(|&i| want.get(i).map(|l| l.text) != have.get(i).map(|l| l.text))
        {
            let line = have
                .get(i)
                .map(|l| l.number)
                .or_else(|| Some(expected.lines().count() + 1));
            return Err(CaseError {
                path: c.expected_path(),
                line,
                message: format!(
                    "stale expected output: the reference prints {} here for {}, the file has {}; run `isr-grader bless` on its folder",
                    want.get(i)
                        .map_or("nothing more".to_string(), |l| format!("`{}`", l.text)),
                    c.trace_path.display(),
                    have.get(i).map_or("nothing more".to_string(), |l| format!(
                        "`{}`",
                        report::visible(l.text)
                    )),
                ),
            });
        }
        total = total.checked_add(c.meta.points).ok_or_else(|| {
            let path = c.meta_path();
            let line = std::fs::read_to_string(&path).ok().and_then(|t| {
                t.lines()
                    .position(|l| l.trim_start().starts_with("points"))
                    .map(|i| i + 1)
            });
            CaseError {
                path,
                line,
                message: format!("points: the total over the cases passes {} here", u32::MAX),
            }
        })?;
    }
    Ok(())
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

/// Longest program-originated line kept in a report, in bytes (longer ones are cut).
pub const MAX_LINE_BYTES: usize = 200;
/// Most stray lines kept per case (all are counted).
pub const MAX_STRAY_LINES: usize = 20;
/// Lines of the build's output kept.
const BUILD_TAIL_LINES: usize = 30;

fn run_build(
    cmd: &str,
    dir: &Path,
    sandbox: runner::sandbox::Sandbox,
) -> Result<BuildReport, Box<dyn std::error::Error>> {
    let mut program = Program::new(["sh", "-c", cmd]);
    program.env = std::env::vars_os().collect();
    program.cwd = Some(dir.to_path_buf());
    program.sandbox = Some(Arc::new(sandbox));
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
    // The tail of stdout, then of stderr: only the last lines are kept, each cut to a bound.
    let mut tail: Vec<String> = Vec::with_capacity(BUILD_TAIL_LINES);
    for part in [&out.stdout, &out.stderr_tail] {
        let text = String::from_utf8_lossy(part);
        let lines: Vec<&str> = text.lines().rev().take(BUILD_TAIL_LINES).collect();
        tail.extend(lines.into_iter().rev().map(|l| cut(l).into_owned()));
    }
    let tail = tail[tail.len().saturating_sub(BUILD_TAIL_LINES)..].join("\n");
    Ok(BuildReport {
        command: cmd.to_string(),
        ok: out.termination == Termination::Exited(0),
        output_tail: tail,
    })
}

/// `line` cut to [`MAX_LINE_BYTES`] (on a character boundary), with a note of what was cut.
pub(crate) fn cut(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= MAX_LINE_BYTES {
        return line.into();
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} more bytes)", &line[..end], line.len() - end).into()
}

/// Turns one run into a verdict and, when it failed, the details a student needs.
///
/// What it keeps is bounded whatever the program printed: the program's lines are borrowed from
/// its output (no allocation per line), at most the expected count plus [`EXTRA_LINES`] are
/// kept for comparing, at most [`MAX_STRAY_LINES`] stray lines (all counted), lines cut to
/// [`MAX_LINE_BYTES`] (stderr's too: its tail is at most 8 KiB), a diff of at most 40 lines
/// around the first difference, event lines for the diagnosis only while they stay within
/// a few times the expected output, and for a failing case its picture ([`timeline`]: a few
/// hundred cells per row whatever the trace's length).
pub fn judge(case: &Case, run: &RunOutcome) -> (CaseReport, Observation) {
    let expected_text = case.expected.as_deref().unwrap_or("");
    let expected: Vec<String> = compare::normalize(expected_text)
        .into_iter()
        .map(|l| l.text.to_string())
        .collect();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let keep = expected.len() + EXTRA_LINES;
    // Event lines kept for the diagnosis: a few times the expected output (a known mistake
    // prints lines of the same shape, and not many more of them); past that, nothing to
    // diagnose, and nothing more kept.
    let max_events = 4 * expected.len() + 64;
    let max_event_len = 2 * expected.iter().map(String::len).max().unwrap_or(0) + 64;
    let mut actual: Vec<&str> = Vec::with_capacity(keep.min(1 << 16));
    let mut actual_total = 0usize;
    let mut stray_lines = Vec::new();
    let mut stray_total = 0usize;
    let mut events: Option<Vec<String>> = Some(Vec::new());
    for line in compare::lines(&stdout) {
        actual_total += 1;
        if actual.len() < keep {
            actual.push(line.text);
        }
        if is_event_line(line.text) {
            if let Some(ev) = &mut events {
                if ev.len() < max_events && line.text.len() <= max_event_len {
                    ev.push(line.text.to_string());
                } else {
                    // Far more output than any known mistake prints: nothing to diagnose.
                    events = None;
                }
            }
        } else {
            stray_total += 1;
            if stray_lines.len() < MAX_STRAY_LINES {
                stray_lines.push((line.number, cut(line.text).into_owned()));
            }
        }
    }
    let matches =
        actual_total == expected.len() && expected.iter().zip(&actual).all(|(e, a)| e == a);
    let comparable = matches!(run.termination, Termination::Exited(_));
    let verdict = match &run.termination {
        Termination::TimedOut => Verdict::Timeout {
            limit_ms: u64::try_from(run.time_limit.as_millis()).unwrap_or(u64::MAX),
        },
        Termination::OutputLimit => Verdict::OutputLimit,
        Termination::Signaled { name, .. } => Verdict::Crash {
            signal: (*name).to_string(),
        },
        Termination::Exited(code) if *code != 0 => Verdict::ExitCode { code: *code },
        Termination::Exited(_) if matches => Verdict::Pass,
        Termination::Exited(_) if actual_total == 0 => Verdict::NoOutput,
        Termination::Exited(_) => Verdict::Wrong,
    };
    // `actual` holds more lines than expected whenever it was cut, so the first difference is
    // within it.
    let first_diff = if matches || matches!(verdict, Verdict::OutputLimit) {
        None
    } else {
        compare::first_diff(&expected, &actual).map(|d| FirstDiff {
            line: d.line,
            expected: d.expected.map(|l| cut(&l).into_owned()),
            actual: d.actual.map(|l| cut(&l).into_owned()),
        })
    };
    let origin = first_diff
        .as_ref()
        .filter(|d| d.expected.is_some())
        .and_then(|d| origin(case, d.line - 1));
    let diff = match &first_diff {
        Some(d) => {
            // Around the first difference only: a diff of millions of lines is neither
            // readable nor cheap.
            let from = (d.line - 1).saturating_sub(3);
            let window = |n: usize| from.min(n)..(d.line + DIFF_WINDOW).min(n);
            let e = &expected[window(expected.len())];
            let a = &actual[window(actual.len())];
            let mut diff = compare::line_diff(e, a, 3, 40);
            for l in &mut diff {
                if l.text.len() > MAX_LINE_BYTES {
                    l.text = cut(&l.text).into_owned();
                }
            }
            diff
        }
        None => Vec::new(),
    };
    let max_points = case.meta.points;
    // The picture of a failing case, drawn while its output is at hand (bounded).
    let timeline = (!verdict.passed()).then(|| {
        timeline::build(
            &format!("{} — {}", case.name, case.meta.title),
            &case.trace,
            &stdout,
        )
    });
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
        stray_total,
        stderr_tail: String::from_utf8_lossy(&run.stderr_tail)
            .lines()
            .map(cut)
            .collect::<Vec<_>>()
            .join("\n"),
        show_command: show_command(case),
        elapsed: run.elapsed,
        shrunk: None,
        nondeterminism: None,
        timeline,
    };
    (
        report,
        Observation {
            events: if comparable { events } else { None },
            expected,
            failure: shrink::failure_kind(
                &case.trace,
                FaultSet::NONE,
                &shrink::ProgramOutput::of(run),
            ),
            fingerprint: nondeterminism::Fingerprint::of(run),
        },
    )
}

/// Lines kept past the expected count for comparing (the rest is only counted).
const EXTRA_LINES: usize = 100;
/// Lines after the first difference that the diff looks at.
const DIFF_WINDOW: usize = 60;

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

/// Writes every report asked for; `listed`: the header and case lines were streamed already.
fn emit(
    report: &mut Report,
    args: &Output,
    listed: bool,
    started: Instant,
) -> Result<(), Box<dyn std::error::Error>> {
    report.elapsed = started.elapsed();
    let report = &*report;
    if let Some(path) = &args.junit {
        let xml = report::junit::render(report)?;
        cases::write_atomic(path, xml.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.gradescope {
        let doc = report::gradescope::render(report, &args.gradescope_options);
        cases::write_atomic(path, format!("{doc:#}\n").as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.html {
        cases::write_atomic(path, report::html_report::render(report).as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(dir) = &args.timelines {
        write_timelines(dir, &report.cases)
            .map_err(|e| format!("cannot write the pictures into {}: {e}", dir.display()))?;
    }
    if let Some(path) = &args.summary {
        append(path, report::markdown::render(report).as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match args.format {
        Format::Json => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", report::json::render(report))?;
        }
        Format::Human => {
            let opts = report::human::Options {
                details: if args.verbose { usize::MAX } else { 3 },
                listed,
                quiet: args.quiet,
                width: report::human::width(),
            };
            let text = report::human::render(report, opts);
            let mut out = anstream::stdout().lock();
            write!(out, "{text}")?;
        }
        Format::Markdown => {
            let mut out = std::io::stdout().lock();
            write!(out, "{}", report::markdown::render(report))?;
        }
    }
    Ok(())
}

/// Writes each case's picture as `DIR/<case name>.svg` (each atomically; `DIR` is created).
/// Only the pictures of this run's failing cases are written; nothing else in `DIR` is touched.
fn write_timelines(dir: &Path, cases: &[CaseReport]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for c in cases {
        if let Some(t) = &c.timeline {
            cases::write_atomic(
                &dir.join(format!("{}.svg", c.name)),
                report::svg::render(t).as_bytes(),
            )?;
        }
    }
    Ok(())
}

/// Appends to a file (created if missing): GitHub's `$GITHUB_STEP_SUMMARY` is written this way.
fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(bytes)
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
