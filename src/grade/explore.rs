//! Exploration: after the corpus, the program runs on freshly generated traces (every scenario
//! generator in turn, and long random mixes of varied length), each compared in-process with the
//! reference. A student's grading draws a fresh seed, printed in the report, so no two gradings
//! see the same traces; an instructor's uses a seed derived from the cases (or `[explore] seed`),
//! so every submission of a class meets the same traces and a regrade repeats the grade.
//! `--seed` replays one exactly. A trace on which the program differs becomes a
//! failing case of its own, named by generator and seed, and is shrunk.
//!
//! Also here: checking an exact diagnosis against the explored traces ([`confirm`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use isr_reference::r#gen::{self as generators, Rng, Value};
use isr_reference::{FaultSet, Trace, output};

use super::shrink::{ProgramOutput, Programs, failure_kind};
use crate::cases::{Case, CaseMeta, Origin, Visibility};
use crate::report::{BeyondCorpus, CaseReport, DiagnosisReport, ExploreReport, Mistake};
use crate::runner;

/// Default number of explored traces per grading.
pub const DEFAULT_TRACES: usize = 12;
/// Default cap on the time exploration may take, in seconds.
pub const DEFAULT_SECONDS: f64 = 2.0;
/// Default cap on the time shrinking may take in one grading, in seconds.
pub const DEFAULT_SHRINK_SECONDS: f64 = 3.0;

/// Failing explored traces that are shrunk (the first ones found).
pub const SHRUNK_EXPLORED: usize = 3;

/// Failing explored traces kept in the report (the others are counted).
pub const KEPT_EXPLORED: usize = 8;

/// How much to explore and what it is worth, resolved from flags and `[explore]`.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Traces to run (0: no exploration).
    pub traces: usize,
    /// Stop starting new traces after this long.
    pub seconds: f64,
    /// Points each failing explored trace costs (0: reported only).
    pub points: u32,
    /// The seed (drawn fresh when None).
    pub seed: Option<u64>,
    /// Stop starting shrink runs after this long (for the whole grading).
    pub shrink_seconds: f64,
}

/// A seed nobody chose: the clock and the process id, mixed.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    // Small enough to type back on the command line.
    h.finish() % 1_000_000_000
}

/// One explored trace: its case (named by generator and seed) and how to regenerate it.
pub struct Explored {
    /// The case, as if it were in the corpus (public, expected output from the reference).
    pub case: Case,
    /// `isr-grader gen ...` that prints it.
    pub command: String,
}

/// The `i`-th trace of the exploration with `seed`: the generators in turn, every third trace a
/// random mix of 50 to 500 commands.
pub fn explored_trace(seed: u64, i: usize) -> Explored {
    let generators = generators::registry();
    let mut r = Rng::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let s = r.next_u64() % 1_000_000_000;
    let (name, given): (&str, Vec<(String, Value)>) = if i % 3 == 2 {
        let commands = r.pick(&[50, 100, 200, 300, 500]);
        ("mixed", vec![("commands".into(), Value::Int(commands))])
    } else {
        let plain: Vec<&str> = generators
            .iter()
            .map(|g| g.name)
            .filter(|n| *n != "mixed")
            .collect();
        (plain[(i - i / 3) % plain.len()], Vec::new())
    };
    let g =
        generators::generate(name, s, &given).unwrap_or_else(|e| panic!("generator {name}: {e}"));
    let case_name = format!("explore-{name}-{s}");
    let trace = Trace::parse(&format!("{case_name}.trace"), &g.text)
        .unwrap_or_else(|e| panic!("generator {name} made an invalid trace: {e}"));
    let mut command = format!("isr-grader gen {name} --seed {s}");
    for (k, v) in &given {
        command.push_str(&format!(" -p {k}={v}"));
    }
    let params = g
        .params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Int(n) => toml::Value::Integer(i64::try_from(*n).unwrap_or(i64::MAX)),
                Value::Word(w) => toml::Value::String(w.clone()),
            };
            (k.clone(), v)
        })
        .collect();
    Explored {
        case: Case {
            name: case_name.clone(),
            meta: CaseMeta {
                title: format!("explored: scenario {name}, seed {s}"),
                description: String::new(),
                targets: Vec::new(),
                points: 0,
                visibility: Visibility::Public,
                origin: Origin::Generated {
                    generator: name.to_string(),
                    seed: s,
                    params,
                },
            },
            trace_path: PathBuf::from(format!("{case_name}.trace")),
            expected: Some(output(&trace, FaultSet::NONE)),
            trace_text: g.text,
            trace,
            on_disk: false,
        },
        command,
    }
}

