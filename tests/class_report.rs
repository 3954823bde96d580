//! The class report, end to end and in a real browser: a class graded by the built grader
//! (`test --instructor-config … --submission … --format json` into `OUT/submissions/NAME/`),
//! read back with `class::load`, rendered with `class::page::render`, then opened by Debian's
//! headless Chromium: a screenshot (saved as `target/class-report.png` and
//! `target/class-report-60.png` for a person to look at, beside the class folders
//! `target/class-report/` and `target/class-report-60/` whose pages open from disk) must show the
//! page's parts in the colours the style sheet gives them, and the DOM Chromium built must hold
//! every section.
//!
//! Chromium is required: without it these tests fail and say to install it (CI does).

use std::path::Path;
use std::sync::OnceLock;

use isr_grader::class;
use serde_json::Value;

mod common;
use common::{browser, fixture, grader, grader_path, root};

/// The screenshot's window.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 2000;

/// Colours of the style sheet (`report::html::STYLE`) the screenshot is searched for.
const MISTAKE: [u8; 3] = [0x6b, 0x2f, 0xbf];
const PASS: [u8; 3] = [0x1a, 0x7f, 0x37];
const FAIL: [u8; 3] = [0xc6, 0x28, 0x28];
const ACCENT: [u8; 3] = [0x24, 0x56, 0xc7];
/// The stand-in timeline picture's fill (no other part of the page uses it).
const PICTURE: [u8; 3] = [0x0f, 0x8b, 0x8d];

/// The class: a name and its instructor config's program lines (`run`, `build`, ...). Two
/// more students hand in the same programs as ben and eve: [`graded`] copies their reports
/// (grading the same program twice would only cost time).
fn students() -> Vec<(&'static str, String)> {
    let g = grader_path();
    let leader = |fault: &str| {
        if fault.is_empty() {
            format!("run = [{g:?}, \"leader\"]\n")
        } else {
            format!("run = [{g:?}, \"leader\", \"--fault\", {fault:?}]\n")
        }
    };
    let unknown = format!(
        "run = [\"sh\", {:?}, {g:?}]\n",
        fixture("students/unknown_bug.sh")
    );
    vec![
        ("ada", leader("")),
        ("ben", leader("caught-up-equality-only")),
        ("dee", leader("ack-immediate")),
        ("eve", unknown),
        (
            "gus",
            "run = [\"./leader\"]\nbuild = \"echo 'leader.c:3: error: expected ; before }' >&2; exit 1\"\n"
                .to_string(),
        ),
        (
            "hal",
            "run = [\"sh\", \"-c\", \"echo 'python3: not found' >&2; exit 127\"]\n".to_string(),
        ),
    ]
}

/// Grades every student once (in parallel) and returns `(name, report.json text)`.
fn graded() -> &'static [(String, String)] {
    static GRADED: OnceLock<Vec<(String, String)>> = OnceLock::new();
    GRADED.get_or_init(|| {
        let bin_dir = Path::new(&grader_path()).parent().unwrap().to_path_buf();
        let fixtures = root().join("tests/fixtures");
        let handles: Vec<_> = students()
            .into_iter()
            .map(|(name, program)| {
                let (bin_dir, fixtures) = (bin_dir.clone(), fixtures.clone());
                std::thread::spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    let icfg = dir.path().join("instructor.toml");
                    let sub = dir.path().join("submission");
                    std::fs::create_dir(&sub).unwrap();
                    std::fs::write(
                        &icfg,
                        format!(
                            "cases = [{:?}]\njobs = 2\nallow_read = [{:?}, {:?}]\n{program}",
                            root().join("cases/public"),
                            bin_dir,
                            fixtures
                        ),
                    )
                    .unwrap();
                    let out = grader()
                        .args(["test", "--format", "json", "--explore", "0"])
                        .arg("--instructor-config")
                        .arg(&icfg)
                        .arg("--submission")
                        .arg(&sub)
                        .output()
                        .unwrap();
                    let doc = common::json_report(&out);
                    assert!(
                        doc.get("error").is_none(),
                        "{name}: {doc}\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    (name.to_string(), String::from_utf8(out.stdout).unwrap())
                })
            })
            .collect();
        let mut reports: Vec<(String, String)> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (copy, of) in [("cal", "ben"), ("fox", "eve")] {
            let text = reports.iter().find(|(n, _)| n == of).unwrap().1.clone();
            reports.push((copy.to_string(), text));
        }
        reports
    })
}

