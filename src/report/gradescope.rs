//! Gradescope's `results.json` (its autograder specification: a top-level `score`, `output`,
//! `output_format`, `test_output_format`, `execution_time`, `visibility`, `stdout_visibility`,
//! `extra_data`, and one entry per test in `tests`).
//!
//! Gradescope hides a student's total score while some test is not visible to them. So when
//! hidden cases carry points, the always-visible top-level `output` speaks of the public cases
//! only: their count and points, and a diagnosis made from the public cases alone
//! ([`Report::public_diagnosis`]), never a total nor a mistake found with hidden evidence. The
//! full diagnosis goes to `extra_data` (stored, shown to no student).
//!
//! Text is rendered as `text` (Gradescope shows it verbatim) or `md`: prose backslash-escaped,
//! program output and build logs in fences no line can close. Build logs lose their colour
//! escapes first (a compiler's `\x1b[31m`), then everything left that is not printable is shown
//! visibly ([`visible`]).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{DiagnosisReport, Report, visible, visible_lines};

/// When Gradescope shows a test to students (its `visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Never.
    Hidden,
    /// Once the due date (the late due date, if any) has passed.
    AfterDueDate,
    /// Once the instructor publishes the grades.
    #[default]
    AfterPublished,
    /// Always.
    Visible,
}

impl Visibility {
    /// The name Gradescope reads.
    pub fn name(self) -> &'static str {
        match self {
            Visibility::Hidden => "hidden",
            Visibility::AfterDueDate => "after_due_date",
            Visibility::AfterPublished => "after_published",
            Visibility::Visible => "visible",
        }
    }

    fn when(self) -> &'static str {
        match self {
            Visibility::Hidden => "they are not shown to students",
            Visibility::AfterDueDate => "they are shown after the due date",
            Visibility::AfterPublished => "they are shown when the grades are published",
            Visibility::Visible => "they are shown below",
        }
    }
}

/// How Gradescope renders the text of `output` (its `output_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextFormat {
    /// Verbatim.
    #[default]
    Text,
    /// Markdown: prose escaped, program text fenced.
    Md,
}

impl TextFormat {
    /// The name Gradescope reads.
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Text => "text",
            TextFormat::Md => "md",
        }
    }
}

/// The instructor's choices for results.json (`[gradescope]` in the instructor's config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// When hidden cases are shown to students.
    pub hidden_visibility: Visibility,
    /// How every `output` is rendered.
    pub format: TextFormat,
}

/// A piece of an output: prose of the grader's, or text from a program (or a build).
enum Block {
    /// The grader's words (program text inside already escaped by [`visible`]).
    Prose(String),
    /// Lines from a program or a build, shown as they are (escaped by [`visible`]).
    Code(String),
}

fn render_blocks(blocks: &[Block], format: TextFormat) -> String {
    let mut s = String::new();
    for b in blocks {
        if !s.is_empty() {
            s.push('\n');
        }
        match (b, format) {
            (Block::Prose(t) | Block::Code(t), TextFormat::Text) => s.push_str(t),
            (Block::Prose(t), TextFormat::Md) => {
                let lines: Vec<String> = t.lines().map(super::markdown::text).collect();
                // A line break inside a paragraph is kept (two trailing spaces would be
                // invisible in the source; a backslash is CommonMark's hard break).
                s.push_str(&lines.join("\\\n"));
                s.push('\n');
            }
            (Block::Code(t), TextFormat::Md) => super::markdown::fence(&mut s, "text", t.lines()),
        }
    }
    s.trim_end().to_string()
}

/// Whether some hidden case carries points and is not shown to students: then Gradescope hides
/// the total, and the visible summary covers the public cases only.
pub fn conceals_hidden(report: &Report, options: &Options) -> bool {
    options.hidden_visibility != Visibility::Visible
        && report.cases.iter().any(|c| c.hidden && c.max_points > 0)
}

/// A build log for people: colour escapes removed, what remains escaped visibly.
fn build_log(text: &str) -> String {
    let plain = anstream::adapter::strip_str(text).to_string();
    visible_lines(&plain)
}

