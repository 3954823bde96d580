//! `isr-grader gradescope` end to end: the generated autograder (with the bundled grader) run
//! against a simulated `/autograder` tree (`AUTOGRADER_ROOT` pointing at a temporary folder) for
//! a correct, a mistaken, a non-building and a hostile submission, and when the grader is
//! missing or crashes; the zip is the same bytes twice; the instructor's mistakes are exit 2
//! with file:line at generation time.
//!
//! Linux only: the hostile submission is graded under `--sandbox require`.
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{grader, grader_path, root};

/// Public cases (one point each) and hidden cases (five points each) of the simulated course.
const PUBLIC: [&str; 2] = ["001-worked-trace", "002-caught-up-equality-only"];
const HIDDEN: [&str; 2] = ["101-lag-boundary", "102-stall"];
/// A mistake that no public case shows and a hidden one does (102-stall).
const HIDDEN_ONLY_MISTAKE: &str = "caught-up-strict-previous";

fn open_up(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Copies the cases `names` of `from` (`public` or `hidden`) into `to`, each worth `points`.
fn copy_cases(from: &str, names: &[&str], to: &Path, points: u32) {
    std::fs::create_dir_all(to).unwrap();
    for name in names {
        for ext in ["trace", "out"] {
            std::fs::copy(
                root().join(format!("cases/{from}/{name}.{ext}")),
                to.join(format!("{name}.{ext}")),
            )
            .unwrap();
        }
        let meta =
            std::fs::read_to_string(root().join(format!("cases/{from}/{name}.toml"))).unwrap();
        let meta = meta.replace("points = 1\n", &format!("points = {points}\n"));
        std::fs::write(to.join(format!("{name}.toml")), meta).unwrap();
    }
}

/// A course: the instructor's folder (config and cases) and an `/autograder` stand-in. The
/// folders are world-readable: the grader runs as root here, the programs as nobody.
struct Course {
    dir: tempfile::TempDir,
}

impl Course {
    fn new(config_extra: &str) -> Course {
        Course::with_sandbox("require", config_extra)
    }

    fn with_sandbox(sandbox: &str, config_extra: &str) -> Course {
        // Not under /tmp: the sandbox gives every program a /tmp of its own, so a tree there
        // would be out of its sight whatever else protects it; /autograder is not.
        let dir = tempfile::Builder::new()
            .prefix("isr-autograder-test-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        open_up(dir.path());
        let inst = dir.path().join("instructor");
        copy_cases("public", &PUBLIC, &inst.join("public"), 1);
        copy_cases("hidden", &HIDDEN, &inst.join("hidden"), 5);
        std::fs::write(
            inst.join("instructor.toml"),
            format!(
                "cases = [\"public\", \"hidden\"]\nallow_submission_run = true\nallow_submission_build = true\nsandbox = \"{sandbox}\"\n[limits]\ntimeout_secs = 5.0\n[explore]\ntraces = 0\n{config_extra}"
            ),
        )
        .unwrap();
        Course { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn config(&self) -> PathBuf {
        self.path("instructor/instructor.toml")
    }

    /// `isr-grader gradescope --instructor-config ... ARGS`.
    fn generate(&self, args: &[&str]) -> Output {
        grader()
            .arg("gradescope")
            .arg("--instructor-config")
            .arg(self.config())
            .args(args)
            .output()
            .unwrap()
    }

    /// The autograder, generated with the bundled grader into `ag/source`.
    fn generated(self) -> Course {
        let source = self.path("ag/source");
        let out = self.generate(&["--bundle-grader", "--out", source.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        open_up(&self.path("ag"));
        self
    }

    /// A fresh submission folder with these files (name, text, executable).
    fn submission(&self, files: &[(&str, &str, bool)]) -> PathBuf {
        let sub = self.path("ag/submission");
        if sub.exists() {
            std::fs::remove_dir_all(&sub).unwrap();
        }
        std::fs::create_dir_all(&sub).unwrap();
        open_up(&sub);
        for (name, text, executable) in files {
            let p = sub.join(name);
            std::fs::write(&p, text).unwrap();
            let mode = if *executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        sub
    }

    /// A submission running the reference leader (the grader's hidden `leader`) with `faults`.
    fn leader_submission(&self, faults: &str) -> PathBuf {
        let run = if faults.is_empty() {
            "run = [\"./prog\", \"leader\"]\n".to_string()
        } else {
            format!("run = [\"./prog\", \"leader\", \"--fault\", \"{faults}\"]\n")
        };
        let sub = self.submission(&[("grader.toml", &run, false)]);
        std::fs::copy(grader_path(), sub.join("prog")).unwrap();
        sub
    }

    fn results(&self) -> PathBuf {
        self.path("ag/results/results.json")
    }

    /// Runs the generated run_autograder; it must exit 0 and leave a JSON results.json.
    fn run(&self, env: &[(&str, &str)]) -> Value {
        let _ = std::fs::remove_file(self.results());
        let mut c = Command::new("sh");
        c.arg(self.path("ag/source/run_autograder"))
            .env("AUTOGRADER_ROOT", self.path("ag"))
            .env_remove("ISR_GRADER")
            .current_dir(self.path("ag"));
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "run_autograder must exit 0; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(self.results()).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

fn output_of(doc: &Value) -> &str {
    doc["output"].as_str().unwrap()
}

/// The top-level output, which every student sees, says nothing drawn from the hidden cases:
/// no hidden case's name, no total, no count of every case.
fn assert_reveals_no_hidden(doc: &Value) {
    let output = output_of(doc);
    for name in HIDDEN {
        assert!(!output.contains(name), "{name} in: {output}");
    }
    assert!(!output.contains("/12 points"), "the total in: {output}");
    assert!(!output.contains("/4 cases"), "{output}");
    assert!(output.contains("Public cases: "), "{output}");
}

fn tests_of(doc: &Value) -> &Vec<Value> {
    doc["tests"].as_array().unwrap()
}

#[test]
fn a_correct_submission_gets_every_point_and_the_summary_names_public_cases_only() {
    let course = Course::new("[gradescope]\nhidden_visibility = \"after_due_date\"\n").generated();
    course.leader_submission("");
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 12, "{doc:#}");
    assert!(tests_of(&doc).iter().all(|t| t["status"] == "passed"));
    assert_reveals_no_hidden(&doc);
    assert!(
        output_of(&doc).starts_with("Public cases: 2/2 passed, 2/2 points."),
        "{doc:#}"
    );
    assert_eq!(doc["output_format"], "text");
    assert_eq!(doc["test_output_format"], "text");
    assert!(doc["execution_time"].is_u64(), "{doc:#}");
    let extra = &doc["extra_data"];
    assert!(
        extra["grader_version"]
            .as_str()
            .unwrap()
            .starts_with("isr-grader "),
        "{extra:#}"
    );
    assert_eq!(extra["limits"]["timeout_secs"], 5.0, "{extra:#}");
    assert_eq!(extra["diagnosis"]["exact"], true, "{extra:#}");
    assert!(
        extra["sandbox"].as_str().unwrap().contains("landlock"),
        "{extra:#}"
    );
    for t in tests_of(&doc) {
        let name = t["name"].as_str().unwrap();
        let hidden = HIDDEN.iter().any(|h| name.starts_with(h));
        let want = if hidden { "after_due_date" } else { "visible" };
        assert_eq!(t["visibility"], want, "{t:#}");
        assert_eq!(t["max_score"], if hidden { 5 } else { 1 }, "{t:#}");
    }
}

#[test]
fn a_mistake_only_hidden_cases_show_is_named_in_extra_data_not_to_the_student() {
    let course = Course::new("").generated();
    course.leader_submission(HIDDEN_ONLY_MISTAKE);
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 7, "{doc:#}");
    assert_reveals_no_hidden(&doc);
    assert!(
        !output_of(&doc).contains(HIDDEN_ONLY_MISTAKE),
        "{}",
        output_of(&doc)
    );
    assert_eq!(
        doc["extra_data"]["diagnosis"]["mistakes"][0], HIDDEN_ONLY_MISTAKE,
        "{doc:#}"
    );
    assert_eq!(doc["extra_data"]["public_only_output"], true);
    let failed: Vec<&Value> = tests_of(&doc)
        .iter()
        .filter(|t| t["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{doc:#}");
    assert_eq!(
        failed[0]["visibility"], "after_published",
        "the default for hidden cases"
    );

    // A mistake a public case shows is named: the public cases alone reproduce it.
    course.leader_submission("caught-up-equality-only");
    let doc = course.run(&[]);
    assert_reveals_no_hidden(&doc);
    assert!(
        output_of(&doc).contains("(caught-up-equality-only)"),
        "{}",
        output_of(&doc)
    );
}

/// Copies the tree `from` into `to` (without `target/`), world-readable.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    open_up(to);
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&entry.path(), &dest);
            }
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

#[test]
fn the_student_templates_with_their_solutions_build_and_pass() {
    let course = Course::new("").generated();
    let sub = course.path("ag/submission");
    // Rust: built in the sandbox with cargo (the build may write only the submission folder).
    copy_tree(&root().join("student-template"), &sub);
    std::fs::copy(
        root().join("tests/fixtures/solutions/rust/leader.rs"),
        sub.join("src/leader.rs"),
    )
    .unwrap();
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 12, "{doc:#}");
    assert_eq!(doc["extra_data"]["build_ok"], true, "{doc:#}");
    // Python: the template's python/ folder as the submission.
    std::fs::remove_dir_all(&sub).unwrap();
    copy_tree(&root().join("student-template/python"), &sub);
    std::fs::copy(
        root().join("tests/fixtures/solutions/python/leader.py"),
        sub.join("leader.py"),
    )
    .unwrap();
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 12, "{doc:#}");
}

#[test]
fn a_build_that_fails_in_colour_shows_its_log_without_escapes() {
    let course = Course::new("[gradescope]\noutput_format = \"md\"\n").generated();
    course.submission(&[
        (
            "grader.toml",
            "build = \"printf '\\\\033[1;31merror\\\\033[0m: expected `;` <b>here</b>\\\\n' >&2; exit 1\"\nrun = [\"./prog\"]\n",
            false,
        ),
    ]);
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 0, "{doc:#}");
    let output = output_of(&doc);
    assert!(output.starts_with("The build failed: "), "{output}");
    assert!(
        output.contains("```text\nerror: expected `;` <b>here</b>\n```"),
        "{output}"
    );
    assert!(
        !output.contains("x1b") && !output.contains('\x1b'),
        "{output}"
    );
    assert_eq!(doc["output_format"], "md");
    assert_eq!(doc["test_output_format"], "md");
    assert_eq!(doc["extra_data"]["build_ok"], false);
}

#[test]
fn a_hostile_submission_gets_nothing_and_cannot_forge_results_json() {
    let course = Course::new("").generated();
    let results = course.results();
    let sub = course.submission(&[(
        "grader.toml",
        &format!(
            "run = [\"/usr/bin/python3\", \"attack.py\", \"forge\", {:?}]\n",
            results.display().to_string()
        ),
        false,
    )]);
    std::fs::copy(
        root().join("tests/fixtures/hostile/attack.py"),
        sub.join("attack.py"),
    )
    .unwrap();
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 0, "{doc:#}");
    assert!(!output_of(&doc).contains("forged"), "{doc:#}");
    assert_eq!(tests_of(&doc).len(), 4, "{doc:#}");
    // It tries to read the cases where they are.
    std::fs::write(
        sub.join("grader.toml"),
        format!(
            "run = [\"/usr/bin/python3\", \"attack.py\", \"known-paths\", {:?}, {:?}]\n",
            course.path("ag/source/cases").display().to_string(),
            course.path("ag/source").display().to_string(),
        ),
    )
    .unwrap();
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 0, "{doc:#}");
    // A daemon that would rewrite it within 3 s of the grading.
    std::fs::write(
        sub.join("grader.toml"),
        format!(
            "run = [\"/usr/bin/python3\", \"attack.py\", \"daemon\", {:?}]\n",
            results.display().to_string()
        ),
    )
    .unwrap();
    let doc = course.run(&[]);
    assert_eq!(doc["score"], 0, "{doc:#}");
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert_eq!(again, doc);
    // Printing the fallback's marker does not turn the grade into the fallback document.
    course.submission(&[
        ("grader.toml", "run = [\"./p.sh\"]\n", false),
        (
            "p.sh",
            "#!/bin/sh\necho '{\"fallback\": \"isr-grader-run_autograder-fallback\"}'\n",
            true,
        ),
    ]);
    let marked = course.run(&[]);
    assert_eq!(tests_of(&marked).len(), 4, "{marked:#}");
    assert!(
        marked
            .to_string()
            .contains("isr-grader-run_autograder-fallback"),
        "the program's line is in the report: {marked:#}"
    );
}

#[test]
fn the_results_folder_is_out_of_reach_even_without_landlock() {
    // Without Landlock and with a results folder anyone may write, only the mount namespace
    // stands between the program and /autograder/results: the folder is covered whole.
    let course = Course::with_sandbox("best-effort", "").generated();
    let results_dir = course.path("ag/results");
    std::fs::create_dir_all(&results_dir).unwrap();
    std::fs::set_permissions(&results_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let dump = results_dir.join("dump");
    let sub = course.submission(&[(
        "grader.toml",
        &format!(
            "run = [\"/usr/bin/python3\", \"attack.py\", \"fill-tmp\", {:?}]\n",
            dump.display().to_string()
        ),
        false,
    )]);
    std::fs::copy(
        root().join("tests/fixtures/hostile/attack.py"),
        sub.join("attack.py"),
    )
    .unwrap();
    let doc = course.run(&[("ISR_GRADER_SANDBOX_DENY", "landlock")]);
    assert_eq!(doc["score"], 0, "{doc:#}");
    let sandbox = doc["extra_data"]["sandbox"].as_str().unwrap();
    assert!(sandbox.contains("missing: landlock"), "{sandbox}");
    assert!(!dump.exists(), "the program wrote into the results folder");
}

#[test]
fn without_a_grader_or_when_it_crashes_results_json_still_says_why() {
    let course = Course::new("");
    let source = course.path("ag/source");
    let out = course.generate(&[
        "--repo",
        "https://github.com/course/isr-grader",
        "--out",
        source.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(!source.join("bin").exists(), "nothing bundled");
    std::fs::create_dir_all(course.path("ag/submission")).unwrap();
    // No isr-grader on PATH.
    let doc = course.run(&[("PATH", "/usr/bin:/bin")]);
    assert_eq!(doc["score"], 0);
    assert!(output_of(&doc).contains("isr-grader is missing"), "{doc:#}");
    assert_eq!(doc["tests"], Value::Array(vec![]));

    // A grader that dies of a signal before writing anything.
    let crash = course.path("crash.sh");
    std::fs::write(&crash, "#!/bin/sh\nkill -SEGV $$\n").unwrap();
    open_up(&crash);
    let doc = course.run(&[("ISR_GRADER", crash.to_str().unwrap())]);
    assert_eq!(doc["score"], 0);
    assert!(
        output_of(&doc).contains("The autograder stopped (status 139)"),
        "{doc:#}"
    );

    // A grader that cannot grade (exit 2) writes its own error document.
    let doc = course.run(&[("ISR_GRADER", &grader_path())]);
    assert_eq!(doc["score"], 0);
    assert!(
        output_of(&doc).starts_with("The autograder could not grade this submission: "),
        "{doc:#}"
    );
}

#[test]
fn the_zip_is_the_same_bytes_twice_with_executable_scripts_at_its_root() {
    let course = Course::new("");
    let (a, b) = (course.path("a.zip"), course.path("b.zip"));
    for zip in [&a, &b] {
        let out = course.generate(&["--bundle-grader", "--zip", zip.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&a).unwrap()).unwrap();
    let names: Vec<String> = archive.file_names().map(str::to_string).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries sorted");
    for (name, mode) in [
        ("setup.sh", 0o755),
        ("run_autograder", 0o755),
        ("bin/isr-grader", 0o755),
        ("install.sh", 0o755),
        ("instructor.toml", 0o644),
        ("cases/hidden/102-stall.out", 0o644),
    ] {
        let f = archive.by_name(name).unwrap();
        assert_eq!(f.unix_mode().map(|m| m & 0o777), Some(mode), "{name}");
    }
    let mut config = String::new();
    std::io::Read::read_to_string(
        &mut archive.by_name("instructor.toml").unwrap(),
        &mut config,
    )
    .unwrap();
    assert!(
        config.contains("cases = [\"cases/public\", \"cases/hidden\"]"),
        "{config}"
    );
}

#[test]
fn the_generated_scripts_pass_shellcheck() {
    if Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "CI needs shellcheck");
        eprintln!("no shellcheck: skipped");
        return;
    }
    let course = Course::new("");
    for (dir, extra) in [
        ("bundled", &["--bundle-grader"][..]),
        (
            "release",
            &["--repo", "https://github.com/course/isr-grader"][..],
        ),
    ] {
        let out_dir = course.path(dir);
        let mut args = vec!["--out", out_dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        assert!(course.generate(&args).status.success());
        let out = Command::new("shellcheck")
            .args(["-s", "sh"])
            .arg(out_dir.join("setup.sh"))
            .arg(out_dir.join("run_autograder"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{dir}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn instructor_mistakes_are_exit_2_with_file_and_line_at_generation() {
    let refused = |course: &Course| {
        let out_dir = course.path("out");
        let out = course.generate(&["--bundle-grader", "--out", out_dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out_dir.exists(), "nothing written");
        err
    };
    // A stale expected output.
    let course = Course::new("");
    let out = course.path("instructor/hidden/102-stall.out");
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::write(&out, text.replacen("HW=", "HW=9", 1)).unwrap();
    let err = refused(&course);
    assert!(
        err.contains("102-stall.out:") && err.contains("stale expected output"),
        "{err}"
    );
    // A value Gradescope does not know, with its line.
    let course = Course::new("[gradescope]\nhidden_visibility = \"sometimes\"\n");
    let err = refused(&course);
    assert!(err.contains("instructor.toml:10"), "{err}");
    // An unknown key.
    let course = Course::new("[gradescope]\nvisibility = \"hidden\"\n");
    let err = refused(&course);
    assert!(
        err.contains("instructor.toml:10") && err.contains("unknown field"),
        "{err}"
    );
    // A symbolic link in a case folder.
    let course = Course::new("");
    std::os::unix::fs::symlink("/etc/passwd", course.path("instructor/public/003.trace")).unwrap();
    let err = refused(&course);
    assert!(
        err.contains("003.trace") && err.contains("symbolic link"),
        "{err}"
    );
    // No place to write it.
    let course = Course::new("");
    let out = course.generate(&[]);
    assert_eq!(out.status.code(), Some(2));
    // The placeholder repository and no bundled grader.
    let out = course.generate(&["--out", course.path("x").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repo URL"));
}

/// Paths, versions and times that differ from one run to the next.
fn filters(course: &Course) -> Vec<(String, &'static str)> {
    let tree = course.dir.path().display().to_string();
    let mut filters = vec![(tree, "[TREE]")];
    filters.extend(
        [
            (
                r"\d+\.\d+\.\d+[^ ]* \(rev [0-9a-z]+, (corpus|cases) [0-9a-z]+\)",
                "[VERSION]",
            ),
            (r#""cases_hash": "[0-9a-f]+""#, r#""cases_hash": "[HASH]""#),
            (r#""execution_time": \d+"#, r#""execution_time": [SECS]"#),
            (r#""sandbox": "[^"]*""#, r#""sandbox": "[SANDBOX]""#),
        ]
        .into_iter()
        .map(|(from, to)| (from.to_string(), to)),
    );
    filters
}

#[test]
fn snapshots_of_run_autograder_and_a_results_json() {
    // No shrinking: its time budget could cut it short on a busy machine.
    let course = Course::new("shrink_seconds = 0.0\n").generated();
    let script = std::fs::read_to_string(course.path("ag/source/run_autograder")).unwrap();
    let mut settings = insta::Settings::clone_current();
    for (from, to) in filters(&course) {
        settings.add_filter(&from, to);
    }
    settings.bind(|| insta::assert_snapshot!("run_autograder", script));
    course.leader_submission("caught-up-equality-only");
    let doc = course.run(&[]);
    settings.bind(|| insta::assert_snapshot!("results_json", format!("{doc:#}")));
}
