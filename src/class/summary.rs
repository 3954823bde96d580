//! The numbers of the class report, computed from the submissions' reports alone ([`summarize`]):
//! counts, the score distribution, how many students make each catalog mistake, the cases that
//! fail most, and the failing submissions the catalog does not explain, grouped by behaviour.
//!
//! Pure and deterministic: no file is read, no time taken, nothing iterated in hash order; the
//! submissions are sorted first, so the same set of submissions in any order (one batch, or
//! merged shards) gives the same [`Summary`]. Strings from the reports are kept as they are;
//! the page escapes them. The only strings that decide anything (a group's key) are bounded
//! normalized forms: case names, verdicts, the contract's verbs and field names.

use std::collections::BTreeMap;

use isr_reference::CATALOG;

use super::{Outcome, Submission};
use crate::report::json::{CaseV1, DiagnosisV1, ReportV1, VerdictV1};

/// Lines of a failed build's output kept for the page.
pub const BUILD_LINES: usize = 8;
/// Characters kept of one such line, of a grading error and of a "did not run" line.
pub const TEXT_CHARS: usize = 300;
/// The longest kind of first difference kept as it is in a group's key (longer: `other`).
const KIND_CHARS: usize = 40;

/// What became of one submission, one answer each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Every case passed.
    Passed,
    /// It ran, and some case failed.
    Failed,
    /// It ran, but every failing run ended the same way (`did_not_run`).
    DidNotRun,
    /// Its build step failed; no case ran.
    BuildFailed,
    /// The grader was interrupted while grading it: its results are partial (regrade it).
    Interrupted,
    /// The grader could not grade it (an error document, or no readable report).
    Error,
}

impl Status {
    /// The status in a word or two, for badges.
    pub fn label(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::DidNotRun => "did not run",
            Status::BuildFailed => "build failed",
            Status::Interrupted => "interrupted",
            Status::Error => "not graded",
        }
    }
}

/// What the diagnosis says about one failing submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// Not applicable: it passed, did not run, or was not graded.
    Nothing,
    /// The catalog explains every case: these mistakes (catalog ids).
    Exact(Vec<String>),
    /// Only formatting slips (debug lines on stdout, exit codes): the events are right.
    SlipsOnly,
    /// Not explained; `candidates` are the closest known mistake sets' ids (a hint, not a
    /// verdict), `beyond_corpus` whether they reproduced every corpus case but an explored
    /// trace contradicts them.
    Unexplained {
        /// Ids of the best closest sets (or the contradicted exact set), sorted, deduplicated.
        candidates: Vec<String>,
        /// The exact diagnosis on the corpus was contradicted beyond it.
        beyond_corpus: bool,
    },
}

/// One row of the table of all submissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The submission's name.
    pub name: String,
    /// What became of it.
    pub status: Status,
    /// Points earned (0 when not graded).
    pub points: u32,
    /// Points possible (0 when not graded).
    pub max_points: u32,
    /// Cases passed.
    pub passed: usize,
    /// Cases graded.
    pub cases: usize,
    /// Non-passing verdicts and how many cases got each, in a fixed order.
    pub verdicts: Vec<(&'static str, usize)>,
    /// The diagnosis.
    pub named: Named,
    /// Its group among the unexplained (1-based), if it is in one.
    pub group: Option<usize>,
}

/// One bar of the score distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreBin {
    /// `0–9%` … `90–99%`, `100%`.
    pub label: String,
    /// Submissions whose points fall in it.
    pub count: usize,
}

/// A submission and the case whose picture shows a behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The submission's name.
    pub name: String,
    /// The failing case.
    pub case: String,
}

/// One mistake of the catalog (or an id a report names that this grader's catalog lacks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MistakeStat {
    /// The catalog id.
    pub id: String,
    /// What the program does wrong.
    pub title: String,
    /// The lesson's section.
    pub section: String,
    /// The rule it breaks.
    pub rule: String,
    /// Whether this grader's catalog has it.
    pub in_catalog: bool,
    /// Submissions whose exact diagnosis names it, sorted.
    pub exact: Vec<String>,
    /// Submissions not explained exactly whose closest candidates include it, sorted.
    pub candidates: Vec<String>,
    /// The first exact submission and the case to show.
    pub example: Option<Example>,
}

/// One case that some submission fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseStat {
    /// The case's name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Submissions that ran it.
    pub ran: usize,
    /// Submissions that failed it.
    pub failing: usize,
    /// Failing verdicts and their counts, in a fixed order.
    pub verdicts: Vec<(&'static str, usize)>,
}

/// A representative's first difference on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The case.
    pub case: String,
    /// Its title.
    pub title: String,
    /// The verdict.
    pub verdict: &'static str,
    /// The first differing line (1-based) of the case's output.
    pub line: Option<usize>,
    /// The expected line there.
    pub expected: Option<String>,
    /// The program's line there (program text).
    pub actual: Option<String>,
    /// The smallest trace found with the same kind of difference, and its first difference.
    pub shrunk: Option<ShrunkView>,
}

