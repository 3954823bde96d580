//! What the grader finds beyond the verdict of each corpus case, as data: the smallest trace on
//! which a program still fails, runs that disagree with each other, explored traces, a program
//! that did not run at all, and a diagnosis that does not hold beyond the corpus.
//!
//! Like the rest of `report`, this knows nothing about the exercise: traces and outputs are text
//! that the grading layer has already produced and put into words.

use super::{CaseReport, FirstDiff, Report, visible, visible_lines};

/// The smallest trace found on which the program still differs the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk {
    /// Commands in the shrunk trace.
    pub commands: usize,
    /// Commands in the trace it was shrunk from.
    pub from_commands: usize,
    /// Program runs the shrinking took.
    pub runs: usize,
    /// Set when this is the trace already shrunk for another failing case that differs the
    /// same way (no new runs): that case's name.
    pub same_as: Option<String>,
    /// How the program differs, in a few words (`STATUS HW`, `missing ACK`, `crash SIGSEGV`).
    pub kind: String,
    /// The shrunk trace, as a case file stores it.
    pub trace: String,
    /// What the program should print on it (the reference, or the named mistake).
    pub expected: Vec<String>,
    /// What the program printed on it.
    pub actual: Vec<String>,
    /// The first differing line.
    pub first_diff: Option<FirstDiff>,
    /// The reference's explanation of the shrunk trace, line by line.
    pub explanation: Vec<String>,
}

/// Two runs of the program on the same input that printed different output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nondeterminism {
    /// 1-based line (among compared lines) where the two runs first differ.
    pub line: usize,
    /// That line in the first run (None: it had stopped).
    pub first: Option<String>,
    /// That line in the second run.
    pub second: Option<String>,
    /// The likely cause, for this exercise.
    pub cause: String,
}

/// The program did not run at all: every failure ends the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DidNotRun {
    /// The line every failing run ended with (first stderr line, or the exit status).
    pub line: String,
    /// Where it comes from and what to do.
    pub cause: String,
}

/// Exploration: generated traces run after the corpus, each compared with the reference.
#[derive(Debug, Clone)]
pub struct ExploreReport {
    /// The seed of this grading; `--seed` replays it exactly.
    pub seed: u64,
    /// Traces run.
    pub traces: usize,
    /// Points an explored failure costs (0: reported only).
    pub points_each: u32,
    /// The first explored traces on which the program failed, as cases named by generator and
    /// seed (at most a few: the report stays bounded).
    pub failing: Vec<CaseReport>,
    /// Explored traces on which the program failed, in all.
    pub failing_total: usize,
}

/// An exact diagnosis that an explored trace contradicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeyondCorpus {
    /// The mistake ids that reproduced every corpus case.
    pub mistakes: Vec<String>,
    /// The explored trace, by generator and seed, on which they differ from the program.
    pub explored_case: String,
    /// The smallest trace on which the program and that mistake set differ; `expected` is the
    /// mistake set's output there.
    pub shrunk: Option<Shrunk>,
}

/// A case's shrunk trace and nondeterminism in plain text (for Gradescope and JUnit), starting
/// with a line break; empty when there is neither.
pub fn plain_text(c: &CaseReport) -> String {
    let mut s = String::new();
    if let Some(n) = &c.nondeterminism {
        s.push_str(&format!(
            "\ntwo runs on the same input differ at output line {}\n  first run:  {}\n  second run: {}\nlikely cause: {}",
            n.line,
            visible(n.first.as_deref().unwrap_or("(not shown)")),
            visible(n.second.as_deref().unwrap_or("(not shown)")),
            n.cause
        ));
    }
    if let Some(sh) = &c.shrunk {
        s.push_str(&format!(
            "\nsmallest trace where your program differs ({} commands; {}):\n{}expected:\n{}\nyours:\n{}",
            sh.commands,
            sh.kind,
            sh.trace,
            sh.expected.join("\n"),
            visible_lines(&sh.actual.join("\n"))
        ));
    }
    s
}

/// Exploration and (with `beyond_corpus`) a diagnosis contradicted beyond the corpus, in plain
/// text (for Gradescope's overall output), starting with a line break; empty when none applies.
/// A contradicted diagnosis names mistakes found with every case, hidden ones too: leave it out
/// where students may not learn from hidden cases.
pub fn plain_summary_beyond(report: &Report, beyond_corpus: bool) -> String {
    let mut s = String::new();
    if let Some(e) = &report.explored {
        s.push_str(&format!(
            "\n\nExploration: {} generated traces (seed {}): your program differs on {}",
            e.traces, e.seed, e.failing_total
        ));
        for c in e.failing.iter().take(3) {
            s.push_str(&format!("\n\n{}{}", c.name, plain_text(c)));
        }
    }
    if let Some(b) = report
        .diagnosis
        .as_ref()
        .and_then(|d| d.beyond_corpus.as_ref())
        .filter(|_| beyond_corpus)
    {
        s.push_str(&format!(
            "\n\nOn every corpus case your output matches {}, but not on the explored trace {}.",
            b.mistakes.join(" + "),
            b.explored_case
        ));
    }
    s
}
