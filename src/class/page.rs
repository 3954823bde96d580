//! The class report: one self-contained HTML page (no script, nothing loaded from outside, opens
//! from disk) built from a class's submissions with [`render`].
//!
//! What it shows, top to bottom: summary cards and the score distribution; every catalog
//! mistake as a bar (students whose exact diagnosis names it, and apart those it is only the
//! closest candidate for) with its lesson section and rule and, folded, its students and a
//! picture; the failing submissions the catalog does not explain, grouped by behaviour (one
//! comment per group), each with a representative's first difference and picture; the cases
//! that fail most; the submissions that did not run, did not build or could not be graded; a table
//! of all submissions linked to their own reports.
//!
//! The numbers come from [`super::summary::summarize`]; this module adds only what is on disk
//! beside the reports: whether a student's `report.html` exists (for links) and the timeline
//! pictures. A picture is embedded as an `<img>` with a `data:` URL (which cannot run script),
//! and only when it looks like one of the grader's own SVGs ([`plausible_svg`]), within a size
//! bound per picture and per page. Every string from a report goes through
//! [`html::program_text`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;

use super::summary::{
    Divergence, Example, Group, MistakeStat, Named, Row, Status, Summary, summarize,
};
use super::{REPORT_HTML, SUBMISSIONS, Submission, TIMELINES};
use crate::report::html::{self, escape, program_text};

/// The largest timeline picture embedded, in bytes.
pub const MAX_SVG_BYTES: u64 = 256 * 1024;
/// The most picture data (base64) one page embeds; pictures past it are named, not shown.
pub const PICTURES_BUDGET: usize = 8 * 1024 * 1024;
/// Names listed in full before the rest is folded.
const NAMES_SHOWN: usize = 12;
/// Cases that fail most shown before the rest is folded.
const CASES_SHOWN: usize = 10;
/// Groups shown in full before the rest is folded.
const GROUPS_SHOWN: usize = 10;
/// Rows of the submissions table shown open; a longer table is folded.
const ROWS_OPEN: usize = 40;
/// Failing cases of a group listed before the rest is folded.
const GROUP_CASES_SHOWN: usize = 8;

/// The class report for `subs` (in any order), titled `title` (control and bidi characters
/// shown visibly, as in program text). The same submissions give the same page, byte for byte,
/// whatever their order.
pub fn render(subs: &[Submission], title: &str) -> String {
    let summary = summarize(subs);
    let mut ctx = Context::new(subs, &summary);
    let mut body = String::new();
    ctx.cards(&mut body);
    ctx.mistakes(&mut body);
    ctx.groups(&mut body);
    ctx.cases(&mut body);
    ctx.did_not_grade(&mut body);
    ctx.submissions(&mut body);
    let subtitle = match summary.versions.as_slice() {
        [] => format!("{} submissions", summary.total),
        [(v, _)] => format!(
            "{} submissions · graded by {}",
            summary.total,
            crate::report::visible(v)
        ),
        more => format!(
            "{} submissions · graded by {} grader versions",
            summary.total,
            more.len()
        ),
    };
    html::page(&crate::report::visible(title), &subtitle, &body)
}

/// What the page needs besides the summary: each submission's folder (links, pictures).
struct Context<'a> {
    summary: &'a Summary,
    /// Submissions by name (the first in (name, folder) order when names repeat).
    by_name: BTreeMap<&'a str, &'a Submission>,
    /// Each name's link target: its own report, else its row in the table (looked up once:
    /// a name appears in several places).
    hrefs: BTreeMap<&'a str, String>,
    /// Picture data still allowed on the page.
    budget: usize,
    /// Submissions that ran (the denominator of the bars).
    ran: usize,
}

