//! The frame every HTML page of the grader shares (the student's report, the class report): one
//! self-contained file, no script, no network, no external resource, opening from disk.
//!
//! Pages are strings built by their renderers; this module gives them the escaping and the
//! page around their body. **Architecture invariant:** every string that reaches a page goes
//! through [`escape`] (text and attribute values alike), after [`super::visible`] when it came
//! from a program.

use std::fmt::Write as _;

/// `text` escaped for HTML text and for double-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A program-originated string for a page: control and bidi characters shown visibly
/// ([`super::visible`]), then escaped.
pub fn program_text(text: &str) -> String {
    escape(&super::visible(text))
}

/// An `id` attribute value made from a name (letters, digits, `-` and `_` kept; everything
/// else becomes `-`), so links such as `report.html#case-030-constant-load` stay stable.
pub fn anchor(prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + name.len() + 1);
    out.push_str(prefix);
    out.push('-');
    for c in name.chars() {
        out.push(if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '-'
        });
    }
    out
}

/// The style sheet of every page: light, readable in print, no web font.
pub const STYLE: &str = r#"
:root { --fg: #1d2330; --muted: #5b6474; --line: #d9dee7; --bg: #ffffff; --panel: #f5f7fa;
        --pass: #1a7f37; --fail: #c62828; --warn: #b26a00; --accent: #2456c7; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; }
p.meta, .muted { color: var(--muted); font-size: 13px; }
code, pre, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
      overflow-x: auto; white-space: pre; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
a { color: var(--accent); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
         color: #fff; background: var(--muted); }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); }
.badge.warn { background: var(--warn); }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 16px 0; }
.card { flex: 1 1 160px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.card .big { font-size: 26px; font-weight: 700; }
.bar { display: inline-block; height: 12px; border-radius: 3px; background: var(--fail); vertical-align: middle; }
.bar.pass { background: var(--pass); } .bar.accent { background: var(--accent); }
figure.timeline { margin: 12px 0 20px; }
figure.timeline svg { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
figure.timeline figcaption { color: var(--muted); font-size: 13px; }
details { margin: 6px 0; } summary { cursor: pointer; }
/* The class report. */
:root { --mistake: #6b2fbf; --candidate: #cdb8f0; --track: #eceff4; }
.card.pass { border-left: 6px solid var(--pass); } .card.fail { border-left: 6px solid var(--fail); }
.card.warn { border-left: 6px solid var(--warn); }
.track { display: inline-flex; width: 240px; height: 14px; background: var(--track); border-radius: 3px;
         overflow: hidden; vertical-align: middle; }
.track .bar { height: 14px; border-radius: 0; flex: none; }
.bar.mistake, .key.mistake { background: var(--mistake); } .bar.candidate, .key.candidate { background: var(--candidate); }
.key { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; }
td.big { font-size: 18px; font-weight: 700; } .nowrap { white-space: nowrap; }
.rule { color: var(--muted); font-size: 13px; margin-top: 2px; }
.hist { display: flex; align-items: flex-end; gap: 6px; height: 140px; max-width: 640px; margin: 8px 0 4px; }
.hist .col { flex: 1; display: flex; flex-direction: column; justify-content: flex-end; text-align: center; }
.hist .bar { display: block; border-radius: 3px 3px 0 0; }
.hist .n, .hist .lbl { font-size: 11px; color: var(--muted); min-height: 16px; }
.group { border: 1px solid var(--line); border-left: 4px solid var(--mistake); border-radius: 6px;
         padding: 4px 16px 8px; margin: 14px 0; }
.group h3 { margin-top: 10px; }
ul.failing { columns: 2; margin: 4px 0; padding-left: 20px; font-size: 13px; }
.names a { margin-right: 10px; white-space: nowrap; }
details.inline { display: inline; }
pre.diff { margin: 4px 0 8px; }
figure.timeline img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
"#;

/// A whole page: `<title>` and `<h1>` from `title`, `subtitle` as a muted line under it (both
/// made visible and escaped here: a title may carry a program's or a folder's name), then
/// `body` (already HTML).
pub fn page(title: &str, subtitle: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 512);
    let title = program_text(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n"
    );
    if !subtitle.is_empty() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", program_text(subtitle));
    }
    out.push_str(body);
    out.push_str("\n</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_program_text() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(program_text("\x1b[2J<b>"), "\\x1b[2J&lt;b&gt;");
        assert_eq!(
            anchor("case", "030 constant/load"),
            "case-030-constant-load"
        );
    }

    #[test]
    fn a_page_loads_nothing_from_outside() {
        let html = page("Class <report>", "graded by x", "<p>body</p>");
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>Class &lt;report&gt;</title>"));
        assert!(html.contains("default-src 'none'"));
        for outside in ["http://", "https://", "<script", "<link"] {
            assert!(!html.contains(outside), "{outside}");
        }
    }
}