/// A shrunk trace, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShrunkView {
    /// Commands in it.
    pub commands: usize,
    /// The trace, as a case file stores it.
    pub trace: String,
    /// Its first differing line (1-based).
    pub line: Option<usize>,
    /// The expected line there.
    pub expected: Option<String>,
    /// The program's line there (program text).
    pub actual: Option<String>,
}

/// Failing submissions the catalog does not explain that fail the same cases the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The key: every failing case with the kind of its first difference, in case order.
    pub failing: Vec<(String, String)>,
    /// The members, sorted (the first is the representative).
    pub members: Vec<String>,
    /// The representative's first difference on the failing case with the smallest shrunk
    /// trace (else the first failing case).
    pub divergence: Option<Divergence>,
    /// The representative's closest known mistakes (a hint).
    pub candidates: Vec<String>,
    /// A group listed before this one (as large or larger) whose key differs from this one's
    /// on at most [`NEAR_CASES`] cases, fewer than the failing cases they share: the most
    /// similar, if any.
    pub near: Option<Near>,
}

/// Another group whose failures are almost the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Near {
    /// Its number (1-based).
    pub group: usize,
    /// The cases on which the two differ (failing in one only, or failing another way), sorted.
    pub cases: Vec<String>,
}

/// At most this many differing cases make two groups near each other.
pub const NEAR_CASES: usize = 3;

/// A submission that did not run at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    /// The submission.
    pub name: String,
    /// The line every failing run ended with (program text, cut).
    pub line: String,
    /// Where it comes from and what to do.
    pub cause: String,
}

/// A submission whose build failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFailure {
    /// The submission.
    pub name: String,
    /// The build command.
    pub command: String,
    /// The first lines of its output (program text, each cut).
    pub lines: Vec<String>,
}

/// A submission the grader could not grade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GradingError {
    /// The submission.
    pub name: String,
    /// Why (cut).
    pub message: String,
}

/// Everything the class report shows, computed from the submissions' reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Submissions in all.
    pub total: usize,
    /// Submissions with a report (build failures included).
    pub graded: usize,
    /// Submissions that passed every case.
    pub passing: usize,
    /// Submissions that ran and failed some case.
    pub failing: usize,
    /// Failing submissions whose mistakes the catalog names exactly.
    pub explained: usize,
    /// Failing submissions whose only faults are formatting slips.
    pub slips_only: usize,
    /// Failing submissions the catalog does not explain.
    pub unexplained: usize,
    /// Submissions whose build failed.
    pub build_failed: usize,
    /// Submissions that did not run at all.
    pub did_not_run: usize,
    /// Submissions the grader could not grade.
    pub errors: usize,
    /// Submissions whose grading was interrupted (partial results, left out of the numbers
    /// about mistakes, cases and groups).
    pub interrupted: usize,
    /// The score distribution over graded submissions with points possible (not interrupted
    /// ones).
    pub scores: Vec<ScoreBin>,
    /// Each grader version (with its cases hash) and how many reports it wrote, sorted.
    pub versions: Vec<(String, usize)>,
    /// Every catalog mistake, then ids the catalog lacks: most students first, then catalog
    /// order.
    pub mistakes: Vec<MistakeStat>,
    /// Cases some submission that ran fails: most failures first, then by name.
    pub cases: Vec<CaseStat>,
    /// Cases that every submission that ran them passes.
    pub cases_all_pass: usize,
    /// Unexplained failing submissions grouped by behaviour: largest first.
    pub groups: Vec<Group>,
    /// Submissions that failed only by formatting slips, sorted.
    pub slips: Vec<String>,
    /// Submissions that did not run, sorted.
    pub not_run: Vec<NotRun>,
    /// Submissions whose build failed, sorted.
    pub build_failures: Vec<BuildFailure>,
    /// Submissions the grader could not grade, sorted.
    pub grading_errors: Vec<GradingError>,
    /// Every submission, sorted by name.
    pub rows: Vec<Row>,
}

/// A verdict's name, as in the JSON report.
pub fn verdict_name(v: &VerdictV1) -> &'static str {
    match v {
        VerdictV1::Pass => "pass",
        VerdictV1::Wrong => "wrong",
        VerdictV1::Timeout => "timeout",
        VerdictV1::Crash => "crash",
        VerdictV1::ExitCode => "exit-code",
        VerdictV1::OutputLimit => "output-limit",
        VerdictV1::NoOutput => "no-output",
        VerdictV1::NotRun => "not-run",
        VerdictV1::Nondeterministic => "nondeterministic",
    }
}

/// The order verdicts are listed in.
const VERDICT_ORDER: [&str; 8] = [
    "wrong",
    "no-output",
    "timeout",
    "crash",
    "exit-code",
    "output-limit",
    "nondeterministic",
    "not-run",
];

