//! JUnit XML (as GitLab and the GitHub reporter actions read it), through quick-junit.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use quick_junit::{
    NonSuccessKind, Property, Report as JReport, TestCase, TestCaseStatus, TestSuite,
};

use super::{Report, Verdict, visible, visible_lines};

/// The JUnit XML document for a report.
pub fn render(report: &Report) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new("isr-grader");
    for c in &report.cases {
        // Program-originated text is escaped: no raw control character reaches the XML (or a
        // terminal that shows it).
        let status = if c.verdict.passed() {
            TestCaseStatus::success()
        } else if c.verdict == Verdict::NotRun {
            let mut s = TestCaseStatus::skipped();
            s.set_message(c.verdict.describe());
            s
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(c.verdict.name());
            let mut message = c.verdict.describe();
            if let Some(d) = &c.first_diff {
                message.push_str(&format!(
                    ": line {}: expected {:?}, got {:?}",
                    d.line,
                    visible(d.expected.as_deref().unwrap_or("(nothing)")),
                    visible(d.actual.as_deref().unwrap_or("(nothing)"))
                ));
            }
            s.set_message(message);
            let diff: Vec<String> = c
                .diff
                .iter()
                .map(|l| format!("{}{}", l.tag, visible(&l.text)))
                .collect();
            s.set_description(format!(
                "{}{}",
                diff.join("\n"),
                super::findings::plain_text(c)
            ));
            s
        };
        let mut tc = TestCase::new(c.name.clone(), status);
        tc.set_classname("isr-grader");
        tc.set_time(c.elapsed);
        if !c.stderr_tail.is_empty() {
            tc.set_system_err(visible_lines(&c.stderr_tail));
        }
        suite.add_test_case(tc);
    }
    // Explored failures are test cases only when they cost points (else they are reported
    // beside the grade, and a CI job stays green on the corpus).
    let costly = report.explored.iter().filter(|e| e.points_each > 0);
    for c in costly.flat_map(|e| &e.failing) {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_type("explored");
        s.set_message(format!(
            "{}: {}",
            c.verdict.describe(),
            c.show_command.as_deref().unwrap_or("")
        ));
        s.set_description(super::findings::plain_text(c));
        let mut tc = TestCase::new(c.name.clone(), s);
        tc.set_classname("isr-grader.explored");
        suite.add_test_case(tc);
    }
    if let Some(d) = &report.did_not_run {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
        s.set_type("did-not-run");
        s.set_message(format!("your program did not run: {}", visible(&d.line)));
        s.set_description(d.cause.clone());
        suite.add_test_case(TestCase::new("did-not-run", s));
    }
    if let Some(b) = report.build.as_ref().filter(|b| !b.ok) {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
        s.set_type("build-failed");
        s.set_message(format!("build failed: {}", visible(&b.command)));
        s.set_description(visible_lines(&b.output_tail));
        suite.add_test_case(TestCase::new("build", s));
    }
    suite.add_property(quick_junit::Property::new(
        "sandbox",
        report.sandbox.clone(),
    ));
    suite.add_property(quick_junit::Property::new(
        "grader_version",
        report.grader_version.clone(),
    ));
    suite.add_property(Property::new("interrupted", report.interrupted.to_string()));
    if let Some(d) = &report.diagnosis {
        let ids: Vec<&str> = d.mistakes.iter().map(|m| m.id.as_str()).collect();
        suite.add_property(Property::new("diagnosis.exact", d.exact.to_string()));
        suite.add_property(Property::new("diagnosis.mistakes", ids.join(",")));
        let alternatives: Vec<String> = d.alternatives.iter().map(|a| a.join("+")).collect();
        suite.add_property(Property::new(
            "diagnosis.alternatives",
            alternatives.join(","),
        ));
    }
    suite.set_system_out(summary(report));
    let mut r = JReport::new("isr-grader");
    // Suite time and timestamp: reporters (dorny/test-reporter) compute with them.
    r.set_time(report.elapsed);
    suite.set_time(report.elapsed);
    if let Some(started) = report.started {
        let at = DateTime::<Utc>::from(started).fixed_offset();
        r.set_timestamp(at);
        suite.set_timestamp(at);
    }
    r.add_test_suite(suite);
    r.to_string()
}

/// The suite's output: the result, the notes and the diagnosis in words.
fn summary(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Result: {}/{} cases passed, {}/{} points",
        report.passed(),
        report.cases.len(),
        report.points(),
        report.max_points()
    );
    let _ = writeln!(s, "sandbox: {}", report.sandbox);
    for note in &report.notes {
        let _ = writeln!(s, "note: {}", visible(note));
    }
    if report.interrupted {
        let _ = writeln!(s, "Incomplete: the grader was interrupted, no diagnosis.");
    }
    let Some(d) = &report.diagnosis else {
        return s;
    };
    if report.all_passed() {
        return s;
    }
    if d.exact && !d.mistakes.is_empty() {
        let _ = writeln!(
            s,
            "Diagnosis: your output matches, on every case, a leader with {}:",
            if d.mistakes.len() == 1 {
                "this known mistake"
            } else {
                "these known mistakes together"
            }
        );
        for m in &d.mistakes {
            let _ = writeln!(s, "  {} ({})", m.title, m.id);
            let _ = writeln!(s, "    the rule ({}): {}", m.section, m.rule);
            let _ = writeln!(s, "    {}", m.explanation);
            if let Some(case) = &m.smallest_case {
                let _ = writeln!(s, "    smallest case that shows it: {case}");
            }
        }
        if !d.alternatives.is_empty() {
            let alts: Vec<String> = d.alternatives.iter().map(|a| a.join(" + ")).collect();
            let _ = writeln!(
                s,
                "  These cases cannot tell that apart from: {}.",
                alts.join("; ")
            );
        }
    } else if !d.exact {
        let _ = writeln!(
            s,
            "Diagnosis: no known mistake, alone or in a pair, reproduces the output on every case."
        );
        for c in &d.closest {
            let _ = writeln!(
                s,
                "  closest: {} reproduces {} of {} failing cases",
                c.mistakes.join(" + "),
                c.explains,
                c.failing
            );
        }
    }
    for slip in &d.slips {
        let _ = writeln!(s, "Also: {slip}");
    }
    s
}
