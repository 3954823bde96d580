//! Reports: the grading result as data, and its renderings (human, JSON, JUnit XML, Gradescope,
//! markdown, the student's HTML page [`html_report`]; [`html`] is the frame of the HTML pages,
//! [`svg`] the timeline picture of a failing case). The data model here is internal; the JSON
//! report has its own typed model per schema version ([`json`]).
//!
//! This layer knows nothing about the exercise: it renders verdicts, text differences and
//! diagnoses that the grading layer has already put into words.

mod findings;
pub mod gradescope;
pub mod html;
pub mod html_report;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod svg;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

pub use findings::{BeyondCorpus, DidNotRun, ExploreReport, Nondeterminism, Shrunk};

/// A case's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Output as expected, exit code 0.
    Pass,
    /// Output differs.
    Wrong,
    /// Killed at the wall-clock limit.
    Timeout {
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// Killed by a signal.
    Crash {
        /// The signal's name, e.g. `SIGSEGV`.
        signal: String,
    },
    /// Exited with a non-zero code (output still compared).
    ExitCode {
        /// The exit code.
        code: i32,
    },
    /// Printed more than the output limit.
    OutputLimit,
    /// Printed nothing where output was expected.
    NoOutput,
    /// Not run: the grader was interrupted (SIGINT/SIGTERM) before or while running it.
    NotRun,
    /// Two runs on the same input printed different output.
    Nondeterministic,
}

/// Milliseconds for people: `10 s`, `0.5 s`.
fn seconds(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

impl Verdict {
    /// The short name: `pass`, `wrong`, `timeout`, `crash`, `exit-code`, `output-limit`,
    /// `no-output`, `not-run`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Wrong => "wrong",
            Verdict::Timeout { .. } => "timeout",
            Verdict::Crash { .. } => "crash",
            Verdict::ExitCode { .. } => "exit-code",
            Verdict::OutputLimit => "output-limit",
            Verdict::NoOutput => "no-output",
            Verdict::NotRun => "not-run",
            Verdict::Nondeterministic => "nondeterministic",
        }
    }

    /// A phrase for people, e.g. `crash (SIGSEGV)`.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Pass => "pass".into(),
            Verdict::Wrong => "wrong output".into(),
            Verdict::Timeout { limit_ms } => format!("timeout ({})", seconds(*limit_ms)),
            Verdict::Crash { signal } => format!("crash ({signal})"),
            Verdict::ExitCode { code } => format!("exit code {code}"),
            Verdict::OutputLimit => "output limit exceeded".into(),
            Verdict::NoOutput => "no output".into(),
            Verdict::NotRun => "not run (the grader was interrupted)".into(),
            Verdict::Nondeterministic => "nondeterministic (two runs, two outputs)".into(),
        }
    }

    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        *self == Verdict::Pass
    }
}

/// One line of a line diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// `' '` context, `'-'` expected only, `'+'` actual only, `'~'` a skipped stretch.
    pub tag: char,
    /// The line.
    pub text: String,
}

/// Where the program's output first differs from the expected output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstDiff {
    /// 1-based index among the compared (normalized) lines.
    pub line: usize,
    /// The expected line there (None: the program printed more than expected).
    pub expected: Option<String>,
    /// The program's line there (None: the program stopped early).
    pub actual: Option<String>,
}

