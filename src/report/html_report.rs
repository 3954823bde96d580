//! The student's HTML report (`test --html FILE`): one self-contained page in the frame of
//! [`super::html`] (no script, nothing loaded from outside). The result and the points, the
//! diagnosis with each mistake's lesson section and rule, a table of cases, then each failing
//! case: its first difference, the command behind it with the reference's explanation, the
//! shrunk trace, and its picture ([`super::svg`]) inline in
//! `<figure class="timeline" id="case-NAME">`, so that another page can link
//! `report.html#case-NAME`.
//!
//! Every program-originated string goes through [`html::program_text`], every other string
//! through [`html::escape`]; the SVG is built escaped by [`super::svg`].

use std::fmt::Write as _;

use super::html::{self, anchor, escape, program_text};
use super::{CaseReport, DiagnosisReport, Report, Shrunk, Verdict, svg};

/// The page.
pub fn render(report: &Report) -> String {
    let mut b = String::with_capacity(64 * 1024);
    let failing: Vec<&CaseReport> = report
        .cases
        .iter()
        .filter(|c| !c.verdict.passed() && c.verdict != Verdict::NotRun)
        .collect();
    summary(&mut b, report);
    if let Some(build) = report.build.as_ref().filter(|b| !b.ok) {
        let _ = writeln!(
            b,
            "<h2>The build failed</h2>\n<p>The build command <code>{}</code> failed{}</p>\n<pre>{}</pre>",
            program_text(&build.command),
            if report.interrupted {
                " (the grader was interrupted): no case was run."
            } else {
                ": no case was run. Fix the build (run the command yourself to see all of it), then grade again."
            },
            lines(&build.output_tail)
        );
        return page(report, &b);
    }
    if let Some(d) = &report.did_not_run {
        let _ = writeln!(
            b,
            "<h2>Your program did not run</h2>\n<p>Every case failed the same way:</p>\n<pre>{}</pre>\n<p>{}</p>",
            program_text(&d.line),
            escape(&d.cause)
        );
    }
    if let Some(d) = &report.diagnosis {
        diagnosis(&mut b, d, !failing.is_empty(), &report.cases);
    }
    table(&mut b, report);
    if !failing.is_empty() && report.did_not_run.is_none() {
        let _ = writeln!(b, "<h2>Failing cases</h2>");
        if failing.iter().any(|c| c.timeline.is_some()) {
            b.push_str(READING);
        }
        for c in &failing {
            case(&mut b, c);
        }
    }
    if let Some(e) = &report.explored {
        let _ = writeln!(
            b,
            "<h2>Beyond the corpus</h2>\n<p>{} generated trace{} (seed {}; replay with <code>--seed {}</code>): {}.</p>",
            e.traces,
            if e.traces == 1 { "" } else { "s" },
            e.seed,
            e.seed,
            if e.failing_total == 0 {
                "your program matches the reference on every one".to_string()
            } else {
                format!("your program differs on {}", e.failing_total)
            }
        );
        for c in e.failing.iter().take(3) {
            case(&mut b, c);
        }
    }
    setting(&mut b, report);
    page(report, &b)
}

/// The page when the grader could not grade (exit 2): the error, and what it means.
pub fn render_error(error: &str) -> String {
    let body = format!(
        "<p><span class=\"badge warn\">not graded</span></p>\n<pre>{}</pre>\n<p>This is no verdict on the program: the grader stopped before grading (a bad <code>grader.toml</code>, a case file, a program not found).</p>\n",
        lines(error)
    );
    html::page("isr-grader could not grade", "", &body)
}

const READING: &str = "<p class=\"muted\">How to read a picture: the x axis is the trace, one step per command (with its time). \
The lines are each replica's LEO and the high watermark the reference leader computes; the dashed vermillion line is the HW your \
STATUS lines said. Under them, one band per replica: coloured while it is in the ISR (expected), a thin dark line while your STATUS \
lines said it was, vermillion where the two disagree. Then the expected output and yours, one marker per line. The red line is \
the first difference; a long trace gets a second panel zoomed on it.</p>\n";

fn page(report: &Report, body: &str) -> String {
    let title = format!("isr-grader: {}", super::visible(&report.program));
    html::page(
        &title,
        &format!("graded by {}", report.grader_version),
        body,
    )
}

