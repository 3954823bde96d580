//! Helpers shared by the integration tests.
//!
//! Each test binary uses a different subset of them.
#![allow(dead_code)]

pub mod browser;

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// The built grader, without colours whatever the environment says.
pub fn grader() -> Command {
    let mut c = Command::cargo_bin("isr-grader").unwrap();
    c.env("NO_COLOR", "1").env_remove("CLICOLOR_FORCE");
    c
}

/// The built grader's path (to run it as a student program: its hidden `leader`).
pub fn grader_path() -> String {
    assert_cmd::cargo::cargo_bin("isr-grader")
        .display()
        .to_string()
}

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every committed case folder, as `--cases DIR` arguments: the public and the hidden set.
pub fn corpus_args() -> Vec<String> {
    ["cases/public", "cases/hidden"]
        .iter()
        .map(|d| root().join(d))
        .filter(|p| p.is_dir())
        .flat_map(|p| ["--cases".to_string(), p.display().to_string()])
        .collect()
}

/// A file under `tests/fixtures`, as an absolute path.
pub fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Processes running `sleep SECS` (each test uses its own SECS, as the tests run in parallel).
pub fn sleepers_of(secs: &str) -> usize {
    let cmdline = format!("sleep\x00{secs}\x00");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| c.starts_with(cmdline.as_bytes()))
        .count()
}

/// Waits (up to 20 s) until the grader `child` runs a case's `sleep SECS`, then sends it
/// `signal` and returns how it ended.
pub fn signal_once_running(
    child: &mut std::process::Child,
    secs: &str,
    signal: rustix::process::Signal,
) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    while sleepers_of(secs) == 0 && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(sleepers_of(secs) > 0, "no `sleep {secs}` ever started");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        signal,
    )
    .unwrap();
    child.wait().unwrap()
}

/// The JSON report a run printed on stdout; fails the test with both streams when it is not
/// JSON.
pub fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The hidden `leader` subcommand with `faults` switched on, as a student's program.
pub fn leader(faults: &str) -> Vec<String> {
    vec![
        grader_path(),
        "leader".into(),
        "--fault".into(),
        faults.into(),
    ]
}

/// `text` with every regex metacharacter escaped (for insta filters on paths).
pub fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// Copies the folder `from` into `to` (created), leaving out build output (`target`,
/// `__pycache__`).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in walkdir::WalkDir::new(from).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        if rel
            .components()
            .any(|c| c.as_os_str() == "target" || c.as_os_str() == "__pycache__")
        {
            continue;
        }
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}
