//! Grading integrity (issue 8), end to end with the built grader: a submission cannot decide
//! how it is graded, the instructor's own mistakes are exit 2 with file and line, an interrupt
//! still writes every report, hostile output cannot blow up the grader's memory or its
//! reports, and nothing a program prints reaches a terminal raw.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{fixture, grader, grader_path, root, sleepers_of};

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Copies public case `name` into `dir`, with its metadata's points set to `points`.
fn copy_case(name: &str, dir: &Path, points: u32) {
    std::fs::create_dir_all(dir).unwrap();
    let src = root().join("cases/public");
    for ext in ["trace", "out"] {
        std::fs::copy(
            src.join(format!("{name}.{ext}")),
            dir.join(format!("{name}.{ext}")),
        )
        .unwrap();
    }
    let meta = std::fs::read_to_string(src.join(format!("{name}.toml"))).unwrap();
    let meta = meta.replace("points = 1\n", &format!("points = {points}\n"));
    std::fs::write(dir.join(format!("{name}.toml")), meta).unwrap();
}

/// A submission folder whose grader.toml runs the reference (a correct program) and brings its
/// own case worth 1000 points, its own jobs and limits.
fn greedy_submission() -> tempfile::TempDir {
    let sub = tempfile::tempdir().unwrap();
    copy_case("001-worked-trace", &sub.path().join("mycases"), 1000);
    std::fs::write(
        sub.path().join("grader.toml"),
        format!(
            "run = [{:?}, \"leader\"]\ncases = [\"mycases\"]\njobs = 1\n[limits]\ntimeout_secs = 100.0\n",
            grader_path()
        ),
    )
    .unwrap();
    sub
}

#[test]
fn a_submission_cannot_choose_its_cases_or_points() {
    let sub = greedy_submission();
    // A student grading themselves: their grader.toml is obeyed, as before.
    let out = grader()
        .args(["test", "--format", "json"])
        .current_dir(sub.path())
        .output()
        .unwrap();
    let doc = common::json_report(&out);
    assert_eq!(doc["summary"]["max_points"], 1000, "{doc}");

    // An instructor: cases come from the instructor's file; the submission's are ignored, with
    // a note; its `run` is used because the instructor allows it.
    let inst = tempfile::tempdir().unwrap();
    let icfg = inst.path().join("instructor.toml");
    std::fs::write(
        &icfg,
        format!(
            "cases = [{:?}]\nallow_submission_run = true\n",
            root().join("cases/public").display().to_string()
        ),
    )
    .unwrap();
    let out = grader()
        .args([
            "test",
            "--format",
            "json",
            "--filter",
            "00*",
            "--instructor-config",
        ])
        .arg(&icfg)
        .arg("--submission")
        .arg(sub.path())
        .output()
        .unwrap();
    let doc = common::json_report(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 1, "{doc}");
    assert_eq!(doc["summary"]["max_points"], cases.len(), "{doc}");
    assert!(
        !doc["case_sources"].to_string().contains("mycases"),
        "{doc}"
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("`cases`, `jobs`, `limits`: ignored"),
        "{notes}"
    );

    // The human report says so too.
    let out = grader()
        .args([
            "test",
            "--filter",
            "001-worked-trace",
            "--instructor-config",
        ])
        .arg(&icfg)
        .arg("--submission")
        .arg(sub.path())
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains("note: ") && human.contains("`cases`, `jobs`, `limits`: ignored"),
        "{human}"
    );

    // Without the instructor's permission the submission's `run` is not used either.
    std::fs::write(
        &icfg,
        format!(
            "cases = [{:?}]\n",
            root().join("cases/public").display().to_string()
        ),
    )
    .unwrap();
    let out = grader()
        .args(["test", "--instructor-config"])
        .arg(&icfg)
        .arg("--submission")
        .arg(sub.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("allow_submission_run = true"),
        "{}",
        stderr_of(&out)
    );
}