fn verdict_counts(counts: &BTreeMap<&'static str, usize>) -> Vec<(&'static str, usize)> {
    VERDICT_ORDER
        .iter()
        .filter_map(|v| counts.get(v).map(|n| (*v, *n)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The first `max` characters of `text` (with `…` when cut).
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// A kind of first difference as a group's key may hold it: short, letters, digits, spaces,
/// `-` and `_` only; anything else is `other`.
fn bounded_kind(kind: &str) -> String {
    let ok = !kind.is_empty()
        && kind.chars().count() <= KIND_CHARS
        && kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_'));
    if ok {
        kind.to_string()
    } else {
        "other".to_string()
    }
}

/// How a failing case differs: the shrunk trace's kind when it was shrunk, else the same form
/// computed from the verdict and the first differing lines (the contract's verbs and the
/// expected line's field names only, never the program's text).
pub fn case_kind(case: &CaseV1) -> String {
    if let Some(sh) = &case.shrunk {
        return bounded_kind(&sh.kind);
    }
    let from_lines = || {
        let e: Vec<String> = case.expected_line.iter().cloned().collect();
        let a: Vec<String> = case.actual_line.iter().cloned().collect();
        isr_reference::shrink::divergence_kind(&e, &a).map(|(_, k)| k)
    };
    let kind = match case.verdict {
        VerdictV1::Timeout => "timeout".to_string(),
        VerdictV1::OutputLimit => "output-limit".to_string(),
        VerdictV1::Crash => format!("crash {}", case.signal.as_deref().unwrap_or("")),
        VerdictV1::ExitCode => match case.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "exit code".to_string(),
        },
        VerdictV1::Nondeterministic => "nondeterministic".to_string(),
        VerdictV1::NotRun => "not-run".to_string(),
        VerdictV1::Wrong | VerdictV1::NoOutput | VerdictV1::Pass => {
            from_lines().unwrap_or_else(|| verdict_name(&case.verdict).to_string())
        }
    };
    bounded_kind(kind.trim())
}

fn status_of(report: &ReportV1) -> Status {
    if report.interrupted {
        Status::Interrupted
    } else if report.build.as_ref().is_some_and(|b| !b.ok) {
        Status::BuildFailed
    } else if report.did_not_run.is_some() {
        Status::DidNotRun
    } else if report.summary.failed == 0
        && report
            .cases
            .iter()
            .all(|c| matches!(c.verdict, VerdictV1::Pass))
    {
        Status::Passed
    } else {
        Status::Failed
    }
}

/// The ids of the closest sets that explain the most failing cases (ties kept).
fn best_closest(d: &DiagnosisV1) -> Vec<String> {
    let best = d.closest.iter().map(|c| c.explains).max().unwrap_or(0);
    let mut ids: Vec<String> = d
        .closest
        .iter()
        .filter(|c| c.explains == best && best > 0)
        .flat_map(|c| c.mistakes.iter().cloned())
        .collect();
    if d.beyond_corpus.is_some() {
        ids.extend(d.mistakes.iter().cloned());
    }
    ids.sort();
    ids.dedup();
    ids
}

fn named_of(report: &ReportV1, status: Status) -> Named {
    if status != Status::Failed {
        return Named::Nothing;
    }
    match &report.diagnosis {
        Some(d) if d.exact && !d.mistakes.is_empty() => {
            let mut ids = d.mistakes.clone();
            ids.sort();
            ids.dedup();
            Named::Exact(ids)
        }
        Some(d) if d.exact => Named::SlipsOnly,
        Some(d) => Named::Unexplained {
            candidates: best_closest(d),
            beyond_corpus: d.beyond_corpus.is_some(),
        },
        None => Named::Unexplained {
            candidates: Vec::new(),
            beyond_corpus: false,
        },
    }
}

fn score_bins(rows: &[Row]) -> Vec<ScoreBin> {
    let mut counts = [0usize; 11];
    for r in rows
        .iter()
        .filter(|r| !matches!(r.status, Status::Error | Status::Interrupted) && r.max_points > 0)
    {
        let pct = (u64::from(r.points) * 100 / u64::from(r.max_points)).min(100);
        let bin = if r.points >= r.max_points {
            10
        } else {
            (pct / 10).min(9) as usize
        };
        counts[bin] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, &count)| ScoreBin {
            label: if i == 10 {
                "100%".to_string()
            } else {
                format!("{}–{}%", i * 10, i * 10 + 9)
            },
            count,
        })
        .collect()
}

/// The case to picture for a submission's mistake: the mistake's smallest case when the
/// submission fails it, else its first failing case.
fn example_case(report: &ReportV1, id: &str) -> Option<String> {
    let failing = |name: &str| {
        report
            .cases
            .iter()
            .any(|c| c.name == name && !matches!(c.verdict, VerdictV1::Pass))
    };
    let smallest = report.diagnosis.as_ref().and_then(|d| {
        d.details
            .iter()
            .find(|m| m.id == id)
            .and_then(|m| m.smallest_case.clone())
    });
    smallest.filter(|c| failing(c)).or_else(|| {
        report
            .cases
            .iter()
            .find(|c| !matches!(c.verdict, VerdictV1::Pass))
            .map(|c| c.name.clone())
    })
}

fn mistake_stats(graded: &[(&Submission, &ReportV1, &Row)]) -> Vec<MistakeStat> {
    let mut stats: Vec<MistakeStat> = CATALOG
        .iter()
        .map(|f| MistakeStat {
            id: f.id.to_string(),
            title: f.title.to_string(),
            section: f.section.to_string(),
            rule: f.rule.to_string(),
            in_catalog: true,
            exact: Vec::new(),
            candidates: Vec::new(),
            example: None,
        })
        .collect();
    let mut index: BTreeMap<String, usize> = stats
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.clone(), i))
        .collect();
    // Submissions are in name order: the first to name an unknown id gives its words.
    let mut slot = |stats: &mut Vec<MistakeStat>, id: &str, report: &ReportV1| -> usize {
        if let Some(&i) = index.get(id) {
            return i;
        }
        let words = report
            .diagnosis
            .as_ref()
            .and_then(|d| d.details.iter().find(|m| m.id == id));
        stats.push(MistakeStat {
            id: id.to_string(),
            title: words.map_or_else(String::new, |m| m.title.clone()),
            section: words.map_or_else(String::new, |m| m.section.clone()),
            rule: words.map_or_else(String::new, |m| m.rule.clone()),
            in_catalog: false,
            exact: Vec::new(),
            candidates: Vec::new(),
            example: None,
        });
        index.insert(id.to_string(), stats.len() - 1);
        stats.len() - 1
    };
    for (sub, report, row) in graded {
        match &row.named {
            Named::Exact(ids) => {
                for id in ids {
                    let i = slot(&mut stats, id, report);
                    stats[i].exact.push(sub.name.clone());
                    if stats[i].example.is_none() {
                        stats[i].example = example_case(report, id).map(|case| Example {
                            name: sub.name.clone(),
                            case,
                        });
                    }
                }
            }
            Named::Unexplained { candidates, .. } => {
                for id in candidates {
                    let i = slot(&mut stats, id, report);
                    stats[i].candidates.push(sub.name.clone());
                }
            }
            Named::Nothing | Named::SlipsOnly => {}
        }
    }
    // Most students first; ties in catalog order (unknown ids after, by id: their slots were
    // taken in name order, so sort them).
    let mut order: Vec<(usize, MistakeStat)> = stats.into_iter().enumerate().collect();
    order.sort_by(|(ia, a), (ib, b)| {
        b.exact
            .len()
            .cmp(&a.exact.len())
            .then(b.candidates.len().cmp(&a.candidates.len()))
            .then(b.in_catalog.cmp(&a.in_catalog))
            .then(if a.in_catalog {
                ia.cmp(ib)
            } else {
                a.id.cmp(&b.id)
            })
    });
    order.into_iter().map(|(_, m)| m).collect()
}