/// The input command behind the first difference, and why the expected line is what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `file:line` of the command in the case's input.
    pub location: String,
    /// The command.
    pub command: String,
    /// The reference's explanation of that command, one sentence per entry.
    pub explanation: Vec<String>,
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// Case name.
    pub name: String,
    /// Case title.
    pub title: String,
    /// Whether the case is hidden from students.
    pub hidden: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Points earned.
    pub points: u32,
    /// Points possible.
    pub max_points: u32,
    /// The first difference, if any.
    pub first_diff: Option<FirstDiff>,
    /// The command behind the first difference, if known.
    pub origin: Option<Origin>,
    /// A line diff with context (empty when the output matched).
    pub diff: Vec<DiffLine>,
    /// Lines of stdout that are not events of the exercise (1-based line, text): the first
    /// few only, each cut to a bound.
    pub stray_lines: Vec<(usize, String)>,
    /// How many such lines there were in all.
    pub stray_total: usize,
    /// The end of what the program wrote to stderr.
    pub stderr_tail: String,
    /// A command that shows the case in full with its explanation (None for hidden cases).
    pub show_command: Option<String>,
    /// Wall-clock time of the run (not shown in deterministic reports).
    pub elapsed: Duration,
    /// The smallest trace on which the program still fails the same way, when shrunk.
    pub shrunk: Option<Shrunk>,
    /// When two runs on this input differed.
    pub nondeterminism: Option<Nondeterminism>,
    /// The picture of a failing case (None for passing cases, cases not run, and hidden cases
    /// without a shrunk trace in a student's report).
    pub timeline: Option<svg::Timeline>,
}

impl CaseReport {
    /// A case's report with its verdict and points and nothing else (no difference, output or
    /// picture): a case not run, or a starting point to fill in.
    pub fn bare(name: &str, title: &str, hidden: bool, verdict: Verdict, max_points: u32) -> Self {
        CaseReport {
            name: name.to_string(),
            title: title.to_string(),
            hidden,
            points: if verdict.passed() { max_points } else { 0 },
            max_points,
            verdict,
            first_diff: None,
            origin: None,
            diff: Vec::new(),
            stray_lines: Vec::new(),
            stray_total: 0,
            stderr_tail: String::new(),
            show_command: None,
            elapsed: Duration::ZERO,
            shrunk: None,
            nondeterminism: None,
            timeline: None,
        }
    }
}

/// A known mistake named by the diagnosis, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistake {
    /// Stable id.
    pub id: String,
    /// What the program does wrong.
    pub title: String,
    /// Where the broken rule is taught.
    pub section: String,
    /// The rule.
    pub rule: String,
    /// Why it matters.
    pub explanation: String,
    /// The smallest graded case on which this mistake alone changes the output.
    pub smallest_case: Option<String>,
}

/// A candidate that explains some but not all failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closest {
    /// The mistake ids.
    pub mistakes: Vec<String>,
    /// Failing cases it reproduces exactly.
    pub explains: usize,
    /// Failing cases in all.
    pub failing: usize,
}

/// The diagnosis, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosisReport {
    /// Whether `mistakes` reproduces the program's output on every case.
    pub exact: bool,
    /// The smallest exact set (empty when not exact, or when everything passed).
    pub mistakes: Vec<Mistake>,
    /// Other sets the cases cannot tell apart from `mistakes`.
    pub alternatives: Vec<Vec<String>>,
    /// When not exact: the closest sets, best first.
    pub closest: Vec<Closest>,
    /// Formatting slips seen besides (e.g. debug lines on stdout).
    pub slips: Vec<String>,
    /// When the corpus named a mistake set that an explored trace contradicts.
    pub beyond_corpus: Option<BeyondCorpus>,
    /// Explored traces on which the exact diagnosis was also checked (0: none).
    pub confirmed_on: usize,
}

/// The build step's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildReport {
    /// The command.
    pub command: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Its last lines of output.
    pub output_tail: String,
}

