//! The corpus audit: which cases catch which mistakes, which mistake sets the cases cannot tell
//! apart, and the smallest subset of cases that keeps all of that.
//!
//! Everything here is a pure function of traces and fault sets; reading case files and printing
//! reports is the grader's job (`isr-grader audit`). The expensive part, running every mistake set
//! on every trace, is [`classes`]: it runs the machines on all cores and keeps each distinct
//! output once per trace, so the grader's diagnosis can reuse it too.
//!
//! Some mistake sets behave the same on every valid trace: one switch makes another irrelevant
//! (with `ack-immediate` on, when an acks=all request would have been answered no longer matters),
//! or two switches together amount to a third. No corpus can tell such sets apart, and a diagnosis
//! naming any of them is right, so they are recorded in [`EQUIVALENCES`], each with the argument
//! for it, and treated as one ([`canonical`]). The exhaustive search ([`crate::search`]) finds no
//! trace telling them apart within its bound; the tests check that.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::faults::{Fault, FaultSet};
use crate::trace::Trace;

/// Mistake sets (of at most two mistakes) that print the same output on every valid trace.
#[derive(Debug, Clone, Copy)]
pub struct Equivalence {
    /// The sets, as `id` or `id+id`; the first is the one a report names.
    pub sets: &'static [&'static str],
    /// Why they are the same program.
    pub why: &'static str,
}

/// Every known equivalence among mistake sets of size one and two.
pub static EQUIVALENCES: &[Equivalence] = &[
    Equivalence {
        sets: &[
            "shrink-by-fetch-time",
            "caught-up-uses-fetch-now+caught-up-stale-leader-leo",
            "caught-up-equality-only+shrink-by-fetch-time",
            "caught-up-uses-fetch-now+shrink-by-fetch-time",
            "caught-up-strict-previous+shrink-by-fetch-time",
            "caught-up-stale-leader-leo+shrink-by-fetch-time",
        ],
        why: "lastCaughtUp is read only by the shrink check, so when the check measures lag from the last fetch no caught-up mistake shows; and with both caught-up-uses-fetch-now and caught-up-stale-leader-leo every fetch credits its own time (lastFetchLeaderLEO stays 0, so the second branch always holds and credits now), so lastCaughtUp is the last fetch time",
    },
    Equivalence {
        sets: &[
            "caught-up-equality-only",
            "caught-up-equality-only+caught-up-uses-fetch-now",
            "caught-up-equality-only+caught-up-strict-previous",
            "caught-up-equality-only+caught-up-stale-leader-leo",
        ],
        why: "without the second caught-up branch, how that branch compares, what it credits and the lastFetchLeaderLEO it reads no longer matter",
    },
    Equivalence {
        sets: &[
            "rejoin-never",
            "rejoin-early+rejoin-never",
            "rejoin-needs-leader-leo+rejoin-never",
            "rejoin-never+rejoin-above-hw-strict",
        ],
        why: "a follower that never rejoins never asks the rejoin condition",
    },
    Equivalence {
        sets: &[
            "rejoin-early",
            "rejoin-early+rejoin-needs-leader-leo",
            "rejoin-early+rejoin-above-hw-strict",
        ],
        why: "a follower that rejoins on any fetch ignores every condition on its LEO",
    },
    Equivalence {
        sets: &[
            "rejoin-needs-leader-leo",
            "rejoin-needs-leader-leo+rejoin-above-hw-strict",
        ],
        why: "the rejoin condition is replaced by the comparison with the leader's LEO, so how the HW comparison is written no longer matters",
    },
    Equivalence {
        sets: &[
            "hw-all-replicas",
            "hw-all-replicas+ack-all-replicas",
            "hw-all-replicas+hw-not-on-shrink",
        ],
        why: "when the HW is the smallest LEO over all replicas, waiting for all replicas is waiting for the HW (the HW rises only to that minimum, at the command that raised it); and a shrink changes no replica's LEO, so recomputing it there changes nothing",
    },
    Equivalence {
        sets: &[
            "ack-immediate",
            "ack-immediate+ack-first-record",
            "ack-immediate+ack-all-replicas",
        ],
        why: "a request answered at once never waits for any condition",
    },
];