fn case_stats(ran: &[(&Submission, &ReportV1, &Row)]) -> (Vec<CaseStat>, usize) {
    struct Acc {
        title: String,
        ran: usize,
        failing: usize,
        verdicts: BTreeMap<&'static str, usize>,
    }
    let mut by_name: BTreeMap<&str, Acc> = BTreeMap::new();
    for (_, report, _) in ran {
        for c in &report.cases {
            let acc = by_name.entry(c.name.as_str()).or_insert_with(|| Acc {
                title: c.title.clone(),
                ran: 0,
                failing: 0,
                verdicts: BTreeMap::new(),
            });
            acc.ran += 1;
            if !matches!(c.verdict, VerdictV1::Pass) {
                acc.failing += 1;
                *acc.verdicts.entry(verdict_name(&c.verdict)).or_default() += 1;
            }
        }
    }
    let all_pass = by_name.values().filter(|a| a.failing == 0).count();
    let mut cases: Vec<CaseStat> = by_name
        .into_iter()
        .filter(|(_, a)| a.failing > 0)
        .map(|(name, a)| CaseStat {
            name: name.to_string(),
            title: a.title,
            ran: a.ran,
            failing: a.failing,
            verdicts: verdict_counts(&a.verdicts),
        })
        .collect();
    cases.sort_by(|a, b| b.failing.cmp(&a.failing).then(a.name.cmp(&b.name)));
    (cases, all_pass)
}

fn divergence_of(report: &ReportV1, case: &str) -> Option<Divergence> {
    let c = report.cases.iter().find(|c| c.name == case)?;
    Some(Divergence {
        case: c.name.clone(),
        title: c.title.clone(),
        verdict: verdict_name(&c.verdict),
        line: c.first_diff_line,
        expected: c.expected_line.clone(),
        actual: c.actual_line.clone(),
        shrunk: c.shrunk.as_ref().map(|sh| ShrunkView {
            commands: sh.commands,
            trace: sh.trace.clone(),
            line: sh.first_diff.as_ref().map(|d| d.line),
            expected: sh.first_diff.as_ref().and_then(|d| d.expected.clone()),
            actual: sh.first_diff.as_ref().and_then(|d| d.actual.clone()),
        }),
    })
}

