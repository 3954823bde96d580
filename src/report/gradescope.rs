//! Gradescope's `results.json`.

use serde_json::{Value, json};

use super::{Report, visible, visible_lines};

/// The results.json document for a report.
pub fn render(report: &Report) -> Value {
    let tests: Vec<Value> = report
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut output = c.verdict.describe();
            if let Some(d) = &c.first_diff {
                output.push_str(&format!(
                    "\nfirst difference at output line {}\n  expected: {}\n  actual:   {}",
                    d.line,
                    visible(d.expected.as_deref().unwrap_or("(nothing more)")),
                    visible(d.actual.as_deref().unwrap_or("(nothing more)"))
                ));
            }
            if let Some(o) = &c.origin {
                output.push_str(&format!("\nproduced by {}: {}", o.location, o.command));
                for e in &o.explanation {
                    output.push_str(&format!("\n  {e}"));
                }
            }
            output.push_str(&super::findings::plain_text(c));
            json!({
                "name": format!("{} — {}", c.name, c.title),
                "number": (i + 1).to_string(),
                "score": c.points,
                "max_score": c.max_points,
                "status": if c.verdict.passed() { "passed" } else { "failed" },
                "output": output,
                "output_format": "text",
                "visibility": if c.hidden { "after_published" } else { "visible" },
                "tags": [c.verdict.name()],
            })
        })
        .collect();
    let mut output = format!(
        "{}/{} cases passed, {}/{} points",
        report.passed(),
        report.cases.len(),
        report.points(),
        report.max_points()
    );
    if let Some(b) = report.build.as_ref().filter(|b| !b.ok) {
        output = format!(
            "build failed: {}\n{}",
            visible(&b.command),
            visible_lines(&b.output_tail)
        );
    }
    for note in &report.notes {
        output.push_str(&format!("\nNote: {}", visible(note)));
    }
    if report.interrupted {
        output.push_str("\n\nThe grader was interrupted: cases marked not-run were not graded.");
    }
    output.push_str(&super::findings::plain_summary(report));
    if let Some(d) = &report.diagnosis {
        if d.exact && !d.mistakes.is_empty() {
            output.push_str("\n\nYour output matches known mistakes on every case:");
            for m in &d.mistakes {
                output.push_str(&format!("\n- {} ({}): {}", m.title, m.id, m.rule));
            }
        }
    }
    json!({
        "score": report.points(),
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"sandbox": report.sandbox, "grader_version": report.grader_version},
        "tests": tests,
    })
}

/// A results.json for when the grader itself failed: score 0 and the error, so Gradescope
/// still shows something.
pub fn render_error(message: &str) -> Value {
    json!({
        "score": 0,
        "output": format!("The autograder could not grade this submission: {message}"),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"grader_version": format!("isr-grader {}", crate::version::LONG)},
        "tests": [],
    })
}
