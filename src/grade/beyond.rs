//! Everything `test` does after judging the corpus cases and before rendering: the
//! nondeterminism check, "your program did not run", exploration, shrinking every failing case,
//! the diagnosis and its confirmation beyond the corpus, and hiding what students may not see.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use isr_reference::FaultSet;

use super::explore::{self, Settings};
use super::shrink::Programs;
use super::{Observation, diagnosis, did_not_run, hidden, nondeterminism};
use crate::cases::{Case, Visibility};
use crate::cli::ExploreArgs;
use crate::config::ExploreConfig;
use crate::plan::Plan;
use crate::report::{CaseReport, DiagnosisReport, DidNotRun, ExploreReport, Shrunk};
use crate::runner::Program;

/// What goes into the report besides the cases.
pub struct Outcome {
    /// The diagnosis (None when the program did not run).
    pub diagnosis: Option<DiagnosisReport>,
    /// The diagnosis from the public cases alone (None without hidden cases): what Gradescope's
    /// always-visible summary may say while hidden cases are not shown.
    pub public_diagnosis: Option<DiagnosisReport>,
    /// Exploration (None when off or the program did not run).
    pub explored: Option<ExploreReport>,
    /// The headline when the program did not run at all.
    pub did_not_run: Option<DidNotRun>,
    /// Program runs beyond the corpus (exploration and shrinking; not the nondeterminism check).
    pub runs: usize,
    /// How long the diagnosis took (for `--timings`).
    pub diagnose: Duration,
}

/// Flags first, then `[explore]`, then the defaults.
pub fn settings(args: &ExploreArgs, config: Option<&ExploreConfig>) -> Settings {
    let c = config.cloned().unwrap_or_default();
    let secs = |v: Option<f64>, default: f64| v.filter(|s| s.is_finite()).unwrap_or(default);
    Settings {
        traces: args.explore.or(c.traces).unwrap_or(explore::DEFAULT_TRACES),
        seconds: secs(args.explore_seconds.or(c.seconds), explore::DEFAULT_SECONDS).max(0.0),
        points: args.explore_points.or(c.points).unwrap_or(0),
        seed: args.seed.or(c.seed),
        shrink_seconds: secs(
            args.shrink_seconds.or(c.shrink_seconds),
            explore::DEFAULT_SHRINK_SECONDS,
        )
        .max(0.0),
    }
}

/// The exploration seed of an instructor's grading: the cases' hash as a number.
fn seed_of_cases(cases: &[Case]) -> u64 {
    u64::from_str_radix(&crate::grade::provenance::cases_hash(cases), 16).unwrap_or(0)
}

/// Runs everything after the corpus. The failing cases the human report shows in full are
/// shrunk before the others.
pub fn after_corpus(
    plan: &Plan,
    program: &Program,
    cases: &[Case],
    reports: &mut [CaseReport],
    observations: &[Observation],
    interrupted: &AtomicBool,
) -> Outcome {
    let settings = &plan.explore;
    let limits = &plan.limits;
    let jobs = plan.jobs;
    nondeterminism::check(program, limits, jobs, cases, reports, observations);
    if let Some(d) = did_not_run::detect(reports) {
        if !plan.show_hidden {
            hidden::redact(reports);
        }
        return Outcome {
            diagnosis: None,
            public_diagnosis: None,
            explored: None,
            did_not_run: Some(d),
            runs: 0,
            diagnose: Duration::ZERO,
        };
    }
    let programs = Programs::new(program, limits.clone(), jobs);
    programs.set_deadline(Some(
        Instant::now() + Duration::from_secs_f64(settings.shrink_seconds.clamp(0.0, 1e6)),
    ));
    let seed = settings.seed.unwrap_or_else(|| match plan.trust {
        crate::plan::Trust::Student => explore::fresh_seed(),
        // The same traces for every submission graded against these cases, and on a regrade.
        crate::plan::Trust::Instructor => seed_of_cases(cases),
    });
    let exploration = (settings.traces > 0 && !interrupted.load(Ordering::SeqCst))
        .then(|| explore::explore(&programs, settings, seed));

    // Shrink the failing corpus cases, the ones shown in full first. A case that differs the
    // same way as one already shrunk gets that smallest trace (when it is no larger than the
    // case itself) without new runs.
    let first = if plan.output.verbose { usize::MAX } else { 3 };
    let mut done: HashMap<String, (String, Shrunk)> = HashMap::new();
    if let Some(e) = &exploration {
        for r in &e.report.failing {
            if let Some(sh) = &r.shrunk {
                done.entry(sh.kind.clone())
                    .or_insert_with(|| (r.name.clone(), sh.clone()));
            }
        }
    }
    let failing: Vec<usize> = (0..cases.len())
        .filter(|&i| !reports[i].verdict.passed() && reports[i].nondeterminism.is_none())
        .collect();
    for &i in failing.iter().take(first).chain(failing.iter().skip(first)) {
        let Some(kind) = observations[i].failure.clone() else {
            continue;
        };
        let from = cases[i].trace.steps.len();
        reports[i].shrunk = match done.get(&kind) {
            Some((name, sh)) if sh.commands <= from => Some(Shrunk {
                from_commands: from,
                runs: 0,
                same_as: Some(name.clone()),
                ..sh.clone()
            }),
            _ => {
                let sh = programs.shrink(&cases[i].trace, FaultSet::NONE, &kind);
                if let Some(sh) = &sh {
                    done.entry(kind)
                        .or_insert_with(|| (reports[i].name.clone(), sh.clone()));
                }
                sh
            }
        };
    }

    let started = Instant::now();
    let mut diagnosis = diagnosis::diagnose(cases, reports, observations);
    let diagnose = started.elapsed();
    if let Some(e) = &exploration {
        explore::confirm(&programs, &mut diagnosis, &e.observed, |set| {
            diagnosis::mistakes(set, cases, observations)
        });
    }
    // Only Gradescope's always-visible summary reads it: no second diagnosis (and no shrinking
    // runs of its own) for the other reports.
    let public_diagnosis = (plan.output.gradescope.is_some()
        && cases
            .iter()
            .any(|c| c.meta.visibility == Visibility::Hidden))
    .then(|| {
        let public: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].meta.visibility != Visibility::Hidden)
            .collect();
        let p_cases: Vec<&Case> = public.iter().map(|&i| &cases[i]).collect();
        let p_reports: Vec<CaseReport> = public.iter().map(|&i| reports[i].clone()).collect();
        let p_obs: Vec<&Observation> = public.iter().map(|&i| &observations[i]).collect();
        let mut d = diagnosis::diagnose(&p_cases, &p_reports, &p_obs);
        if let Some(e) = &exploration {
            explore::confirm(&programs, &mut d, &e.observed, |set| {
                diagnosis::mistakes(set, &p_cases, &p_obs)
            });
        }
        d
    });
    if !plan.show_hidden {
        hidden::redact(reports);
    }
    Outcome {
        diagnosis: Some(diagnosis),
        public_diagnosis,
        explored: exploration.map(|e| e.report),
        did_not_run: None,
        runs: programs.runs(),
        diagnose,
    }
}
