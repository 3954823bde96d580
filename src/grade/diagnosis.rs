//! From the reference's diagnosis to the report's words.

use std::borrow::Borrow;

use isr_reference::diagnose::{Observed, diagnose as reference_diagnose, reproduces};
use isr_reference::{Fault, FaultSet};

use super::Observation;
use crate::cases::Case;
use crate::report::{CaseReport, Closest, DiagnosisReport, Mistake};

/// Names the mistake behind the failures, if a known mistake set reproduces every case.
/// Generic over borrowed cases and observations, so that a subset (the public cases) can be
/// diagnosed without copies.
pub fn diagnose<C: Borrow<Case>, O: Borrow<Observation>>(
    cases: &[C],
    reports: &[CaseReport],
    obs: &[O],
) -> DiagnosisReport {
    // A case "fails" for the diagnosis when its events differ from the expected ones; failures
    // that are only stray lines or an exit code are slips, named separately.
    let observed: Vec<Observed<'_>> = cases
        .iter()
        .zip(obs)
        .map(|(c, o)| (c.borrow(), o.borrow()))
        .map(|(c, o)| Observed {
            trace: &c.trace,
            lines: o.events.as_deref(),
            failing: o.events.as_ref() != Some(&o.expected),
        })
        .collect();
    let mut slips = Vec::new();
    if reports.iter().any(|r| !r.stray_lines.is_empty()) {
        slips.push("your program prints lines on stdout that are not events (debug prints?): print debugging to stderr.".to_string());
    }
    if reports
        .iter()
        .any(|r| matches!(r.verdict, crate::report::Verdict::ExitCode { .. }))
    {
        slips.push("your program exits with a non-zero code on some cases: exit with 0 after printing its events.".to_string());
    }
    // A program that printed nothing anywhere (an untouched starter) has no mistake to name yet.
    if reports
        .iter()
        .all(|r| r.verdict == crate::report::Verdict::NoOutput)
    {
        slips.push("your program printed nothing on any case: nothing to diagnose yet. Implement the leader's methods (the starter's README says where) and grade again.".to_string());
        return DiagnosisReport {
            exact: false,
            mistakes: Vec::new(),
            alternatives: Vec::new(),
            closest: Vec::new(),
            slips,
            beyond_corpus: None,
            confirmed_on: 0,
        };
    }
    let d = reference_diagnose(&observed);
    let exact = !d.exact.is_empty();
    let mistakes = d
        .exact
        .first()
        .map(|set| set.iter().map(|f| mistake(f, cases, obs)).collect())
        .unwrap_or_default();
    DiagnosisReport {
        exact,
        mistakes,
        alternatives: d.exact.iter().skip(1).map(|s| ids(*s)).collect(),
        closest: d
            .closest
            .iter()
            .map(|c| Closest {
                mistakes: ids(c.set),
                explains: c.explains,
                failing: d.failing,
            })
            .collect(),
        slips,
        beyond_corpus: None,
        confirmed_on: 0,
    }
}

/// The words for every mistake of `set`.
pub fn mistakes<C: Borrow<Case>, O: Borrow<Observation>>(
    set: FaultSet,
    cases: &[C],
    obs: &[O],
) -> Vec<Mistake> {
    set.iter().map(|f| mistake(f, cases, obs)).collect()
}

fn ids(set: FaultSet) -> Vec<String> {
    set.ids().into_iter().map(str::to_string).collect()
}

fn mistake<C: Borrow<Case>, O: Borrow<Observation>>(f: Fault, cases: &[C], obs: &[O]) -> Mistake {
    let info = f.info();
    let smallest = cases
        .iter()
        .zip(obs)
        .map(|(c, o)| (c.borrow(), o.borrow()))
        .filter(|(c, o)| !reproduces(&c.trace, FaultSet::one(f), &o.expected))
        .min_by_key(|(c, _)| c.trace.steps.len())
        .map(|(c, _)| c.name.clone());
    Mistake {
        id: info.id.to_string(),
        title: info.title.to_string(),
        section: info.section.to_string(),
        rule: info.rule.to_string(),
        explanation: info.explanation.to_string(),
        smallest_case: smallest,
    }
}