/// The whole grading result.
#[derive(Debug, Clone)]
pub struct Report {
    /// The grader that graded and the cases it graded, e.g. `isr-grader 0.1.0 (rev
    /// abc123def456, cases 0123456789abcdef)` (see [`crate::grade::provenance`]).
    pub grader_version: String,
    /// The program graded, as a command line.
    pub program: String,
    /// Where the cases came from.
    pub case_sources: Vec<String>,
    /// The protections in force while the program ran, in words (`pid+net+mount namespaces,
    /// landlock v7, uid 65534`, or `none (...)`).
    pub sandbox: String,
    /// What the grader decided that the reader should know (settings it ignored).
    pub notes: Vec<String>,
    /// Whether the grader was interrupted (cases not run are marked `not-run`).
    pub interrupted: bool,
    /// The build step, if one ran.
    pub build: Option<BuildReport>,
    /// Every case, in corpus order.
    pub cases: Vec<CaseReport>,
    /// The diagnosis (None when the build failed or no case ran).
    pub diagnosis: Option<DiagnosisReport>,
    /// The diagnosis made from the public cases alone (None when there is no hidden case, no
    /// diagnosis, or no Gradescope report asked for: only it reads this): what a student may be
    /// told while hidden cases are not shown.
    pub public_diagnosis: Option<DiagnosisReport>,
    /// Points possible over the cases selected, known before any ran (so also when the build
    /// failed).
    pub points_possible: u32,
    /// When grading started, by the wall clock (not shown in deterministic reports).
    pub started: Option<SystemTime>,
    /// How long grading took, up to the reports (not shown in deterministic reports).
    pub elapsed: Duration,
    /// Exploration beyond the corpus (None when it was off or did not run).
    pub explored: Option<ExploreReport>,
    /// Set when the program did not run at all (every failure ends the same way).
    pub did_not_run: Option<DidNotRun>,
    /// The limits every case ran under, and the exploration's seed: with the grader version
    /// and the cases' hash, what a regrade needs to repeat this one.
    pub settings: RunSettings,
}

/// The settings a grading ran under, recorded in reports so a regrade can repeat it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSettings {
    /// Wall-clock limit per case, in seconds.
    pub timeout_secs: f64,
    /// Address-space limit per case, in MiB (None: the grader's own limit).
    pub memory_mib: Option<u64>,
    /// Most stdout kept per case, in KiB.
    pub output_kib: u64,
    /// The seed of the generated traces (None: no exploration).
    pub seed: Option<u64>,
    /// The hash of the cases graded (also in `grader_version`).
    pub cases_hash: String,
}

impl Report {
    /// Cases passed.
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.verdict.passed()).count()
    }

    /// Points earned.
    pub fn points(&self) -> u32 {
        let earned: u32 = self.cases.iter().map(|c| c.points).sum();
        earned.saturating_sub(self.explored_penalty())
    }

    /// Points that failing explored traces cost (0 by default: they are reported only).
    pub fn explored_penalty(&self) -> u32 {
        self.explored.as_ref().map_or(0, |e| {
            e.points_each
                .saturating_mul(u32::try_from(e.failing_total).unwrap_or(u32::MAX))
        })
    }

    /// Points possible (over the cases selected, whether they ran or not).
    pub fn max_points(&self) -> u32 {
        let listed = self
            .cases
            .iter()
            .fold(0u32, |sum, c| sum.saturating_add(c.max_points));
        listed.max(self.points_possible)
    }

    /// Whether everything passed (and the build, if any, succeeded).
    pub fn all_passed(&self) -> bool {
        self.build.as_ref().is_none_or(|b| b.ok)
            && self.cases.iter().all(|c| c.verdict.passed())
            && self.explored_penalty() == 0
    }
}

/// `text` with every control character (C0, DEL, C1) and every bidirectional-override
/// character shown visibly (`\x1b`, `\t`, `\u{202e}`), so that nothing a program printed can
/// move the cursor, clear the screen, recolour a report or write the clipboard (OSC 52) when
/// the report reaches a terminal. Use it on every program-originated string.
pub fn visible(text: &str) -> Cow<'_, str> {
    let hidden =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 && hidden(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`visible`] line by line: line breaks are kept, everything else escaped.
pub fn visible_lines(text: &str) -> String {
    text.split('\n')
        .map(|l| visible(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(visible("plain text"), "plain text");
        assert_eq!(
            visible("\x1b[2J\x1b[32mResult: 36/36"),
            "\\x1b[2J\\x1b[32mResult: 36/36"
        );
        assert_eq!(visible("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
        assert_eq!(
            visible("a\tb\rc\u{9b}d\u{202e}e\x7f"),
            "a\\tb\\rc\\x9bd\\u{202e}e\\x7f"
        );
        assert_eq!(visible_lines("a\x1b\nb"), "a\\x1b\nb");
    }
}
