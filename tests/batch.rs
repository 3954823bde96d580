//! `isr-grader batch` and `merge` over a small class made in a temporary folder: a correct
//! Python submission (the template and its solution), a mistaken one (the grader's own `leader
//! --fault`), a Rust one that does not build, one that hangs, one that crashes and an empty
//! folder. The gradebook's rows, every submission's JSON, exit codes, resuming after a deleted
//! report, a change or an interrupt, three partitions merged equal to the whole, bad input.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{browser, copy_dir, grader, grader_path, root};

/// A class: its submissions folder and the instructor's file, in one temporary folder.
struct Class {
    dir: tempfile::TempDir,
}

impl Class {
    fn subs(&self) -> PathBuf {
        self.dir.path().join("subs")
    }
    fn config(&self) -> PathBuf {
        self.dir.path().join("instructor.toml")
    }
    fn out(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn add(&self, name: &str, files: &[(&str, &str)]) {
        let dir = self.subs().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    /// `isr-grader batch SUBS --instructor-config FILE --out OUT ARGS...`.
    fn batch(&self, out: &str, args: &[&str]) -> Output {
        grader()
            .arg("batch")
            .arg(self.subs())
            .arg("--instructor-config")
            .arg(self.config())
            .arg("--out")
            .arg(self.out(out))
            .args(args)
            .env_remove("CI")
            .output()
            .unwrap()
    }
}

/// Two cases (the worked trace, and the witness of `caught-up-equality-only`), a 3 s limit per
/// case (a correct Python program needs far less, even on a loaded machine), nothing explored:
/// the class grades in seconds.
fn instructor_config(extra: &str) -> String {
    // The mistaken submission runs the grader's own binary: the sandbox lets it read its folder.
    let bin_dir = Path::new(&grader_path())
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!(
        "cases = [\"cases\"]\nallow_read = [{bin_dir:?}]\n{extra}[limits]\ntimeout_secs = 3.0\n[explore]\ntraces = 0\nshrink_seconds = 1.0\n"
    )
}

fn class(extra_config: &str) -> Class {
    let class = Class {
        dir: tempfile::tempdir().unwrap(),
    };
    let cases = class.dir.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    for case in ["001-worked-trace", "002-caught-up-equality-only"] {
        for ext in ["toml", "trace", "out"] {
            std::fs::copy(
                root().join(format!("cases/public/{case}.{ext}")),
                cases.join(format!("{case}.{ext}")),
            )
            .unwrap();
        }
    }
    std::fs::write(class.config(), instructor_config(extra_config)).unwrap();
    std::fs::create_dir_all(class.subs()).unwrap();
    class
}

fn mistaken_main() -> String {
    format!(
        "import os\nos.execv({:?}, [\"isr-grader\", \"leader\", \"--fault\", \"caught-up-equality-only\"])\n",
        grader_path()
    )
}

/// The fixtures class: six submissions and a hidden folder (left out).
fn fixtures() -> Class {
    let class = class("");
    let correct = class.subs().join("correct");
    copy_dir(&root().join("student-template/python"), &correct);
    std::fs::copy(
        root().join("tests/fixtures/solutions/python/leader.py"),
        correct.join("leader.py"),
    )
    .unwrap();
    class.add("mistaken", &[("main.py", &mistaken_main())]);
    let no_build = class.subs().join("no-build");
    std::fs::create_dir_all(&no_build).unwrap();
    std::fs::copy(
        root().join("student-template/Cargo.toml"),
        no_build.join("Cargo.toml"),
    )
    .unwrap();
    copy_dir(&root().join("student-template/src"), &no_build.join("src"));
    std::fs::write(no_build.join("src/leader.rs"), "this is not rust\n").unwrap();
    class.add("hangs", &[("main.py", "import time\ntime.sleep(3600)\n")]);
    class.add(
        "crashes",
        &[(
            "main.py",
            "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        )],
    );
    class.add("empty", &[]);
    class.add(".git", &[("HEAD", "ref: refs/heads/main\n")]);
    class
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The gradebook as rows of cells (header first).
fn gradebook(out: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

fn cell<'a>(rows: &'a [Vec<String>], name: &str, column: &str) -> &'a str {
    let col = rows[0].iter().position(|c| c == column).unwrap();
    let row = rows.iter().find(|r| r[0] == name).unwrap();
    &row[col]
}

fn mtime(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn a_class_gives_a_gradebook_and_every_report_and_a_rerun_grades_only_what_changed() {
    let class = fixtures();
    let out = class.batch("out", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let log = stderr_of(&out);
    assert!(log.contains("batch: 6 submissions"), "{log}");
    assert!(log.contains("0 skipped"), "{log}");

    let dir = class.out("out");
    let rows = gradebook(&dir);
    assert_eq!(
        rows[0].join(","),
        "submission,status,points,max_points,passed,failed,pass,wrong,timeout,crash,exit-code,output-limit,no-output,not-run,nondeterministic,mistakes,exact,build,error,grader_version,cases_hash,seed"
    );
    let names: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "correct", "crashes", "empty", "hangs", "mistaken", "no-build"
        ],
        "sorted, the dot-folder left out"
    );
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    let c = |name, column| cell(&rows, name, column).to_string();
    assert_eq!(c("correct", "status"), "graded");
    assert_eq!(c("correct", "points"), c("correct", "max_points"));
    assert_eq!(c("correct", "pass"), "2");
    assert_eq!(c("correct", "exact"), "true");
    assert_eq!(c("correct", "build"), "none");
    assert_eq!(c("mistaken", "status"), "graded");
    assert_eq!(c("mistaken", "mistakes"), "caught-up-equality-only");
    assert_eq!(c("mistaken", "exact"), "true");
    assert_eq!(c("hangs", "status"), "graded");
    assert_eq!(c("hangs", "timeout"), "2");
    assert_eq!(c("hangs", "points"), "0");
    assert_eq!(c("crashes", "crash"), "2");
    assert_eq!(c("no-build", "status"), "build-failed");
    assert_eq!(c("no-build", "build"), "failed");
    assert!(c("no-build", "error").starts_with("error"), "{rows:?}");
    assert_eq!(c("empty", "status"), "error");
    assert!(
        c("empty", "error").contains("no program to grade"),
        "{rows:?}"
    );
    assert_eq!(c("empty", "points"), "");
    let hash = c("correct", "cases_hash");
    assert_eq!(hash.len(), 16);
    for name in ["mistaken", "hangs", "crashes", "no-build"] {
        assert_eq!(c(name, "cases_hash"), hash);
        assert_eq!(c(name, "grader_version"), c("correct", "grader_version"));
    }

    // Every submission's JSON, and how it ran.
    for name in &names {
        let sub = dir.join("submissions").join(name);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(sub.join("report.json")).unwrap())
                .unwrap();
        assert_eq!(doc["schema_version"], 1);
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(sub.join("batch.json")).unwrap())
                .unwrap();
        assert_eq!(record["fingerprint"].as_str().unwrap().len(), 16);
        assert!(record["command"][3] == "test", "{record}");
    }
    // The class report, opened in a real browser (the screenshot is kept as
    // target/batch-class-report.png for a person to look at).
    let page = dir.join("class-report.html");
    let dom = browser::dom(&page);
    for part in [
        "href=\"submissions/mistaken/report.html\"",
        "Caught up only when the fetch reaches the leader's current LEO",
        "6 submissions",
        // A group's first difference links to the case in its student's own report.
        "href=\"submissions/crashes/report.html#case-001-worked-trace\"",
    ] {
        assert!(dom.contains(part), "{part} not in the page's DOM");
    }
    let png = browser::target_dir().join("batch-class-report.png");
    let pixels = browser::screenshot(&page, &png, (1280, 1600));
    // The mistake's bar (the style sheet's mistake purple), passing and failing marks.
    for (part, colour) in [
        ("mistake bar", [0x6b, 0x2f, 0xbf]),
        ("pass", [0x1a, 0x7f, 0x37]),
        ("fail", [0xc6, 0x28, 0x28]),
    ] {
        let n = browser::count_near(&pixels, colour, 3);
        assert!(n > 100, "{part}: {n} pixels in {}", png.display());
    }
    // Each student's own page, and a picture of each failing case beside it.
    for name in ["correct", "mistaken", "hangs", "no-build"] {
        assert!(
            dir.join("submissions")
                .join(name)
                .join("report.html")
                .is_file(),
            "{name}"
        );
    }
    assert!(
        dir.join("submissions/mistaken/timelines/002-caught-up-equality-only.svg")
            .is_file()
    );
    assert!(
        !dir.join("submissions/correct/timelines")
            .join("001-worked-trace.svg")
            .exists()
    );

    // A re-run skips everything; one report deleted and one submission changed: those two only.
    let out = class.batch("out", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the empty one is still an error"
    );
    assert!(stderr_of(&out).contains("6 skipped"), "{}", stderr_of(&out));
    let record = |name: &str| dir.join("submissions").join(name).join("batch.json");
    let before = mtime(&record("correct"));
    std::fs::remove_file(dir.join("submissions/mistaken/report.json")).unwrap();
    std::fs::write(
        class.subs().join("crashes/main.py"),
        "import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n",
    )
    .unwrap();
    let out = class.batch("out", &[]);
    let log = stderr_of(&out);
    assert!(
        log.contains("4 skipped") && log.contains("grading 2"),
        "{log}"
    );
    assert_eq!(mtime(&record("correct")), before, "not graded again");
    let again = gradebook(&dir);
    assert_eq!(
        cell(&again, "mistaken", "mistakes"),
        "caught-up-equality-only"
    );
    assert_eq!(cell(&again, "crashes", "crash"), "2");
    // --force grades everything again, with the same verdicts (regrades repeat).
    let out = class.batch("out", &["--force", "--quiet"]);
    assert!(stderr_of(&out).contains("grading 6"), "{}", stderr_of(&out));
    assert_eq!(gradebook(&dir), again);
}

#[test]
fn three_partitions_merged_equal_the_whole() {
    let class = fixtures();
    let whole = class.batch("whole", &["--quiet"]);
    assert_eq!(whole.status.code(), Some(1), "{}", stderr_of(&whole));
    let mut seen = 0;
    for k in 1..=3 {
        let part = class.batch(
            &format!("part{k}"),
            &["--quiet", "--partition", &format!("{k}/3")],
        );
        assert!(
            matches!(part.status.code(), Some(0 | 1)),
            "{}",
            stderr_of(&part)
        );
        seen += gradebook(&class.out(&format!("part{k}"))).len() - 1;
    }
    assert_eq!(seen, 6, "each submission in exactly one part");
    // A part with no submission, as an artifact keeps it (no empty folder), merges too.
    std::fs::create_dir_all(class.out("empty-part")).unwrap();
    std::fs::write(class.out("empty-part/gradebook.csv"), "submission\n").unwrap();
    let merged = grader()
        .arg("merge")
        .args((1..=3).map(|k| class.out(&format!("part{k}"))))
        .arg(class.out("empty-part"))
        .arg("--out")
        .arg(class.out("merged"))
        .output()
        .unwrap();
    assert_eq!(merged.status.code(), Some(0), "{}", stderr_of(&merged));
    for file in ["gradebook.csv", "class-report.html"] {
        let a = std::fs::read(class.out("whole").join(file)).unwrap();
        let b = std::fs::read(class.out("merged").join(file)).unwrap();
        assert!(
            a == b,
            "{file} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
    }
    assert!(
        class
            .out("merged")
            .join("submissions/correct/report.json")
            .is_file()
    );
    // A submission not graded (its report gone, as after an interrupt) reads the same in both.
    let merge = |shards: &[PathBuf], out: &str| {
        let run = grader()
            .arg("merge")
            .args(shards)
            .arg("--out")
            .arg(class.out(out))
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        (
            std::fs::read(class.out(out).join("gradebook.csv")).unwrap(),
            std::fs::read(class.out(out).join("class-report.html")).unwrap(),
        )
    };
    let parts: Vec<PathBuf> = (1..=3).map(|k| class.out(&format!("part{k}"))).collect();
    for shard in parts.iter().chain([&class.out("whole")]) {
        let _ = std::fs::remove_file(shard.join("submissions/hangs/report.json"));
    }
    let (csv_whole, page_whole) = merge(&[class.out("whole")], "whole-again");
    let (csv_parts, page_parts) = merge(&parts, "parts-again");
    assert!(csv_whole == csv_parts && page_whole == page_parts);
    assert_eq!(
        cell(&gradebook(&class.out("parts-again")), "hangs", "status"),
        "not-run"
    );

    // Merging the whole with a part that graded a submission differently is refused.
    let part_with = (1..=3)
        .map(|k| class.out(&format!("part{k}")))
        .find(|p| p.join("submissions/correct").is_dir())
        .unwrap();
    let report = part_with.join("submissions/correct/report.json");
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::write(&report, text.replacen("\"points\": ", "\"points\": 1", 1)).unwrap();
    let out = grader()
        .arg("merge")
        .arg(class.out("whole"))
        .arg(&part_with)
        .arg("--out")
        .arg(class.out("bad"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("correct is in") && stderr_of(&out).contains("different reports"),
        "{}",
        stderr_of(&out)
    );
    // Shards graded against other cases (or by another grader) are refused, naming them.
    std::fs::write(&report, text.replace("(rev ", "(rev 0")).unwrap();
    let out = grader()
        .arg("merge")
        .args((1..=3).map(|k| class.out(&format!("part{k}"))))
        .arg("--out")
        .arg(class.out("bad2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("different graders") && stderr_of(&out).contains("(correct)"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn an_interrupted_batch_writes_what_is_done_and_a_rerun_grades_the_rest() {
    let class = class("");
    class.add("a-correct", &[("main.py", &mistaken_main())]);
    // Its own timeout is long: the interrupt comes first.
    class.add(
        "b-sleeps",
        &[(
            "main.py",
            "import os\nos.execvp(\"sleep\", [\"sleep\", \"4242\"])\n",
        )],
    );
    std::fs::write(
        class.config(),
        instructor_config("").replace("timeout_secs = 3.0", "timeout_secs = 60.0"),
    )
    .unwrap();
    let mut child = std::process::Command::new(grader_path())
        .arg("batch")
        .arg(class.subs())
        .arg("--instructor-config")
        .arg(class.config())
        .arg("--out")
        .arg(class.out("out"))
        .args(["--jobs", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::signal_once_running(&mut child, "4242", rustix::process::Signal::INT);
    assert_eq!(status.code(), Some(130));
    assert_eq!(common::sleepers_of("4242"), 0, "nothing left running");
    let rows = gradebook(&class.out("out"));
    assert_eq!(cell(&rows, "a-correct", "status"), "graded");
    assert_eq!(cell(&rows, "b-sleeps", "status"), "not-run");
    assert!(
        !class
            .out("out")
            .join("submissions/b-sleeps/report.json")
            .exists()
    );

    class.add("b-sleeps", &[("main.py", &mistaken_main())]);
    let out = class.batch("out", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("1 skipped") && stderr_of(&out).contains("grading 1"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(
        cell(&gradebook(&class.out("out")), "b-sleeps", "status"),
        "graded"
    );
}

#[test]
fn a_grading_past_its_wall_clock_limit_is_stopped_and_the_batch_goes_on() {
    let class = class("allow_submission_build = true\n");
    class.add("a-quick", &[("main.py", &mistaken_main())]);
    class.add(
        "b-build-hangs",
        &[
            ("main.py", &mistaken_main()),
            ("grader.toml", "build = \"sleep 4343\"\n"),
        ],
    );
    // Far more than the quick one needs, even on a loaded machine.
    let out = class.batch("out", &["--submission-timeout", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert_eq!(common::sleepers_of("4343"), 0, "the build was stopped");
    let rows = gradebook(&class.out("out"));
    assert_eq!(cell(&rows, "a-quick", "status"), "graded");
    assert_eq!(cell(&rows, "b-build-hangs", "status"), "error");
    assert!(
        cell(&rows, "b-build-hangs", "error").contains("longer than 10 s"),
        "{rows:?}"
    );
}

#[test]
fn bad_input_is_exit_2_with_a_clear_message() {
    let class = class("");
    class.add("a", &[("main.py", &mistaken_main())]);
    for (partition, says) in [
        ("0/3", "between 1 and 3"),
        ("4/3", "between 1 and 3"),
        ("x/y", "not a whole number"),
    ] {
        let out = class.batch("out", &["--partition", partition]);
        assert_eq!(out.status.code(), Some(2), "{partition}");
        assert!(stderr_of(&out).contains(says), "{}", stderr_of(&out));
    }
    let out = grader()
        .arg("batch")
        .arg(class.dir.path().join("nowhere"))
        .arg("--instructor-config")
        .arg(class.config())
        .arg("--out")
        .arg(class.out("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("nowhere: no such folder"),
        "{}",
        stderr_of(&out)
    );

    // The instructor's mistake is said once, before any submission is graded.
    std::fs::write(class.config(), "cases = [\"missing\"]\n").unwrap();
    let out = class.batch("out", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("missing"), "{}", stderr_of(&out));
    assert!(!class.out("out").join("submissions").exists());

    std::fs::write(class.config(), instructor_config("")).unwrap();
    class.add("a b", &[("main.py", "")]);
    let out = class.batch("out", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("\"a b\"") && stderr_of(&out).contains("safe file names"),
        "{}",
        stderr_of(&out)
    );
    let out = grader()
        .arg("merge")
        .arg(class.dir.path().join("nowhere"))
        .arg("--out")
        .arg(class.out("m"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("not a batch's output folder"),
        "{}",
        stderr_of(&out)
    );
}