/// The recorded equivalence classes as fault sets.
pub fn equivalence_classes() -> Vec<Vec<FaultSet>> {
    EQUIVALENCES
        .iter()
        .map(|e| {
            e.sets
                .iter()
                .map(|s| FaultSet::parse(&s.replace('+', ",")).unwrap_or_else(|e| panic!("{e}")))
                .collect()
        })
        .collect()
}

/// The set a report names for `set`: the first of its recorded equivalence class, or itself.
pub fn canonical(set: FaultSet) -> FaultSet {
    equivalence_classes()
        .into_iter()
        .find(|c| c.contains(&set))
        .map_or(set, |c| c[0])
}

/// The correct leader followed by every single mistake and every pair: the sets the audit runs.
pub fn audit_sets() -> Vec<FaultSet> {
    let mut v = vec![FaultSet::NONE];
    v.extend(FaultSet::singles_and_pairs());
    v
}

/// Every set's output on every trace, each distinct output kept once per trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classes {
    /// `class[t][s]`: which of `outputs[t]` set `s` prints on trace `t`. Classes are numbered in
    /// the order of the sets, so the first set's class is always 0.
    pub class: Vec<Vec<u32>>,
    /// `outputs[t][c]`: the text of class `c` on trace `t`.
    pub outputs: Vec<Vec<String>>,
}

impl Classes {
    /// Set `s`'s output on trace `t`.
    pub fn output(&self, t: usize, s: usize) -> &str {
        &self.outputs[t][self.class[t][s] as usize]
    }
}

/// One work item's result: trace, first set, the sets' outputs.
type Chunk = (usize, usize, Vec<Vec<u8>>);

/// Runs every set on every trace (on all cores) and groups equal outputs.
pub fn classes(traces: &[&Trace], sets: &[FaultSet]) -> Classes {
    // Work items: (trace, block of sets), longest traces first, so both cores stay busy.
    const BLOCK: usize = 32;
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by_key(|&t| std::cmp::Reverse(traces[t].steps.len()));
    for &t in &order {
        for start in (0..sets.len()).step_by(BLOCK) {
            items.push((t, start));
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(t, start)) = items.get(i) else {
                        break;
                    };
                    let end = (start + BLOCK).min(sets.len());
                    let outs: Vec<Vec<u8>> = sets[start..end]
                        .iter()
                        .map(|&s| crate::output_bytes(traces[t], s))
                        .collect();
                    if let Ok(mut r) = results.lock() {
                        r.push((t, start, outs));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|r| (r.0, r.1));
    let mut class = vec![vec![0u32; sets.len()]; traces.len()];
    let mut outputs: Vec<Vec<String>> = vec![Vec::new(); traces.len()];
    let mut interned: Vec<HashMap<Vec<u8>, u32>> = vec![HashMap::new(); traces.len()];
    for (t, start, outs) in results {
        for (k, out) in outs.into_iter().enumerate() {
            let n = interned[t].len() as u32;
            let c = *interned[t].entry(out).or_insert_with_key(|o| {
                outputs[t].push(String::from_utf8_lossy(o).into_owned());
                n
            });
            class[t][start + k] = c;
        }
    }
    Classes { class, outputs }
}

/// Every set's output on every trace: `result[s][t]` (a convenience over [`classes`]).
pub fn outputs_by_set(traces: &[&Trace], sets: &[FaultSet]) -> Vec<Vec<String>> {
    let c = classes(traces, sets);
    (0..sets.len())
        .map(|s| {
            (0..traces.len())
                .map(|t| c.output(t, s).to_string())
                .collect()
        })
        .collect()
}

/// What the audit needs to know about one case.
#[derive(Debug, Clone)]
pub struct AuditCase<'a> {
    /// The case's name.
    pub name: &'a str,
    /// Whether students see it.
    pub public: bool,
    /// Its trace.
    pub trace: &'a Trace,
    /// The catalog ids its metadata says it catches.
    pub targets: Vec<Fault>,
    /// The mistake it is the handwritten smallest case for (named `NNN-<id>`), if any.
    pub per_mistake: Option<Fault>,
}