impl<'a> Context<'a> {
    fn new(subs: &'a [Submission], summary: &'a Summary) -> Context<'a> {
        let mut sorted: Vec<&Submission> = subs.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name).then(a.dir.cmp(&b.dir)));
        let mut by_name = BTreeMap::new();
        for s in sorted {
            by_name.entry(s.name.as_str()).or_insert(s);
        }
        let mut hrefs = BTreeMap::new();
        for (i, r) in summary.rows.iter().enumerate() {
            let own = by_name.get(r.name.as_str()).and_then(|s| s.html_link());
            // The same path as `html_link`, the name percent-encoded (one path segment).
            let href = match own {
                Some(_) => format!("{SUBMISSIONS}/{}/{REPORT_HTML}", percent_encode(&r.name)),
                None => format!("#sub-{i}"),
            };
            hrefs.entry(r.name.as_str()).or_insert(href);
        }
        Context {
            summary,
            by_name,
            hrefs,
            budget: PICTURES_BUDGET,
            ran: summary.passing + summary.failing,
        }
    }

    /// A link to a submission: its own report when it has one, else its row below.
    fn link(&self, name: &str) -> String {
        let href = self.hrefs.get(name).map_or("#submissions", String::as_str);
        format!("<a href=\"{}\">{}</a>", escape(href), program_text(name))
    }

    /// Links to `names`, the first [`NAMES_SHOWN`] in the open, the rest folded.
    fn names(&self, names: &[String]) -> String {
        let mut out = String::from("<span class=\"names\">");
        for n in names.iter().take(NAMES_SHOWN) {
            out.push_str(&self.link(n));
            out.push(' ');
        }
        out.push_str("</span>");
        if names.len() > NAMES_SHOWN {
            let _ = write!(
                out,
                "<details class=\"inline\"><summary>and {} more</summary><span class=\"names\">",
                names.len() - NAMES_SHOWN
            );
            for n in &names[NAMES_SHOWN..] {
                out.push_str(&self.link(n));
                out.push(' ');
            }
            out.push_str("</span></details>");
        }
        out
    }

    /// The picture of `example`'s case, when its timeline is a plausible SVG and the page's
    /// budget allows; a muted line saying why not otherwise (nothing when there is none).
    fn picture(&mut self, example: &Example) -> String {
        let Some(sub) = self.by_name.get(example.name.as_str()) else {
            return String::new();
        };
        // A case name from a report on disk is one file name under `timelines/`, never a path.
        let case = &example.case;
        if case.is_empty() || case.starts_with('.') || case.contains(['/', '\\', '\0']) {
            return String::new();
        }
        let Some(path) = sub.timeline(case) else {
            return String::new();
        };
        let caption = format!(
            "{} on <code>{}</code>",
            program_text(&example.name),
            program_text(&example.case)
        );
        let Some(svg) = read_svg(&path) else {
            return format!(
                "<p class=\"muted\">The picture of {caption} is not shown: it is not an SVG this grader writes.</p>"
            );
        };
        let data = base64(svg.as_bytes());
        if data.len() > self.budget {
            return format!(
                "<p class=\"muted\">The picture of {caption} is not shown: the page holds enough pictures (see <code>{}/{}.svg</code> in the submission's folder).</p>",
                TIMELINES,
                program_text(&example.case)
            );
        }
        self.budget -= data.len();
        format!(
            "<figure class=\"timeline\"><img alt=\"timeline of {alt}\" src=\"data:image/svg+xml;base64,{data}\"><figcaption>{caption}</figcaption></figure>",
            alt = escape(&crate::report::visible(&example.case)),
        )
    }

    fn cards(&self, out: &mut String) {
        let s = self.summary;
        out.push_str("<section id=\"overview\">\n<div class=\"cards\">\n");
        let card = |out: &mut String, class: &str, big: usize, label: &str, more: &str| {
            let _ = writeln!(
                out,
                "<div class=\"card {class}\"><div class=\"big\">{big}</div><div>{label}</div><div class=\"muted\">{more}</div></div>"
            );
        };
        card(
            out,
            "",
            s.total,
            "submissions",
            &format!("{} graded", s.graded),
        );
        card(
            out,
            "pass",
            s.passing,
            "pass every case",
            &percent_of(s.passing, s.total),
        );
        card(
            out,
            "fail",
            s.failing,
            "fail some case",
            &format!(
                "{} named by the catalog · {} not explained{}",
                s.explained,
                s.unexplained,
                if s.slips_only > 0 {
                    format!(" · {} slips only", s.slips_only)
                } else {
                    String::new()
                }
            ),
        );
        card(
            out,
            "warn",
            s.build_failed + s.did_not_run + s.errors + s.interrupted,
            "did not get graded",
            &format!(
                "{} build failed · {} did not run · {} grader error{}{}",
                s.build_failed,
                s.did_not_run,
                s.errors,
                plural(s.errors),
                if s.interrupted > 0 {
                    format!(" · {} interrupted", s.interrupted)
                } else {
                    String::new()
                }
            ),
        );
        out.push_str("</div>\n");
        if s.interrupted > 0 {
            let _ = writeln!(
                out,
                "<p><span class=\"badge warn\">interrupted</span> {} grading{} {} interrupted: partial, {} left out of the numbers below; regrade {}.</p>",
                s.interrupted,
                plural(s.interrupted),
                if s.interrupted == 1 { "was" } else { "were" },
                if s.interrupted == 1 {
                    "it is"
                } else {
                    "they are"
                },
                if s.interrupted == 1 { "it" } else { "them" },
            );
        }
        if s.versions.len() > 1 {
            out.push_str("<p><span class=\"badge warn\">several graders</span> These reports come from different graders or case sets; their numbers may not compare:</p>\n<ul>\n");
            for (v, n) in &s.versions {
                let _ = writeln!(out, "<li><code>{}</code>: {n}</li>", program_text(v));
            }
            out.push_str("</ul>\n");
        }
        // The score distribution.
        let max = s.scores.iter().map(|b| b.count).max().unwrap_or(0).max(1);
        out.push_str("<h3>Scores</h3>\n<div class=\"hist\" role=\"img\" aria-label=\"score distribution\">\n");
        for b in &s.scores {
            let h = b.count * 100 / max;
            let _ = writeln!(
                out,
                "<div class=\"col\"><span class=\"n\">{}</span><span class=\"bar accent\" style=\"height:{h}px\"></span><span class=\"lbl\">{}</span></div>",
                if b.count > 0 {
                    b.count.to_string()
                } else {
                    String::new()
                },
                escape(&b.label)
            );
        }
        out.push_str("</div>\n</section>\n");
    }

    fn mistakes(&mut self, out: &mut String) {
        let s = self.summary;
        let (made, none): (Vec<&MistakeStat>, Vec<&MistakeStat>) = s
            .mistakes
            .iter()
            .partition(|m| !m.exact.is_empty() || !m.candidates.is_empty());
        let _ = writeln!(
            out,
            "<section id=\"mistakes\">\n<h2>Mistakes</h2>\n<p class=\"muted\">Every mistake of the catalog. \
             <span class=\"key mistake\"></span> students whose diagnosis names it exactly; \
             <span class=\"key candidate\"></span> students the catalog does not explain for whom it is \
             only the closest candidate (a hint, not a verdict). Bars are out of the {} submissions that ran.</p>",
            self.ran
        );
        if made.is_empty() {
            out.push_str("<p>No submission has a known mistake.</p>\n");
        } else {
            out.push_str("<table class=\"mistakes\">\n<thead><tr><th>Mistake and the rule it breaks</th><th class=\"num\">Exact</th><th>Students</th><th class=\"num\">Closest only</th></tr></thead>\n<tbody>\n");
            for m in made {
                let denom = self.ran.max(1);
                let exact_w = m.exact.len() * 100 / denom;
                let cand_w = (m.candidates.len() * 100 / denom).min(100 - exact_w.min(100));
                let _ = write!(
                    out,
                    "<tr id=\"{}\"><td><strong>{}</strong> <code>{}</code>{}\n<div class=\"rule\"><em>{}</em> — {}</div>",
                    escape(&html::anchor("mistake", &m.id)),
                    program_text(&m.title),
                    program_text(&m.id),
                    if m.in_catalog {
                        ""
                    } else {
                        " <span class=\"badge warn\">not in this grader's catalog</span>"
                    },
                    program_text(&m.section),
                    program_text(&m.rule),
                );
                if !m.exact.is_empty() {
                    let picture = m
                        .example
                        .as_ref()
                        .map(|e| self.picture(e))
                        .unwrap_or_default();
                    let _ = write!(
                        out,
                        "<details><summary>{} student{}: {}</summary>{}{}</details>",
                        m.exact.len(),
                        plural(m.exact.len()),
                        first_names(&m.exact),
                        self.names(&m.exact),
                        picture
                    );
                }
                if !m.candidates.is_empty() {
                    let _ = write!(
                        out,
                        "<details><summary>closest candidate for {}: {}</summary>{}</details>",
                        m.candidates.len(),
                        first_names(&m.candidates),
                        self.names(&m.candidates)
                    );
                }
                let _ = writeln!(
                    out,
                    "</td><td class=\"num big\">{}</td><td><span class=\"track\"><span class=\"bar mistake\" style=\"width:{exact_w}%\"></span><span class=\"bar candidate\" style=\"width:{cand_w}%\"></span></span></td><td class=\"num\">{}</td></tr>",
                    m.exact.len(),
                    if m.candidates.is_empty() {
                        String::new()
                    } else {
                        m.candidates.len().to_string()
                    }
                );
            }
            out.push_str("</tbody>\n</table>\n");
        }
        if !none.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"none\"><summary>{} catalog mistake{} no student made</summary>\n<table>\n<thead><tr><th>Mistake</th><th>Section</th><th>Rule</th></tr></thead>\n<tbody>",
                none.len(),
                plural(none.len())
            );
            for m in none {
                let _ = writeln!(
                    out,
                    "<tr id=\"{}\"><td>{} <code>{}</code></td><td>{}</td><td>{}</td></tr>",
                    escape(&html::anchor("mistake", &m.id)),
                    program_text(&m.title),
                    program_text(&m.id),
                    program_text(&m.section),
                    program_text(&m.rule)
                );
            }
            out.push_str("</tbody>\n</table>\n</details>\n");
        }
        out.push_str("</section>\n");
    }

    fn cases(&self, out: &mut String) {
        let s = self.summary;
        out.push_str("<section id=\"cases\">\n<h2>Cases that fail most</h2>\n");
        if s.cases.is_empty() {
            out.push_str("<p>No case fails.</p>\n");
        } else {
            let _ = writeln!(
                out,
                "<p class=\"muted\">Among the {} submissions that ran; {} case{} every one of them passes.</p>",
                self.ran,
                s.cases_all_pass,
                plural(s.cases_all_pass)
            );
            let row = |out: &mut String, c: &super::summary::CaseStat| {
                let w = c.failing * 100 / c.ran.max(1);
                let verdicts: Vec<String> =
                    c.verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
                let _ = writeln!(
                    out,
                    "<tr><td><code>{}</code> <span class=\"muted\">{}</span></td><td class=\"num\">{} / {}</td><td><span class=\"track\"><span class=\"bar\" style=\"width:{w}%\"></span></span></td><td class=\"nowrap\">{}</td></tr>",
                    program_text(&c.name),
                    program_text(&c.title),
                    c.failing,
                    c.ran,
                    escape(&verdicts.join(" · "))
                );
            };
            let head = "<table class=\"cases\">\n<thead><tr><th>Case</th><th class=\"num\">Failing</th><th></th><th>Verdicts</th></tr></thead>\n<tbody>\n";
            out.push_str(head);
            for c in s.cases.iter().take(CASES_SHOWN) {
                row(out, c);
            }
            out.push_str("</tbody>\n</table>\n");
            if s.cases.len() > CASES_SHOWN {
                let _ = writeln!(
                    out,
                    "<details><summary>{} more failing cases</summary>",
                    s.cases.len() - CASES_SHOWN
                );
                out.push_str(head);
                for c in &s.cases[CASES_SHOWN..] {
                    row(out, c);
                }
                out.push_str("</tbody>\n</table>\n</details>\n");
            }
        }
        out.push_str("</section>\n");
    }

    fn groups(&mut self, out: &mut String) {
        let s = self.summary;
        out.push_str(
            "<section id=\"groups\">\n<h2>Submissions the catalog does not explain</h2>\n",
        );
        if s.groups.is_empty() {
            out.push_str(
                "<p>None: the catalog names the mistakes of every failing submission.</p>\n",
            );
        } else {
            let _ = writeln!(
                out,
                "<p class=\"muted\">{} submission{} in {} group{}. A group fails the same cases, each in the same way \
                 (the kind of its first difference), so one comment reaches all its members.</p>",
                s.unexplained,
                plural(s.unexplained),
                s.groups.len(),
                plural(s.groups.len())
            );
            if s.groups.len() > 3 {
                self.group_overview(out);
            }
            let shown = s.groups.len().min(GROUPS_SHOWN);
            for (i, g) in s.groups.iter().enumerate().take(shown) {
                self.group(out, i + 1, g);
            }
            if s.groups.len() > shown {
                let _ = writeln!(
                    out,
                    "<details><summary>{} more groups</summary>",
                    s.groups.len() - shown
                );
                for (i, g) in s.groups.iter().enumerate().skip(shown) {
                    self.group(out, i + 1, g);
                }
                out.push_str("</details>\n");
            }
        }
        if !s.slips.is_empty() {
            let _ = writeln!(
                out,
                "<h3>Failing only by formatting slips</h3>\n<p>Their events are right; they print other lines on stdout or exit with a non-zero code: {}</p>",
                self.names(&s.slips)
            );
        }
        out.push_str("</section>\n");
    }

    fn group_overview(&self, out: &mut String) {
        out.push_str("<table class=\"overview\">\n<thead><tr><th>Group</th><th class=\"num\">Submissions</th><th class=\"num\">Failing cases</th><th>First of them</th><th>Nearly</th><th>Closest known</th></tr></thead>\n<tbody>\n");
        for (i, g) in self.summary.groups.iter().enumerate() {
            let first = g
                .failing
                .first()
                .map(|(c, k)| format!("<code>{}</code> ({})", program_text(c), program_text(k)))
                .unwrap_or_default();
            let near = g.near.as_ref().map_or_else(String::new, |n| {
                format!(
                    "<a href=\"#group-{m}\">group {m}</a> <span class=\"muted\">± {} case{}</span>",
                    n.cases.len(),
                    plural(n.cases.len()),
                    m = n.group
                )
            });
            let _ = writeln!(
                out,
                "<tr><td><a href=\"#group-{n}\">Group {n}</a></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{first}</td><td>{near}</td><td>{}</td></tr>",
                g.members.len(),
                g.failing.len(),
                ids(&g.candidates),
                n = i + 1
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }

    fn group(&mut self, out: &mut String, n: usize, g: &Group) {
        let _ = writeln!(
            out,
            "<div class=\"group\" id=\"group-{n}\">\n<h3>Group {n} <span class=\"muted\">· {} submission{} · {} failing case{}</span></h3>",
            g.members.len(),
            plural(g.members.len()),
            g.failing.len(),
            plural(g.failing.len())
        );
        let _ = writeln!(out, "<p>{}</p>", self.names(&g.members));
        // How they differ, in a line: each kind of first difference and on how many cases.
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, k) in &g.failing {
            *kinds.entry(k.as_str()).or_default() += 1;
        }
        let mut kinds: Vec<(&str, usize)> = kinds.into_iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds
            .iter()
            .map(|(k, n)| format!("<strong>{}</strong> on {n}", program_text(k)))
            .collect();
        let _ = writeln!(
            out,
            "<p>First differences: {}. The failing cases:</p>",
            kinds.join(", ")
        );
        let case = |(c, k): &(String, String)| {
            format!(
                "<li><code>{}</code> <span class=\"muted\">{}</span></li>",
                program_text(c),
                program_text(k)
            )
        };
        out.push_str("<ul class=\"failing\">");
        for c in g.failing.iter().take(GROUP_CASES_SHOWN) {
            out.push_str(&case(c));
        }
        out.push_str("</ul>\n");
        if g.failing.len() > GROUP_CASES_SHOWN {
            let _ = write!(
                out,
                "<details><summary>{} more failing cases</summary><ul class=\"failing\">",
                g.failing.len() - GROUP_CASES_SHOWN
            );
            for c in &g.failing[GROUP_CASES_SHOWN..] {
                out.push_str(&case(c));
            }
            out.push_str("</ul></details>\n");
        }
        if let Some(near) = &g.near {
            let cases: Vec<String> = near
                .cases
                .iter()
                .map(|c| format!("<code>{}</code>", program_text(c)))
                .collect();
            let _ = writeln!(
                out,
                "<p>Nearly <a href=\"#group-{n}\">group {n}</a>: {}.</p>",
                if cases.is_empty() {
                    "the same failures".to_string()
                } else {
                    format!("they differ only on {}", cases.join(", "))
                },
                n = near.group
            );
        }
        if !g.candidates.is_empty() {
            let _ = writeln!(
                out,
                "<p class=\"muted\">Closest known mistakes (a hint, not a verdict): {}</p>",
                ids(&g.candidates)
            );
        }
        if let Some(d) = &g.divergence {
            let rep = g.members.first().map(String::as_str).unwrap_or("");
            // The case in the representative's own report (its section's anchor), when it has one.
            let case_href = self
                .hrefs
                .get(rep)
                .filter(|h| !h.starts_with('#'))
                .map(|h| format!("{h}#{}", crate::report::html::anchor("case", &d.case)));
            divergence(out, rep, d, case_href.as_deref());
            let picture = self.picture(&Example {
                name: rep.to_string(),
                case: d.case.clone(),
            });
            out.push_str(&picture);
        }
        out.push_str("</div>\n");
    }

    fn did_not_grade(&self, out: &mut String) {
        let s = self.summary;
        let interrupted: Vec<String> = s
            .rows
            .iter()
            .filter(|r| r.status == Status::Interrupted)
            .map(|r| r.name.clone())
            .collect();
        if s.not_run.is_empty()
            && s.build_failures.is_empty()
            && s.grading_errors.is_empty()
            && interrupted.is_empty()
        {
            return;
        }
        out.push_str("<section id=\"not-graded\">\n<h2>Not graded</h2>\n");
        if !interrupted.is_empty() {
            let _ = writeln!(
                out,
                "<h3>Interrupted ({})</h3>\n<p>The grader was stopped while grading them; regrade: {}</p>",
                interrupted.len(),
                self.names(&interrupted)
            );
        }
        if !s.not_run.is_empty() {
            let _ = writeln!(
                out,
                "<h3>Did not run ({})</h3>\n<table>\n<thead><tr><th>Submission</th><th>Every run ended with</th><th>Cause</th></tr></thead>\n<tbody>",
                s.not_run.len()
            );
            for r in &s.not_run {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                    self.link(&r.name),
                    program_text(&r.line),
                    program_text(&r.cause)
                );
            }
            out.push_str("</tbody>\n</table>\n");
        }
        if !s.build_failures.is_empty() {
            let _ = writeln!(
                out,
                "<h3>Build failed ({})</h3>\n<table>\n<thead><tr><th>Submission</th><th>Build output (first lines)</th></tr></thead>\n<tbody>",
                s.build_failures.len()
            );
            for b in &s.build_failures {
                let lines: Vec<String> = b.lines.iter().map(|l| program_text(l)).collect();
                let _ = writeln!(
                    out,
                    "<tr><td>{}<div class=\"muted\"><code>{}</code></div></td><td><pre>{}</pre></td></tr>",
                    self.link(&b.name),
                    program_text(&b.command),
                    lines.join("\n")
                );
            }
            out.push_str("</tbody>\n</table>\n");
        }
        if !s.grading_errors.is_empty() {
            let _ = writeln!(
                out,
                "<h3>The grader could not grade ({})</h3>\n<table>\n<thead><tr><th>Submission</th><th>Why</th></tr></thead>\n<tbody>",
                s.grading_errors.len()
            );
            for e in &s.grading_errors {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td><code>{}</code></td></tr>",
                    self.link(&e.name),
                    program_text(&e.message)
                );
            }
            out.push_str("</tbody>\n</table>\n");
        }
        out.push_str("</section>\n");
    }

    fn submissions(&self, out: &mut String) {
        let s = self.summary;
        out.push_str("<section id=\"submissions\">\n<h2>All submissions</h2>\n");
        let open = s.rows.len() <= ROWS_OPEN;
        let _ = writeln!(
            out,
            "<details{}><summary>{} submission{}, by name; each name opens the student's own report</summary>",
            if open { " open" } else { "" },
            s.rows.len(),
            plural(s.rows.len())
        );
        out.push_str("<table class=\"subs\">\n<thead><tr><th>Submission</th><th>Status</th><th class=\"num\">Points</th><th class=\"num\">Cases passed</th><th>Failing verdicts</th><th>Exact</th><th>Diagnosis</th></tr></thead>\n<tbody>\n");
        for (i, r) in s.rows.iter().enumerate() {
            self.row(out, i, r);
        }
        out.push_str("</tbody>\n</table>\n</details>\n</section>\n");
    }

    fn row(&self, out: &mut String, i: usize, r: &Row) {
        let badge = match r.status {
            Status::Passed => "pass",
            Status::Failed => "fail",
            Status::DidNotRun | Status::BuildFailed | Status::Interrupted => "warn",
            Status::Error => "",
        };
        let verdicts: Vec<String> = r.verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
        let diagnosis = match &r.named {
            Named::Nothing => String::new(),
            Named::Exact(list) => list
                .iter()
                .map(|id| {
                    format!(
                        "<a href=\"#{}\"><code>{}</code></a>",
                        escape(&html::anchor("mistake", id)),
                        program_text(id)
                    )
                })
                .collect::<Vec<_>>()
                .join(" "),
            Named::SlipsOnly => "formatting slips only".to_string(),
            Named::Unexplained {
                candidates,
                beyond_corpus,
            } => {
                let mut d = match r.group {
                    Some(g) => format!("not explained: <a href=\"#group-{g}\">group {g}</a>"),
                    None => "not explained".to_string(),
                };
                if !candidates.is_empty() {
                    let _ = write!(
                        d,
                        " <span class=\"muted\">closest{}: {}</span>",
                        if *beyond_corpus {
                            " (holds on the corpus, not beyond)"
                        } else {
                            ""
                        },
                        ids(candidates)
                    );
                }
                d
            }
        };
        // Whether the diagnosis reproduces every case (the catalog's mistakes, or slips only).
        let exact = match r.named {
            Named::Exact(_) | Named::SlipsOnly => "yes",
            Named::Unexplained { .. } => "no",
            Named::Nothing => "",
        };
        let points = if r.status == Status::Error {
            String::new()
        } else {
            format!("{} / {}", r.points, r.max_points)
        };
        let cases = if r.cases == 0 {
            String::new()
        } else {
            format!("{} / {}", r.passed, r.cases)
        };
        let _ = writeln!(
            out,
            "<tr id=\"sub-{i}\"><td>{}</td><td><span class=\"badge {badge}\">{}</span></td><td class=\"num\">{points}</td><td class=\"num\">{cases}</td><td>{}</td><td>{exact}</td><td>{diagnosis}</td></tr>",
            self.link(&r.name),
            r.status.label(),
            escape(&verdicts.join(" · ")),
        );
    }
}

