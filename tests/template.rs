//! The student template: it builds and its own tests pass; graded untouched it fails every case
//! cleanly; filled with a correct solution (kept under tests/fixtures/solutions) it passes every
//! public case. Both the Rust and the Python starter.

use std::path::Path;
use std::process::Command as Proc;

use assert_cmd::Command;
use serde_json::Value;

mod common;
use common::{copy_dir, root};

/// Grades the folder with `isr-grader test` and no arguments, as a student would.
fn grade(dir: &Path) -> (i32, Value) {
    let out = Command::cargo_bin("isr-grader")
        .unwrap()
        .args(["test", "--format", "json"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let doc = common::json_report(&out);
    (out.status.code().unwrap_or(-1), doc)
}

fn verdicts(doc: &Value) -> Vec<String> {
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

fn template_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("student-template"), dir.path());
    dir
}

#[test]
fn rust_starter_builds_and_its_parser_tests_pass() {
    let dir = template_copy();
    let out = Proc::new(env!("CARGO"))
        .args(["test", "--quiet"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rust_starter_untouched_fails_cleanly_then_passes_with_a_solution() {
    let dir = template_copy();
    let (code, doc) = grade(dir.path());
    assert_eq!(code, 1, "{doc:#}");
    let v = verdicts(&doc);
    assert!(!v.is_empty());
    assert!(v.iter().all(|v| v != "pass"), "{v:?}");
    assert_eq!(doc["summary"]["passed"], 0);
    assert!(doc["build"]["ok"].as_bool().unwrap());
    // Nothing printed: no mistake is suggested, the report says there is nothing to diagnose.
    let d = &doc["diagnosis"];
    assert_eq!(d["closest"].as_array().unwrap().len(), 0, "{d:#}");
    assert!(
        d["slips"][0].as_str().unwrap().contains("printed nothing"),
        "{d:#}"
    );

    std::fs::copy(
        root().join("tests/fixtures/solutions/rust/leader.rs"),
        dir.path().join("src/leader.rs"),
    )
    .unwrap();
    let (code, doc) = grade(dir.path());
    assert_eq!(code, 0, "{doc:#}");
    assert!(verdicts(&doc).iter().all(|v| v == "pass"));
}

#[test]
fn a_failed_build_is_one_clear_verdict() {
    let dir = template_copy();
    std::fs::write(dir.path().join("src/leader.rs"), "this is not rust").unwrap();
    let out = Command::cargo_bin("isr-grader")
        .unwrap()
        .arg("test")
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("BUILD FAILED"), "{text}");
    assert!(
        text.contains("error"),
        "the compiler's last lines are shown: {text}"
    );
    assert!(
        !text.contains("FAIL  0"),
        "no per-case failures after a failed build: {text}"
    );
}

fn has_python() -> bool {
    Proc::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn python_starter_tests_pass_and_grading_works() {
    if !has_python() {
        eprintln!("python3 not found: skipping the Python starter");
        return;
    }
    let dir = template_copy();
    let py = dir.path().join("python");
    let out = Proc::new("python3")
        .args(["-m", "unittest", "-q"])
        .current_dir(&py)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (code, doc) = grade(&py);
    assert_eq!(code, 1, "{doc:#}");
    assert!(verdicts(&doc).iter().all(|v| v != "pass"));

    std::fs::copy(
        root().join("tests/fixtures/solutions/python/leader.py"),
        py.join("leader.py"),
    )
    .unwrap();
    let (code, doc) = grade(&py);
    assert_eq!(code, 0, "{doc:#}");
}