/// Writes a class folder: `OUT/submissions/NAME/report.json` for each `(name, text)`, and a
/// stand-in `report.html` (the student's page is another module's) so the links resolve.
fn write_class(out: &Path, reports: &[(String, String)]) {
    for (name, text) in reports {
        let dir = out.join(class::SUBMISSIONS).join(name);
        std::fs::create_dir_all(dir.join(class::TIMELINES)).unwrap();
        std::fs::write(dir.join(class::REPORT_JSON), text).unwrap();
        std::fs::write(dir.join(class::REPORT_HTML), "<!DOCTYPE html><p>report</p>").unwrap();
    }
}

/// A stand-in timeline (the real ones are drawn by another module): one distinctive block.
fn stand_in_timeline() -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"80\" viewBox=\"0 0 600 80\">\
         <rect width=\"600\" height=\"80\" fill=\"#ffffff\"/>\
         <rect x=\"10\" y=\"10\" width=\"580\" height=\"60\" fill=\"#{:02x}{:02x}{:02x}\"/></svg>\n",
        PICTURE[0], PICTURE[1], PICTURE[2]
    )
}

#[test]
fn the_class_report_shows_its_parts_in_a_browser() {
    let reports = graded();
    // In the target folder, so that a person can open the page and follow its links.
    let out = browser::target_dir().join("class-report");
    let _ = std::fs::remove_dir_all(&out);
    write_class(&out, reports);
    let subs = class::load(&out).unwrap();
    assert_eq!(subs.len(), reports.len());
    // eve's first failing case's picture (the group's representative: eve before fox).
    let eve = subs.iter().find(|s| s.name == "eve").unwrap();
    let first_failing = eve
        .report()
        .unwrap()
        .cases
        .iter()
        .find(|c| !matches!(c.verdict, isr_grader::report::json::VerdictV1::Pass))
        .unwrap()
        .name
        .clone();
    std::fs::write(
        eve.dir
            .join(class::TIMELINES)
            .join(format!("{first_failing}.svg")),
        stand_in_timeline(),
    )
    .unwrap();

    let page = class::page::render(&subs, "Replication lab — class report");
    let html = out.join(class::CLASS_REPORT);
    std::fs::write(&html, &page).unwrap();

    // The DOM Chromium builds holds every part.
    let dom = browser::dom(&html);
    for part in [
        "id=\"overview\"",
        "id=\"mistakes\"",
        "id=\"mistake-caught-up-equality-only\"",
        "id=\"cases\"",
        "id=\"groups\"",
        "id=\"group-1\"",
        "id=\"not-graded\"",
        "id=\"submissions\"",
        "data:image/svg+xml;base64,",
    ] {
        assert!(dom.contains(part), "{part} missing from the DOM:\n{dom}");
    }
    // Two students have the same catalog mistake; the unknown bug is one group of two.
    let group = &dom[dom.find("id=\"group-1\"").unwrap()..];
    let group = &group[..group.find("</div>").unwrap()];
    assert!(
        group.contains(">eve</a>") && group.contains(">fox</a>"),
        "{group}"
    );
    assert!(
        dom.contains("<td class=\"num big\">2</td>"),
        "the mistake two students make:\n{dom}"
    );
    for name in ["ada", "ben", "cal", "dee", "gus", "hal"] {
        assert!(
            dom.contains(&format!("href=\"submissions/{name}/report.html\"")),
            "{name}"
        );
    }
    assert!(dom.contains("leader.c:3: error: expected ; before }"));
    assert!(dom.contains("python3: not found"));

    // The screenshot shows them: mistake bars, pass and fail colours, the score histogram,
    // and the page is not blank.
    let png = browser::target_dir().join("class-report.png");
    let pixels = browser::screenshot(&html, &png, (WIDTH, HEIGHT));
    let white = browser::count_near(&pixels, [0xff, 0xff, 0xff], 3);
    assert!(
        white < pixels.len() * 97 / 100,
        "the page looks blank ({white} of {} pixels white): {}",
        pixels.len(),
        png.display()
    );
    for (what, colour, least) in [
        ("mistake bars", MISTAKE, 1000),
        ("passing (green)", PASS, 200),
        ("failing (red)", FAIL, 1000),
        ("score histogram", ACCENT, 500),
        // The group's picture, an image from a data: URL under the page's CSP.
        ("timeline picture", PICTURE, 5000),
    ] {
        let n = browser::count_near(&pixels, colour, 3);
        assert!(
            n >= least,
            "{what}: {n} pixels of #{:02x}{:02x}{:02x}, at least {least} expected: {}",
            colour[0],
            colour[1],
            colour[2],
            png.display()
        );
    }
}

