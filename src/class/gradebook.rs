//! The gradebook: `OUT/gradebook.csv`, one row per submission, sorted by name, built from the
//! submissions' JSON reports alone ([`super::load`]).
//!
//! Every cell comes from a report's deterministic fields (no time; an error line may name a file
//! by the path the grading machine saw), so a gradebook merged from partial batches graded from
//! the same paths equals one machine's, byte for byte.
//!
//! **API boundary:** the columns, in this order ([`COLUMNS`]); a column may be added at the end.

use super::{Outcome, Submission};
use crate::report::json::{ReportV1, VerdictV1};

/// The verdicts counted, one column each, in this order.
pub const VERDICTS: [&str; 9] = [
    "pass",
    "wrong",
    "timeout",
    "crash",
    "exit-code",
    "output-limit",
    "no-output",
    "not-run",
    "nondeterministic",
];

/// The columns, in order.
pub const COLUMNS: [&str; 22] = [
    "submission",
    "status",
    "points",
    "max_points",
    "passed",
    "failed",
    "pass",
    "wrong",
    "timeout",
    "crash",
    "exit-code",
    "output-limit",
    "no-output",
    "not-run",
    "nondeterministic",
    "mistakes",
    "exact",
    "build",
    "error",
    "grader_version",
    "cases_hash",
    "seed",
];

/// What became of a submission, as the `status` column says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Graded (whatever the score).
    Graded,
    /// Its build failed: graded, with no case run (0 points).
    BuildFailed,
    /// The grader could not grade it (nothing recognized, a grading stopped at its limit, ...).
    Error,
    /// Not graded yet: the batch was interrupted before its grading ended.
    NotRun,
}

impl Status {
    /// The word in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Graded => "graded",
            Status::BuildFailed => "build-failed",
            Status::Error => "error",
            Status::NotRun => "not-run",
        }
    }

    /// The status of a submission read back.
    pub fn of(sub: &Submission) -> Status {
        match &sub.outcome {
            Outcome::Graded(r) if r.build.as_ref().is_some_and(|b| !b.ok) => Status::BuildFailed,
            Outcome::Graded(_) => Status::Graded,
            Outcome::Error(_) if sub.not_run() => Status::NotRun,
            Outcome::Error(_) => Status::Error,
        }
    }
}

fn verdict_column(v: &VerdictV1) -> usize {
    match v {
        VerdictV1::Pass => 0,
        VerdictV1::Wrong => 1,
        VerdictV1::Timeout => 2,
        VerdictV1::Crash => 3,
        VerdictV1::ExitCode => 4,
        VerdictV1::OutputLimit => 5,
        VerdictV1::NoOutput => 6,
        VerdictV1::NotRun => 7,
        VerdictV1::Nondeterministic => 8,
    }
}

/// The first line worth showing of a failed build's output: the compiler's first `error`
/// line, else its last non-empty line.
fn build_error_line(tail: &str) -> String {
    tail.lines()
        .map(str::trim)
        .find(|l| l.starts_with("error"))
        .or_else(|| tail.lines().map(str::trim).rfind(|l| !l.is_empty()))
        .unwrap_or("")
        .to_string()
}

