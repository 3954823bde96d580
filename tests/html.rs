//! The student's HTML report (`test --html FILE`) and the case pictures (`test --timelines
//! DIR`), written by the built grader for a mistaken program: what they hold, that they load
//! nothing from outside, that the class report would embed the pictures, that a hidden case's
//! picture comes from nothing hidden, and that a real browser (headless Chromium, required)
//! reads and draws the picture.

use std::path::Path;

mod common;
use common::{browser, grader, grader_path, leader, regex_escape, root};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn svgs_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn html_report_and_pictures_are_written_for_a_mistaken_program() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let pictures = dir.path().join("timelines");
    let json_html = dir.path().join("json-mode.html");
    let out = grader()
        .args(["test", "--explore", "0", "--shrink-seconds", "600"])
        .arg("--html")
        .arg(&html)
        .arg("--timelines")
        .arg(&pictures)
        .arg("--")
        .args(leader("caught-up-equality-only"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let page = read(&html);
    assert!(page.starts_with("<!DOCTYPE html>"));
    // The result, the diagnosis with its lesson section, the table, the failing case.
    assert!(page.contains("29/36"), "points");
    assert!(page.contains("caught-up-equality-only"));
    assert!(page.contains("The in-sync set"), "the lesson section");
    assert!(page.contains("<td class=\"mono\"><a href=\"#case-030-constant-load\">"));
    assert!(page.contains("<figure class=\"timeline\" id=\"case-002-caught-up-equality-only\">"));
    assert!(
        page.contains("700 STATUS"),
        "the command behind the first difference"
    );
    assert!(page.contains("The smallest trace where your program differs"));
    // One picture per failing case, inline and in the folder, named exactly CASE.svg.
    let failing = page.matches("<figure class=\"timeline\"").count();
    assert_eq!(failing, 7);
    let names = svgs_in(&pictures);
    assert_eq!(names.len(), failing, "{names:?}");
    assert!(names.contains(&"030-constant-load.svg".to_string()));
    for name in &names {
        let svg = read(&pictures.join(name));
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(svg.contains("first difference"), "{name}");
        // What the class report embeds.
        assert!(isr_grader::class::page::plausible_svg(&svg), "{name}");
        assert!(
            (svg.len() as u64) < isr_grader::class::page::MAX_SVG_BYTES,
            "{name}"
        );
    }
    // Self-contained: no script, nothing named by URL.
    for outside in ["<script", "http://", "https://", "<link", "<img"] {
        assert!(!page.contains(outside), "{outside}");
    }
    // Also written in the JSON flow, and the same page (the report is deterministic).
    let out = grader()
        .args(["test", "--explore", "0", "--shrink-seconds", "600"])
        .args(["--format", "json", "--html"])
        .arg(&json_html)
        .arg("--")
        .args(leader("caught-up-equality-only"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    common::json_report(&out);
    let again = read(&json_html);
    let differs = again.lines().zip(page.lines()).find(|(a, b)| a != b);
    assert!(again == page, "the pages differ: {differs:?}");
}

#[test]
fn an_html_page_is_written_when_the_grader_cannot_grade() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let out = grader()
        .args(["test", "--html"])
        .arg(&html)
        .args(["--cases", "/nonexistent-case-folder", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let page = read(&html);
    assert!(page.contains("could not grade"), "{page}");
    assert!(page.contains("nonexistent-case-folder"));
}

/// A thousands-grouped number, as the pictures label times: `4,074`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A hidden case made from a public one with its times and LAG_MAX scaled by 7 (the same
/// behaviour, times no public case has), its expected output blessed. Returns what only it
/// shows: its expected lines and its times of 1,000 ms and more as the pictures label them.
fn hidden_case(dir: &Path) -> Vec<String> {
    let trace = read(&root().join("cases/public/030-constant-load.trace"));
    let mut secret = Vec::new();
    let mut scaled = String::new();
    for line in trace.lines() {
        let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if let Some(t) = words.first().and_then(|w| w.parse::<u64>().ok()) {
            words[0] = (7 * t).to_string();
            if 7 * t >= 1000 {
                secret.push(format!(">{}<", grouped(7 * t)));
            }
        } else if words.first().is_some_and(|w| w == "LAG_MAX") {
            words[1] = "3500".into();
        }
        scaled.push_str(&words.join(" "));
        scaled.push('\n');
    }
    std::fs::write(dir.join("500-secret.trace"), scaled).unwrap();
    std::fs::write(
        dir.join("500-secret.toml"),
        "title = \"a hidden case\"\ndescription = \"hidden\"\npoints = 1\nvisibility = \"hidden\"\norigin = { kind = \"handwritten\" }\n",
    )
    .unwrap();
    let out = grader().arg("bless").arg(dir).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    secret.extend(
        read(&dir.join("500-secret.out"))
            .lines()
            .map(str::to_string),
    );
    secret.sort();
    secret.dedup();
    secret
}

#[test]
fn a_hidden_case_is_pictured_from_its_shrunk_trace_only() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let secret = hidden_case(&cases);
    assert!(secret.len() > 20, "{secret:?}");
    let run = |extra: &[&str], name: &str| {
        let html = dir.path().join(format!("{name}.html"));
        let pictures = dir.path().join(name);
        let out = grader()
            .arg("test")
            .arg("--cases")
            .arg(&cases)
            .args(["--explore", "0", "--shrink-seconds", "600"])
            .args(extra)
            .arg("--html")
            .arg(&html)
            .arg("--timelines")
            .arg(&pictures)
            .arg("--")
            .args(leader("caught-up-equality-only"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        (read(&html), read(&pictures.join("500-secret.svg")))
    };
    let leaked = |text: &str| -> Vec<String> {
        secret
            .iter()
            .filter(|s| text.contains(s.as_str()))
            .cloned()
            .collect()
    };
    let (page, svg) = run(&[], "student");
    assert!(page.contains("<figure class=\"timeline\" id=\"case-500-secret\">"));
    assert!(page.contains("drawn from its shrunk trace"));
    assert!(svg.contains("the smallest trace where your program differs"));
    assert_eq!(leaked(&page), Vec::<String>::new(), "in the student's page");
    assert_eq!(
        leaked(&svg),
        Vec::<String>::new(),
        "in the student's picture"
    );
    // An instructor's picture is the case's own (so the checks above can fail).
    let (page, svg) = run(&["--show-hidden"], "instructor");
    assert!(leaked(&svg).len() > 5, "{svg}");
    assert!(!leaked(&page).is_empty());
}

#[test]
fn html_report_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let out = grader()
        .args(["test", "--filter", "001-worked-trace", "--explore", "0"])
        .args(["--shrink-seconds", "600", "--html"])
        .arg(&html)
        .arg("--")
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let page = read(&html);
    // From `<main>` on: the head and the style sheet are the shared frame's, tested there.
    let page = &page[page.find("<main>").unwrap()..];
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&grader_path()), "[isr-grader]");
    settings.add_filter(&regex_escape(&root().display().to_string()), "[root]");
    settings.add_filter(r"graded by [^<]*", "graded by [redacted]");
    settings.add_filter(
        r"isr-grader \d+\.\d+\.\d+ \([^<]*\)",
        "isr-grader [version]",
    );
    settings.add_filter(
        r"<tr><th>sandbox</th><td>[^<]*</td></tr>",
        "<tr><th>sandbox</th><td>[redacted]</td></tr>",
    );
    settings.bind(|| insta::assert_snapshot!("html_wrong_worked_trace", page));
}

#[test]
fn the_html_report_renders_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let out = grader()
        .args([
            "test",
            "--filter",
            "030-constant-load",
            "--explore",
            "0",
            "--html",
        ])
        .arg(&html)
        .arg("--")
        .args(leader("caught-up-equality-only"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // The browser reads the picture as an SVG element inside the figure.
    let dom = browser::dom(&html);
    assert!(dom.contains("<figure class=\"timeline\" id=\"case-030-constant-load\">\n<svg"));
    // And draws it: the divergence's red, your vermillion, the leader's blue are on screen
    // (vermillion and that blue are nowhere else on the page).
    let png = dir.path().join("report.png");
    let pixels = browser::screenshot(&html, &png, (1200, 1800));
    let counts: Vec<usize> = [[198, 40, 40], [213, 94, 0], [0, 114, 178]]
        .into_iter()
        .map(|c| browser::count_near(&pixels, c, 12))
        .collect();
    assert!(counts.iter().all(|&n| n > 200), "{counts:?}");
}
