//! The report for people: one line per case, the details of failing cases, the diagnosis.
//!
//! Rendered with ANSI styles; the caller writes it through `anstream`, which strips them when
//! stdout is not a terminal or NO_COLOR is set.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use super::{CaseReport, Report, Shrunk, Verdict, visible};

const PASS: Style = AnsiColor::Green.on_default();
const FAIL: Style = AnsiColor::Red.on_default().bold();
const EXPECTED: Style = AnsiColor::Green.on_default();
const ACTUAL: Style = AnsiColor::Red.on_default();
const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const NOTE: Style = AnsiColor::Yellow.on_default();

/// How much to show.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Failing cases shown in full (the rest get one line each); `usize::MAX` for all.
    pub details: usize,
    /// The header and the line of each case were already shown, as the cases finished
    /// ([`header`], [`case_line`]): leave them out.
    pub listed: bool,
    /// Quiet (`-q`): no line for passing cases, no failing case in full.
    pub quiet: bool,
    /// Sentences are wrapped to this many columns, between words ([`width`]).
    pub width: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            details: 3,
            listed: false,
            quiet: false,
            width: FIXED_WIDTH,
        }
    }
}

/// The wrapping width off a terminal: fixed, so that piped output and snapshots do not depend
/// on the window.
pub const FIXED_WIDTH: usize = 100;

/// The wrapping width for stdout: the terminal's (at least 40 columns), else [`FIXED_WIDTH`].
pub fn width() -> usize {
    match terminal_size::terminal_size_of(std::io::stdout()) {
        Some((terminal_size::Width(w), _)) => usize::from(w).max(40),
        None => FIXED_WIDTH,
    }
}

/// Writes `text` as a paragraph wrapped to `width` between words (a word longer than the line
/// stays whole), the first line after `first`, the others after `rest`.
fn para(s: &mut String, width: usize, first: &str, rest: &str, text: &str) {
    let opts = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
        // Never at a hyphen either: `isr-grader`, `001-worked-trace` stay whole.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let _ = writeln!(s, "{}", textwrap::fill(text, opts));
}

/// The report's first lines: what is graded, on what, in which sandbox, and the notes.
pub fn header(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Grading {} on {} case{} ({})",
        styled(BOLD, &visible(&report.program)),
        report.cases.len(),
        if report.cases.len() == 1 { "" } else { "s" },
        report.case_sources.join(", ")
    );
    let _ = writeln!(
        s,
        "{}",
        styled(DIM, &format!("sandbox: {}", report.sandbox))
    );
    let _ = writeln!(
        s,
        "{}",
        styled(DIM, &format!("graded by {}", report.grader_version))
    );
    for note in &report.notes {
        let _ = writeln!(s, "{} {}", styled(NOTE, "note:"), visible(note));
    }
    s
}

/// One case's line (without a newline), its name padded to `width`.
pub fn case_line(c: &CaseReport, width: usize) -> String {
    if c.verdict.passed() {
        format!("  {}  {}", styled(PASS, "pass"), c.name)
    } else if c.verdict == Verdict::NotRun {
        format!(
            "  {}  {:width$}  {}",
            styled(DIM, "skip"),
            c.name,
            c.verdict.describe()
        )
    } else {
        format!(
            "  {}  {:width$}  {}",
            styled(FAIL, "FAIL"),
            c.name,
            c.verdict.describe()
        )
    }
}

