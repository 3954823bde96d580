//! Nondeterminism as its own verdict: every failing case, and a sample of the passing ones, runs
//! a second time; when both runs exit and their outputs differ, the case is `nondeterministic`, with the first
//! differing line of each run and the likely cause for this exercise.

use super::{Observation, compare};
use crate::cases::Case;
use crate::report::{CaseReport, Nondeterminism, Verdict};
use crate::runner::{self, Limits, Program, RunOutcome, Termination};

/// Passing cases run twice (the largest ones: the likeliest to show a different order).
pub const PASSING_SAMPLE: usize = 4;

/// Lines of a run kept to show where two runs differ (the rest is only hashed).
const HEAD_BYTES: usize = 64 << 10;

/// A run's normalized output in brief: a hash of all of it and its first lines, so that the
/// grader keeps no case's whole output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    hash: u64,
    head: Vec<String>,
}

impl Fingerprint {
    /// Of a run that exited (None for a timeout, a crash or the output limit: those keep their
    /// own verdict).
    pub fn of(run: &RunOutcome) -> Option<Fingerprint> {
        use std::hash::{Hash, Hasher};
        if !matches!(run.termination, Termination::Exited(_)) {
            return None;
        }
        let text = String::from_utf8_lossy(&run.stdout);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut head = Vec::new();
        let mut kept = 0;
        for l in compare::lines(&text) {
            l.text.hash(&mut h);
            if kept + l.text.len() <= HEAD_BYTES {
                kept += l.text.len();
                head.push(l.text.to_string());
            }
        }
        Some(Fingerprint {
            hash: h.finish(),
            head,
        })
    }
}

/// Reruns the chosen cases and marks those whose output changed.
pub fn check(
    program: &Program,
    limits: &Limits,
    jobs: usize,
    cases: &[Case],
    reports: &mut [CaseReport],
    observations: &[Observation],
) {
    let mut passing: Vec<usize> = (0..cases.len())
        .filter(|&i| reports[i].verdict.passed())
        .collect();
    passing.sort_by_key(|&i| std::cmp::Reverse(cases[i].trace.steps.len()));
    passing.truncate(PASSING_SAMPLE);
    let mut chosen: Vec<usize> = (0..cases.len())
        .filter(|&i| !reports[i].verdict.passed() && observations[i].fingerprint.is_some())
        .chain(passing)
        .collect();
    chosen.sort_unstable();
    let again = runner::run_parallel(jobs, &chosen, |&i| {
        runner::run(program, cases[i].trace_text.as_bytes(), limits)
            .ok()
            .and_then(|r| Fingerprint::of(&r))
    });
    for (&i, second) in chosen.iter().zip(again) {
        // A run that did not exit keeps its own verdict.
        let (Some(a), Some(b)) = (&observations[i].fingerprint, second) else {
            continue;
        };
        if a.hash == b.hash {
            continue;
        }
        let cut = |l: Option<String>| l.map(|l| super::cut(&l).into_owned());
        let (line, first, second) = match compare::first_diff(&a.head, &b.head) {
            Some(d) => (d.line, cut(d.expected), cut(d.actual)),
            // They differ past the lines kept.
            None => (a.head.len() + 1, None, None),
        };
        let r = &mut reports[i];
        r.verdict = Verdict::Nondeterministic;
        r.points = 0;
        r.nondeterminism = Some(Nondeterminism {
            line,
            cause: likely_cause(first.as_deref(), second.as_deref()),
            first,
            second,
        });
    }
}

/// Why two runs of a leader might differ, judged from the first differing lines.
pub fn likely_cause(first: Option<&str>, second: Option<&str>) -> String {
    let isr = |l: &str| {
        l.split_whitespace()
            .find_map(|f| f.strip_prefix("ISR="))
            .map(|ids| {
                let mut v: Vec<&str> = ids.split(',').collect();
                v.sort_unstable();
                (ids.to_string(), v.join(","))
            })
    };
    let rest = |l: &str| {
        l.split_whitespace()
            .filter(|f| !f.starts_with("ISR="))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if let (Some(a), Some(b)) = (first, second)
        && let (Some((ia, sa)), Some((ib, sb))) = (isr(a), isr(b))
        && ia != ib
        && sa == sb
        && rest(a) == rest(b)
    {
        return "the same ISR members in a different order: your program prints the ISR by iterating a hash set or map, whose order changes from one run to the next (Rust's HashSet and HashMap are seeded randomly per process). Print the ids in replica-list order: keep the ISR as a list, or as a flag per replica, and walk the replica list.".to_string();
    }
    "your program's output depends on something other than its input: iteration over a hash set or map (Rust's HashSet/HashMap order changes from run to run), threads, the clock, or uninitialized state. The leader is a pure function of the trace: make it one.".to_string()
}
