//! Hidden cases stay hidden but still teach: in a student's report a failing hidden case keeps
//! its verdict, its shrunk trace (a new trace of a few commands) and the diagnosis, and loses
//! everything drawn from the hidden trace or its expected output: the first difference, the
//! command behind it, the diff, and what the program echoed of its input (stdout lines that are
//! not events, stderr, the lines of two disagreeing runs). `--instructor` keeps everything.

use crate::report::CaseReport;

/// What stands in for a hidden line.
pub const HIDDEN: &str = "(hidden case: not shown)";

/// Removes what a student may not see from the hidden cases' reports.
pub fn redact(reports: &mut [CaseReport]) {
    for r in reports.iter_mut().filter(|r| r.hidden) {
        r.first_diff = None;
        r.origin = None;
        r.diff.clear();
        r.show_command = None;
        for (_, l) in &mut r.stray_lines {
            *l = HIDDEN.to_string();
        }
        if !r.stderr_tail.is_empty() {
            r.stderr_tail = HIDDEN.to_string();
        }
        if let Some(n) = &mut r.nondeterminism {
            n.first = None;
            n.second = None;
        }
    }
}