fn styled(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// Renders the report.
pub fn render(report: &Report, opts: Options) -> String {
    let mut s = if opts.listed {
        String::new()
    } else {
        header(report)
    };
    if let Some(b) = &report.build {
        if !b.ok {
            let _ = writeln!(
                s,
                "\n{} `{}`",
                styled(
                    FAIL,
                    if report.interrupted {
                        "BUILD INTERRUPTED:"
                    } else {
                        "BUILD FAILED:"
                    }
                ),
                visible(&b.command)
            );
            let _ = writeln!(s, "{}", styled(DIM, "last lines of its output:"));
            for l in b.output_tail.lines() {
                let _ = writeln!(s, "  {}", visible(l));
            }
            if report.interrupted {
                let _ = writeln!(
                    s,
                    "\nThe grader was interrupted during the build: no case was run."
                );
                return s;
            }
            let _ = writeln!(
                s,
                "\nNo case was run. Fix the build (run the command yourself to see all of it), then grade again."
            );
            return s;
        }
    }
    if let Some(d) = &report.did_not_run {
        did_not_run(&mut s, d, report, opts.width);
        return s;
    }
    if !opts.listed {
        let _ = writeln!(s);
        let width = name_width(report);
        for c in report
            .cases
            .iter()
            .filter(|c| !(opts.quiet && c.verdict.passed()))
        {
            let _ = writeln!(s, "{}", case_line(c, width));
        }
    }
    let failing: Vec<&CaseReport> = report
        .cases
        .iter()
        .filter(|c| !c.verdict.passed() && c.verdict != Verdict::NotRun)
        .collect();
    // Smallest traces already printed, with the case they were printed for.
    let mut shown: Vec<(String, String)> = Vec::new();
    for (k, c) in failing.iter().enumerate() {
        if opts.quiet {
            break;
        } else if k < opts.details {
            details(&mut s, c, opts.width, &mut shown);
        } else if k == opts.details {
            let _ = writeln!(
                s,
                "\n{} more failing case{} not shown in full: run with --verbose, or --filter NAME for one case.",
                failing.len() - k,
                if failing.len() - k == 1 { "" } else { "s" }
            );
        }
    }
    if let Some(e) = &report.explored {
        // In full only when the corpus left room (a program failing the corpus has enough to
        // read already).
        let room = if opts.quiet {
            0
        } else {
            opts.details.saturating_sub(failing.len())
        };
        let opts = Options {
            details: room,
            ..opts
        };
        explored(&mut s, e, opts, failing.is_empty(), &mut shown);
    }
    let _ = writeln!(
        s,
        "\n{} {}/{} cases passed, {}/{} points",
        styled(BOLD, "Result:"),
        report.passed(),
        report.cases.len(),
        report.points(),
        report.max_points()
    );
    if report.explored_penalty() > 0 {
        let _ = writeln!(
            s,
            "        (explored traces where your program differs cost {} points)",
            report.explored_penalty()
        );
    }
    if report.interrupted {
        let not_run = report
            .cases
            .iter()
            .filter(|c| c.verdict == Verdict::NotRun)
            .count();
        let _ = writeln!(
            s,
            "{} the grader was interrupted: {not_run} case{} not run, no diagnosis.",
            styled(NOTE, "Incomplete:"),
            if not_run == 1 { "" } else { "s" }
        );
    } else if let not_run @ 1.. = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::NotRun)
        .count()
    {
        let _ = writeln!(
            s,
            "{} stopped after the failures asked for (--fail-fast, --max-fail): {not_run} case{} not run, no diagnosis.",
            styled(NOTE, "Incomplete:"),
            if not_run == 1 { "" } else { "s" }
        );
    }
    if let Some(d) = &report.diagnosis {
        diagnosis(&mut s, d, &failing, &report.cases, opts.width);
    }
    s
}

/// The width case names are padded to.
pub fn name_width(report: &Report) -> usize {
    report.cases.iter().map(|c| c.name.len()).max().unwrap_or(0)
}

