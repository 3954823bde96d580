//! Shrinking on the grader's side: run the program on the candidates that
//! [`isr_reference::shrink`] proposes (through [`crate::runner`], a batch in parallel) and say
//! whether it still differs the same way; then put the smallest trace into the report.
//!
//! [`Programs`] is shared by everything that runs the program beyond the corpus (shrinking,
//! exploration, the nondeterminism check): it remembers the program's output on every trace it
//! ran (shrinks of several cases meet on the same small traces), counts runs, and stops running
//! past its deadline.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use isr_reference::explain::{explain_steps, format_explained};
use isr_reference::shrink::{divergence_kind, shrink};
use isr_reference::{FaultSet, Trace, output};

use super::compare;
use crate::report::Shrunk;
use crate::runner::{self, Limits, Program, RunOutcome, Termination};

/// A shrunk trace longer than this is not shown (shrinking stopped early, out of budget).
pub const MAX_SHOWN_COMMANDS: usize = 100;
/// Lines of the program's output on a shrunk trace kept beyond the expected ones.
const MAX_EXTRA_LINES: usize = 10;

/// Lines of a run's output kept (each cut to `MAX_LINE_BYTES`): the first difference is
/// looked for among them; a run that printed more is marked incomplete.
const KEPT_LINES: usize = 10_000;

/// What the program printed on one trace, as the comparison sees it, in bounded memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramOutput {
    /// Set when the run ended abnormally: `timeout`, `crash SIGSEGV`, `exit code 1`, ...
    pub abnormal: Option<String>,
    /// The first normalized stdout lines (at most `KEPT_LINES`, each cut).
    pub lines: Vec<String>,
    /// Whether `lines` is all of it.
    pub complete: bool,
}

impl ProgramOutput {
    /// From a finished run.
    pub fn of(run: &RunOutcome) -> ProgramOutput {
        let abnormal = match &run.termination {
            Termination::TimedOut => Some("timeout".to_string()),
            Termination::OutputLimit => Some("output-limit".to_string()),
            Termination::Signaled { name, .. } => Some(format!("crash {name}")),
            Termination::Exited(0) => None,
            Termination::Exited(code) => Some(format!("exit code {code}")),
        };
        let text = String::from_utf8_lossy(&run.stdout);
        let mut all = compare::lines(&text);
        let lines: Vec<String> = all
            .by_ref()
            .take(KEPT_LINES)
            .map(|l| super::cut(l.text).into_owned())
            .collect();
        ProgramOutput {
            abnormal,
            lines,
            complete: all.next().is_none(),
        }
    }
}

/// The lines a leader with `oracle` prints on `trace`.
pub fn oracle_lines(trace: &Trace, oracle: FaultSet) -> Vec<String> {
    output(trace, oracle).lines().map(str::to_string).collect()
}

/// How the program's output differs from `oracle`'s on `trace`; None when it does not, or when
/// the oracle prints nothing there (such a trace grades nobody).
pub fn failure_kind(trace: &Trace, oracle: FaultSet, out: &ProgramOutput) -> Option<String> {
    let expected = oracle_lines(trace, oracle);
    if expected.is_empty() {
        return None;
    }
    if let Some(a) = &out.abnormal {
        return Some(a.clone());
    }
    if !out.complete && expected.len() >= out.lines.len() {
        // Past the lines kept: compare what there is; the rest is "more output".
        return Some(
            divergence_kind(&expected[..out.lines.len()], &out.lines)
                .map_or_else(|| "long output".to_string(), |k| k.1),
        );
    }
    divergence_kind(&expected, &out.lines).map(|k| k.1)
}

/// Runs the program beyond the corpus, remembering every answer.
pub struct Programs<'a> {
    program: &'a Program,
    limits: Limits,
    jobs: usize,
    cache: Mutex<HashMap<String, ProgramOutput>>,
    runs: AtomicUsize,
    deadline: Mutex<Option<Instant>>,
}

impl<'a> Programs<'a> {
    /// For `program` under `limits`, `jobs` runs at once (0: one per core).
    pub fn new(program: &'a Program, limits: Limits, jobs: usize) -> Self {
        Programs {
            program,
            limits,
            jobs,
            cache: Mutex::new(HashMap::new()),
            runs: AtomicUsize::new(0),
            deadline: Mutex::new(None),
        }
    }