/// The audit of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseReport {
    /// The case's name.
    pub name: String,
    /// Whether students see it.
    pub public: bool,
    /// Number of timed commands.
    pub commands: usize,
    /// The single mistakes whose output differs from the correct one on this case.
    pub catches: Vec<Fault>,
    /// Pairs of behaviours (sets with different output on the corpus, counted once per group)
    /// this case tells apart.
    pub distinctions: usize,
    /// Pairs of behaviours that no other case tells apart.
    pub unique: usize,
}

/// The cases that catch one single mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kills {
    /// The mistake.
    pub fault: Fault,
    /// Indexes of the cases that catch it.
    pub cases: Vec<usize>,
    /// How many of them are public.
    pub public: usize,
}

/// What a group of sets with identical output on every case amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// All of one recorded equivalence class: the same program.
    Equivalent,
    /// Contains the correct leader: these sets go unnoticed.
    LooksCorrect,
    /// Contains two single mistakes that are not recorded as equivalent: the corpus cannot tell
    /// them apart (an audit failure).
    Singles,
    /// Pairs (perhaps with one single) that the corpus cannot tell apart.
    Pairs,
}

/// Mistake sets that print the same output on every case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Indexes into [`Report::sets`].
    pub sets: Vec<usize>,
    /// What it amounts to.
    pub kind: GroupKind,
}

/// The whole audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The sets run: index 0 is the correct leader, then [`FaultSet::singles_and_pairs`].
    pub sets: Vec<FaultSet>,
    /// Per case, in input order.
    pub cases: Vec<CaseReport>,
    /// Per single mistake, in catalog order.
    pub kills: Vec<Kills>,
    /// Every group of two or more sets with identical output on every case.
    pub groups: Vec<Group>,
    /// Number of distinct behaviours (groups counted once).
    pub behaviours: usize,
    /// The greedy minimal subset keeping every distinction the corpus makes between sets of at
    /// most two mistakes (and the correct leader): case indexes in pick order, each with the
    /// number of pairs of behaviours it newly told apart.
    pub cover: Vec<(usize, usize)>,
    /// The same for the correct leader and the single mistakes only.
    pub cover_singles: Vec<(usize, usize)>,
    /// Everything that makes the audit fail.
    pub problems: Vec<String>,
}