/// Runs `test` with `args` and the reference as the program; expects exit 2 and returns stderr.
fn refused(args: &[&str], cwd: &Path) -> String {
    let out = grader()
        .arg("test")
        .args(args)
        .args(["--", &grader_path(), "leader"])
        .current_dir(cwd)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn instructor_mistakes_are_exit_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = |p: &Path| p.display().to_string();

    // No case selected: an empty folder, a wrong path, a folder of `.out` files only.
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = refused(&["--cases", &s(&empty)], d);
    assert!(err.contains(&s(&empty)) && err.contains("no case"), "{err}");
    let err = refused(&["--cases", &s(&d.join("nope"))], d);
    assert!(err.contains("nope: no such case folder"), "{err}");
    let outs = d.join("outs");
    std::fs::create_dir(&outs).unwrap();
    std::fs::write(outs.join("a.out"), "x\n").unwrap();
    let err = refused(&["--cases", &s(&outs)], d);
    assert!(
        err.contains("no case in this folder (1 other file)"),
        "{err}"
    );

    // Symbolic links: a linked case file, a linked folder.
    let linked = d.join("linked");
    copy_case("001-worked-trace", &linked, 1);
    std::os::unix::fs::symlink(
        linked.join("001-worked-trace.trace"),
        linked.join("002.trace"),
    )
    .unwrap();
    let err = refused(&["--cases", &s(&linked)], d);
    assert!(
        err.contains("002.trace") && err.contains("symbolic link"),
        "{err}"
    );
    let with_dir = d.join("with-dir");
    copy_case("001-worked-trace", &with_dir, 1);
    std::os::unix::fs::symlink(&empty, with_dir.join("more")).unwrap();
    let err = refused(&["--cases", &s(&with_dir)], d);
    assert!(err.contains("more: a symbolic link"), "{err}");

    // A stale expected output: a correct program would be marked wrong.
    let stale = d.join("stale");
    copy_case("001-worked-trace", &stale, 1);
    let out_path = stale.join("001-worked-trace.out");
    let text = std::fs::read_to_string(&out_path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let edited = lines[1].replace("ISR", "ISX");
    lines[1] = &edited;
    std::fs::write(&out_path, lines.join("\n") + "\n").unwrap();
    let err = refused(&["--cases", &s(&stale)], d);
    assert!(
        err.contains("001-worked-trace.out:2: stale expected output"),
        "{err}"
    );

    // An expected output larger than the output limit.
    let err = refused(
        &[
            "--cases",
            &s(&root().join("cases/hidden")),
            "--filter",
            "122-mixed-long",
            "--output-limit",
            "16",
        ],
        d,
    );
    assert!(
        err.contains("122-mixed-long.out") && err.contains("more than the output limit of 16 KiB"),
        "{err}"
    );

    // Points whose total overflows.
    let greedy = d.join("greedy");
    copy_case("001-worked-trace", &greedy, 4_000_000_000);
    copy_case("002-caught-up-equality-only", &greedy, 4_000_000_000);
    let err = refused(&["--cases", &s(&greedy)], d);
    assert!(
        err.contains("002-caught-up-equality-only.toml:") && err.contains("points"),
        "{err}"
    );

    // Limits that are zero, negative, NaN, infinite or absurd, as flags and in a config file.
    for (flag, value) in [
        ("--timeout", "0"),
        ("--timeout", "-1"),
        ("--timeout", "NaN"),
        ("--timeout", "inf"),
        ("--timeout", "1e300"),
        ("--memory", "0"),
        ("--memory", "-5"),
        ("--output-limit", "0"),
        ("--jobs", "0"),
    ] {
        let err = refused(&[&format!("{flag}={value}")], d);
        assert!(err.contains(flag), "{flag} {value}: {err}");
    }
    let icfg = d.join("instructor.toml");
    std::fs::write(&icfg, "run = [\"x\"]\n[limits]\nmemory_mb = 0\n").unwrap();
    let err = refused(&["--instructor-config", &s(&icfg)], d);
    assert!(
        err.contains("instructor.toml:3:") && err.contains("memory must be between"),
        "{err}"
    );

    // A program that is neither ELF nor `#!`.
    let script = d.join("leader.sh");
    std::fs::write(&script, "echo hello\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = grader()
        .args(["test", "--filter", "001", "--"])
        .arg(&script)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&s(&script)) && err.contains("neither an ELF executable nor a script"),
        "{err}"
    );
}