/// The case a group's picture and first difference show: the failing case with the smallest
/// shrunk trace (the clearest picture), else the first failing case.
fn representative_case(report: &ReportV1, failing: &[(String, String)]) -> Option<String> {
    let shrunk_size = |name: &str| {
        report
            .cases
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.shrunk.as_ref())
            .map_or(usize::MAX, |s| s.commands)
    };
    failing
        .iter()
        .enumerate()
        .min_by_key(|(i, (name, _))| (shrunk_size(name), *i))
        .map(|(_, (name, _))| name.clone())
}

fn groups_of(ran: &[(&Submission, &ReportV1, &Row)]) -> Vec<Group> {
    let mut by_key: BTreeMap<Vec<(String, String)>, Vec<usize>> = BTreeMap::new();
    for (i, (_, report, row)) in ran.iter().enumerate() {
        if !matches!(row.named, Named::Unexplained { .. }) {
            continue;
        }
        let key: Vec<(String, String)> = report
            .cases
            .iter()
            .filter(|c| !matches!(c.verdict, VerdictV1::Pass))
            .map(|c| (c.name.clone(), case_kind(c)))
            .collect();
        by_key.entry(key).or_default().push(i);
    }
    let mut groups: Vec<Group> = by_key
        .into_iter()
        .map(|(failing, members)| {
            let (_, rep, rep_row) = ran[members[0]];
            let divergence =
                representative_case(rep, &failing).and_then(|case| divergence_of(rep, &case));
            let candidates = match &rep_row.named {
                Named::Unexplained { candidates, .. } => candidates.clone(),
                _ => Vec::new(),
            };
            Group {
                failing,
                members: members.iter().map(|&i| ran[i].0.name.clone()).collect(),
                divergence,
                candidates,
                near: None,
            }
        })
        .collect();
    // Largest first; ties by key (BTreeMap order, kept by a stable sort).
    groups.sort_by_key(|g| std::cmp::Reverse(g.members.len()));
    for i in 1..groups.len() {
        groups[i].near = (0..i)
            .filter_map(|j| {
                let cases = differing_cases(&groups[i].failing, &groups[j].failing);
                let agreeing = groups[i]
                    .failing
                    .iter()
                    .filter(|f| groups[j].failing.contains(f))
                    .count();
                (cases.len() <= NEAR_CASES && cases.len() < agreeing).then_some(Near {
                    group: j + 1,
                    cases,
                })
            })
            .min_by_key(|n| (n.cases.len(), n.group));
    }
    groups
}

/// The cases two groups' keys disagree on, sorted.
fn differing_cases(a: &[(String, String)], b: &[(String, String)]) -> Vec<String> {
    let a: BTreeMap<&str, &str> = a.iter().map(|(c, k)| (c.as_str(), k.as_str())).collect();
    let b: BTreeMap<&str, &str> = b.iter().map(|(c, k)| (c.as_str(), k.as_str())).collect();
    let mut cases: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|c| a.get(*c) != b.get(*c))
        .map(|c| c.to_string())
        .collect();
    cases.sort();
    cases.dedup();
    cases
}

/// The class summary of `subs` (in any order).
pub fn summarize(subs: &[Submission]) -> Summary {
    let mut sorted: Vec<&Submission> = subs.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name).then(a.dir.cmp(&b.dir)));

    let mut rows: Vec<Row> = sorted.iter().map(|s| row_of(s)).collect();
    let graded: Vec<(&Submission, &ReportV1, &Row)> = sorted
        .iter()
        .zip(&rows)
        .filter_map(|(s, r)| s.report().map(|rep| (*s, rep, r)))
        .collect();
    let ran: Vec<(&Submission, &ReportV1, &Row)> = graded
        .iter()
        .filter(|(_, _, r)| matches!(r.status, Status::Passed | Status::Failed))
        .copied()
        .collect();

    let mistakes = mistake_stats(&ran);
    let (cases, cases_all_pass) = case_stats(&ran);
    let groups = groups_of(&ran);

    let mut versions: BTreeMap<String, usize> = BTreeMap::new();
    for (_, report, _) in &graded {
        *versions.entry(report.grader_version.clone()).or_default() += 1;
    }

    let mut not_run = Vec::new();
    let mut build_failures = Vec::new();
    let mut grading_errors = Vec::new();
    for s in &sorted {
        match &s.outcome {
            Outcome::Error(e) => grading_errors.push(GradingError {
                name: s.name.clone(),
                message: cut(e, TEXT_CHARS),
            }),
            Outcome::Graded(r) => match status_of(r) {
                Status::BuildFailed => {
                    let b = r.build.as_ref();
                    build_failures.push(BuildFailure {
                        name: s.name.clone(),
                        command: b.map_or_else(String::new, |b| cut(&b.command, TEXT_CHARS)),
                        lines: b.map_or_else(Vec::new, |b| {
                            b.output_tail
                                .lines()
                                .take(BUILD_LINES)
                                .map(|l| cut(l, TEXT_CHARS))
                                .collect()
                        }),
                    })
                }
                Status::DidNotRun => {
                    if let Some(d) = &r.did_not_run {
                        not_run.push(NotRun {
                            name: s.name.clone(),
                            line: cut(&d.line, TEXT_CHARS),
                            cause: cut(&d.cause, TEXT_CHARS),
                        });
                    }
                }
                _ => {}
            },
        }
    }

    let graded_n = graded.len();
    // Each unexplained row learns its group.
    let group_of: BTreeMap<&str, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| group.members.iter().map(move |m| (m.as_str(), g + 1)))
        .collect();
    for row in &mut rows {
        row.group = group_of.get(row.name.as_str()).copied();
    }

    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    Summary {
        total: rows.len(),
        graded: graded_n,
        passing: count(&|r| r.status == Status::Passed),
        failing: count(&|r| r.status == Status::Failed),
        explained: count(&|r| matches!(r.named, Named::Exact(_))),
        slips_only: count(&|r| r.named == Named::SlipsOnly),
        unexplained: count(&|r| matches!(r.named, Named::Unexplained { .. })),
        build_failed: count(&|r| r.status == Status::BuildFailed),
        did_not_run: count(&|r| r.status == Status::DidNotRun),
        errors: count(&|r| r.status == Status::Error),
        interrupted: count(&|r| r.status == Status::Interrupted),
        scores: score_bins(&rows),
        versions: versions.into_iter().collect(),
        mistakes,
        cases,
        cases_all_pass,
        groups,
        slips: rows
            .iter()
            .filter(|r| r.named == Named::SlipsOnly)
            .map(|r| r.name.clone())
            .collect(),
        not_run,
        build_failures,
        grading_errors,
        rows,
    }
}

