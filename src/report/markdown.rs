//! The markdown summary (`--format markdown`, `--summary FILE`): GitHub's job summary, a pull
//! request comment. The result and the diagnosis first, then one table row per case, then each
//! failing case in a `<details>` block.
//!
//! Program-originated text never becomes markup: it goes through [`visible`], then either into a
//! code span or fenced block whose fence is longer than any backtick run in it ([`code`],
//! [`fence`]), or through [`text`], which writes every character that markdown or HTML could
//! read as markup as a numeric character reference (literal text in CommonMark, also inside
//! HTML such as `<summary>` and inside table cells).

use std::fmt::Write as _;

use super::{CaseReport, DiagnosisReport, Report, Verdict, visible};

/// Past this many bytes the remaining failing cases get no `<details>` block (GitHub refuses a
/// job summary over 1 MiB).
const DETAILS_BUDGET: usize = 512 * 1024;

/// Renders the report as GitHub-flavoured markdown.
pub fn render(report: &Report) -> String {
    let mut s = String::new();
    headline(&mut s, report);
    if let Some(b) = report.build.as_ref().filter(|b| !b.ok) {
        let _ = writeln!(s, "The build command {} failed.", code(&b.command));
        if report.interrupted {
            let _ = writeln!(
                s,
                "The grader was interrupted during the build: no case was run."
            );
        } else {
            let _ = writeln!(
                s,
                "No case was run. Fix the build (run the command yourself to see all of it), then grade again."
            );
        }
        let _ = writeln!(s, "\nThe last lines of its output:\n");
        fence(&mut s, "text", b.output_tail.lines());
        setting(&mut s, report);
        return s;
    }
    let failing: Vec<&CaseReport> = report
        .cases
        .iter()
        .filter(|c| !c.verdict.passed() && c.verdict != Verdict::NotRun)
        .collect();
    if let Some(d) = &report.diagnosis {
        diagnosis(&mut s, d, !failing.is_empty(), &report.cases);
    }
    setting(&mut s, report);
    table(&mut s, report);
    if !failing.is_empty() {
        let _ = writeln!(s, "\n### Failing cases\n");
        let start = s.len();
        for (k, c) in failing.iter().enumerate() {
            if s.len() - start > DETAILS_BUDGET {
                let _ = writeln!(
                    s,
                    "{} more failing case{} not shown here: see the job's log.\n",
                    failing.len() - k,
                    if failing.len() - k == 1 { "" } else { "s" }
                );
                break;
            }
            details(&mut s, c);
        }
    }
    s
}

/// The summary when the grader could not grade (exit 2): the error, and what it means.
pub fn render_error(error: &str) -> String {
    let mut s = String::from("## ⚠️ isr-grader could not grade\n\n");
    fence(&mut s, "text", error.lines());
    s.push_str(
        "This is no verdict on the program: the grader stopped before grading (a bad `grader.toml`, \
         a case file, a program not found). Its error is above and in the job's log.\n",
    );
    s
}

fn headline(s: &mut String, report: &Report) {
    let (mark, what) = if report.build.as_ref().is_some_and(|b| !b.ok) {
        (
            "❌",
            if report.interrupted {
                "build interrupted".to_string()
            } else {
                "build failed".to_string()
            },
        )
    } else {
        let mark = if report.interrupted {
            "⚠️"
        } else if report.all_passed() {
            "✅"
        } else {
            "❌"
        };
        (
            mark,
            format!(
                "{}/{} cases passed, {}/{} points",
                report.passed(),
                report.cases.len(),
                report.points(),
                report.max_points()
            ),
        )
    };
    let _ = writeln!(s, "## {mark} isr-grader: {what}\n");
    if report.interrupted && report.build.as_ref().is_none_or(|b| b.ok) {
        let not_run = report
            .cases
            .iter()
            .filter(|c| c.verdict == Verdict::NotRun)
            .count();
        let _ = writeln!(
            s,
            "**Incomplete:** the grader was interrupted: {not_run} case{} not run, no diagnosis.\n",
            if not_run == 1 { "" } else { "s" }
        );
    }
}

/// What was graded, where the cases came from, the sandbox, the notes.
fn setting(s: &mut String, report: &Report) {
    let _ = writeln!(s);
    let _ = writeln!(s, "- program: {}", code(&report.program));
    let sources: Vec<String> = report.case_sources.iter().map(|c| text(c)).collect();
    let _ = writeln!(s, "- cases: {}", sources.join(", "));
    let _ = writeln!(s, "- sandbox: {}", text(&report.sandbox));
    let _ = writeln!(s, "- graded by: {}", text(&report.grader_version));
    for note in &report.notes {
        let _ = writeln!(s, "- note: {}", text(note));
    }
}