/// Every byte of `text` that a terminal would act on, other than line breaks and tabs.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        .collect()
}

#[test]
fn escape_sequences_never_reach_a_report_raw() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let gs = dir.path().join("results.json");
    let out = grader()
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .args(["test", "--filter", "001-worked-trace", "--junit"])
        .arg(&junit)
        .arg("--gradescope")
        .arg(&gs)
        .args(["--", &fixture("hostile/escapes.sh")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let human = String::from_utf8_lossy(&out.stdout);
    // Our own colours are there (forced), the program's sequences only escaped.
    for raw in ["\x1b[2J", "\x1b]52", "\x07", "\x1b[H", "\u{202e}"] {
        assert!(!human.contains(raw), "{raw:?} reached the report: {human}");
    }
    assert!(human.contains("\\x1b[2J"), "{human}");
    assert!(human.contains("\\x1b]52;c;"), "{human}");
    assert!(human.contains("stderr: \\x1b[31m"), "{human}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(raw_controls(&xml).is_empty(), "{xml}");
    assert!(xml.contains("\\x1b[2J"), "{xml}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    for t in doc["tests"].as_array().unwrap() {
        let text = t["output"].as_str().unwrap();
        assert!(raw_controls(text).is_empty(), "{text:?}");
    }
    // The whole human report, for review (a pinned exploration seed, no time budget).
    let out = grader()
        .args(["test", "--filter", "001-worked-trace", "--seed", "1"])
        .args(["--explore-seconds", "600", "--shrink-seconds", "600", "--"])
        .arg(fixture("hostile/escapes.sh"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout)
        .replace(&root().display().to_string(), "[root]")
        .lines()
        .map(|l| {
            if l.starts_with("sandbox: ") {
                "sandbox: [redacted]"
            } else if l.starts_with("graded by isr-grader ") {
                "graded by isr-grader [version redacted]"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("human_escapes", text);
}

#[test]
fn a_flood_of_short_lines_keeps_reports_and_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let gs = dir.path().join("results.json");
    let out = grader()
        .args([
            "test",
            "--filter",
            "001-worked-trace",
            "--format",
            "json",
            "--junit",
        ])
        .arg(&junit)
        .arg("--gradescope")
        .arg(&gs)
        .args(["--", &fixture("hostile/flood_short_lines.sh")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(out.stdout.len() < 64 << 10, "{} bytes", out.stdout.len());
    let doc = common::json_report(&out);
    let case = &doc["cases"][0];
    assert_eq!(case["verdict"], "wrong");
    assert_eq!(case["stray_lines"].as_array().unwrap().len(), 20);
    assert_eq!(case["stray_lines_total"], 4_000_000);
    for path in [&junit, &gs] {
        let len = std::fs::metadata(path).unwrap().len();
        assert!(len < 64 << 10, "{}: {len} bytes", path.display());
    }
    // The human report too.
    let out = grader()
        .args(["test", "--filter", "001-worked-trace", "--"])
        .arg(fixture("hostile/flood_short_lines.sh"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.len() < 64 << 10, "{} bytes", out.stdout.len());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("... and 3999995 more"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The grader's peak memory: the largest of this test process's finished children (the
    // graders of every test here; a flood once took 6 GiB).
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 256, "a grader peaked at {peak_mib} MiB");
}

/// Sleepers of `tests/fixtures/students/sleeps_long.sh`.
fn sleepers() -> usize {
    sleepers_of("876543")
}

#[test]
fn sigterm_still_writes_every_report_with_cases_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let gs = dir.path().join("results.json");
    let json = std::fs::File::create(dir.path().join("report.json")).unwrap();
    let mut child = std::process::Command::new(grader_path())
        .args(["test", "--jobs", "1", "--timeout", "60", "--format", "json"])
        .arg("--junit")
        .arg(&junit)
        .arg("--gradescope")
        .arg(&gs)
        .arg("--")
        .arg(fixture("students/sleeps_long.sh"))
        .stdout(json)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = common::signal_once_running(&mut child, "876543", rustix::process::Signal::TERM);
    assert_eq!(status.code(), Some(130));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(doc["interrupted"], true);
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 1);
    assert!(cases.iter().all(|c| c["verdict"] == "not-run"), "{doc}");
    assert_eq!(doc["summary"]["not_run"], cases.len());
    assert!(doc["diagnosis"].is_null());
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<skipped").count(), cases.len(), "{xml}");
    let gsdoc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    assert_eq!(gsdoc["tests"].as_array().unwrap().len(), cases.len());
    assert!(gsdoc["output"].as_str().unwrap().contains("interrupted"));
    let start = Instant::now();
    while sleepers() > 0 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleepers(), 0, "a case's process outlived the grader");
}

#[test]
fn the_submissions_build_runs_only_if_the_instructor_allows_it() {
    // A submission whose build step creates its program (a script that runs the reference).
    let sub = tempfile::tempdir().unwrap();
    std::fs::write(
        sub.path().join("leader.src"),
        format!("#!/bin/sh\nexec {:?} leader\n", grader_path()),
    )
    .unwrap();
    std::fs::write(
        sub.path().join("grader.toml"),
        "build = \"cp leader.src leader && chmod +x leader\"\nrun = [\"./leader\"]\n",
    )
    .unwrap();
    let inst = tempfile::tempdir().unwrap();
    let icfg = inst.path().join("instructor.toml");
    // The script runs the grader's own binary: the sandbox must let it read that folder.
    let bin_dir = Path::new(&grader_path())
        .parent()
        .unwrap()
        .display()
        .to_string();
    let grade = |config: &str| {
        std::fs::write(&icfg, format!("allow_read = [{bin_dir:?}]\n{config}")).unwrap();
        // Run from elsewhere: paths are the submission's, not the grader's folder.
        grader()
            .args(["test", "--filter", "001-worked-trace", "--format", "json"])
            .arg("--instructor-config")
            .arg(&icfg)
            .arg("--submission")
            .arg(sub.path())
            .current_dir(inst.path())
            .output()
            .unwrap()
    };
    // Not allowed: no build, so the program does not exist (exit 2), and a note says why.
    let out = grade("allow_submission_run = true\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(!sub.path().join("leader").exists());
    // Allowed: built in the submission folder and graded.
    let out = grade("allow_submission_run = true\nallow_submission_build = true\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let doc = common::json_report(&out);
    assert_eq!(doc["build"]["ok"], true, "{doc}");
    assert_eq!(doc["cases"][0]["verdict"], "pass", "{doc}");
    // The instructor's own `run` and `build` win over the submission's, with notes.
    std::fs::remove_file(sub.path().join("leader")).unwrap();
    let out = grade(
        "run = [\"./mine\"]\nbuild = \"cp leader.src mine && chmod +x mine\"\nallow_submission_run = true\nallow_submission_build = true\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let doc = common::json_report(&out);
    assert_eq!(doc["program"], "./mine");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("`run`: not used") && notes.contains("`build`: not used"),
        "{notes}"
    );
    assert!(!sub.path().join("leader").exists());
}

#[test]
fn an_interrupt_during_the_build_still_writes_the_report() {
    let sub = tempfile::tempdir().unwrap();
    std::fs::write(
        sub.path().join("grader.toml"),
        "build = \"sleep 876542\"\nrun = [\"./never-built\"]\n",
    )
    .unwrap();
    let json = std::fs::File::create(sub.path().join("report.json")).unwrap();
    let mut child = std::process::Command::new(grader_path())
        .args(["test", "--format", "json", "--filter", "00*"])
        .current_dir(sub.path())
        .stdout(json)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The build's `sleep 876542` is running.
    let status = common::signal_once_running(&mut child, "876542", rustix::process::Signal::INT);
    assert_eq!(status.code(), Some(130));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(sub.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["build"]["ok"], false, "{doc}");
    let cases = doc["cases"].as_array().unwrap();
    assert!(
        !cases.is_empty() && cases.iter().all(|c| c["verdict"] == "not-run"),
        "{doc}"
    );
}

#[test]
fn the_instructor_chooses_the_uid() {
    // Where the machine runs programs under another uid (the grader is root, namespaces
    // allowed), it is the one the flag or the instructor's file names.
    let dir = tempfile::tempdir().unwrap();
    let icfg = dir.path().join("instructor.toml");
    std::fs::write(
        &icfg,
        "run = [\"/usr/bin/true\"]\nsandbox_uid = \"4321:4321\"\n",
    )
    .unwrap();
    for (args, uid) in [
        (
            vec!["--sandbox-uid", "1234:1234", "--", "/usr/bin/true"],
            "uid 1234",
        ),
        (
            vec!["--instructor-config", icfg.to_str().unwrap()],
            "uid 4321",
        ),
    ] {
        let out = grader()
            .args(["test", "--filter", "001-worked-trace", "--format", "json"])
            .args(&args)
            .output()
            .unwrap();
        let doc = common::json_report(&out);
        let status = doc["sandbox"].as_str().unwrap();
        assert!(!status.contains("uid ") || status.contains(uid), "{status}");
    }
}

/// A class of submissions needs no `run` anywhere: a submission with a `main.py` is recognized
/// as Python (the report says so), and grading it twice gives the same verdicts, the same
/// exploration seed and the same recorded limits (a regrade repeats the grade).
#[test]
fn a_python_submission_is_recognized_and_regrades_repeat() {
    let sub = tempfile::tempdir().unwrap();
    for file in ["main.py", "output.py", "trace.py"] {
        std::fs::copy(
            root().join("student-template/python").join(file),
            sub.path().join(file),
        )
        .unwrap();
    }
    std::fs::copy(
        root().join("tests/fixtures/solutions/python/leader.py"),
        sub.path().join("leader.py"),
    )
    .unwrap();
    let inst = tempfile::tempdir().unwrap();
    let icfg = inst.path().join("instructor.toml");
    std::fs::write(
        &icfg,
        "[limits]\ntimeout_secs = 20.0\n[explore]\ntraces = 2\nshrink_seconds = 0\n",
    )
    .unwrap();
    let grade = || {
        let out = grader()
            .args([
                "test",
                "--format",
                "json",
                "--filter",
                "00*",
                "--instructor-config",
            ])
            .arg(&icfg)
            .arg("--submission")
            .arg(sub.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        common::json_report(&out)
    };
    let first = grade();
    let notes = first["notes"].to_string();
    assert!(
        notes.contains("a Python submission (it has main.py): run `python3 main.py`"),
        "{notes}"
    );
    assert_eq!(first["limits"]["timeout_secs"], 20.0, "{first}");
    assert!(
        first["cases_hash"].as_str().is_some_and(|h| h.len() == 16),
        "{first}"
    );
    assert!(first["seed"].as_u64().is_some(), "{first}");
    let second = grade();
    let verdicts = |doc: &serde_json::Value| -> Vec<String> {
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{} {}", c["name"], c["verdict"]))
            .collect()
    };
    assert_eq!(verdicts(&first), verdicts(&second));
    assert_eq!(first["seed"], second["seed"]);
    assert_eq!(first["limits"], second["limits"]);

    // An instructor who lists only Rust gets no program, and says why.
    std::fs::write(&icfg, "languages = [\"rust\"]\n").unwrap();
    let out = grader()
        .args(["test", "--instructor-config"])
        .arg(&icfg)
        .arg("--submission")
        .arg(sub.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("neither a Cargo package nor a main.py"),
        "{}",
        stderr_of(&out)
    );
}
