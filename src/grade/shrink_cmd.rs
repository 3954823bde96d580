//! `isr-grader shrink CASE-or-FILE -- PROGRAM`: the smallest trace on which a program still
//! differs from the reference the same way, standalone; `--save DIR` writes it as a new case
//! (metadata says where it came from), so instructors grow the corpus from real failures.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;

use isr_reference::{FaultSet, Trace, output};

use super::shrink::{Programs, failure_kind};
use crate::CmdResult;
use crate::cases::{self, CaseMeta, CaseSource, Origin, Visibility};
use crate::cli::ShrinkArgs;
use crate::report;
use crate::runner::{self, Limits, Program};

/// `isr-grader shrink`.
pub fn shrink_cmd(args: ShrinkArgs) -> CmdResult {
    runner::prepare_grader_process()?;
    let cwd = std::env::current_dir()?;
    let path = Path::new(&args.case);
    let (from, trace, generated) = if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let trace = Trace::parse(&path.display().to_string(), &text)?;
        (path.display().to_string(), trace, None)
    } else {
        let sources: Vec<CaseSource> = if args.cases.is_empty() {
            vec![CaseSource::BuiltinPublic]
        } else {
            args.cases.iter().cloned().map(CaseSource::Dir).collect()
        };
        let all = cases::load(&sources)?;
        let case = all
            .into_iter()
            .find(|c| c.name == args.case)
            .ok_or_else(|| format!("{:?} is neither a trace file nor a case name", args.case))?;
        let generated = match &case.meta.origin {
            Origin::Generated {
                generator, seed, ..
            } => Some((generator.clone(), *seed)),
            _ => None,
        };
        (case.name, case.trace, generated)
    };
    let argv = crate::plan::resolve_args(&args.program, &cwd);
    let mut program = Program::new(argv.iter().map(OsString::from));
    for var in ["HOME", "LANG", "LC_ALL", "TMPDIR"] {
        if let Some(v) = std::env::var_os(var) {
            program.env.push((var.into(), v));
        }
    }
    // The same sandbox as `test` (best effort): the case folders and the save folder hidden,
    // the current folder readable.
    let mut policy = crate::runner::sandbox::Policy {
        hidden: args.cases.clone(),
        read_only: vec![cwd.clone()],
        ..Default::default()
    };
    policy.hidden.extend(args.save.iter().cloned());
    if path.is_file() {
        policy.hidden.push(std::path::absolute(path)?);
    }
    let mut sandbox = runner::sandbox::prepare(&policy, &std::env::current_exe()?)?;
    let exe = runner::resolve(&program)
        .map_err(|e| format!("cannot start the program to shrink against: {e}"))?;
    sandbox.admit(&exe, &program.argv)?;
    program.sandbox = Some(std::sync::Arc::new(sandbox));
    let mut limits = Limits::default();
    if let Some(t) = args.timeout {
        limits.timeout = t.get();
    }
    let programs = Programs::new(&program, limits, args.jobs.map_or(0, |j| j.get()));
    let out = programs
        .outputs(&[trace.to_text()])
        .pop()
        .flatten()
        .ok_or("the program did not run")?;
    let mut stdout = anstream::stdout().lock();
    let Some(kind) = failure_kind(&trace, FaultSet::NONE, &out) else {
        writeln!(
            stdout,
            "{}: your program prints what the reference prints ({} commands): nothing to shrink.",
            from,
            trace.steps.len()
        )?;
        return Ok(0);
    };
    let start = std::time::Instant::now();
    let shrunk = programs
        .shrink(&trace, FaultSet::NONE, &kind)
        .ok_or_else(|| format!("{from}: the program times out; a timeout is not shrunk"))?;
    let elapsed = start.elapsed();
    write!(stdout, "{}", report::human::render_shrunk(&shrunk, None))?;
    writeln!(
        stdout,
        "shrunk from {} ({} commands) in {:.2} s, {} program runs",
        from,
        shrunk.from_commands,
        elapsed.as_secs_f64(),
        shrunk.runs
    )?;
    if let Some(dir) = &args.save {
        let stem = Path::new(&from)
            .file_stem()
            .map_or("case".into(), |s| s.to_string_lossy().into_owned());
        let name = args.name.clone().unwrap_or(format!("shrunk-{stem}"));
        let trace_path = dir.join(format!("{name}.trace"));
        let meta = CaseMeta {
            title: format!("Shrunk from {from}: {kind}"),
            description: format!(
                "The smallest trace found on which `{}` differs from the reference ({kind}), shrunk from {from} ({} commands).",
                args.program.join(" "),
                shrunk.from_commands
            ),
            targets: Vec::new(),
            points: 1,
            visibility: Visibility::Hidden,
            origin: Origin::Shrunk {
                from: from.clone(),
                generator: generated.as_ref().map(|g| g.0.clone()),
                seed: generated.as_ref().map(|g| g.1),
                program: args.program.join(" "),
                difference: kind.clone(),
            },
        };
        let parsed = Trace::parse(&trace_path.display().to_string(), &shrunk.trace)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let write = |p: &Path, bytes: &[u8]| {
            cases::write_atomic(p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))
        };
        write(&trace_path, shrunk.trace.as_bytes())?;
        write(
            &trace_path.with_extension("toml"),
            toml::to_string(&meta)?.as_bytes(),
        )?;
        write(
            &trace_path.with_extension("out"),
            output(&parsed, FaultSet::NONE).as_bytes(),
        )?;
        writeln!(stdout, "saved as {}", trace_path.display())?;
    }
    Ok(1)
}
