//! The sandbox against hostile students (`tests/fixtures/hostile/attack.py`), each graded by the
//! built grader under `--sandbox require`: every attack ends in a failing verdict (never a
//! pass), the grader reports (exit 1, reports intact), the case files are untouched, and no
//! process and no file outside the run's temporary folder is left behind.
//!
//! Linux only: the sandbox is built from Linux namespaces and Landlock.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt as _;
use serde_json::Value;

/// A world-readable folder with a copy of two public cases, the attacker script and a place
/// for the reports: the program runs as `nobody` when the tests run as root, and it must be
/// able to read its own script (the cases it must not read are what the sandbox hides).
struct Setup {
    dir: tempfile::TempDir,
    /// The sleepers' `sleep` argument: unique to this test, so that tests running at once do
    /// not count each other's processes.
    marker: String,
}

impl Setup {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::Builder::new()
            .prefix("isr-sandbox-test-")
            .tempdir()
            .unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cases = dir.path().join("cases");
        std::fs::create_dir(&cases).unwrap();
        for name in ["001-worked-trace", "002-caught-up-equality-only"] {
            for ext in ["toml", "trace", "out"] {
                std::fs::copy(
                    root.join(format!("cases/public/{name}.{ext}")),
                    cases.join(format!("{name}.{ext}")),
                )
                .unwrap();
            }
        }
        std::fs::create_dir(dir.path().join("results")).unwrap();
        let program = dir.path().join("program");
        std::fs::create_dir(&program).unwrap();
        std::fs::copy(
            root.join("tests/fixtures/hostile/attack.py"),
            program.join("attack.py"),
        )
        .unwrap();
        for d in [dir.path(), &program] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let marker = format!("{}", 700_000 + (std::process::id() % 1000) * 100 + n);
        Setup { dir, marker }
    }

    /// Processes this test's attacker left: its script or its sleepers.
    fn leftovers(&self) -> usize {
        processes_with(&format!("sleep\0{}\0", self.marker))
            + processes_with(self.path("program/attack.py").to_str().unwrap())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn cases(&self) -> PathBuf {
        self.path("cases")
    }

    fn results(&self) -> PathBuf {
        self.path("results/results.json")
    }

    /// The case files' contents, to check that nothing changed them.
    fn case_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(self.cases())
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect();
        files.sort();
        files
    }

    /// Grades `attack.py MODE ARGS` on the two cases; returns the grader's output and its
    /// JSON report.
    fn grade(&self, mode: &str, args: &[&str], extra: &[&str]) -> (Output, Value) {
        let before = self.case_files();
        let mut command = Command::cargo_bin("isr-grader").unwrap();
        command
            .args([
                "test",
                "--sandbox",
                "require",
                "--format",
                "json",
                "--cases",
            ])
            .arg(self.cases())
            .arg("--gradescope")
            .arg(self.results())
            .args(if extra.contains(&"--timeout") {
                &[][..]
            } else {
                &["--timeout", "3"][..]
            })
            .args(extra)
            .args(["--", "/usr/bin/python3"])
            .arg(self.path("program/attack.py"))
            .arg(mode)
            .args(args);
        let out = command.output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{mode}: no JSON report ({e}); stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(
            out.status.code(),
            Some(1),
            "{mode}: the grader must report failing cases; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for case in doc["cases"].as_array().unwrap() {
            assert_ne!(
                case["verdict"], "pass",
                "{mode}: the attack scored: {case:#}"
            );
        }
        assert_eq!(doc["summary"]["points"], 0, "{mode}");
        let sandbox = doc["sandbox"].as_str().unwrap();
        assert!(
            sandbox.contains("pid+net+mount namespaces") && sandbox.contains("landlock"),
            "{mode}: {sandbox}"
        );
        assert_eq!(self.case_files(), before, "{mode}: a case file changed");
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(self.results()).unwrap()).unwrap();
        assert_eq!(results["score"], 0, "{mode}: results.json: {results:#}");
        assert_eq!(self.leftovers(), 0, "{mode}: a process outlived the grader");
        (out, doc)
    }
}

/// Processes whose command line contains `needle`, now.
fn count_processes(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| {
            let c = String::from_utf8_lossy(c);
            c.contains(needle) && !c.contains("isr-grader") && !c.contains("/sandbox-")
        })
        .count()
}