/// `text` line by line for a `<pre>`: program text, escaped.
fn lines(text: &str) -> String {
    text.lines()
        .map(program_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(b: &mut String, report: &Report) {
    let ok = report.all_passed() && !report.interrupted;
    let (class, word) = if report.build.as_ref().is_some_and(|b| !b.ok) {
        ("fail", "build failed")
    } else if report.interrupted {
        ("warn", "incomplete")
    } else if ok {
        ("pass", "passed")
    } else {
        ("fail", "failed")
    };
    let _ = writeln!(
        b,
        "<div class=\"cards\">\n<div class=\"card\"><div class=\"muted\">result</div><div class=\"big\"><span class=\"badge {class}\">{word}</span></div></div>\n\
         <div class=\"card\"><div class=\"muted\">cases passed</div><div class=\"big\">{}/{}</div></div>\n\
         <div class=\"card\"><div class=\"muted\">points</div><div class=\"big\">{}/{}</div></div>\n</div>",
        report.passed(),
        report.cases.len(),
        report.points(),
        report.max_points()
    );
    if report.explored_penalty() > 0 {
        let _ = writeln!(
            b,
            "<p class=\"muted\">Explored traces where your program differs cost {} points.</p>",
            report.explored_penalty()
        );
    }
    if report.interrupted {
        let _ = writeln!(
            b,
            "<p><span class=\"badge warn\">incomplete</span> the grader was interrupted: the cases not run have no verdict, and there is no diagnosis.</p>"
        );
    }
}

fn diagnosis(b: &mut String, d: &DiagnosisReport, any_failing: bool, cases: &[CaseReport]) {
    if !any_failing {
        return;
    }
    let _ = writeln!(b, "<h2>Diagnosis</h2>");
    if let Some(bc) = &d.beyond_corpus {
        let _ = writeln!(
            b,
            "<p>On every corpus case your output matches a leader with <strong>{}</strong>, but not on the explored trace <code>{}</code>: so that is not exactly your mistake (it may be part of it).</p>",
            escape(&bc.mistakes.join(" + ")),
            escape(&bc.explored_case)
        );
        if let Some(sh) = &bc.shrunk {
            shrunk(b, sh, &format!("a leader with {}", bc.mistakes.join(" + ")));
        }
    } else if d.exact && !d.mistakes.is_empty() {
        let _ = writeln!(
            b,
            "<p>Your output matches, on every case{}, a leader with {}:</p>",
            if d.confirmed_on > 0 {
                format!(" and on {} explored traces", d.confirmed_on)
            } else {
                String::new()
            },
            if d.mistakes.len() == 1 {
                "this known mistake".to_string()
            } else {
                format!("these {} known mistakes together", d.mistakes.len())
            }
        );
        for m in &d.mistakes {
            let _ = writeln!(
                b,
                "<h3><span class=\"badge fail\">mistake</span> {} <code>{}</code></h3>\n\
                 <p><strong>The rule</strong> (lesson section “{}”): {}</p>\n<p>{}</p>",
                escape(&m.title),
                escape(&m.id),
                escape(&m.section),
                escape(&m.rule),
                escape(&m.explanation)
            );
            if let Some(case) = &m.smallest_case {
                let linked = cases
                    .iter()
                    .any(|c| &c.name == case && c.timeline.is_some());
                if linked {
                    let _ = writeln!(
                        b,
                        "<p>Smallest case that shows it: <a href=\"#{}\">{}</a></p>",
                        escape(&anchor("case", case)),
                        escape(case)
                    );
                } else {
                    let _ = writeln!(b, "<p>Smallest case that shows it: {}</p>", escape(case));
                }
            }
        }
        if !d.alternatives.is_empty() {
            let alts: Vec<String> = d.alternatives.iter().map(|a| a.join(" + ")).collect();
            let _ = writeln!(
                b,
                "<p class=\"muted\">These cases cannot tell that apart from: {}.</p>",
                escape(&alts.join("; "))
            );
        }
    } else if !d.exact {
        let _ = writeln!(
            b,
            "<p>No known mistake, alone or in a pair, reproduces your output on every case: this is something the catalog does not know, so read the first difference below.</p>"
        );
        if !d.closest.is_empty() {
            let _ = writeln!(
                b,
                "<p>Closest known mistakes (a hint, not a verdict):</p>\n<ul>"
            );
            for c in &d.closest {
                let _ = writeln!(
                    b,
                    "<li><code>{}</code> reproduces {} of {} failing case{}</li>",
                    escape(&c.mistakes.join(" + ")),
                    c.explains,
                    c.failing,
                    if c.failing == 1 { "" } else { "s" }
                );
            }
            let _ = writeln!(b, "</ul>");
        }
    }
    for slip in &d.slips {
        let _ = writeln!(b, "<p><strong>Also:</strong> {}</p>", escape(slip));
    }
}

fn table(b: &mut String, report: &Report) {
    let _ = writeln!(
        b,
        "<h2>Cases</h2>\n<table>\n<thead><tr><th>case</th><th>title</th><th>verdict</th><th class=\"num\">points</th></tr></thead>\n<tbody>"
    );
    for c in &report.cases {
        let badge = match c.verdict {
            Verdict::Pass => "pass",
            Verdict::NotRun => "",
            _ => "fail",
        };
        let failing = !c.verdict.passed() && c.verdict != Verdict::NotRun;
        let name = if failing {
            format!(
                "<a href=\"#{}\">{}</a>",
                escape(&anchor("case", &c.name)),
                escape(&c.name)
            )
        } else {
            escape(&c.name)
        };
        let _ = writeln!(
            b,
            "<tr><td class=\"mono\">{name}{}</td><td>{}</td><td><span class=\"badge {badge}\">{}</span></td><td class=\"num\">{}/{}</td></tr>",
            if c.hidden {
                " <span class=\"muted\">(hidden)</span>"
            } else {
                ""
            },
            escape(&c.title),
            escape(&c.verdict.describe()),
            c.points,
            c.max_points
        );
    }
    let _ = writeln!(b, "</tbody>\n</table>");
}

fn case(b: &mut String, c: &CaseReport) {
    let id = anchor("case", &c.name);
    // The anchor is on the picture; without one, on the section, so that links still land.
    let section_id = if c.timeline.is_some() {
        anchor("details", &c.name)
    } else {
        id.clone()
    };
    let _ = writeln!(
        b,
        "<section id=\"{}\">\n<h3><span class=\"badge fail\">{}</span> <span class=\"mono\">{}</span> — {}</h3>",
        escape(&section_id),
        escape(&c.verdict.describe()),
        escape(&c.name),
        escape(&c.title)
    );
    if let Some(n) = &c.nondeterminism {
        let _ = writeln!(
            b,
            "<p>Two runs on the same input differ at output line {}.</p>",
            n.line
        );
        if n.first.is_some() || n.second.is_some() {
            let _ = writeln!(
                b,
                "<pre>first run:  {}\nsecond run: {}</pre>",
                program_text(n.first.as_deref().unwrap_or("(nothing more)")),
                program_text(n.second.as_deref().unwrap_or("(nothing more)"))
            );
        }
        let _ = writeln!(
            b,
            "<p><strong>Likely cause:</strong> {}</p>",
            escape(&n.cause)
        );
    }
    if c.hidden && c.first_diff.is_none() && c.nondeterminism.is_none() {
        let _ = writeln!(
            b,
            "<p class=\"muted\">A hidden case: its trace and expected output are not shown; the smallest trace below differs the same way.</p>"
        );
    }
    if let Verdict::Timeout { .. } = c.verdict {
        let _ = writeln!(
            b,
            "<p><strong>Note:</strong> it was still running at the time limit. Does your program exit at the end of its input (when reading stdin returns end of file)? Is a loop waiting for a line that never comes?</p>"
        );
    }
    if let Some(d) = &c.first_diff {
        let _ = writeln!(
            b,
            "<p>First difference at output line {}:</p>\n<pre>expected: {}\nyours:    {}</pre>",
            d.line,
            escape(d.expected.as_deref().unwrap_or("(nothing more)")),
            program_text(d.actual.as_deref().unwrap_or("(nothing more)"))
        );
    }
    if let Some(o) = &c.origin {
        let _ = writeln!(
            b,
            "<p>The expected line comes from <code>{}</code>: <code>{}</code></p>",
            escape(&o.location),
            escape(&o.command)
        );
        if !o.explanation.is_empty() {
            let _ = writeln!(b, "<p>What the reference leader does there:</p>\n<ul>");
            for e in &o.explanation {
                let _ = writeln!(b, "<li>{}</li>", escape(e));
            }
            let _ = writeln!(b, "</ul>");
        }
    }
    if let Some(cmd) = &c.show_command {
        let _ = writeln!(
            b,
            "<p>The whole case, explained: <code>{}</code></p>",
            escape(cmd)
        );
    }
    if let Some(t) = &c.timeline {
        let caption = match &t.note {
            Some(note) => escape(note),
            None => format!(
                "{} command{}{}.",
                t.len,
                if t.len == 1 { "" } else { "s" },
                if t.len > svg::ZOOM_AFTER && t.detail.is_some() {
                    "; below the whole trace, a zoom on the first difference"
                } else {
                    ""
                }
            ),
        };
        let _ = writeln!(
            b,
            "<figure class=\"timeline\" id=\"{}\">\n{}<figcaption>{caption}</figcaption>\n</figure>",
            escape(&id),
            svg::render_inline(t)
        );
    }
    if !c.diff.is_empty() {
        let _ = writeln!(
            b,
            "<details><summary>diff (<code>-</code> expected, <code>+</code> yours)</summary>\n<pre>"
        );
        for l in &c.diff {
            let line = match l.tag {
                '~' => format!("@@ {} @@", program_text(&l.text)),
                tag => format!("{tag}{}", program_text(&l.text)),
            };
            let _ = writeln!(b, "{line}");
        }
        let _ = writeln!(b, "</pre></details>");
    }
    if let Some(sh) = &c.shrunk {
        shrunk(b, sh, "the reference leader");
    }
    if !c.stray_lines.is_empty() {
        let _ = writeln!(
            b,
            "<p><strong>Note:</strong> your program printed lines that are not events; print debugging to stderr:</p>\n<pre>"
        );
        for (n, l) in c.stray_lines.iter().take(5) {
            let _ = writeln!(b, "line {n}: {}", program_text(l));
        }
        let total = c.stray_total.max(c.stray_lines.len());
        if total > 5 {
            let _ = writeln!(b, "... and {} more", total - 5);
        }
        let _ = writeln!(b, "</pre>");
    }
    if !c.stderr_tail.is_empty() {
        let tail: Vec<&str> = c.stderr_tail.lines().collect();
        let _ = writeln!(
            b,
            "<details><summary>stderr (last lines)</summary>\n<pre>{}</pre></details>",
            lines(&tail[tail.len().saturating_sub(10)..].join("\n"))
        );
    }
    let _ = writeln!(b, "</section>");
}

fn shrunk(b: &mut String, sh: &Shrunk, who: &str) {
    let how = match &sh.same_as {
        Some(other) => format!("the same difference as {other}"),
        None => format!(
            "shrunk from {} commands in {} runs",
            sh.from_commands, sh.runs
        ),
    };
    let _ = writeln!(
        b,
        "<details open><summary>The smallest trace where your program differs ({} command{}, {}; {})</summary>\n<pre>{}</pre>\n<p>{} prints:</p>\n<pre>{}</pre>\n<p>yours:</p>\n<pre>{}</pre>",
        sh.commands,
        if sh.commands == 1 { "" } else { "s" },
        escape(&how),
        escape(&sh.kind),
        escape(sh.trace.trim_end()),
        escape(who),
        escape(&sh.expected.join("\n")),
        if sh.actual.is_empty() {
            "(nothing)".to_string()
        } else {
            lines(&sh.actual.join("\n"))
        }
    );
    if !sh.explanation.is_empty() {
        let _ = writeln!(
            b,
            "<p>explained:</p>\n<pre>{}</pre>",
            escape(&sh.explanation.join("\n"))
        );
    }
    let _ = writeln!(b, "</details>");
}

fn setting(b: &mut String, report: &Report) {
    let _ = writeln!(
        b,
        "<h2>Setting</h2>\n<table>\n<tr><th>program</th><td class=\"mono\">{}</td></tr>\n<tr><th>cases</th><td>{}</td></tr>\n<tr><th>sandbox</th><td>{}</td></tr>\n<tr><th>graded by</th><td>{}</td></tr>",
        program_text(&report.program),
        escape(&report.case_sources.join(", ")),
        escape(&report.sandbox),
        escape(&report.grader_version)
    );
    for note in &report.notes {
        let _ = writeln!(b, "<tr><th>note</th><td>{}</td></tr>", program_text(note));
    }
    let _ = writeln!(b, "</table>");
}