/// A representative's first difference, as a small block; the case links to its section in the
/// representative's own report when `case_href` is given.
fn divergence(out: &mut String, rep: &str, d: &Divergence, case_href: Option<&str>) {
    let case = format!("<code>{}</code>", program_text(&d.case));
    let case = match case_href {
        Some(h) => format!("<a href=\"{}\">{case}</a>", escape(h)),
        None => case,
    };
    let _ = writeln!(
        out,
        "<p>First difference of {} on {case} <span class=\"muted\">({}; {})</span>:</p>",
        program_text(rep),
        program_text(&d.title),
        d.verdict
    );
    let side = |label: &str, line: &Option<String>, none: &str| match line {
        Some(l) => format!("{label} {}", program_text(l)),
        None => format!("{label} <span class=\"muted\">{none}</span>"),
    };
    if d.expected.is_some() || d.actual.is_some() {
        let _ = writeln!(
            out,
            "<pre class=\"diff\">line {}\n{}\n{}</pre>",
            d.line.map_or_else(|| "?".to_string(), |l| l.to_string()),
            side("expected:", &d.expected, "(nothing more)"),
            side("actual:  ", &d.actual, "(the program stopped)")
        );
    }
    if let Some(sh) = &d.shrunk {
        let diff = match sh.line {
            Some(line) => format!(
                "<pre class=\"diff\">line {line}\n{}\n{}</pre>",
                side("expected:", &sh.expected, "(nothing more)"),
                side("actual:  ", &sh.actual, "(the program stopped)")
            ),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "<details><summary>The smallest trace found that fails the same way ({} command{})</summary><pre>{}</pre>{diff}</details>",
            sh.commands,
            plural(sh.commands),
            program_text_lines(&sh.trace),
        );
    }
}

