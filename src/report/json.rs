//! The `--format json` document (schema in the README; `schema_version` 1).

use serde_json::{Value, json};

use super::Report;

/// The JSON document for a report.
pub fn render(report: &Report) -> Value {
    let cases: Vec<Value> = report
        .cases
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "title": c.title,
                "verdict": c.verdict.name(),
                "signal": match &c.verdict { super::Verdict::Crash { signal } => Some(signal.clone()), _ => None },
                "exit_code": match &c.verdict { super::Verdict::ExitCode { code } => Some(*code), _ => None },
                "points": c.points,
                "max_points": c.max_points,
                "hidden": c.hidden,
                "first_diff_line": c.first_diff.as_ref().map(|d| d.line),
                "expected_line": c.first_diff.as_ref().and_then(|d| d.expected.clone()),
                "actual_line": c.first_diff.as_ref().and_then(|d| d.actual.clone()),
                "origin": c.origin,
                "stray_lines": c.stray_lines.iter().map(|(n, l)| json!({"line": n, "text": l})).collect::<Vec<_>>(),
                "stray_lines_total": c.stray_total,
                "stderr_tail": c.stderr_tail,
            })
        })
        .collect();
    let diagnosis = report.diagnosis.as_ref().map(|d| {
        json!({
            "exact": d.exact,
            "mistakes": d.mistakes.iter().map(|m| m.id.clone()).collect::<Vec<_>>(),
            "details": d.mistakes,
            "alternatives": d.alternatives,
            "closest": d.closest,
            "slips": d.slips,
        })
    });
    json!({
        "schema_version": 1,
        "grader_version": report.grader_version,
        "program": report.program,
        "case_sources": report.case_sources,
        "sandbox": report.sandbox,
        "notes": report.notes,
        "interrupted": report.interrupted,
        "build": report.build,
        "summary": {
            "cases": report.cases.len(),
            "passed": report.passed(),
            "failed": report.cases.len() - report.passed(),
            "points": report.points(),
            "max_points": report.max_points(),
            "not_run": report.cases.iter().filter(|c| c.verdict == super::Verdict::NotRun).count(),
        },
        "cases": cases,
        "diagnosis": diagnosis,
    })
}