    /// Runs started so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::Relaxed)
    }

    /// Runs at once.
    pub fn jobs(&self) -> usize {
        match self.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// No run starts after `at` (None: no deadline).
    pub fn set_deadline(&self, at: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }

    fn past_deadline(&self) -> bool {
        self.deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|d| Instant::now() >= d)
    }

    /// Remembers an output seen elsewhere (a corpus run) so it is not run again.
    pub fn remember(&self, text: &str, out: ProgramOutput) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(text.to_string(), out);
    }

    /// One run of the program on `text` (None when it could not start), counted.
    pub fn run_one(&self, text: &str) -> Option<RunOutcome> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        runner::run(self.program, text.as_bytes(), &self.limits).ok()
    }

    /// The program's output on each trace text, running the ones not seen yet in parallel;
    /// None for those not run because the deadline passed.
    pub fn outputs(&self, texts: &[String]) -> Vec<Option<ProgramOutput>> {
        let todo: Vec<&String> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            let mut todo: Vec<&String> = texts.iter().filter(|t| !cache.contains_key(*t)).collect();
            todo.dedup();
            todo
        };
        if !todo.is_empty() && !self.past_deadline() {
            let done = runner::run_parallel(self.jobs, &todo, |text| {
                let out = match runner::run(self.program, text.as_bytes(), &self.limits) {
                    Ok(run) => ProgramOutput::of(&run),
                    Err(e) => ProgramOutput {
                        abnormal: Some(format!("did not start: {e}")),
                        lines: Vec::new(),
                        complete: true,
                    },
                };
                self.runs.fetch_add(1, Ordering::Relaxed);
                out
            });
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (text, out) in todo.into_iter().zip(done) {
                cache.insert(text.clone(), out);
            }
        }
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        texts.iter().map(|t| cache.get(t).cloned()).collect()
    }

    /// Shrinks `trace`, on which the program differs from `oracle` in the way `kind`, to a
    /// smallest trace on which it still does. None when the kind is a timeout (each candidate
    /// could take the whole time limit) or nothing smaller was tried.
    pub fn shrink(&self, trace: &Trace, oracle: FaultSet, kind: &str) -> Option<Shrunk> {
        if kind == "timeout" {
            return None;
        }
        if self.past_deadline() {
            return None;
        }
        let before = self.runs();
        let batch = self.jobs().max(2);
        let result = shrink(trace, batch, |cands| {
            let texts: Vec<String> = cands.iter().map(Trace::to_text).collect();
            let outs = self.outputs(&texts);
            // Past the deadline the unknown ones are not run: stop with what was found.
            if outs.iter().any(Option::is_none) {
                return None;
            }
            Some(
                outs.iter()
                    .zip(cands)
                    .map(|(o, t)| {
                        o.as_ref()
                            .is_some_and(|o| failure_kind(t, oracle, o).as_deref() == Some(kind))
                    })
                    .collect(),
            )
        });
        if self.runs() == before && result.trace.steps.len() == trace.steps.len() {
            // Nothing was run (the budget was spent): no smaller trace to show.
            return None;
        }
        if result.trace.steps.len() > MAX_SHOWN_COMMANDS {
            // The budget ran out long before the trace got small: nothing worth showing.
            return None;
        }
        let text = result.trace.to_text();
        let out = self.outputs(std::slice::from_ref(&text)).pop().flatten()?;
        let expected = oracle_lines(&result.trace, oracle);
        // The report stays bounded whatever the program printed.
        let actual: Vec<String> = out
            .lines
            .iter()
            .take(expected.len() + MAX_EXTRA_LINES)
            .map(|l| super::cut(l).into_owned())
            .collect();
        Some(Shrunk {
            commands: result.trace.steps.len(),
            from_commands: trace.steps.len(),
            runs: self.runs() - before,
            same_as: None,
            kind: kind.to_string(),
            trace: text,
            first_diff: compare::first_diff(&expected, &actual),
            expected,
            actual,
            explanation: explain_steps(&result.trace, oracle)
                .iter()
                .map(format_explained)
                .flat_map(|s| s.lines().map(str::to_string).collect::<Vec<_>>())
                .collect(),
        })
    }
}