impl Report {
    /// Whether the corpus passes.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Audits `cases` given every set's output classes on them (from [`classes`] over `sets`, which
/// must be [`audit_sets`]).
pub fn audit(cases: &[AuditCase<'_>], sets: &[FaultSet], cl: &Classes) -> Report {
    let n = sets.len();
    let index: HashMap<FaultSet, usize> = sets.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let single = |f: Fault| index[&FaultSet::one(f)];
    let mut problems = Vec::new();

    // Signatures: a set's classes over all cases; equal signatures = indistinguishable.
    let sig = |s: usize| -> Vec<u32> { cl.class.iter().map(|c| c[s]).collect() };
    let mut by_sig: HashMap<Vec<u32>, Vec<usize>> = HashMap::new();
    let mut behaviour = vec![0usize; n];
    let mut reps: Vec<usize> = Vec::new();
    for s in 0..n {
        let e = by_sig.entry(sig(s)).or_default();
        if e.is_empty() {
            reps.push(s);
        }
        e.push(s);
    }
    for (b, &r) in reps.iter().enumerate() {
        for &s in &by_sig[&sig(r)] {
            behaviour[s] = b;
        }
    }

    // Kills.
    let kills: Vec<Kills> = Fault::all()
        .map(|f| {
            let s = single(f);
            let cs: Vec<usize> = (0..cases.len()).filter(|&c| cl.class[c][s] != 0).collect();
            let public = cs.iter().filter(|&&c| cases[c].public).count();
            Kills {
                fault: f,
                cases: cs,
                public,
            }
        })
        .collect();
    for k in &kills {
        if k.cases.is_empty() {
            problems.push(format!("{} is caught by no case", k.fault));
        } else if k.cases.len() < 2 {
            problems.push(format!(
                "{} is caught by only one case ({}); it needs two",
                k.fault, cases[k.cases[0]].name
            ));
        }
        if !k.cases.is_empty() && k.public == 0 {
            problems.push(format!("{} is caught by no public case", k.fault));
        }
    }

    // Groups.
    let eq = equivalence_classes();
    let class_of = |s: FaultSet| eq.iter().position(|c| c.contains(&s));
    let mut groups = Vec::new();
    for &r in &reps {
        let members = &by_sig[&sig(r)];
        if members.len() < 2 {
            continue;
        }
        let first_class = class_of(sets[members[0]]);
        let kind = if members.contains(&0) {
            GroupKind::LooksCorrect
        } else if first_class.is_some() && members.iter().all(|&m| class_of(sets[m]) == first_class)
        {
            GroupKind::Equivalent
        } else {
            let singles: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&m| sets[m].len() == 1)
                .collect();
            let distinct_singles = singles
                .iter()
                .map(|&m| class_of(sets[m]).map_or(m, |c| usize::MAX - c))
                .collect::<std::collections::BTreeSet<_>>();
            if distinct_singles.len() >= 2 {
                GroupKind::Singles
            } else {
                GroupKind::Pairs
            }
        };
        if kind == GroupKind::Singles {
            let names: Vec<String> = members
                .iter()
                .filter(|&&m| sets[m].len() == 1)
                .map(|&m| sets[m].to_string())
                .collect();
            problems.push(format!(
                "no case tells these single mistakes apart: {}",
                names.join(", ")
            ));
        }
        groups.push(Group {
            sets: members.clone(),
            kind,
        });
    }
    // A recorded equivalence that some case contradicts is false.
    for (ci, class) in eq.iter().enumerate() {
        let Some(&first) = class.first().and_then(|s| index.get(s)) else {
            continue;
        };
        for s in class.iter().skip(1) {
            let Some(&i) = index.get(s) else { continue };
            if let Some(c) = (0..cases.len()).find(|&c| cl.class[c][i] != cl.class[c][first]) {
                problems.push(format!(
                    "recorded equivalence {} is false: case {} tells {} and {} apart",
                    ci + 1,
                    cases[c].name,
                    sets[first],
                    s
                ));
            }
        }
    }

    // A case on which the correct leader prints nothing is passed by a program that prints
    // nothing: it grades nobody.
    if let Some(&correct) = index.get(&FaultSet::NONE) {
        for (c, case) in cases.iter().enumerate() {
            if cl.output(c, correct).trim().is_empty() {
                problems.push(format!(
                    "case {} expects no output: a program that prints nothing passes it",
                    case.name
                ));
            }
        }
    }

    // Targets must be truthful, and per-mistake cases must catch their mistake.
    for (c, case) in cases.iter().enumerate() {
        for &f in &case.targets {
            if cl.class[c][single(f)] == 0 {
                problems.push(format!(
                    "case {} lists {f} in its targets but does not catch it",
                    case.name
                ));
            }
        }
        if let Some(f) = case.per_mistake {
            if cl.class[c][single(f)] == 0 {
                problems.push(format!(
                    "case {} is the smallest case for {f} but does not catch it",
                    case.name
                ));
            }
            if !case.targets.contains(&f) {
                problems.push(format!("case {} must list {f} in its targets", case.name));
            }
        }
    }

    // One handwritten smallest case per mistake, no longer than the catalog's smallest trace.
    for f in Fault::all() {
        let own: Vec<&AuditCase<'_>> = cases.iter().filter(|c| c.per_mistake == Some(f)).collect();
        match own.as_slice() {
            [] => problems.push(format!("{f} has no handwritten smallest case (NNN-{f})")),
            [c] => {
                let bound = catalog_witness_len(f);
                if c.trace.steps.len() > bound {
                    problems.push(format!(
                        "case {} has {} commands, more than the {bound} of the smallest trace for {f}",
                        c.name,
                        c.trace.steps.len()
                    ));
                }
            }
            more => problems.push(format!("{f} has {} smallest cases; keep one", more.len())),
        }
    }

    // Per-case worth: what it catches, and distinctions only it makes.
    let nb = reps.len();
    let bclass: Vec<Vec<u32>> = cl
        .class
        .iter()
        .map(|row| reps.iter().map(|&r| row[r]).collect())
        .collect();
    let mut unique = vec![0usize; cases.len()];
    for a in 0..nb {
        for b in a + 1..nb {
            let mut only = None;
            let mut count = 0;
            for (c, row) in bclass.iter().enumerate() {
                if row[a] != row[b] {
                    count += 1;
                    only = Some(c);
                    if count > 1 {
                        break;
                    }
                }
            }
            if let (1, Some(c)) = (count, only) {
                unique[c] += 1;
            }
        }
    }
    let all_b: Vec<usize> = (0..nb).collect();
    let case_reports: Vec<CaseReport> = cases
        .iter()
        .enumerate()
        .map(|(c, case)| CaseReport {
            name: case.name.to_string(),
            public: case.public,
            commands: case.trace.steps.len(),
            catches: Fault::all()
                .filter(|&f| cl.class[c][single(f)] != 0)
                .collect(),
            distinctions: split_gain(&vec![0; nb], &all_b, &bclass[c]),
            unique: unique[c],
        })
        .collect();

    let mut singles_b: Vec<usize> = std::iter::once(0)
        .chain(Fault::all().map(|f| behaviour[single(f)]))
        .collect();
    singles_b.sort_unstable();
    singles_b.dedup();
    let cover = greedy_cover(cases, &bclass, &all_b);
    let cover_singles = greedy_cover(cases, &bclass, &singles_b);

    Report {
        sets: sets.to_vec(),
        cases: case_reports,
        kills,
        groups,
        behaviours: nb,
        cover,
        cover_singles,
        problems,
    }
}

/// Number of commands of the catalog's smallest trace for `f`.
pub fn catalog_witness_len(f: Fault) -> usize {
    Trace::parse(f.id(), f.info().witness).map_or(usize::MAX, |t| t.steps.len())
}

/// Greedy set cover by partition refinement: the behaviours in `universe` start in one block;
/// each pick is the case that splits the most still-together pairs (ties: public first, then
/// fewer commands, then corpus order). Stops when every pair the corpus tells apart is apart.
fn greedy_cover(
    cases: &[AuditCase<'_>],
    bclass: &[Vec<u32>],
    universe: &[usize],
) -> Vec<(usize, usize)> {
    let mut block = vec![0usize; universe.len()];
    let mut picked = Vec::new();
    loop {
        let mut best: Option<(usize, usize)> = None;
        for (c, row) in bclass.iter().enumerate() {
            let gain = split_gain(&block, universe, row);
            if gain == 0 {
                continue;
            }
            let better = match best {
                None => true,
                Some((b, g)) => {
                    let key = |i: usize| (!cases[i].public, cases[i].trace.steps.len());
                    gain > g || (gain == g && key(c) < key(b))
                }
            };
            if better {
                best = Some((c, gain));
            }
        }
        let Some((c, gain)) = best else { break };
        picked.push((c, gain));
        let mut ids: HashMap<(usize, u32), usize> = HashMap::new();
        for (k, &b) in universe.iter().enumerate() {
            let next = ids.len();
            block[k] = *ids.entry((block[k], bclass[c][b])).or_insert(next);
        }
    }
    picked
}

/// How many pairs that are in the same block get split by a case's classes.
fn split_gain(block: &[usize], universe: &[usize], row: &[u32]) -> usize {
    let mut sizes: HashMap<usize, usize> = HashMap::new();
    let mut sub: HashMap<(usize, u32), usize> = HashMap::new();
    for (k, &b) in universe.iter().enumerate() {
        *sizes.entry(block[k]).or_default() += 1;
        *sub.entry((block[k], row[b])).or_default() += 1;
    }
    let pairs = |n: usize| n * n.saturating_sub(1) / 2;
    sizes.values().map(|&n| pairs(n)).sum::<usize>()
        - sub.values().map(|&n| pairs(n)).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equivalences_parse_and_are_disjoint() {
        let classes = equivalence_classes();
        let mut seen = std::collections::HashSet::new();
        for c in &classes {
            assert!(c.len() >= 2);
            for s in c {
                assert!(s.len() <= 2 && !s.is_empty(), "{s}");
                assert!(seen.insert(*s), "{s} is in two classes");
            }
        }
        let sbft = FaultSet::one(Fault::ShrinkByFetchTime);
        let pair = FaultSet::one(Fault::CaughtUpUsesFetchNow).with(Fault::CaughtUpStaleLeaderLeo);
        assert_eq!(canonical(pair), sbft);
        assert_eq!(canonical(sbft), sbft);
        let other = FaultSet::one(Fault::IsrOrderSorted);
        assert_eq!(canonical(other), other);
    }

    #[test]
    fn classes_group_equal_outputs() {
        let t = Trace::parse("t", "REPLICAS 0 1\nLAG_MAX 0\nMIN_ISR 2\n0 STATUS\n").unwrap();
        let sets = [
            FaultSet::NONE,
            FaultSet::one(Fault::ShrinkInclusive),
            FaultSet::one(Fault::HwCanDecrease),
            FaultSet::one(Fault::WritesOffByOne),
        ];
        let c = classes(&[&t], &sets);
        assert_eq!(c.class, vec![vec![0, 1, 0, 2]]);
        assert_eq!(c.outputs[0][0], "0 STATUS ISR=0,1 HW=0 LEO=0 WRITES=OK\n");
        let o = outputs_by_set(&[&t, &t], &sets);
        assert_eq!(o.len(), 4);
        assert_eq!(
            o[1][1],
            "0 STATUS ISR=0 HW=0 LEO=0 WRITES=NOT_ENOUGH_REPLICAS\n"
        );
        assert_eq!(
            o[3][0],
            "0 STATUS ISR=0,1 HW=0 LEO=0 WRITES=NOT_ENOUGH_REPLICAS\n"
        );
    }

    #[test]
    fn audit_reports_uncaught_and_alike_mistakes() {
        // One tiny case catches only a few mistakes: the audit must fail and say why.
        let t = Trace::parse("t", "REPLICAS 0\nLAG_MAX 0\nMIN_ISR 1\n0 STATUS\n").unwrap();
        let sets = audit_sets();
        let cl = classes(&[&t], &sets);
        let case = AuditCase {
            name: "tiny",
            public: true,
            trace: &t,
            targets: vec![Fault::WritesOffByOne, Fault::RejoinNever],
            per_mistake: None,
        };
        let r = audit(&[case], &sets, &cl);
        assert!(!r.ok());
        let text = r.problems.join("\n");
        assert!(
            text.contains("caught-up-equality-only is caught by no case"),
            "{text}"
        );
        assert!(
            text.contains("writes-off-by-one is caught by only one case"),
            "{text}"
        );
        assert!(
            text.contains("lists rejoin-never in its targets but does not catch it"),
            "{text}"
        );
        assert!(!text.contains("lists writes-off-by-one"), "{text}");
        assert!(r.groups.iter().any(|g| g.kind == GroupKind::LooksCorrect));
        assert_eq!(r.cover.len(), 1);
    }

    #[test]
    fn recorded_equivalences_survive_a_small_exhaustive_search() {
        // `isr-grader audit --witness` searches the full domain (release build); this is a
        // quick version for every test run: no trace of up to 4 commands, on the headers most
        // witnesses use, tells the members of a recorded class apart.
        use crate::search::{Domain, witnesses};
        let full = Domain::default();
        let domain = Domain {
            configs: full
                .configs
                .into_iter()
                .filter(|c| c.replicas.len() >= 2 && c.lag_max == 0 && c.min_isr <= 2)
                .collect(),
            max_len: 4,
            ..Domain::default()
        };
        for class in equivalence_classes() {
            let pairs: Vec<(usize, usize)> = (1..class.len()).map(|j| (0, j)).collect();
            for (w, (a, b)) in witnesses(&class, &pairs, &domain).iter().zip(&pairs) {
                assert!(
                    w.trace().is_none(),
                    "{} and {} differ on\n{}",
                    class[*a],
                    class[*b],
                    w.trace().map(|t| t.to_text()).unwrap_or_default()
                );
            }
        }
        // The search is able to fail: two sets that are not equivalent are told apart.
        let sets = [
            FaultSet::one(Fault::HwAllReplicas),
            FaultSet::one(Fault::HwNotOnShrink),
        ];
        assert!(witnesses(&sets, &[(0, 1)], &domain)[0].trace().is_some());
    }

    #[test]
    fn split_gain_counts_split_pairs() {
        // Four behaviours in one block; a case splitting them 2+2 separates 4 pairs.
        assert_eq!(split_gain(&[0, 0, 0, 0], &[0, 1, 2, 3], &[0, 0, 1, 1]), 4);
        assert_eq!(split_gain(&[0, 0, 1, 1], &[0, 1, 2, 3], &[0, 0, 1, 1]), 0);
    }
}