/// Processes whose command line contains `needle`, once they had 3 s to die.
fn processes_with(needle: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let n = count_processes(needle);
        if n == 0 || Instant::now() >= deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_tail(doc: &Value) -> String {
    doc["cases"][0]["stderr_tail"].as_str().unwrap().to_string()
}

#[test]
fn the_case_folders_are_out_of_sight() {
    let s = Setup::new();
    let (_, doc) = s.grade("cmdline", &[], &[]);
    let err = stderr_tail(&doc);
    assert!(err.contains("case folders found: []"), "{err}");
    // Even knowing where they are, the program cannot read them.
    let cases = s.cases();
    let (_, doc) = s.grade("known-paths", &[cases.to_str().unwrap()], &[]);
    assert_eq!(doc["cases"][0]["verdict"], "no-output");
}

#[test]
fn the_graders_memory_and_limits_are_out_of_reach() {
    let s = Setup::new();
    let (_, doc) = s.grade("mem", &[], &[]);
    // It sees no process but its own sandbox's.
    assert!(!stderr_tail(&doc).contains("mem read-write: succeeded"));
    let grader_pid = std::process::id().to_string();
    let (_, doc) = s.grade("prlimit", &[&grader_pid], &[]);
    assert!(
        !stderr_tail(&doc).contains("succeeded"),
        "{}",
        stderr_tail(&doc)
    );
}

#[test]
fn the_report_cannot_be_forged_now_or_later() {
    let s = Setup::new();
    let results = s.results();
    s.grade("forge", &[results.to_str().unwrap()], &[]);
    s.grade("daemon", &[results.to_str().unwrap()], &[]);
    // The daemon would have rewritten it within 3 s.
    std::thread::sleep(Duration::from_millis(3500));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert_eq!(doc["score"], 0, "{doc:#}");
}

#[test]
fn the_grader_and_other_processes_cannot_be_signalled() {
    let s = Setup::new();
    let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
    let victim_pid = victim.id().to_string();
    let grader_pid = std::process::id().to_string();
    let (_, doc) = s.grade("signals", &[&victim_pid, &grader_pid], &[]);
    let err = stderr_tail(&doc);
    assert!(
        !err.contains(&format!("to {victim_pid}: succeeded")),
        "{err}"
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the victim was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn the_case_files_cannot_be_changed() {
    let s = Setup::new();
    let cases = s.cases();
    // `grade` checks every case file byte for byte.
    s.grade("truncate", &[cases.to_str().unwrap()], &[]);
}

#[test]
fn nothing_outlives_a_case_whatever_it_does() {
    let s = Setup::new();
    let start = Instant::now();
    // 30 sleepers that left the group three ways; `grade` checks that none is left.
    s.grade("escape", &[&s.marker], &[]);
    // A fork storm is stopped by the process limit and ends with the case.
    let (_, doc) = s.grade("fork-storm", &[&s.marker], &["--timeout", "1"]);
    assert_eq!(doc["cases"][0]["verdict"], "timeout");
    assert!(
        stderr_tail(&doc).contains("fork storm stopped after"),
        "{}",
        stderr_tail(&doc)
    );
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn no_network() {
    use std::io::Read as _;
    let s = Setup::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let udp = std::net::UdpSocket::bind(("127.0.0.1", port)).unwrap();
    udp.set_nonblocking(true).unwrap();
    let abstract_name = format!("isr-test-{}", std::process::id());
    let unix = {
        use std::os::linux::net::SocketAddrExt as _;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    unix.set_nonblocking(true).unwrap();
    let (_, doc) = s.grade("network", &[&port.to_string(), &abstract_name], &[]);
    let err = stderr_tail(&doc);
    assert!(!err.contains("succeeded"), "{err}");
    let mut received = Vec::new();
    if let Ok((mut stream, _)) = listener.accept() {
        let _ = stream.read_to_end(&mut received);
    }
    let mut buf = [0u8; 2048];
    assert!(udp.recv(&mut buf).is_err(), "a datagram got out");
    assert!(received.is_empty(), "the trace got out over TCP");
    assert!(unix.accept().is_err(), "an abstract socket was reached");
}

#[test]
fn writes_stay_in_the_programs_own_capped_folder() {
    let s = Setup::new();
    let outside = [
        s.path("results/dump"),
        PathBuf::from("/tmp/isr-sandbox-dump"),
    ];
    let args: Vec<&str> = outside.iter().map(|p| p.to_str().unwrap()).collect();
    let (_, doc) = s.grade("fill-tmp", &args, &[]);
    for path in &outside {
        assert!(!path.exists(), "{} was written", path.display());
    }
    // Its own folder holds 64 MiB at most.
    let err = stderr_tail(&doc);
    assert!(
        err.contains("write 100 MiB in its own folder: OSError"),
        "{err}"
    );
}

#[test]
fn if_the_grader_is_killed_nothing_of_its_cases_survives() {
    let s = Setup::new();
    let mut grader = Command::cargo_bin("isr-grader").unwrap();
    let mut child = grader
        .args(["test", "--sandbox", "require", "--timeout", "60", "--cases"])
        .arg(s.cases())
        .args(["--", "/usr/bin/python3"])
        .arg(s.path("program/attack.py"))
        .args(["escape", &s.marker, "wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let sleepers = || count_processes(&format!("sleep\0{}\0", s.marker));
    while sleepers() < 30 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sleepers() >= 30, "the case never started its sleepers");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        s.leftovers(),
        0,
        "a case's process outlived the killed grader"
    );
}

#[test]
fn require_refuses_to_grade_without_every_layer_and_best_effort_says_what_is_missing() {
    let s = Setup::new();
    let grade = |mode: &str, deny: &str| {
        Command::cargo_bin("isr-grader")
            .unwrap()
            .env("ISR_GRADER_SANDBOX_DENY", deny)
            .args(["test", "--format", "json", "--sandbox", mode, "--cases"])
            .arg(s.cases())
            .args(["--", "/usr/bin/python3"])
            .arg(s.path("program/attack.py"))
            .arg("escape")
            .arg(&s.marker)
            .output()
            .unwrap()
    };
    let out = grade("require", "landlock");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--sandbox require") && err.contains("landlock"),
        "{err}"
    );
    // Nothing ran: stdout holds only the JSON error document.
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["error"]
            .as_str()
            .is_some_and(|e| e.contains("--sandbox require"))
            && doc.get("cases").is_none(),
        "nothing may run: {doc:#}"
    );

    // Without namespaces, the sweep still leaves no escaped process behind.
    let out = grade("best-effort", "namespaces");
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = doc["sandbox"].as_str().unwrap();
    assert!(
        status.contains("missing: ") && status.contains("namespaces"),
        "{status}"
    );
    assert!(status.contains("landlock"), "{status}");
    assert_eq!(s.leftovers(), 0, "an escaped sleeper survived the sweep");

    let out = grade("off", "");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["sandbox"].as_str().unwrap().starts_with("none"),
        "{doc:#}"
    );
    assert_eq!(
        s.leftovers(),
        0,
        "--sandbox off still sweeps up what left the group"
    );
}