/// The results.json document for a report.
pub fn render(report: &Report, options: &Options) -> Value {
    let format = options.format;
    let tests: Vec<Value> = report
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut details = String::new();
            if let Some(d) = &c.first_diff {
                details.push_str(&format!(
                    "first difference at output line {}\n  expected: {}\n  actual:   {}",
                    d.line,
                    visible(d.expected.as_deref().unwrap_or("(nothing more)")),
                    visible(d.actual.as_deref().unwrap_or("(nothing more)"))
                ));
            }
            if let Some(o) = &c.origin {
                details.push_str(&format!("\nproduced by {}: {}", o.location, o.command));
                for e in &o.explanation {
                    details.push_str(&format!("\n  {e}"));
                }
            }
            details.push_str(&super::findings::plain_text(c));
            let mut blocks = vec![Block::Prose(c.verdict.describe())];
            let details = details.trim_start_matches('\n');
            if !details.is_empty() {
                blocks.push(Block::Code(details.to_string()));
            }
            json!({
                "name": format!("{} — {}", c.name, c.title),
                "number": (i + 1).to_string(),
                "score": c.points,
                "max_score": c.max_points,
                "status": if c.verdict.passed() { "passed" } else { "failed" },
                "output": render_blocks(&blocks, format),
                "output_format": format.name(),
                "visibility": if c.hidden { options.hidden_visibility.name() } else { "visible" },
                "tags": [c.verdict.name()],
            })
        })
        .collect();
    let conceal = conceals_hidden(report, options);
    json!({
        "score": report.points(),
        "execution_time": report.elapsed.as_secs_f64().ceil() as u64,
        "output": render_blocks(&overall(report, options, conceal), format),
        "output_format": format.name(),
        "test_output_format": format.name(),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": extra_data(report, conceal),
        "tests": tests,
    })
}

/// The top-level output: what every student sees.
fn overall(report: &Report, options: &Options, conceal: bool) -> Vec<Block> {
    let mut blocks = Vec::new();
    if let Some(b) = report.build.as_ref().filter(|b| !b.ok) {
        blocks.push(Block::Prose(format!(
            "The build failed: {}\nNo case was run. Its last lines of output:",
            visible(&b.command)
        )));
        blocks.push(Block::Code(build_log(&b.output_tail)));
    } else if conceal {
        let public: Vec<_> = report.cases.iter().filter(|c| !c.hidden).collect();
        let hidden = report.cases.len() - public.len();
        blocks.push(Block::Prose(format!(
            "Public cases: {}/{} passed, {}/{} points.\nHidden cases: {hidden} more, graded too; {}.",
            public.iter().filter(|c| c.verdict.passed()).count(),
            public.len(),
            public.iter().map(|c| c.points).sum::<u32>(),
            public.iter().map(|c| c.max_points).sum::<u32>(),
            options.hidden_visibility.when(),
        )));
    } else {
        blocks.push(Block::Prose(format!(
            "{}/{} cases passed, {}/{} points",
            report.passed(),
            report.cases.len(),
            report.points(),
            report.max_points()
        )));
    }
    for note in &report.notes {
        blocks.push(Block::Prose(format!("Note: {}", visible(note))));
    }
    if report.interrupted {
        blocks.push(Block::Prose(
            "The grader was interrupted: cases marked not-run were not graded.".into(),
        ));
    }
    if let Some(d) = &report.did_not_run {
        blocks.push(Block::Prose(format!(
            "Your program did not run: {}",
            d.cause
        )));
        blocks.push(Block::Code(d.line.clone()));
    }
    let summary = super::findings::plain_summary_beyond(report, !conceal);
    if !summary.trim().is_empty() {
        blocks.push(Block::Code(summary.trim().to_string()));
    }
    let diagnosis = if conceal {
        report.public_diagnosis.as_ref()
    } else {
        report.diagnosis.as_ref()
    };
    if let Some(d) = diagnosis.filter(|d| d.exact && !d.mistakes.is_empty()) {
        let mut text = String::from(if conceal {
            "On every public case your output matches known mistakes:"
        } else {
            "Your output matches known mistakes on every case:"
        });
        for m in &d.mistakes {
            text.push_str(&format!("\n- {} ({}): {}", m.title, m.id, m.rule));
        }
        blocks.push(Block::Prose(text));
    }
    blocks
}

fn diagnosis_data(d: Option<&DiagnosisReport>) -> Value {
    d.map_or(Value::Null, |d| {
        json!({
            "exact": d.exact,
            "mistakes": d.mistakes.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            "alternatives": d.alternatives,
            "confirmed_on": d.confirmed_on,
            "beyond_corpus": d.beyond_corpus.as_ref().map(|b| json!({
                "mistakes": b.mistakes,
                "explored_case": b.explored_case,
            })),
        })
    })
}

/// What Gradescope stores and shows no student: what a regrade needs to repeat this one, and
/// the diagnosis (mistake ids, exact).
fn extra_data(report: &Report, conceal: bool) -> Value {
    let s = &report.settings;
    json!({
        "grader_version": report.grader_version,
        "cases_hash": s.cases_hash,
        "seed": s.seed,
        "limits": {
            "timeout_secs": s.timeout_secs,
            "memory_mib": s.memory_mib,
            "output_kib": s.output_kib,
        },
        "sandbox": report.sandbox,
        "program": report.program,
        "build_ok": report.build.as_ref().map(|b| b.ok),
        "interrupted": report.interrupted,
        "summary": {
            "cases": report.cases.len(),
            "passed": report.passed(),
            "points": report.points(),
            "max_points": report.max_points(),
        },
        "public_only_output": conceal,
        "diagnosis": diagnosis_data(report.diagnosis.as_ref()),
        "public_diagnosis": diagnosis_data(report.public_diagnosis.as_ref()),
    })
}

