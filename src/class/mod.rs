//! A class: many submissions graded against one instructor's configuration, and what an
//! instructor reads about them together.
//!
//! `isr-grader batch` grades each submission folder in a child `isr-grader test` (so one that
//! hangs, crashes or fails to build never stops the others) and writes one folder per
//! submission under the output folder; `isr-grader merge` gathers the output folders of
//! several partial batches (`--partition K/N`). Both end the same way: [`load`] reads every
//! submission's JSON report back, and the gradebook and the class report are built from those
//! documents alone, so a merged result equals a single machine's.
//!
//! The output folder (an **API boundary**: course scripts read it):
//!
//! ```text
//! OUT/
//!   gradebook.csv                     one row per submission
//!   class-report.html                 the class report (links into submissions/)
//!   submissions/NAME/report.json      the JSON report (`test --format json`), or its error document
//!   submissions/NAME/report.html      the student's own report
//!   submissions/NAME/timelines/CASE.svg   a picture of each failing case
//!   submissions/NAME/batch.json       how `batch` graded it: command, end, duration, fingerprint
//! ```
//!
//! A submission's folder without `report.json` was not graded yet (an interrupted batch):
//! [`Submission::not_run`].

pub mod batch;
pub mod gradebook;
pub mod merge;
pub mod page;
pub mod partition;
pub mod summary;

use std::path::{Path, PathBuf};

#[cfg(test)]
mod fixtures;

use crate::report::json::{DocumentV1, ReportV1};

/// The folder under the output folder that holds one folder per submission.
pub const SUBMISSIONS: &str = "submissions";
/// A submission's JSON report, in its folder.
pub const REPORT_JSON: &str = "report.json";
/// A submission's own HTML report, in its folder.
pub const REPORT_HTML: &str = "report.html";
/// The folder of a submission's case pictures (`CASE.svg`), in its folder.
pub const TIMELINES: &str = "timelines";
/// The gradebook, in the output folder.
pub const GRADEBOOK: &str = "gradebook.csv";
/// The class report, in the output folder.
pub const CLASS_REPORT: &str = "class-report.html";

/// One submission's result, as read back from its folder.
#[derive(Debug)]
pub struct Submission {
    /// The submission's folder name (its id in the gradebook).
    pub name: String,
    /// Its folder under `OUT/submissions/`.
    pub dir: PathBuf,
    /// What grading it gave.
    pub outcome: Outcome,
}

/// What grading a submission gave.
#[derive(Debug)]
pub enum Outcome {
    /// A report (its build may still have failed: `report.build`).
    Graded(Box<ReportV1>),
    /// The grader could not grade it (an error document, or no readable report): why.
    Error(String),
}

impl Submission {
    /// The report, when it was graded.
    pub fn report(&self) -> Option<&ReportV1> {
        match &self.outcome {
            Outcome::Graded(r) => Some(r),
            Outcome::Error(_) => None,
        }
    }

    /// The path of the student's HTML report relative to the output folder, when it exists
    /// (for links from the class report).
    pub fn html_link(&self) -> Option<String> {
        self.dir
            .join(REPORT_HTML)
            .is_file()
            .then(|| format!("{SUBMISSIONS}/{}/{REPORT_HTML}", self.name))
    }

    /// Whether it has not been graded yet: its folder has no `report.json` (a batch interrupted
    /// before its grading ended). Its outcome is then an [`Outcome::Error`] saying so.
    pub fn not_run(&self) -> bool {
        matches!(self.outcome, Outcome::Error(_)) && !self.dir.join(REPORT_JSON).exists()
    }

    /// The picture of a failing case, when one was written.
    pub fn timeline(&self, case: &str) -> Option<PathBuf> {
        let path = self.dir.join(TIMELINES).join(format!("{case}.svg"));
        path.is_file().then_some(path)
    }
}

/// Reads back every submission under `out/submissions/`, sorted by name. A folder without a
/// readable `report.json` is an [`Outcome::Error`] saying so, never a failure of the whole.
/// Folders whose name starts with `.` are left out (`merge` copies through them).
pub fn load(out: &Path) -> std::io::Result<Vec<Submission>> {
    let root = out.join(SUBMISSIONS);
    let mut subs = Vec::new();
    for entry in std::fs::read_dir(&root)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        subs.push(read_one(name, entry.path()));
    }
    subs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(subs)
}

/// Reads one submission's folder.
pub fn read_one(name: String, dir: PathBuf) -> Submission {
    let path = dir.join(REPORT_JSON);
    // Named relative to the output folder, so that the same class gives the same words in a
    // batch's folder and in a merged one.
    let shown = format!("{SUBMISSIONS}/{name}/{REPORT_JSON}");
    let outcome = match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Error(format!(
            "not graded yet: no {shown} (the batch was interrupted before its grading ended)"
        )),
        Err(e) => Outcome::Error(format!("{shown}: {e}")),
        Ok(text) => match crate::report::json::parse(&text) {
            Ok(DocumentV1::Report(r)) => Outcome::Graded(r),
            Ok(DocumentV1::Error(e)) => Outcome::Error(e.error),
            Err(e) => Outcome::Error(format!("{shown}: {e}")),
        },
    };
    Submission { name, dir, outcome }
}

/// How `batch` and `merge` end: reads every submission back from `out` ([`load`]) and writes
/// the gradebook and the class report from them (each atomically), so that both commands give
/// the same files for the same reports. Returns the submissions read.
pub fn finish(out: &Path) -> Result<Vec<Submission>, Box<dyn std::error::Error>> {
    let subs = load(out).map_err(|e| format!("{}: {e}", out.join(SUBMISSIONS).display()))?;
    let csv = gradebook::render(&subs)?;
    write(&out.join(GRADEBOOK), &csv)?;
    write_class_report(out, &subs)?;
    Ok(subs)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::cases::write_atomic(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The class report's title (the same for a batch and a merge, so their pages are equal).
const CLASS_REPORT_TITLE: &str = "Class report";

/// Writes `OUT/class-report.html` ([`page::render`]). The one place the class report is
/// written from.
fn write_class_report(out: &Path, subs: &[Submission]) -> Result<(), String> {
    let page = page::render(subs, CLASS_REPORT_TITLE);
    write(&out.join(CLASS_REPORT), page.as_bytes())
}
