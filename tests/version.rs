//! Which grader graded: `--version` carries the git revision and the corpus hash recorded by
//! `build.rs`, and every report format carries the grader version with a hash of the cases
//! actually graded.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use isr_grader::fnv::Fnv64;
use serde_json::Value;

mod common;
use common::{grader, root};

fn leader() -> Vec<String> {
    vec![
        assert_cmd::cargo::cargo_bin("isr-grader")
            .display()
            .to_string(),
        "leader".into(),
    ]
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `(version, rev, hash)` from `isr-grader VERSION (rev REV, LABEL HASH)`.
fn parse<'a>(line: &'a str, label: &str) -> (&'a str, &'a str, &'a str) {
    let rest = line
        .strip_prefix("isr-grader ")
        .unwrap_or_else(|| panic!("{line:?}"));
    let (version, rest) = rest
        .split_once(" (rev ")
        .unwrap_or_else(|| panic!("{line:?}"));
    let (rev, rest) = rest
        .split_once(&format!(", {label} "))
        .unwrap_or_else(|| panic!("{line:?}"));
    let hash = rest.strip_suffix(')').unwrap_or_else(|| panic!("{line:?}"));
    (version, rev, hash)
}

/// The corpus hash as `build.rs` defines it, computed again here.
fn corpus_hash() -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in ["cases/public", "cases/hidden"] {
        if root().join(d).is_dir() {
            walk(&root().join(d), &mut files);
        }
    }
    files.sort();
    let mut h = Fnv64::default();
    for f in &files {
        let rel = f.strip_prefix(root()).unwrap();
        h.field(rel.to_string_lossy().as_bytes());
        h.field(&std::fs::read(f).unwrap());
    }
    h.hex()
}

#[test]
fn version_carries_the_git_revision_and_the_corpus_hash() {
    let out = grader().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.trim_end();
    let (version, rev, hash) = parse(line, "corpus");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert_eq!(hash, corpus_hash(), "{line}");
    // Built from a git checkout (as the tests are), the revision is HEAD's.
    let head = StdCommand::new("git")
        .arg("-C")
        .arg(root())
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(head) if std::env::var_os("ISR_GRADER_GIT_REV").is_none() => {
            assert!(is_hex(rev, 12), "{line}");
            assert!(head.starts_with(rev), "{line} is not HEAD {head}");
        }
        _ => assert!(rev == "unknown" || is_hex(rev, 12), "{line}"),
    }
}

#[test]
fn every_report_format_carries_the_grader_version_and_the_graded_cases() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let gs = dir.path().join("results.json");
    let run = |filter: &str, format: &str| {
        grader()
            .args(["test", "--filter", filter, "--format", format, "--junit"])
            .arg(&junit)
            .arg("--gradescope")
            .arg(&gs)
            .arg("--")
            .args(leader())
            .output()
            .unwrap()
    };

    let out = run("001-worked-trace", "json");
    assert_eq!(out.status.code(), Some(0));
    let doc = common::json_report(&out);
    let v = doc["grader_version"].as_str().unwrap().to_string();
    let (version, rev, hash) = parse(&v, "cases");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let built = String::from_utf8(grader().arg("--version").output().unwrap().stdout).unwrap();
    assert_eq!(rev, parse(built.trim_end(), "corpus").1);
    assert!(is_hex(hash, 16), "{v}");

    let gs_doc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    assert_eq!(gs_doc["extra_data"]["grader_version"], v.as_str());
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(&format!(
            "<property name=\"grader_version\" value=\"{v}\"/>"
        )),
        "{xml}"
    );
    let human = run("001-worked-trace", "human");
    let human = String::from_utf8(human.stdout).unwrap();
    assert!(
        human.lines().any(|l| l == format!("graded by {v}")),
        "{human}"
    );

    // The hash is of the cases graded: other cases, another hash.
    let other = common::json_report(&run("002", "json"));
    let w = other["grader_version"].as_str().unwrap();
    assert_ne!(parse(w, "cases").2, hash, "{v} / {w}");
    assert_eq!(parse(w, "cases").1, rev);
}

#[test]
fn a_gradescope_error_report_carries_the_grader_version() {
    let dir = tempfile::tempdir().unwrap();
    let gs = dir.path().join("results.json");
    let out = grader()
        .args(["test", "--gradescope"])
        .arg(&gs)
        .args(["--", "./no-such-program"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    let v = doc["extra_data"]["grader_version"].as_str().unwrap();
    let built = String::from_utf8(grader().arg("--version").output().unwrap().stdout).unwrap();
    assert_eq!(v, built.trim_end());
}