/// Free text (a compiler's or the grader's line) for a cell: control characters escaped, and
/// a leading `=`, `+`, `-` or `@` after a `'`, so that a spreadsheet shows it instead of
/// evaluating it as a formula.
fn cell_text(text: &str) -> String {
    let text = crate::report::visible(text).into_owned();
    if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// One row's cells, in [`COLUMNS`] order.
pub fn row(sub: &Submission) -> Vec<String> {
    let status = Status::of(sub);
    let mut cells = vec![sub.name.clone(), status.as_str().to_string()];
    match &sub.outcome {
        Outcome::Graded(r) => cells.extend(graded_cells(r)),
        Outcome::Error(why) => {
            // points .. build: empty (nothing was graded).
            cells.extend(std::iter::repeat_n(String::new(), 16));
            cells.push(if status == Status::NotRun {
                String::new()
            } else {
                cell_text(&first_line(why))
            });
            cells.extend(std::iter::repeat_n(String::new(), 3));
        }
    }
    cells
}

fn graded_cells(r: &ReportV1) -> Vec<String> {
    let mut counts = [0usize; VERDICTS.len()];
    for c in &r.cases {
        counts[verdict_column(&c.verdict)] += 1;
    }
    let mut cells = vec![
        r.summary.points.to_string(),
        r.summary.max_points.to_string(),
        r.summary.passed.to_string(),
        r.summary.failed.to_string(),
    ];
    cells.extend(counts.iter().map(usize::to_string));
    let (mistakes, exact) = match &r.diagnosis {
        Some(d) => (d.mistakes.join(";"), d.exact.to_string()),
        None => (String::new(), String::new()),
    };
    cells.push(mistakes);
    cells.push(exact);
    let (build, error) = match &r.build {
        None => ("none".to_string(), String::new()),
        Some(b) if b.ok => ("ok".to_string(), String::new()),
        Some(b) => ("failed".to_string(), build_error_line(&b.output_tail)),
    };
    cells.push(build);
    cells.push(cell_text(&error));
    cells.push(r.grader_version.clone());
    cells.push(r.cases_hash.clone().unwrap_or_default());
    cells.push(r.seed.map(|s| s.to_string()).unwrap_or_default());
    cells
}

/// The gradebook's text: a header line, then one row per submission in the order given (
/// [`super::load`] sorts them by name).
pub fn render(subs: &[Submission]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for sub in subs {
        w.write_record(row(sub))?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn graded(json: &str) -> Submission {
        match crate::report::json::parse(json).unwrap() {
            crate::report::json::DocumentV1::Report(r) => Submission {
                name: "a,b \"c\"".into(),
                dir: PathBuf::from("/nonexistent"),
                outcome: Outcome::Graded(r),
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_failed_build_names_the_compilers_first_error() {
        let tail = "   Compiling x\nwarning: unused\nerror[E0425]: cannot find value `y`\n --> src/main.rs:1:1\nerror: could not compile";
        assert_eq!(
            build_error_line(tail),
            "error[E0425]: cannot find value `y`"
        );
        assert_eq!(
            build_error_line("make: *** [all] 2\n\n"),
            "make: *** [all] 2"
        );
    }

    #[test]
    fn rows_have_every_column_and_quote_what_needs_it() {
        let doc = r#"{"schema_version":1,"grader_version":"isr-grader 0.1.0 (rev x, cases h)","program":"p","case_sources":[],"sandbox":"s","notes":[],"interrupted":false,"build":{"command":"cargo build","ok":false,"output_tail":"error: boom\n"},"summary":{"cases":0,"passed":0,"failed":0,"points":0,"max_points":10,"not_run":0},"cases":[],"diagnosis":null,"explored":null,"did_not_run":null,"cases_hash":"h","seed":null}"#;
        let sub = graded(doc);
        let cells = row(&sub);
        assert_eq!(cells.len(), COLUMNS.len());
        assert_eq!(cells[1], "build-failed");
        assert_eq!(cells[17], "failed");
        assert_eq!(cells[18], "error: boom");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(super::super::REPORT_JSON), "{}").unwrap();
        let err = Submission {
            name: "e".into(),
            dir: dir.path().to_path_buf(),
            outcome: Outcome::Error("=no program\nmore".into()),
        };
        let cells = row(&err);
        assert_eq!(cells.len(), COLUMNS.len());
        assert_eq!(cells[1], "error");
        assert_eq!(
            cells[18], "'=no program",
            "no formula reaches a spreadsheet"
        );
        let not_run = Submission {
            name: "n".into(),
            dir: PathBuf::from("/nonexistent"),
            outcome: Outcome::Error("no report.json".into()),
        };
        assert_eq!(row(&not_run)[1], "not-run");
        let text = String::from_utf8(render(&[sub, err]).unwrap()).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), COLUMNS.join(","));
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("\"a,b \"\"c\"\"\",build-failed,0,10,"),
            "{text}"
        );
        assert!(text.ends_with("\n"));
    }
}