fn row_of(sub: &Submission) -> Row {
    let Some(report) = sub.report() else {
        return Row {
            name: sub.name.clone(),
            status: Status::Error,
            points: 0,
            max_points: 0,
            passed: 0,
            cases: 0,
            verdicts: Vec::new(),
            named: Named::Nothing,
            group: None,
        };
    };
    let status = status_of(report);
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for c in &report.cases {
        if !matches!(c.verdict, VerdictV1::Pass) {
            *counts.entry(verdict_name(&c.verdict)).or_default() += 1;
        }
    }
    Row {
        name: sub.name.clone(),
        status,
        points: report.summary.points,
        max_points: report.summary.max_points,
        passed: report
            .cases
            .iter()
            .filter(|c| matches!(c.verdict, VerdictV1::Pass))
            .count(),
        cases: report.cases.len(),
        verdicts: verdict_counts(&counts),
        named: named_of(report, status),
        group: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn counts_every_kind_of_outcome() {
        let s = summarize(&small_class());
        assert_eq!(s.total, 10);
        assert_eq!(s.graded, 9);
        assert_eq!(s.passing, 1);
        assert_eq!(s.failing, 6);
        assert_eq!(s.explained, 3);
        assert_eq!(s.unexplained, 3);
        assert_eq!(s.slips_only, 0);
        assert_eq!(s.build_failed, 1);
        assert_eq!(s.did_not_run, 1);
        assert_eq!(s.errors, 1);
        assert_eq!(s.interrupted, 0);
        let names: Vec<&str> = s.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"
            ]
        );
        // 4 cases each: bob 100%, alice/dave/carol/frank 50%, erin/grace 75%, heidi and ivan 0%.
        let bins: Vec<(String, usize)> = s
            .scores
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| (b.label.clone(), b.count))
            .collect();
        assert_eq!(
            bins,
            [
                ("0–9%".to_string(), 2),
                ("50–59%".to_string(), 4),
                ("70–79%".to_string(), 2),
                ("100%".to_string(), 1)
            ]
        );
        assert_eq!(s.scores.len(), 11);
        assert_eq!(s.build_failures[0].name, "heidi");
        assert_eq!(
            s.build_failures[0].lines[0],
            "error[E0425]: cannot find value `x`"
        );
        assert_eq!(s.not_run[0].line, "python3: not found");
        assert_eq!(s.grading_errors[0].name, "judy");
        assert_eq!(s.versions.len(), 1);
        assert_eq!(s.versions[0].1, 9);
    }

    #[test]
    fn every_catalog_mistake_is_listed_most_common_first() {
        let s = summarize(&small_class());
        assert_eq!(s.mistakes.len(), CATALOG.len());
        for f in CATALOG {
            let m = s.mistakes.iter().find(|m| m.id == f.id).unwrap();
            assert_eq!((m.title.as_str(), m.rule.as_str()), (f.title, f.rule));
            assert_eq!(m.section, f.section);
        }
        let top = &s.mistakes[0];
        assert_eq!(top.id, "caught-up-equality-only");
        assert_eq!(top.exact, ["alice", "dave"]);
        assert_eq!(
            top.example,
            Some(Example {
                name: "alice".into(),
                case: "002-load".into()
            })
        );
        assert_eq!(s.mistakes[1].id, "ack-immediate");
        assert_eq!(s.mistakes[1].exact, ["erin"]);
        // erin fails 004-acks, not the smallest case the fixture names: her first failing case.
        assert_eq!(s.mistakes[1].example.as_ref().unwrap().case, "004-acks");
        // A candidate is counted apart from exact diagnoses.
        let hw = s
            .mistakes
            .iter()
            .find(|m| m.id == "hw-all-replicas")
            .unwrap();
        assert!(hw.exact.is_empty());
        assert_eq!(hw.candidates, ["carol", "frank"]);
        // The rest keep catalog order.
        let rest: Vec<&str> = s.mistakes[3..].iter().map(|m| m.id.as_str()).collect();
        let catalog: Vec<&str> = CATALOG
            .iter()
            .map(|f| f.id)
            .filter(|id| {
                ![
                    "caught-up-equality-only",
                    "ack-immediate",
                    "hw-all-replicas",
                ]
                .contains(id)
            })
            .collect();
        assert_eq!(rest, catalog);
    }

    #[test]
    fn an_id_the_catalog_lacks_is_listed_after_it() {
        let r = report(
            with_failures(&[(1, wrong_isr("002-load"))]),
            exact(&["from-a-newer-grader"]),
        );
        let s = summarize(&[sub("zoe", &r)]);
        assert_eq!(s.mistakes.len(), CATALOG.len() + 1);
        let m = &s.mistakes[0];
        assert_eq!(m.id, "from-a-newer-grader");
        assert!(!m.in_catalog);
        assert_eq!(m.title, "title of from-a-newer-grader");
    }

    #[test]
    fn the_cases_that_fail_most_come_first() {
        let s = summarize(&small_class());
        let cases: Vec<(&str, usize, usize)> = s
            .cases
            .iter()
            .map(|c| (c.name.as_str(), c.failing, c.ran))
            .collect();
        // Only submissions that ran count: not heidi (build), ivan (did not run), judy.
        assert_eq!(
            cases,
            [
                ("002-load", 4, 7),
                ("003-stall", 3, 7),
                ("001-worked", 2, 7),
                ("004-acks", 1, 7)
            ]
        );
        let stall = &s.cases[1];
        assert_eq!(stall.verdicts, [("wrong", 2), ("crash", 1)]);
        assert_eq!(s.cases_all_pass, 0);
    }

    #[test]
    fn unexplained_submissions_that_fail_alike_form_one_group() {
        let s = summarize(&small_class());
        assert_eq!(s.groups.len(), 2);
        let g = &s.groups[0];
        assert_eq!(g.members, ["carol", "frank"]);
        assert_eq!(
            g.failing,
            [
                ("001-worked".to_string(), "STATUS HW".to_string()),
                ("002-load".to_string(), "STATUS HW".to_string())
            ]
        );
        assert_eq!(g.candidates, ["hw-all-replicas"]);
        let d = g.divergence.as_ref().unwrap();
        assert_eq!(d.case, "001-worked");
        assert_eq!(
            d.actual.as_deref(),
            Some("700 STATUS ISR=5,6 HW=4 LEO=4 WRITES=OK")
        );
        assert_eq!(d.shrunk.as_ref().unwrap().commands, 2);
        assert_eq!(s.groups[1].members, ["grace"]);
        assert_eq!(
            s.groups[1].failing,
            [("003-stall".to_string(), "crash SIGSEGV".to_string())]
        );
        let group_of = |n: &str| s.rows.iter().find(|r| r.name == n).unwrap().group;
        assert_eq!(group_of("carol"), Some(1));
        assert_eq!(group_of("frank"), Some(1));
        assert_eq!(group_of("grace"), Some(2));
        assert_eq!(group_of("alice"), None);
    }

    #[test]
    fn the_same_cases_failing_another_way_is_another_group() {
        // Same failing case, different kind of first difference (HW vs ISR).
        let a = report(with_failures(&[(1, wrong_hw("002-load"))]), inexact(&[]));
        let b = report(with_failures(&[(1, wrong_isr("002-load"))]), inexact(&[]));
        // Same kinds, different cases.
        let c = report(with_failures(&[(2, wrong_hw("003-stall"))]), inexact(&[]));
        // Same as a, but its kind comes from the lines (not shrunk): the same form.
        let unshrunk = case(
            "002-load",
            "wrong",
            Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
            Some("700 STATUS ISR=5,6 HW=9 LEO=4 WRITES=OK"),
            None,
        );
        let d = report(with_failures(&[(1, unshrunk)]), Value::Null);
        let s = summarize(&[sub("a", &a), sub("b", &b), sub("c", &c), sub("d", &d)]);
        let groups: Vec<Vec<&str>> = s
            .groups
            .iter()
            .map(|g| g.members.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(groups, [vec!["a", "d"], vec!["b"], vec!["c"]]);
    }

    #[test]
    fn a_group_key_holds_no_program_text() {
        // A program's own text in the kind or the lines never reaches the key.
        let odd = case(
            "002-load",
            "wrong",
            Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
            Some("<script>alert(1)</script> HW=1"),
            Some("STATUS <b>HW</b>"),
        );
        let long = case(
            "003-stall",
            "wrong",
            Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
            Some("700 hello world"),
            None,
        );
        let r = report(with_failures(&[(1, odd), (2, long)]), inexact(&[]));
        let s = summarize(&[sub("x", &r)]);
        assert_eq!(
            s.groups[0].failing,
            [
                ("002-load".to_string(), "other".to_string()),
                (
                    "003-stall".to_string(),
                    "non-event line instead of STATUS".to_string()
                )
            ]
        );
        assert_eq!(bounded_kind(&"A".repeat(KIND_CHARS + 1)), "other");
        assert_eq!(bounded_kind("exit code 3"), "exit code 3");
    }

    #[test]
    fn a_group_names_a_near_larger_group() {
        let three = report(
            with_failures(&[
                (0, wrong_hw("001-worked")),
                (1, wrong_hw("002-load")),
                (2, wrong_hw("003-stall")),
            ]),
            inexact(&[]),
        );
        // Two of those three: near (one case differs, two agree).
        let two = report(
            with_failures(&[(0, wrong_hw("001-worked")), (1, wrong_hw("002-load"))]),
            inexact(&[]),
        );
        // One of them: not near (two differ, one agrees).
        let one = report(with_failures(&[(0, wrong_hw("001-worked"))]), inexact(&[]));
        // Other cases, another way.
        let other = report(
            with_failures(&[(2, wrong_isr("003-stall")), (3, wrong_isr("004-acks"))]),
            inexact(&[]),
        );
        let s = summarize(&[
            sub("a", &three),
            sub("b", &three),
            sub("c", &two),
            sub("d", &other),
            sub("e", &one),
        ]);
        let near = |member: &str| {
            let g = s.groups.iter().find(|g| g.members[0] == member).unwrap();
            g.near
                .clone()
                .map(|n| (s.groups[n.group - 1].members[0].clone(), n.cases))
        };
        assert_eq!(s.groups[0].members, ["a", "b"]);
        assert_eq!(near("a"), None);
        assert_eq!(
            near("c"),
            Some(("a".to_string(), vec!["003-stall".to_string()]))
        );
        assert_eq!(near("d"), None);
        assert_eq!(near("e"), None);
        assert_eq!(
            differing_cases(&s.groups[0].failing, &[]),
            ["001-worked", "002-load", "003-stall"]
        );
    }

    #[test]
    fn slips_only_and_beyond_the_corpus_are_told_apart() {
        let mut slips = report(
            with_failures(&[(0, case("001-worked", "exit-code", None, None, None))]),
            exact(&[]),
        );
        slips["diagnosis"]["slips"] = json!(["your program exits with a non-zero code"]);
        let mut beyond = report(
            with_failures(&[(1, wrong_isr("002-load"))]),
            exact(&["rejoin-early"]),
        );
        beyond["diagnosis"]["exact"] = json!(false);
        beyond["diagnosis"]["beyond_corpus"] =
            json!({"mistakes": ["rejoin-early"], "explored_case": "explore-x-1", "shrunk": null});
        let s = summarize(&[sub("s", &slips), sub("t", &beyond)]);
        assert_eq!((s.slips_only, s.unexplained, s.explained), (1, 1, 0));
        assert_eq!(s.slips, ["s"]);
        let early = s.mistakes.iter().find(|m| m.id == "rejoin-early").unwrap();
        assert!(early.exact.is_empty());
        assert_eq!(early.candidates, ["t"]);
        assert_eq!(
            s.rows[1].named,
            Named::Unexplained {
                candidates: vec!["rejoin-early".into()],
                beyond_corpus: true
            }
        );
    }

    #[test]
    fn an_interrupted_grading_is_left_out_of_the_numbers() {
        let mut r = report(
            with_failures(&[
                (1, wrong_isr("002-load")),
                (2, case("003-stall", "not-run", None, None, None)),
            ]),
            Value::Null,
        );
        r["interrupted"] = json!(true);
        let s = summarize(&[sub("stopped", &r), sub("ok", &passing())]);
        assert_eq!(s.rows[1].status, Status::Interrupted);
        assert_eq!((s.interrupted, s.failing, s.unexplained), (1, 0, 0));
        assert!(s.groups.is_empty() && s.cases.is_empty());
        assert_eq!(s.scores.iter().map(|b| b.count).sum::<usize>(), 1);
    }

    #[test]
    fn input_order_does_not_change_the_summary() {
        let forward = summarize(&small_class());
        let mut reversed = small_class();
        reversed.reverse();
        assert_eq!(summarize(&reversed), forward);
        let mut rotated = small_class();
        rotated.rotate_left(3);
        assert_eq!(summarize(&rotated), forward);
    }

    #[test]
    fn an_empty_class_is_all_zeros() {
        let s = summarize(&[]);
        assert_eq!((s.total, s.graded, s.passing), (0, 0, 0));
        assert_eq!(s.mistakes.len(), CATALOG.len());
        assert!(s.groups.is_empty() && s.cases.is_empty());
        assert!(s.scores.iter().all(|b| b.count == 0));
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("ééé", 2), "éé…");
    }
}