/// Catalog ids as code spans linked to their mistake's row.
fn ids(list: &[String]) -> String {
    list.iter()
        .map(|id| {
            format!(
                "<a href=\"#{}\"><code>{}</code></a>",
                escape(&html::anchor("mistake", id)),
                program_text(id)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines of program text, line breaks kept.
fn program_text_lines(text: &str) -> String {
    escape(&crate::report::visible_lines(text))
}

/// The first few of `names` as plain text, for a folded list's summary line.
fn first_names(names: &[String]) -> String {
    const FEW: usize = 4;
    let mut out: Vec<String> = names.iter().take(FEW).map(|n| program_text(n)).collect();
    if names.len() > FEW {
        out.push("…".to_string());
    }
    out.join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn percent_of(n: usize, of: usize) -> String {
    (n * 100)
        .checked_div(of)
        .map_or_else(String::new, |p| format!("{p}% of the class"))
}

/// A path segment for a URL: everything but unreserved characters percent-encoded.
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The timeline at `path` when it is a plausible SVG of the grader's: at most
/// [`MAX_SVG_BYTES`], UTF-8, and [`plausible_svg`].
fn read_svg(path: &std::path::Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_SVG_BYTES + 1)
        .read_to_string(&mut text)
        .ok()?;
    (text.len() as u64 <= MAX_SVG_BYTES && plausible_svg(&text)).then_some(text)
}

/// Whether `text` looks like a standalone SVG picture the grader wrote: it starts with `<svg`
/// and ends with `</svg>`, and holds no script, no event handler attribute, no foreign content,
/// no entity or doctype, and no link but to a fragment of itself (`href="#…"`). Embedded as an
/// image it could not run script anyway; this keeps anything else off the page.
pub fn plausible_svg(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim();
    if !t.starts_with("<svg") || !t.ends_with("</svg>") {
        return false;
    }
    let lower = t.to_ascii_lowercase();
    const REFUSED: [&str; 10] = [
        "<script",
        "<foreignobject",
        "<iframe",
        "<object",
        "<embed",
        "<!doctype",
        "<!entity",
        "<?",
        "javascript:",
        "@import",
    ];
    if REFUSED.iter().any(|r| lower.contains(r)) {
        return false;
    }
    let bytes = lower.as_bytes();
    // No attribute named on…= (event handlers).
    for (i, w) in bytes.windows(3).enumerate() {
        if (w[0].is_ascii_whitespace() || w[0] == b'/') && w[1] == b'o' && w[2] == b'n' {
            let rest = &bytes[i + 3..];
            let name_end = rest
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_'))
                .unwrap_or(rest.len());
            let after = rest[name_end..].iter().find(|c| !c.is_ascii_whitespace());
            if after == Some(&b'=') {
                return false;
            }
        }
    }
    // Every href (xlink:href too) points into the picture itself.
    let mut from = 0;
    while let Some(at) = lower[from..].find("href") {
        let rest = lower[from + at + 4..].trim_start();
        if let Some(value) = rest.strip_prefix('=') {
            let value = value.trim_start();
            let inner = value
                .strip_prefix('"')
                .or_else(|| value.strip_prefix('\''))
                .unwrap_or(value);
            if !inner.starts_with('#') {
                return false;
            }
        }
        from += at + 4;
    }
    true
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::super::fixtures::*;
    use super::*;

    /// The page from `<main>` on: the style sheet is the frame's, tested there.
    fn body(page: &str) -> &str {
        page.find("<main>").map_or(page, |i| &page[i..])
    }

    #[test]
    fn a_small_class() {
        let page = render(&small_class(), "Replication lab — class report");
        assert!(page.starts_with("<!DOCTYPE html>"));
        for outside in [
            "<script",
            "http://",
            "https://",
            "<link",
            "src=\"/",
            "src=\"file",
        ] {
            assert!(!page.contains(outside), "{outside}");
        }
        insta::assert_snapshot!("small_class", body(&page));
    }

    #[test]
    fn input_order_does_not_change_the_page() {
        let forward = render(&small_class(), "t");
        let mut reversed = small_class();
        reversed.reverse();
        assert_eq!(render(&reversed, "t"), forward);
    }

    #[test]
    fn every_catalog_mistake_is_on_the_page() {
        let page = render(&small_class(), "t");
        for f in isr_reference::CATALOG {
            assert!(page.contains(&format!("<code>{}</code>", f.id)), "{}", f.id);
            assert!(page.contains(&escape(f.rule)), "{}", f.id);
        }
    }

    /// Writes `subs`' folders under `out/submissions/` with a report.html each, so links and
    /// pictures resolve.
    fn on_disk(out: &Path, subs: Vec<Submission>) -> Vec<Submission> {
        subs.into_iter()
            .map(|mut s| {
                s.dir = out.join(super::super::SUBMISSIONS).join(&s.name);
                std::fs::create_dir_all(s.dir.join(TIMELINES)).unwrap();
                std::fs::write(s.dir.join(super::super::REPORT_HTML), "<p>report</p>").unwrap();
                s
            })
            .collect()
    }

    const GOOD_SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><!-- t --><rect width=\"40\" height=\"20\" fill=\"#6b2fbf\"/><use href=\"#a\"/></svg>\n";

    #[test]
    fn hostile_names_lines_and_pictures_come_out_inert() {
        let dir = tempfile::tempdir().unwrap();
        let evil = "<script>alert(1)</script>\"\u{202e}x\x1b[2J";
        let hostile_case = case(
            "002-load",
            "wrong",
            Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
            Some(evil),
            None,
        );
        let r = report(with_failures(&[(1, hostile_case)]), inexact(&[]));
        let mut dnr = did_not_run(evil);
        dnr["did_not_run"]["cause"] = json!(evil);
        let subs = on_disk(
            dir.path(),
            vec![
                sub(evil, &r),
                sub("plain", &r),
                sub("norun", &dnr),
                sub("broken", &build_failed(evil)),
                error("err", evil),
            ],
        );
        // The group's representative is the first by name: `"<script…` sorts before `plain`.
        let rep = subs.iter().find(|s| s.name == evil).unwrap();
        std::fs::write(
            rep.dir.join(TIMELINES).join("002-load.svg"),
            "<svg><script>alert(1)</script></svg>",
        )
        .unwrap();
        let page = render(&subs, evil);
        assert!(!page.contains("<script"), "raw script on the page");
        assert!(!page.contains('\u{202e}'), "a bidi override on the page");
        assert!(!page.contains('\x1b'), "an escape character on the page");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;\\u{202e}x\\x1b[2J"));
        // The refused picture is named, not embedded in any form.
        assert!(page.contains("not an SVG this grader writes"));
        assert!(!page.contains("data:image/svg+xml"));
        assert!(!page.contains(&base64(b"<svg><script>")[..12]));
        // Links to the students' reports are encoded paths.
        assert!(page.contains("href=\"submissions/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%22%E2%80%AEx%1B%5B2J/report.html\""));
        assert!(page.contains("href=\"submissions/plain/report.html\""));

        // A picture of the grader's kind is embedded as an image, not inlined.
        std::fs::write(rep.dir.join(TIMELINES).join("002-load.svg"), GOOD_SVG).unwrap();
        let page = render(&subs, "t");
        let want = format!(
            "src=\"data:image/svg+xml;base64,{}\"",
            base64(GOOD_SVG.as_bytes())
        );
        assert!(page.contains(&want));
        assert!(!page.contains("<rect"));
    }

    #[test]
    fn only_plausible_svgs_are_pictures() {
        assert!(plausible_svg(GOOD_SVG));
        assert!(plausible_svg(
            "\u{feff}<svg viewBox=\"0 0 1 1\"><a xlink:href='#x'/></svg>"
        ));
        for bad in [
            "<html><svg></svg></html>",
            "<svg onload=\"alert(1)\"></svg>",
            "<svg><rect\nONCLICK = 'x'/></svg>",
            "<svg/onload=alert(1)></svg>",
            "<svg><a href=\"https://example.org\">x</a></svg>",
            "<svg><a xlink:href = javascript:alert(1)>x</a></svg>",
            "<svg><foreignObject><div/></foreignObject></svg>",
            "<svg><!DOCTYPE x [<!ENTITY a 'b'>]></svg>",
            "<svg><style>@import 'x.css';</style></svg>",
            "<svg>",
            "",
        ] {
            assert!(!plausible_svg(bad), "{bad}");
        }
        // A picture too large is not read whole.
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.svg");
        let filler = " ".repeat(MAX_SVG_BYTES as usize);
        std::fs::write(&big, format!("<svg>{filler}</svg>")).unwrap();
        assert_eq!(read_svg(&big), None);
        let ok = dir.path().join("ok.svg");
        std::fs::write(&ok, GOOD_SVG).unwrap();
        assert_eq!(read_svg(&ok).as_deref(), Some(GOOD_SVG));
    }

    #[test]
    fn a_case_name_never_reaches_outside_the_timelines() {
        let dir = tempfile::tempdir().unwrap();
        let r = report(with_failures(&[(1, wrong_hw("002-load"))]), inexact(&[]));
        let subs = on_disk(dir.path(), vec![sub("a", &r)]);
        // A picture one folder up, which `../x` would name.
        std::fs::write(subs[0].dir.join("x.svg"), GOOD_SVG).unwrap();
        let summary = summarize(&subs);
        let mut ctx = Context::new(&subs, &summary);
        for case in ["../x", "..", "", "a/../../x"] {
            let example = Example {
                name: "a".into(),
                case: case.into(),
            };
            assert_eq!(ctx.picture(&example), "", "{case}");
        }
        std::fs::write(subs[0].dir.join(TIMELINES).join("x.svg"), GOOD_SVG).unwrap();
        let example = Example {
            name: "a".into(),
            case: "x".into(),
        };
        assert!(ctx.picture(&example).contains("<img"));
    }

    #[test]
    fn pictures_stop_at_the_page_budget() {
        let dir = tempfile::tempdir().unwrap();
        let r = report(with_failures(&[(1, wrong_hw("002-load"))]), inexact(&[]));
        let subs = on_disk(dir.path(), vec![sub("a", &r)]);
        std::fs::write(subs[0].dir.join(TIMELINES).join("002-load.svg"), GOOD_SVG).unwrap();
        let summary = summarize(&subs);
        let mut ctx = Context::new(&subs, &summary);
        let example = Example {
            name: "a".into(),
            case: "002-load".into(),
        };
        ctx.budget = base64(GOOD_SVG.as_bytes()).len();
        assert!(ctx.picture(&example).contains("<img"));
        assert!(
            ctx.picture(&example)
                .contains("the page holds enough pictures")
        );
        assert_eq!(ctx.budget, 0);
    }

    #[test]
    fn odd_classes_render() {
        let empty = render(&[], "t");
        for id in ["overview", "mistakes", "groups", "cases", "submissions"] {
            assert!(empty.contains(&format!("<section id=\"{id}\">")), "{id}");
        }
        // More points than possible, none possible, an empty name, a case with no title.
        let mut odd = passing();
        odd["summary"]["points"] = json!(99);
        let mut zero = report(Vec::new(), exact(&[]));
        zero["summary"]["max_points"] = json!(0);
        let mut untitled = report(with_failures(&[(0, wrong_hw("001-worked"))]), Value::Null);
        untitled["cases"][0]["title"] = json!("");
        let page = render(
            &[sub("odd", &odd), sub("zero", &zero), sub("", &untitled)],
            "",
        );
        assert!(page.contains("<div class=\"big\">3</div>"));
    }

    #[test]
    fn encodings() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
        assert_eq!(percent_encode("a b/c#d"), "a%20b%2Fc%23d");
        assert_eq!(percent_encode("ok-1.2_~"), "ok-1.2_~");
    }
}
