//! "Your program did not run" comes first: when every failure ends the same way (the same first
//! and last stderr lines, or exit code 127 or 126 with nothing printed), one headline says so,
//! with the line and where it comes from, instead of a block per case and catalog hints.

use crate::report::{CaseReport, DidNotRun, Verdict};

/// The headline, when the program did not run at all.
pub fn detect(reports: &[CaseReport]) -> Option<DidNotRun> {
    if reports.is_empty() || reports.iter().any(|r| r.verdict.passed()) {
        return None;
    }
    let ends = |r: &CaseReport| {
        let lines: Vec<&str> = r
            .stderr_tail
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        (
            lines.first().map(|l| l.to_string()),
            lines.last().map(|l| l.to_string()),
        )
    };
    let code = |r: &CaseReport| match r.verdict {
        Verdict::ExitCode { code } => Some(code),
        _ => None,
    };
    // It printed nothing on any case (a program that ran and printed is graded as usual).
    let silent = |r: &CaseReport| {
        r.verdict == Verdict::NoOutput
            || r.first_diff
                .as_ref()
                .is_some_and(|d| d.line == 1 && d.actual.is_none())
    };
    if !reports.iter().all(silent) {
        return None;
    }
    let first = &reports[0];
    let same_stderr = reports.iter().all(|r| ends(r) == ends(first));
    let same_code = reports.iter().all(|r| code(r) == code(first));
    let (head, last) = ends(first);
    let line = match (&head, &last) {
        (Some(h), Some(l)) if same_stderr && h != l => format!("{h} … {l}"),
        (Some(h), _) if same_stderr => h.clone(),
        _ if same_code && matches!(code(first), Some(126 | 127)) => {
            format!("exit code {}", code(first).unwrap_or_default())
        }
        _ => return None,
    };
    let text = format!(
        "{} {}",
        head.as_deref().unwrap_or(""),
        last.as_deref().unwrap_or("")
    );
    let cause = if text.contains('\r') || text.contains("\\r") || text.contains("^M") {
        "the first line of your script (#!) ends with a Windows line end (CRLF), so the system looks for an interpreter whose name ends in a carriage return: save the file with LF line ends."
    } else if code(first) == Some(127)
        || text.contains("not found")
        || text.contains("No such file")
    {
        "the program, or the interpreter named on its first line, was not found (exit code 127): check the run command in grader.toml and the #! line."
    } else if code(first) == Some(126) || text.contains("Permission denied") {
        "the program could not be executed (exit code 126): make it executable (chmod +x) or run it through its interpreter."
    } else if text.contains("SyntaxError") || text.contains("IndentationError") {
        "Python could not parse your program: fix the syntax error at the place it names, then grade again."
    } else if text.contains("Traceback") {
        "your Python program stopped with the same exception on every case before printing what was expected: run it by hand on one case to see the whole traceback."
    } else if text.contains("panicked") {
        "your program panicked the same way on every case: run it by hand on one case (RUST_BACKTRACE=1) to see where."
    } else {
        "every run ended with this message: run your program by hand on one case to see the rest."
    };
    Some(DidNotRun {
        line: line.replace('\r', "\\r"),
        cause: cause.to_string(),
    })
}
