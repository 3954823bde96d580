//! The grader's main job, end to end: the built binary grades fixture students — the reference
//! itself, the reference with known mistakes (each must be named exactly), programs with bugs
//! outside the catalog, and hostile programs.

use std::process::Output;

use assert_cmd::Command;
use isr_reference::{CATALOG, Fault, FaultSet};
use serde_json::Value;

mod common;
use common::{corpus_args, fixture, grader, grader_path, regex_escape, root};

fn json_run(extra: &[&str], program: &[String]) -> (Output, Value) {
    let out = grader()
        .arg("test")
        .args(corpus_args())
        .args(["--format", "json"])
        .args(extra)
        .arg("--")
        .args(program)
        .output()
        .unwrap();
    let doc = common::json_report(&out);
    (out, doc)
}

fn leader(faults: &str) -> Vec<String> {
    let mut v = vec![grader_path(), "leader".to_string()];
    if !faults.is_empty() {
        v.push("--fault".into());
        v.push(faults.into());
    }
    v
}

fn diagnosed(doc: &Value) -> (bool, Vec<String>) {
    let d = &doc["diagnosis"];
    let ids = d["mistakes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    (d["exact"].as_bool().unwrap(), ids)
}

#[test]
fn the_reference_passes_everything() {
    let (out, doc) = json_run(&[], &leader(""));
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    let s = &doc["summary"];
    assert_eq!(s["passed"], s["cases"]);
    assert_eq!(s["failed"], 0);
    assert_eq!(s["points"], s["max_points"]);
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(diagnosed(&doc), (true, vec![]));
}

/// Mistake sets that are the same program on every trace (the audit's recorded equivalences):
/// the diagnosis names the first of their class.
fn same_on_every_trace(a: &[String], b: &[String]) -> bool {
    let set = |v: &[String]| FaultSet::parse(&v.join(",")).unwrap();
    isr_reference::audit::canonical(set(a)) == isr_reference::audit::canonical(set(b))
}

#[test]
fn every_single_mistake_is_named_exactly() {
    let mut report = Vec::new();
    for info in CATALOG {
        let (out, doc) = json_run(&[], &leader(info.id));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: the corpus does not catch it",
            info.id
        );
        let (exact, ids) = diagnosed(&doc);
        let want = vec![info.id.to_string()];
        assert!(
            exact && (ids == want || same_on_every_trace(&ids, &want)),
            "{}: diagnosed as exact={exact} {ids:?}\n{:#}",
            info.id,
            doc["diagnosis"]
        );
        report.push(format!("{} -> {}", info.id, ids.join("+")));
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn pairs_of_mistakes_are_named_as_pairs() {
    let pairs = [
        (Fault::CaughtUpEqualityOnly, Fault::HwCanDecrease),
        (Fault::ShrinkInclusive, Fault::AckFirstRecord),
        (Fault::RejoinEarly, Fault::IsrOrderSorted),
        (Fault::MinIsrOffByOne, Fault::WritesOffByOne),
    ];
    for (a, b) in pairs {
        let set = FaultSet::one(a).with(b);
        let (_, doc) = json_run(&[], &leader(&set.ids().join(",")));
        let (exact, ids) = diagnosed(&doc);
        let want: Vec<String> = set.ids().iter().map(|s| s.to_string()).collect();
        assert!(
            exact && (ids == want || same_on_every_trace(&ids, &want)),
            "{set}: diagnosed as exact={exact} {ids:?}"
        );
    }
}

#[test]
fn a_bug_outside_the_catalog_is_not_given_a_catalog_name() {
    let program = vec![
        "sh".to_string(),
        fixture("students/unknown_bug.sh"),
        grader_path(),
    ];
    let (out, doc) = json_run(&[], &program);
    assert_eq!(out.status.code(), Some(1));
    let (exact, ids) = diagnosed(&doc);
    assert!(!exact && ids.is_empty(), "{:#}", doc["diagnosis"]);
}

fn case_verdicts(doc: &Value) -> Vec<String> {
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

fn only_worked_trace() -> [&'static str; 2] {
    ["--filter", "001-worked-trace"]
}

fn hostile(script: &str, extra: &[&str]) -> (Output, Value) {
    let program = vec!["sh".to_string(), fixture(&format!("hostile/{script}"))];
    let mut args: Vec<&str> = only_worked_trace().to_vec();
    args.extend_from_slice(extra);
    json_run(&args, &program)
}

#[test]
fn hostile_programs_get_a_verdict_each() {
    let started = std::time::Instant::now();
    let (out, doc) = hostile("sleep_forever.sh", &["--timeout", "0.5"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(case_verdicts(&doc), ["timeout"]);
    assert_eq!(
        doc["cases"][0]["time_limit_secs"], 0.5,
        "the limit it ran past"
    );

    let (_, doc) = hostile("flood_stdout.sh", &["--output-limit", "64"]);
    assert_eq!(case_verdicts(&doc), ["output-limit"]);

    let (_, doc) = hostile("exit_without_reading.sh", &[]);
    assert_eq!(case_verdicts(&doc), ["no-output"]);

    let (_, doc) = hostile("segfault.sh", &[]);
    assert_eq!(case_verdicts(&doc), ["crash"]);
    assert_eq!(doc["cases"][0]["signal"], "SIGSEGV");

    // Forks a sleeper: the run ends at once and the sleeper does not survive.
    let (_, doc) = hostile("background_holds_stdout.sh", &[]);
    assert_eq!(case_verdicts(&doc), ["wrong"]);
    assert!(
        started.elapsed().as_secs() < 30,
        "hostile programs slowed the grader down"
    );
}

fn student(script: &str) -> Vec<String> {
    vec![
        "sh".to_string(),
        fixture(&format!("students/{script}")),
        grader_path(),
    ]
}

#[test]
fn formatting_slips_are_named() {
    // CRLF, trailing whitespace and blank lines are not differences.
    let (out, doc) = json_run(&[], &student("crlf.sh"));
    assert_eq!(out.status.code(), Some(0), "{doc:#}");

    // Debug lines on stdout fail the cases and are named as such.
    let (out, doc) = json_run(&only_worked_trace(), &student("debug_prints.sh"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(case_verdicts(&doc), ["wrong"]);
    let stray = &doc["cases"][0]["stray_lines"];
    assert_eq!(stray[0]["text"], "debug: starting");
    let slips = doc["diagnosis"]["slips"].as_array().unwrap();
    assert!(
        slips[0]
            .as_str()
            .unwrap()
            .contains("print debugging to stderr")
    );
    assert_eq!(diagnosed(&doc), (true, vec![]));

    // A non-zero exit code with the right output.
    let (out, doc) = json_run(&only_worked_trace(), &student("exit_code.sh"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(case_verdicts(&doc), ["exit-code"]);
    assert_eq!(doc["cases"][0]["exit_code"], 3);
}

#[test]
fn no_process_outlives_the_grader() {
    let (out, _) = json_run(&only_worked_trace(), &student("forks_sleeper.sh"));
    assert_eq!(out.status.code(), Some(0));
    // The fixture's `sleep 987654` (a duration no other test uses) would be re-parented; none
    // may be left.
    let left = common::sleepers_of("987654");
    assert_eq!(left, 0, "a `sleep 987654` outlived the grader");
}

#[test]
fn the_report_is_deterministic_and_in_corpus_order() {
    let program = leader("hw-not-on-shrink");
    // The same seed, and time budgets no loaded machine reaches: the same exploration.
    let same = [
        "--seed",
        "3",
        "--explore-seconds",
        "600",
        "--shrink-seconds",
        "600",
    ];
    let (_, mut a) = json_run(&[&["--jobs", "2"], &same[..]].concat(), &program);
    let (_, mut b) = json_run(&[&["--jobs", "1"], &same[..]].concat(), &program);
    // Each case's time is the one thing that differs between runs: checked, then left out.
    for doc in [&mut a, &mut b] {
        for case in doc["cases"].as_array_mut().unwrap() {
            let time = case["time_secs"].take();
            assert!(time.as_f64().is_some_and(|t| t >= 0.0), "{time}");
        }
    }
    assert_eq!(a, b);
    let names: Vec<&str> = a["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"001-worked-trace"));
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Paths and the sandbox line (it depends on the machine) replaced by stable words.
fn redact(text: &str) -> String {
    text.replace(&grader_path(), "[isr-grader]")
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
        .join("\n")
        + "\n"
}

#[test]
fn human_report_snapshot() {
    let out = grader()
        .args(["test", "--filter", "001-worked-trace", "--seed", "1"])
        .args(["--explore-seconds", "600", "--shrink-seconds", "600", "--"])
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("human_wrong_worked_trace", redact(&stdout_of(&out)));
    let out = grader()
        .arg("test")
        .args(corpus_args())
        .args([
            "--seed",
            "1",
            "--explore-seconds",
            "600",
            "--shrink-seconds",
            "600",
        ])
        .arg("--")
        .args(leader("caught-up-equality-only"))
        .output()
        .unwrap();
    insta::assert_snapshot!("human_full_corpus_one_mistake", redact(&stdout_of(&out)));
}

#[test]
fn grader_errors_exit_2_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    // No program and no grader.toml.
    let out = grader()
        .arg("test")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no program to grade"));
    // A program that does not exist: said once.
    let out = grader()
        .args(["test", "--", "./no-such-program"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("no-such-program").count(), 1, "{err}");
    // A bad grader.toml names its line.
    std::fs::write(
        dir.path().join("grader.toml"),
        "run = [\"x\"]\ntimeout = 3\n",
    )
    .unwrap();
    let out = grader()
        .arg("test")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("grader.toml:2:") && err.contains("timeout"),
        "{err}"
    );
    // A bad case file names file and line.
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(
        cases.join("a.trace"),
        "REPLICAS 1 2\nLAG_MAX 1\nMIN_ISR 1\n0 FETCH 2 9\n",
    )
    .unwrap();
    std::fs::write(
        cases.join("a.toml"),
        "title = \"t\"\ndescription = \"d\"\nvisibility = \"hidden\"\norigin = { kind = \"handwritten\" }\n",
    )
    .unwrap();
    let out = grader()
        .args(["test", "--cases"])
        .arg(&cases)
        .arg("--")
        .args(leader(""))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a.trace:4:") && err.contains("beyond the leader's LEO"),
        "{err}"
    );
}

#[test]
fn junit_and_gradescope_reports_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let gs = dir.path().join("results.json");
    let out = grader()
        .args(["test", "--filter", "001-worked-trace", "--junit"])
        .arg(&junit)
        .arg("--gradescope")
        .arg(&gs)
        .arg("--")
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testcase name=\"001-worked-trace\"") && xml.contains("<failure"),
        "{xml}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    assert_eq!(doc["score"], 0);
    assert_eq!(doc["tests"][0]["status"], "failed");
    // Gradescope's file is written even when the grader fails.
    let out = grader()
        .args(["test", "--gradescope"])
        .arg(&gs)
        .args(["--", "./no-such-program"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&gs).unwrap()).unwrap();
    assert!(doc["output"].as_str().unwrap().contains("could not grade"));
}

#[test]
fn demo_shows_a_named_mistake() {
    let out = grader().arg("demo").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout_of(&out);
    assert!(
        text.contains("Diagnosis") && text.contains("caught-up-equality-only"),
        "{text}"
    );
}

#[test]
fn show_prints_a_case_with_its_explanation() {
    let out = grader().args(["show", "worked"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout_of(&out);
    assert!(text.contains("--- explained by the reference leader"));
    assert!(text.contains("550 - 0 = 550 > LAG_MAX 500: 7 leaves the ISR"));
}

#[test]
fn ctrl_c_kills_every_case_and_exits_130() {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(grader_path())
        .args(["test", "--jobs", "2", "--timeout", "60", "--"])
        .args(student("sleeps_long.sh"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleepers = || common::sleepers_of("876543");
    let status = common::signal_once_running(&mut child, "876543", rustix::process::Signal::INT);
    assert_eq!(status.code(), Some(130));
    let start = Instant::now();
    while sleepers() > 0 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleepers(), 0, "a case's process outlived the grader");
}

#[test]
fn a_timeout_names_its_limit_and_the_usual_cause() {
    let out = grader()
        .args([
            "test",
            "--filter",
            "001-worked-trace",
            "--timeout",
            "0.5",
            "--",
        ])
        .args(["sh".to_string(), fixture("hostile/sleep_forever.sh")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    assert!(text.contains("timeout (0.5 s)"), "{text}");
    assert!(text.contains("exit at the end of its input"), "{text}");
}

#[test]
fn fail_fast_and_max_fail_stop_starting_cases() {
    let program = leader("caught-up-equality-only");
    // Every case of the corpus, one job: the order of failures is the corpus order.
    let count = |doc: &Value, verdict: &str| {
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == verdict)
            .count()
    };
    let (out, doc) = json_run(&["--jobs", "1", "--fail-fast"], &program);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(count(&doc, "wrong"), 1, "{doc:#}");
    assert!(count(&doc, "not-run") > 0);
    assert!(
        doc["diagnosis"].is_null(),
        "no diagnosis from part of the evidence"
    );
    let (_, doc) = json_run(&["--jobs", "1", "--max-fail", "3"], &program);
    assert_eq!(count(&doc, "wrong"), 3, "{doc:#}");
    let (_, full) = json_run(&["--jobs", "1"], &program);
    assert_eq!(count(&full, "not-run"), 0);
    assert!(count(&full, "wrong") > 3);
    let bad = grader()
        .args(["test", "--max-fail", "0", "--"])
        .args(&program)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The markdown summary with machine-dependent lines replaced (insta filters).
fn markdown_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&grader_path()), "[isr-grader]");
    settings.add_filter(&regex_escape(&root().display().to_string()), "[root]");
    settings.add_filter(r"(?m)^- sandbox: .*$", "- sandbox: [redacted]");
    settings.add_filter(r"(?m)^- graded by: .*$", "- graded by: [redacted]");
    settings
}

#[test]
fn markdown_summary_puts_the_result_and_diagnosis_first() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    // `--summary` appends, as GitHub's $GITHUB_STEP_SUMMARY expects.
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = grader()
        .args([
            "test",
            "--filter",
            "00",
            "--explore",
            "0",
            "--format",
            "markdown",
            "--summary",
        ])
        .arg(&summary)
        .arg("--")
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = stdout_of(&out);
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        format!("earlier step\n{md}")
    );
    let result = md.find("cases passed").unwrap();
    let diagnosis = md.find("### Diagnosis").unwrap();
    let table = md.find("| case |").unwrap();
    assert!(result < diagnosis && diagnosis < table, "{md}");
    markdown_settings().bind(|| insta::assert_snapshot!("markdown_one_mistake", md));
}

#[test]
fn markdown_summary_is_written_when_the_grader_cannot_grade() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let out = grader()
        .args(["test", "--summary"])
        .arg(&summary)
        .args(["--", "./no-such-program"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("## ⚠️ isr-grader could not grade\n") && md.contains("no-such-program"),
        "{md}"
    );
}

#[test]
fn markdown_summary_escapes_program_output() {
    let out = grader()
        .args([
            "test",
            "--filter",
            "001-worked-trace",
            "--format",
            "markdown",
            "--",
        ])
        .arg(fixture("students/markdown_injection.sh"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let md = stdout_of(&out);
    assert!(!md.contains('\x1b'), "{md}");
    // The program's HTML only inside code: a span, or a fence no line of it can close.
    assert!(
        md.contains("yours: `</details><script>alert(1)</script>`"),
        "{md}"
    );
    assert!(md.contains("````diff\n") && md.contains("\n+```\n"), "{md}");
    // One <details> block, closed once.
    assert_eq!(md.lines().filter(|l| *l == "</details>").count(), 1, "{md}");
    markdown_settings().bind(|| insta::assert_snapshot!("markdown_injection", md));
}

/// Whether `python3` can import `module`; when not, the test is skipped with a message, except
/// in CI (`CI` set: `.ci/run` installs it), where it fails.
fn python_has(module: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 cannot import {module}: `.ci/run` installs it (pip install {module})"
        );
        eprintln!("SKIPPED: python3 cannot import {module} (pip install {module}; .ci/run does)");
    }
    ok
}

#[test]
fn junit_is_read_by_a_real_consumer_with_suite_time_and_diagnosis() {
    if !python_has("junitparser") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let out = grader()
        .args(["test", "--filter", "00", "--explore", "0", "--junit"])
        .arg(&junit)
        .arg("--")
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let read = std::process::Command::new("python3")
        .arg(fixture("consumers/junitparser_read.py"))
        .arg(&junit)
        .output()
        .unwrap();
    let text = stdout_of(&read);
    assert!(
        read.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&read.stderr)
    );
    eprintln!("{text}");
    let suite = text.lines().find(|l| l.starts_with("suite ")).unwrap();
    assert!(
        suite.starts_with("suite isr-grader tests=9 failures=5 errors=0 skipped=0 time="),
        "{text}"
    );
    // The suite's time is the whole run's, at least that of its longest case.
    let field = |line: &str, key: &str| -> f64 {
        line.split(' ')
            .find_map(|w| w.strip_prefix(key))
            .unwrap()
            .parse()
            .unwrap()
    };
    let suite_time = field(suite, "time=");
    let longest = text
        .lines()
        .filter(|l| l.starts_with("case "))
        .map(|l| field(l, "time="))
        .fold(0.0, f64::max);
    assert!(suite_time > 0.0 && suite_time >= longest, "{text}");
    for want in [
        "timestamp parses: True",
        "property diagnosis.exact=true",
        "property diagnosis.mistakes=hw-all-replicas",
        "property interrupted=false",
        "Diagnosis: your output matches, on every case, a leader with this known mistake:",
        "case 001-worked-trace time=",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
}

/// Writes a submission whose build fails, returns its folder.
fn failing_build() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("grader.toml"),
        "build = \"echo 'error: no leader here' >&2; exit 3\"\nrun = [\"./leader\"]\n",
    )
    .unwrap();
    dir
}

#[test]
fn json_report_on_a_failed_build_and_on_a_grader_error() {
    // A failed build: no case, but the points possible are known.
    let dir = failing_build();
    let out = grader()
        .args(["test", "--format", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc = common::json_report(&out);
    assert_eq!(doc["build"]["ok"], false, "{doc:#}");
    assert_eq!(doc["summary"]["cases"], 0);
    assert_eq!(doc["summary"]["max_points"], 36, "{doc:#}");
    // A grader error (exit 2): still one JSON document on stdout.
    let out = grader()
        .args(["test", "--format", "json", "--", "./no-such-program"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc = common::json_report(&out);
    assert_eq!(doc["schema_version"], 1);
    assert!(
        doc["error"].as_str().unwrap().contains("no-such-program"),
        "{doc:#}"
    );
    assert_eq!(doc.as_object().unwrap().len(), 2, "{doc:#}");
}

#[test]
fn json_documents_follow_the_committed_schema() {
    if !python_has("jsonschema") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut docs = Vec::new();
    // A failing student with stray lines, a crash and the diagnosis; a failed build; an error.
    let (_, doc) = json_run(&[], &leader("hw-not-on-shrink"));
    docs.push(doc);
    let (_, doc) = hostile("segfault.sh", &[]);
    docs.push(doc);
    let (_, doc) = json_run(&[], &student("debug_prints.sh"));
    docs.push(doc);
    let build = failing_build();
    let out = grader()
        .args(["test", "--format", "json"])
        .current_dir(build.path())
        .output()
        .unwrap();
    docs.push(common::json_report(&out));
    let out = grader()
        .args(["test", "--format", "json", "--", "./no-such-program"])
        .output()
        .unwrap();
    docs.push(common::json_report(&out));
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.path().join(format!("{i}.json"));
        std::fs::write(&path, doc.to_string()).unwrap();
        let check = std::process::Command::new("python3")
            .args([
                "-c",
                "import json, sys, jsonschema\n\
                 schema = json.load(open(sys.argv[1]))\n\
                 jsonschema.Draft202012Validator.check_schema(schema)\n\
                 jsonschema.validate(json.load(open(sys.argv[2])), schema, cls=jsonschema.Draft202012Validator)\n",
            ])
            .arg(root().join("schema/report-v1.json"))
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "document {i} does not follow schema/report-v1.json: {}\n{doc:#}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

#[test]
fn filter_follows_one_rule_with_or_without_wildcards() {
    for pattern in ["worked", "worked*", "*worked", "0*ked-trace", "w?rked"] {
        let (out, doc) = json_run(&["--filter", pattern], &leader(""));
        assert_eq!(out.status.code(), Some(0), "{pattern}");
        let names: Vec<&str> = doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["001-worked-trace"], "{pattern}");
    }
}

#[test]
fn test_list_names_the_selected_cases_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // No program and no grader.toml: the built-in cases are listed all the same.
    let out = grader()
        .args(["test", "--list", "--filter", "rejoin*"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("test_list_rejoin", stdout_of(&out));
    // With the corpus folders: hidden cases are marked.
    let out = grader()
        .args(["test", "--list", "--filter", "constant"])
        .args(corpus_args())
        .output()
        .unwrap();
    assert!(stdout_of(&out).contains("(hidden)"), "{}", stdout_of(&out));
}

#[test]
fn color_flag_overrides_the_environment() {
    let run = |color: &str, env: (&str, &str)| {
        let out = Command::cargo_bin("isr-grader")
            .unwrap()
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env(env.0, env.1)
            .args([
                "test",
                "--color",
                color,
                "--filter",
                "001-worked-trace",
                "--",
            ])
            .args(leader("hw-not-on-shrink"))
            .output()
            .unwrap();
        stdout_of(&out)
    };
    assert!(run("always", ("NO_COLOR", "1")).contains("\x1b["));
    assert!(!run("never", ("CLICOLOR_FORCE", "1")).contains('\x1b'));
    // auto: not a terminal here, so no colour.
    assert!(!run("auto", ("TERM", "xterm")).contains('\x1b'));
}

#[test]
fn test_help_snapshot() {
    let out = grader().args(["test", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("test_help", stdout_of(&out));
}

#[test]
fn quiet_shows_failures_result_and_diagnosis_only() {
    let out = grader()
        .args(["test", "-q", "--filter", "00", "--seed", "1"])
        .args(["--explore-seconds", "600", "--shrink-seconds", "600", "--"])
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    assert!(
        !text.contains("pass ") && !text.contains("first difference"),
        "{text}"
    );
    insta::assert_snapshot!("human_quiet", redact(&text));
    // -q and -v contradict each other.
    let out = grader().args(["test", "-q", "-v"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completions_and_man_pages_are_generated_from_the_flags() {
    let generate = |args: &[&str]| {
        let out = grader().arg("generate").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        stdout_of(&out)
    };
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = generate(&["completions", shell]);
        for flag in ["summary", "filter", "color", "test"] {
            assert!(text.contains(flag), "{shell}: no {flag}");
        }
    }
    // Bash itself completes a subcommand with the generated script.
    let script = generate(&["completions", "bash"]);
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "eval \"$1\"; COMP_WORDS=(isr-grader te); COMP_CWORD=1; _isr__grader isr-grader te isr-grader; echo \"${COMPREPLY[*]}\"",
            "bash",
            &script,
        ])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&out).trim(),
        "test",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let man = generate(&["man"]);
    assert!(man.contains(".TH isr-grader 1"), "{man}");
    let man = generate(&["man", "test"]);
    assert!(
        man.contains(".TH isr-grader-test 1") && man.contains("\\-\\-summary"),
        "{man}"
    );
    // groff reads it without a warning, where groff is installed.
    if let Ok(mut groff) = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        use std::io::Write as _;
        groff
            .stdin
            .take()
            .unwrap()
            .write_all(man.as_bytes())
            .unwrap();
        let out = groff.wait_with_output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = grader().args(["generate", "man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn grader_toml_is_found_in_a_parent_and_failed_reruns_the_last_failures() {
    let dir = tempfile::tempdir().unwrap();
    let leader = leader("hw-not-on-shrink");
    let run: Vec<String> = leader.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        dir.path().join("grader.toml"),
        format!("run = [{}]\n", run.join(", ")),
    )
    .unwrap();
    let sub = dir.path().join("src/deeper");
    std::fs::create_dir_all(&sub).unwrap();
    let test = |args: &[&str]| {
        grader()
            .arg("test")
            .args(args)
            .current_dir(&sub)
            .output()
            .unwrap()
    };
    // --failed before any run: said, exit 2.
    let out = test(&["--failed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run recorded yet"));
    // From a subfolder: the parent's grader.toml; the failures are recorded beside it.
    let out = test(&["--filter", "00", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let failed = case_verdicts(&common::json_report(&out))
        .iter()
        .filter(|v| *v != "pass")
        .count();
    assert_eq!(failed, 5);
    let state = dir.path().join(".isr-grader/last-run.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(
        recorded["failed"].as_array().unwrap().len(),
        5,
        "{recorded}"
    );
    // --failed runs those five only (with --filter: those that also match).
    let out = test(&["--failed", "--format", "json"]);
    assert_eq!(case_verdicts(&common::json_report(&out)), ["wrong"; 5]);
    let out = test(&["--failed", "--filter", "worked", "--format", "json"]);
    assert_eq!(case_verdicts(&common::json_report(&out)), ["wrong"]);
    // --failed is for a student's own runs.
    let out = test(&["--failed", "--instructor-config", "x.toml"]);
    assert_eq!(out.status.code(), Some(2));
}