/// A results.json for when the grader itself failed: score 0 and the error, so Gradescope
/// still shows something.
pub fn render_error(message: &str) -> Value {
    json!({
        "score": 0,
        "output": format!("The autograder could not grade this submission: {}", visible_lines(message)),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "grader_version": format!("isr-grader {}", crate::version::LONG),
            "error": message,
        },
        "tests": [],
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::report::{BuildReport, CaseReport, Mistake, Verdict};

    fn case(name: &str, hidden: bool, passed: bool, points: u32) -> CaseReport {
        let verdict = if passed {
            Verdict::Pass
        } else {
            Verdict::Wrong
        };
        CaseReport::bare(name, "t", hidden, verdict, points)
    }

    fn diagnosis(id: &str) -> DiagnosisReport {
        DiagnosisReport {
            exact: true,
            mistakes: vec![Mistake {
                id: id.into(),
                title: "title".into(),
                section: "s".into(),
                rule: "rule".into(),
                explanation: "e".into(),
                smallest_case: None,
            }],
            alternatives: vec![],
            closest: vec![],
            slips: vec![],
            beyond_corpus: None,
            confirmed_on: 0,
        }
    }

    fn report(cases: Vec<CaseReport>) -> Report {
        Report {
            grader_version: "isr-grader 0.1.0 (rev x, cases y)".into(),
            program: "p".into(),
            case_sources: vec![],
            sandbox: "off".into(),
            notes: vec![],
            interrupted: false,
            build: None,
            cases,
            diagnosis: Some(diagnosis("from-hidden")),
            public_diagnosis: Some(DiagnosisReport {
                mistakes: vec![],
                ..diagnosis("none")
            }),
            points_possible: 0,
            started: None,
            elapsed: Duration::from_millis(1500),
            explored: None,
            did_not_run: None,
            settings: Default::default(),
        }
    }

    #[test]
    fn hidden_points_keep_the_total_and_hidden_evidence_out_of_the_visible_output() {
        let r = report(vec![
            case("pub-1", false, true, 1),
            case("hid-1", true, false, 5),
        ]);
        let doc = render(&r, &Options::default());
        let output = doc["output"].as_str().unwrap();
        assert_eq!(
            output,
            "Public cases: 1/1 passed, 1/1 points.\nHidden cases: 1 more, graded too; they are shown when the grades are published."
        );
        assert_eq!(doc["score"], 1);
        assert_eq!(doc["execution_time"], 2);
        assert_eq!(doc["extra_data"]["diagnosis"]["mistakes"][0], "from-hidden");
        assert_eq!(doc["tests"][1]["visibility"], "after_published");

        // Hidden cases shown to students, or worth nothing: the whole result is visible.
        let visible = Options {
            hidden_visibility: Visibility::Visible,
            ..Options::default()
        };
        let doc = render(&r, &visible);
        let output = doc["output"].as_str().unwrap();
        assert!(
            output.starts_with("1/2 cases passed, 1/6 points"),
            "{output}"
        );
        assert!(output.contains("(from-hidden)"), "{output}");
        assert_eq!(doc["tests"][1]["visibility"], "visible");
        let free = report(vec![
            case("pub-1", false, true, 1),
            case("hid-1", true, false, 0),
        ]);
        assert!(!conceals_hidden(&free, &Options::default()));
    }

    #[test]
    fn build_logs_lose_their_colours_and_md_fences_them() {
        let mut r = report(vec![]);
        r.diagnosis = None;
        r.build = Some(BuildReport {
            command: "cargo build *now*".into(),
            ok: false,
            output_tail: "\x1b[1m\x1b[31merror\x1b[0m: `x`\u{202e}\n```".into(),
        });
        let doc = render(&r, &Options::default());
        assert_eq!(
            doc["output"],
            "The build failed: cargo build *now*\nNo case was run. Its last lines of output:\nerror: `x`\\u{202e}\n```"
        );
        let md = Options {
            format: TextFormat::Md,
            ..Options::default()
        };
        let doc = render(&r, &md);
        assert_eq!(
            doc["output"],
            "The build failed: cargo build \\*now\\*\\\nNo case was run. Its last lines of output:\n\n````text\nerror: `x`\\u{202e}\n```\n````"
        );
        assert_eq!(doc["output_format"], "md");
        assert_eq!(doc["test_output_format"], "md");
    }
}