fn diagnosis(s: &mut String, d: &DiagnosisReport, any_failing: bool, cases: &[CaseReport]) {
    if !any_failing {
        return;
    }
    let _ = writeln!(s, "### Diagnosis\n");
    if d.exact && !d.mistakes.is_empty() {
        let _ = writeln!(
            s,
            "Your output matches, on every case, a leader with {}:\n",
            if d.mistakes.len() == 1 {
                "this known mistake".to_string()
            } else {
                format!("these {} known mistakes together", d.mistakes.len())
            }
        );
        for m in &d.mistakes {
            let _ = writeln!(s, "- **{}** (`{}`)  ", text(&m.title), text(&m.id));
            let _ = writeln!(s, "  the rule ({}): {}  ", text(&m.section), text(&m.rule));
            let _ = write!(s, "  {}", text(&m.explanation));
            if let Some(case) = &m.smallest_case {
                let show = cases
                    .iter()
                    .find(|c| &c.name == case)
                    .and_then(|c| c.show_command.as_deref());
                let _ = write!(s, "  \n  smallest case that shows it: {}", code(case));
                if let Some(cmd) = show {
                    let _ = write!(s, " ({})", code(cmd));
                }
            }
            let _ = writeln!(s);
        }
        if !d.alternatives.is_empty() {
            let alts: Vec<String> = d
                .alternatives
                .iter()
                .map(|a| code(&a.join(" + ")))
                .collect();
            let _ = writeln!(
                s,
                "\nThese cases cannot tell that apart from: {}. Add cases (`--cases`) to decide.",
                alts.join("; ")
            );
        }
    } else if d.exact {
        // The failures are formatting only: the slips below say which.
    } else if d.closest.is_empty() && !d.slips.is_empty() {
        for slip in &d.slips {
            let _ = writeln!(s, "{}", text(&capitalized(slip)));
        }
        return;
    } else {
        let _ = writeln!(
            s,
            "No known mistake, alone or in a pair, reproduces your output on every case: this is something the catalog does not know, so read the first difference below."
        );
        if !d.closest.is_empty() {
            let _ = writeln!(s, "\nClosest known mistakes (a hint, not a verdict):\n");
            for c in &d.closest {
                let _ = writeln!(
                    s,
                    "- {}: reproduces {} of {} failing case{}",
                    code(&c.mistakes.join(" + ")),
                    c.explains,
                    c.failing,
                    if c.failing == 1 { "" } else { "s" }
                );
            }
        }
    }
    for slip in &d.slips {
        let _ = writeln!(s, "\n**Also:** {}", text(slip));
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn table(s: &mut String, report: &Report) {
    let _ = writeln!(s, "\n| | case | verdict | points |");
    let _ = writeln!(s, "|---|---|---|---:|");
    for c in &report.cases {
        let mark = match c.verdict {
            Verdict::Pass => "✅",
            Verdict::NotRun => "⏭️",
            _ => "❌",
        };
        let _ = writeln!(
            s,
            "| {mark} | {} | {} | {}/{} |",
            text(&c.name),
            text(&c.verdict.describe()),
            c.points,
            c.max_points
        );
    }
}

fn details(s: &mut String, c: &CaseReport) {
    let _ = writeln!(
        s,
        "<details><summary>❌ {} — {}</summary>\n",
        html(&c.name),
        html(&c.verdict.describe())
    );
    let _ = writeln!(s, "*{}*\n", text(&c.title));
    if let Some(d) = &c.first_diff {
        let _ = writeln!(s, "First difference at output line {}:  ", d.line);
        let _ = writeln!(
            s,
            "expected: {}  ",
            d.expected.as_deref().map_or("(nothing more)".into(), code)
        );
        let _ = writeln!(
            s,
            "yours: {}\n",
            d.actual.as_deref().map_or("(nothing more)".into(), code)
        );
    }
    if let Some(o) = &c.origin {
        let _ = writeln!(
            s,
            "The expected line comes from {}: {}\n",
            code(&o.location),
            code(&o.command)
        );
        if !o.explanation.is_empty() {
            let _ = writeln!(s, "What the reference leader does there:\n");
            for e in &o.explanation {
                let _ = writeln!(s, "- {}", text(e));
            }
            let _ = writeln!(s);
        }
    }
    if let Some(cmd) = &c.show_command {
        let _ = writeln!(s, "The whole case, explained: {}\n", code(cmd));
    }
    if !c.diff.is_empty() {
        let _ = writeln!(s, "Diff (`-` expected, `+` yours):\n");
        let lines: Vec<String> = c
            .diff
            .iter()
            .map(|l| match l.tag {
                '~' => format!("@@ {} @@", visible(&l.text)),
                tag => format!("{tag}{}", visible(&l.text)),
            })
            .collect();
        fence(s, "diff", lines.iter().map(String::as_str));
    }
    if !c.stray_lines.is_empty() {
        let _ = writeln!(
            s,
            "**Note:** your program printed lines that are not events; print debugging to stderr:\n"
        );
        for (n, l) in c.stray_lines.iter().take(5) {
            let _ = writeln!(s, "- line {n}: {}", code(l));
        }
        let total = c.stray_total.max(c.stray_lines.len());
        if total > 5 {
            let _ = writeln!(s, "- ... and {} more", total - 5);
        }
        let _ = writeln!(s);
    }
    if !c.stderr_tail.is_empty() {
        let _ = writeln!(s, "stderr (last lines):\n");
        let lines: Vec<&str> = c.stderr_tail.lines().collect();
        fence(
            s,
            "text",
            lines[lines.len().saturating_sub(10)..].iter().copied(),
        );
    }
    let _ = writeln!(s, "</details>\n");
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` (escaped by [`visible`]) as a code span: shown exactly, never read as markup.
fn code(text: &str) -> String {
    let text = visible(text);
    if text.is_empty() {
        return "(empty)".into();
    }
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    // A space on each side when the text starts or ends with a backtick (or a space, which a
    // code span would strip).
    let pad = if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Lines (each escaped by [`visible`]) as a fenced code block whose fence no line can close.
pub(super) fn fence<'a>(s: &mut String, info: &str, lines: impl Iterator<Item = &'a str> + Clone) {
    let run = lines.clone().map(longest_backtick_run).max().unwrap_or(0);
    let ticks = "`".repeat((run + 1).max(3));
    let _ = writeln!(s, "{ticks}{info}");
    for l in lines {
        let _ = writeln!(s, "{}", visible(l));
    }
    let _ = writeln!(s, "{ticks}\n");
}

/// `text` (escaped by [`visible`]) as literal markdown text: every character markdown could
/// read as markup is backslash-escaped.
pub(super) fn text(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '!' | '#' | '@'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` (escaped by [`visible`]) as literal text inside an HTML block such as `<summary>`
/// (where markdown, backslash escapes included, is not read).
fn html(text: &str) -> String {
    visible(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_text_never_becomes_markup() {
        assert_eq!(text("a*b*"), "a\\*b\\*");
        assert_eq!(text("<script>"), "\\<script\\>");
        assert_eq!(text("x | y"), "x \\| y");
        assert_eq!(text("\x1b[2J"), "\\\\x1b\\[2J");
        assert_eq!(html("<b>&\x1b"), "&lt;b&gt;&amp;\\x1b");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code(""), "(empty)");
        assert_eq!(code("\x07"), "`\\x07`");
        let mut s = String::new();
        fence(&mut s, "diff", [" ```", "+x"].into_iter());
        assert_eq!(s, "````diff\n ```\n+x\n````\n\n");
    }

    #[test]
    fn a_failed_build_says_so_first_with_its_output_fenced() {
        let report = Report {
            grader_version: "isr-grader 0.1.0 (rev x, cases y)".into(),
            program: "target/release/isr-leader".into(),
            case_sources: vec!["<built-in public cases>".into()],
            sandbox: "off".into(),
            notes: vec![],
            interrupted: false,
            build: Some(super::super::BuildReport {
                command: "cargo build".into(),
                ok: false,
                output_tail: "error[E0425]: `x` not found\n```\n</details>".into(),
            }),
            cases: vec![],
            diagnosis: None,
            public_diagnosis: None,
            points_possible: 0,
            started: None,
            elapsed: std::time::Duration::ZERO,
            explored: None,
            did_not_run: None,
            settings: Default::default(),
        };
        let md = render(&report);
        assert!(md.starts_with("## ❌ isr-grader: build failed\n"), "{md}");
        assert!(
            md.contains("````text\nerror[E0425]: `x` not found\n```\n</details>\n````\n"),
            "{md}"
        );
        assert!(md.contains("- sandbox: off\n"), "{md}");
    }
}