/// A report of `graded()` by name, as a JSON value to vary.
fn report_of(name: &str) -> Value {
    let (_, text) = graded().iter().find(|(n, _)| n == name).unwrap();
    serde_json::from_str(text).unwrap()
}

/// 60 submissions made from the real reports: 20 with one catalog mistake, 10 with another,
/// 5 passing, three groups of 5 the catalog does not explain (one of them diagnosed on the
/// corpus only as a closest candidate), 4 unexplained alone, build failures, programs that did
/// not run, and a grading error.
fn large_class() -> Vec<(String, String)> {
    let eve = report_of("eve");
    let failing: Vec<usize> = eve["cases"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, c)| c["verdict"] != "pass")
        .map(|(i, _)| i)
        .collect();
    let mut timeouts = eve.clone();
    let first = &mut timeouts["cases"][failing[0]];
    first["verdict"] = "timeout".into();
    first["shrunk"] = Value::Null;
    let mut closest_only = report_of("ben");
    closest_only["diagnosis"]["exact"] = false.into();
    closest_only["diagnosis"]["mistakes"] = serde_json::json!([]);
    closest_only["diagnosis"]["details"] = serde_json::json!([]);
    closest_only["diagnosis"]["closest"] = serde_json::json!([
        {"mistakes": ["caught-up-strict-previous"], "explains": 5, "failing": 7}
    ]);
    (0..60)
        .map(|i| {
            let doc = match i % 12 {
                0..=3 => report_of("ben"),
                4 | 5 => report_of("dee"),
                6 => report_of("ada"),
                7 => eve.clone(),
                8 => timeouts.clone(),
                9 => closest_only.clone(),
                10 if i % 24 == 10 => report_of("gus"),
                10 => report_of("hal"),
                _ if i == 59 => serde_json::json!({"schema_version": 1, "error": "grader.toml:2: unknown key `rnu`"}),
                _ => {
                    // Alone: one of its failing cases passes.
                    let mut alone = eve.clone();
                    let case = &mut alone["cases"][failing[1 + i / 12]];
                    case["verdict"] = "pass".into();
                    alone
                }
            };
            (format!("student-{:03}", i + 1), doc.to_string())
        })
        .collect()
}

#[test]
fn a_large_class_stays_readable() {
    let out = browser::target_dir().join("class-report-60");
    let _ = std::fs::remove_dir_all(&out);
    write_class(&out, &large_class());
    let subs = class::load(&out).unwrap();
    assert_eq!(subs.len(), 60);
    let page = class::page::render(&subs, "Replication lab — 60 submissions");
    let html = out.join(class::CLASS_REPORT);
    std::fs::write(&html, &page).unwrap();

    let dom = browser::dom(&html);
    // Long lists are folded: the table of all submissions, the groups past the overview.
    assert!(
        dom.contains("<details><summary>60 submissions, by name"),
        "the submissions table is open"
    );
    assert!(
        dom.contains("<table class=\"overview\">"),
        "no group overview"
    );
    for n in 1..=7 {
        assert!(dom.contains(&format!("id=\"group-{n}\"")), "group {n}");
    }
    assert!(!dom.contains("id=\"group-8\""));
    // The four alone each differ from the first group on one case, and say so.
    assert_eq!(
        dom.matches("Nearly <a href=\"#group-1\">group 1</a>: they differ only on")
            .count(),
        5,
        "the timeout variant and the four alone"
    );
    // 20 exact, and 5 for whom another mistake is only the closest candidate.
    let row = &dom[dom.find("id=\"mistake-caught-up-equality-only\"").unwrap()..];
    assert!(row[..row.find("</tr>").unwrap()].contains("<td class=\"num big\">20</td>"));
    let row = &dom[dom
        .find("id=\"mistake-caught-up-strict-previous\"")
        .unwrap()..];
    assert!(row[..row.find("</tr>").unwrap()].contains("closest candidate for 5"));

    let png = browser::target_dir().join("class-report-60.png");
    let pixels = browser::screenshot(&html, &png, (WIDTH, HEIGHT));
    for (what, colour, least) in [
        ("mistake bars", MISTAKE, 1500),
        // The failing card's edge (the cases' red bars are further down).
        ("failing (red)", FAIL, 400),
        ("score histogram", ACCENT, 500),
    ] {
        let n = browser::count_near(&pixels, colour, 3);
        assert!(
            n >= least,
            "{what}: {n} pixels, at least {least}: {}",
            png.display()
        );
    }
}