fn details(s: &mut String, c: &CaseReport, width: usize, shown: &mut Vec<(String, String)>) {
    let _ = writeln!(
        s,
        "\n{} {} — {}",
        styled(FAIL, "──"),
        styled(BOLD, &c.name),
        c.verdict.describe()
    );
    let _ = writeln!(s, "   {}", c.title);
    if let Some(n) = &c.nondeterminism {
        let _ = writeln!(
            s,
            "   two runs on the same input differ at output line {}:",
            n.line
        );
        if n.first.is_some() || n.second.is_some() {
            let _ = writeln!(
                s,
                "     first run:  {}",
                visible(n.first.as_deref().unwrap_or("(nothing more)"))
            );
            let _ = writeln!(
                s,
                "     second run: {}",
                visible(n.second.as_deref().unwrap_or("(nothing more)"))
            );
        } else if c.hidden {
            let _ = writeln!(s, "     (a hidden case: the lines are not shown)");
        }
        para(
            s,
            width,
            &format!("   {} ", styled(NOTE, "likely cause:")),
            "   ",
            &n.cause,
        );
    }
    if c.hidden && c.first_diff.is_none() && c.nondeterminism.is_none() {
        let _ = writeln!(
            s,
            "   {}",
            styled(
                DIM,
                "a hidden case: its trace and expected output are not shown; the smallest trace below differs the same way"
            )
        );
    }
    if let Verdict::Timeout { .. } = c.verdict {
        para(
            s,
            width,
            &format!("   {} ", styled(NOTE, "note:")),
            "   ",
            "it was still running at the time limit. Does your program exit at the end of its input (when reading stdin returns end of file)? Is a loop waiting for a line that never comes?",
        );
    }
    if let Some(d) = &c.first_diff {
        let _ = writeln!(s, "   first difference at output line {}:", d.line);
        let _ = writeln!(
            s,
            "     expected: {}",
            styled(
                EXPECTED,
                &visible(d.expected.as_deref().unwrap_or("(nothing more)"))
            )
        );
        let _ = writeln!(
            s,
            "     yours:    {}",
            styled(
                ACTUAL,
                &visible(d.actual.as_deref().unwrap_or("(nothing more)"))
            )
        );
    }
    if let Some(o) = &c.origin {
        let _ = writeln!(
            s,
            "   the expected line comes from {}: {}",
            styled(BOLD, &o.location),
            o.command
        );
        if !o.explanation.is_empty() {
            let _ = writeln!(s, "   what the reference leader does there:");
            for e in &o.explanation {
                para(s, width, "     ", "       ", e);
            }
        }
    }
    if let Some(cmd) = &c.show_command {
        let _ = writeln!(s, "   the whole case, explained: {}", styled(BOLD, cmd));
    }
    if !c.diff.is_empty() {
        let _ = writeln!(
            s,
            "   diff ({} expected, {} yours):",
            styled(EXPECTED, "-"),
            styled(ACTUAL, "+")
        );
        for l in &c.diff {
            let line = format!("{}{}", l.tag, visible(&l.text));
            let text = match l.tag {
                '-' => styled(EXPECTED, &line),
                '+' => styled(ACTUAL, &line),
                '~' => styled(DIM, &visible(&l.text)),
                _ => line,
            };
            let _ = writeln!(s, "     {text}");
        }
    }
    if let Some(sh) = &c.shrunk {
        match shown.iter().find(|(t, _)| *t == sh.trace) {
            Some((_, name)) => {
                let _ = writeln!(
                    s,
                    "   {}: the same {}-command trace as for {name} above ({})",
                    styled(BOLD, "smallest trace where your program differs"),
                    sh.commands,
                    sh.kind
                );
            }
            None => {
                shown.push((sh.trace.clone(), c.name.clone()));
                for l in render_shrunk(sh, None).lines() {
                    let _ = writeln!(s, "   {l}");
                }
            }
        }
    }
    if !c.stray_lines.is_empty() {
        let _ = writeln!(
            s,
            "   {} your program printed lines that are not events; print debugging to stderr:",
            styled(NOTE, "note:")
        );
        for (n, l) in c.stray_lines.iter().take(5) {
            let _ = writeln!(s, "     line {n}: {}", visible(l));
        }
        let total = c.stray_total.max(c.stray_lines.len());
        if total > 5 {
            let _ = writeln!(s, "     ... and {} more", total - 5);
        }
    }
    if !c.stderr_tail.is_empty() {
        let _ = writeln!(s, "   {}", styled(DIM, "stderr (last lines):"));
        let lines: Vec<&str> = c.stderr_tail.lines().collect();
        for l in &lines[lines.len().saturating_sub(10)..] {
            let _ = writeln!(s, "     {}", styled(DIM, &visible(l)));
        }
    }
}