/// What exploration found: the report part, and every explored trace with the program's output
/// (for [`confirm`]).
pub struct Exploration {
    /// For the report.
    pub report: ExploreReport,
    /// Every trace run, with the program's output.
    pub observed: Vec<(Case, ProgramOutput)>,
}

/// Runs the exploration. Failing traces are judged like corpus cases and shrunk.
pub fn explore(programs: &Programs<'_>, settings: &Settings, seed: u64) -> Exploration {
    let start = Instant::now();
    let budget = Duration::from_secs_f64(settings.seconds.clamp(0.0, 1e6));
    let all: Vec<Explored> = (0..settings.traces)
        .map(|k| explored_trace(seed, k))
        .collect();
    // A trace starts only within the time budget; those not started are not counted. Each run
    // is judged at once and only its bounded summary kept.
    let judged = runner::run_parallel(programs.jobs(), &all, |e| {
        if start.elapsed() >= budget {
            return None;
        }
        let run = programs.run_one(&e.case.trace_text)?;
        let out = ProgramOutput::of(&run);
        let failure = failure_kind(&e.case.trace, FaultSet::NONE, &out).map(|kind| {
            let (mut report, _) = super::judge(&e.case, &run);
            report.show_command = Some(e.command.clone());
            // Reports given a seed are the same from run to run: no wall-clock time here.
            report.elapsed = std::time::Duration::ZERO;
            (report, kind)
        });
        Some((out, failure))
    });
    let mut observed = Vec::new();
    let mut failing: Vec<(Case, CaseReport, String)> = Vec::new();
    for (e, j) in all.into_iter().zip(judged) {
        let Some((out, failure)) = j else { continue };
        programs.remember(&e.case.trace.to_text(), out.clone());
        if let Some((report, kind)) = failure {
            failing.push((e.case.clone(), report, kind));
        }
        observed.push((e.case, out));
    }
    // The first few are shrunk (the report shows those in full); a few more are listed; the
    // rest are counted.
    let failing_total = failing.len();
    let failing = failing
        .into_iter()
        .take(KEPT_EXPLORED)
        .enumerate()
        .map(|(k, (case, mut report, kind))| {
            if k < SHRUNK_EXPLORED {
                report.shrunk = programs.shrink(&case.trace, FaultSet::NONE, &kind);
            }
            report
        })
        .collect();
    Exploration {
        report: ExploreReport {
            seed,
            traces: observed.len(),
            points_each: settings.points,
            failing,
            failing_total,
        },
        observed,
    }
}

/// An exact diagnosis must also hold on the explored traces. The named set and the sets the
/// corpus could not tell apart from it are tried in turn: the first that also reproduces every
/// explored trace is the diagnosis (the others that do stay alternatives). When none does, the
/// diagnosis is not exact, and the report shows the smallest trace on which the program and the
/// named set differ.
pub fn confirm(
    programs: &Programs<'_>,
    diagnosis: &mut DiagnosisReport,
    observed: &[(Case, ProgramOutput)],
    mistakes_for: impl Fn(FaultSet) -> Vec<Mistake>,
) {
    if !diagnosis.exact || diagnosis.mistakes.is_empty() {
        return;
    }
    let named: Vec<String> = diagnosis.mistakes.iter().map(|m| m.id.clone()).collect();
    let candidates: Vec<Vec<String>> = std::iter::once(named.clone())
        .chain(diagnosis.alternatives.iter().cloned())
        .collect();
    let contradiction = |set: FaultSet| {
        observed.iter().find_map(|(case, out)| {
            if out.abnormal.is_some() {
                return None;
            }
            failure_kind(&case.trace, set, out).map(|kind| (case, kind))
        })
    };
    let sets: Vec<FaultSet> = candidates
        .iter()
        .filter_map(|ids| FaultSet::parse(&ids.join(",")).ok())
        .collect();
    let holding: Vec<usize> = (0..sets.len())
        .filter(|&k| contradiction(sets[k]).is_none())
        .collect();
    if !holding.is_empty() {
        diagnosis.confirmed_on = observed.len();
    }
    match holding.first() {
        Some(0) => {
            diagnosis.alternatives = holding[1..]
                .iter()
                .map(|&k| candidates[k].clone())
                .collect();
        }
        Some(&k) => {
            diagnosis.mistakes = mistakes_for(sets[k]);
            diagnosis.alternatives = holding[1..]
                .iter()
                .map(|&j| candidates[j].clone())
                .collect();
        }
        None => {
            let Some((case, kind)) = sets.first().and_then(|&s| contradiction(s)) else {
                return;
            };
            diagnosis.exact = false;
            diagnosis.beyond_corpus = Some(BeyondCorpus {
                mistakes: named,
                explored_case: case.name.clone(),
                shrunk: programs.shrink(&case.trace, sets[0], &kind),
            });
        }
    }
}
