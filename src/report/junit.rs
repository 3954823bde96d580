//! JUnit XML (as GitLab and the GitHub reporter actions read it), through quick-junit.

use quick_junit::{NonSuccessKind, Report as JReport, TestCase, TestCaseStatus, TestSuite};

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
            s.set_description(diff.join("\n"));
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
    let mut r = JReport::new("isr-grader");
    r.add_test_suite(suite);
    r.to_string()
}