fn diagnosis(
    s: &mut String,
    d: &super::DiagnosisReport,
    failing: &[&CaseReport],
    cases: &[CaseReport],
    width: usize,
) {
    if failing.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n{}", styled(BOLD, "Diagnosis"));
    if let Some(b) = &d.beyond_corpus {
        beyond_corpus(s, b, width);
    } else if d.exact && !d.mistakes.is_empty() {
        let text = format!(
            "Your output matches, on every case{}, a leader with {}:",
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
        para(s, width, "", "", &text);
        for m in &d.mistakes {
            let _ = writeln!(s);
            para(
                s,
                width,
                "  ",
                "  ",
                &format!("{} ({})", styled(FAIL, &m.title), m.id),
            );
            para(
                s,
                width,
                "    ",
                "    ",
                &format!("the rule ({}): {}", m.section, m.rule),
            );
            para(s, width, "    ", "    ", &m.explanation);
            if let Some(case) = &m.smallest_case {
                let show = cases
                    .iter()
                    .find(|c| &c.name == case)
                    .and_then(|c| c.show_command.as_deref());
                let text = format!("    smallest case that shows it: {case}");
                match show {
                    // A command stays on one line, to be copied whole.
                    Some(cmd) if text.len() + cmd.len() + 5 <= width => {
                        let _ = writeln!(s, "{text}   ({cmd})");
                    }
                    Some(cmd) => {
                        let _ = writeln!(s, "{text}\n      ({cmd})");
                    }
                    None => {
                        let _ = writeln!(s, "{text}");
                    }
                }
            }
        }
        if !d.alternatives.is_empty() {
            let alts: Vec<String> = d.alternatives.iter().map(|a| a.join(" + ")).collect();
            let _ = writeln!(s);
            para(
                s,
                width,
                "  ",
                "  ",
                &format!(
                    "These cases cannot tell that apart from: {}. Add cases (--cases) to decide.",
                    alts.join("; ")
                ),
            );
        }
    } else if d.exact {
        // Everything the program printed is explained by the correct leader; the failures are
        // formatting only (slips below).
    } else if d.closest.is_empty() && !d.slips.is_empty() {
        // Nothing to compare with the catalog: the slips say why.
        for slip in &d.slips {
            let mut chars = slip.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
            let text = format!("{}{}", first.unwrap_or_default(), chars.as_str());
            para(s, width, "", "", &text);
        }
        return;
    } else {
        para(
            s,
            width,
            "",
            "",
            "No known mistake, alone or in a pair, reproduces your output on every case: this is something the catalog does not know, so read the first difference above.",
        );
        if !d.closest.is_empty() {
            let _ = writeln!(s, "Closest known mistakes (a hint, not a verdict):");
            for c in &d.closest {
                let _ = writeln!(
                    s,
                    "  {}  reproduces {} of {} failing case{}",
                    c.mistakes.join(" + "),
                    c.explains,
                    c.failing,
                    if c.failing == 1 { "" } else { "s" }
                );
            }
        }
    }
    for slip in &d.slips {
        para(
            s,
            width,
            &format!("{} ", styled(NOTE, "Also:")),
            "      ",
            slip,
        );
    }
}

/// "smallest trace where your program differs": the trace, what the reference (or `who`)
/// prints with its explanation, and what the program printed.
pub fn render_shrunk(sh: &Shrunk, who: Option<&str>) -> String {
    let mut s = String::new();
    let how = match &sh.same_as {
        Some(other) => format!("the same difference as {other}"),
        None => format!("shrunk from {} in {} runs", sh.from_commands, sh.runs),
    };
    let _ = writeln!(
        s,
        "{} ({} command{}, {how}; {}):",
        styled(BOLD, "smallest trace where your program differs"),
        sh.commands,
        if sh.commands == 1 { "" } else { "s" },
        sh.kind
    );
    for l in sh.trace.lines() {
        let _ = writeln!(s, "  {l}");
    }
    let _ = writeln!(s, "{} prints:", who.unwrap_or("the reference leader"));
    for l in &sh.expected {
        let _ = writeln!(s, "  {}", styled(EXPECTED, l));
    }
    let _ = writeln!(s, "yours:");
    if sh.actual.is_empty() {
        let _ = writeln!(s, "  {}", styled(DIM, "(nothing)"));
    }
    for l in &sh.actual {
        let _ = writeln!(s, "  {}", styled(ACTUAL, &visible(l)));
    }
    if let Some(d) = &sh.first_diff {
        let _ = writeln!(
            s,
            "first difference at output line {}: expected {}, yours {}",
            d.line,
            styled(EXPECTED, d.expected.as_deref().unwrap_or("(nothing more)")),
            styled(
                ACTUAL,
                &visible(d.actual.as_deref().unwrap_or("(nothing more)"))
            )
        );
    }
    if !sh.explanation.is_empty() {
        let _ = writeln!(s, "explained:");
        for l in &sh.explanation {
            let _ = writeln!(s, "  {l}");
        }
    }
    s
}

fn did_not_run(s: &mut String, d: &super::DidNotRun, report: &Report, width: usize) {
    let _ = writeln!(
        s,
        "\n{} every case failed the same way:",
        styled(FAIL, "Your program did not run:")
    );
    let _ = writeln!(s, "  {}", styled(BOLD, &visible(&d.line)));
    para(s, width, "", "", &d.cause);
    let _ = writeln!(
        s,
        "\n{} {}/{} cases passed, {}/{} points",
        styled(BOLD, "Result:"),
        report.passed(),
        report.cases.len(),
        report.points(),
        report.max_points()
    );
}

fn explored(
    s: &mut String,
    e: &super::ExploreReport,
    opts: Options,
    corpus_passed: bool,
    shown: &mut Vec<(String, String)>,
) {
    let _ = writeln!(s);
    let text = format!(
        "{} {} generated trace{} beyond the corpus (seed {}; replay with --seed {}): {}",
        styled(BOLD, "Exploration:"),
        e.traces,
        if e.traces == 1 { "" } else { "s" },
        e.seed,
        e.seed,
        if e.failing.is_empty() {
            styled(PASS, "your program matches the reference on every one")
        } else {
            styled(
                FAIL,
                &format!(
                    "your program differs on {}{}",
                    e.failing_total,
                    if corpus_passed {
                        " — a bug the corpus does not reach"
                    } else {
                        ""
                    }
                ),
            )
        }
    );
    para(s, opts.width, "", "", &text);
    for (k, c) in e.failing.iter().enumerate() {
        if k < opts.details {
            details(s, c, opts.width, shown);
        } else if k < opts.details + 5 {
            let _ = writeln!(
                s,
                "  {}  {}   ({})",
                styled(FAIL, "FAIL"),
                c.name,
                c.show_command.as_deref().unwrap_or("")
            );
        } else {
            break;
        }
    }
    let listed = e.failing.len().min(opts.details + 5);
    if e.failing_total > listed {
        let _ = writeln!(s, "  ... and {} more", e.failing_total - listed);
    }
}

fn beyond_corpus(s: &mut String, b: &super::BeyondCorpus, width: usize) {
    let text = format!(
        "On every corpus case your output matches a leader with {}, but not on the explored trace {}: so that is not exactly your mistake (it may be part of it).",
        styled(FAIL, &b.mistakes.join(" + ")),
        b.explored_case
    );
    para(s, width, "", "", &text);
    if let Some(sh) = &b.shrunk {
        let who = format!("a leader with {}", b.mistakes.join(" + "));
        for l in render_shrunk(sh, Some(&who)).lines() {
            let _ = writeln!(s, "  {l}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_wrap_between_words_only() {
        let mut s = String::new();
        para(
            &mut s,
            24,
            "  ",
            "    ",
            "run isr-grader show 001-worked-trace for a-very-long-hyphenated-word here",
        );
        assert_eq!(
            s,
            "  run isr-grader show\n    001-worked-trace for\n    a-very-long-hyphenated-word\n    here\n"
        );
        // Our own styles do not count as width.
        let mut s = String::new();
        para(&mut s, 10, "", "", &format!("{} b", styled(FAIL, "aaaa")));
        assert_eq!(s.lines().count(), 1, "{s:?}");
    }
}
