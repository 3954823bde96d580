//! Beyond the corpus, end to end: exploration catches a bug the corpus misses and shows a trace
//! of a few commands; failing cases are shrunk (and `isr-grader shrink` does it standalone);
//! nondeterminism is a verdict; hidden cases stay hidden from students in every report format;
//! a program that did not run gets one headline.

use std::path::{Path, PathBuf};
use std::process::Output;

use isr_reference::shrink::divergence_kind;
use isr_reference::{CATALOG, FaultSet, Trace, audit::catalog_witness_len, output};

mod common;
use common::{corpus_args, grader, grader_path, leader, root};

fn student(script: &str) -> Vec<String> {
    vec![
        "sh".to_string(),
        root()
            .join("tests/fixtures/students")
            .join(script)
            .display()
            .to_string(),
        grader_path(),
    ]
}

/// `isr-grader test` on the whole corpus, with time budgets no loaded test machine reaches, so
/// that a seed decides everything.
fn test_run(extra: &[&str], program: &[String]) -> Output {
    grader()
        .arg("test")
        .args(corpus_args())
        .args(["--explore-seconds", "600", "--shrink-seconds", "600"])
        .args(extra)
        .arg("--")
        .args(program)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_bug_the_corpus_misses_is_caught_by_exploration_and_shrunk() {
    let program = student("isr_of_four.sh");
    // The corpus alone passes it.
    let out = test_run(&["--format", "json", "--explore", "0"], &program);
    assert_eq!(out.status.code(), Some(0));
    let doc = common::json_report(&out);
    assert_eq!(doc["summary"]["passed"], doc["summary"]["cases"]);

    // Exploration finds it; by default it is reported and worth 0 points.
    let out = test_run(
        &["--format", "json", "--seed", "2", "--explore", "30"],
        &program,
    );
    let doc = common::json_report(&out);
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc["summary"]["points"], doc["summary"]["max_points"]);
    let explored = &doc["explored"];
    assert_eq!(explored["seed"], 2);
    let failing = explored["failing"].as_array().unwrap();
    assert!(!failing.is_empty(), "{explored:#}");
    let first = &failing[0];
    assert!(first["name"].as_str().unwrap().starts_with("explore-"));
    let shrunk = &first["shrunk"];
    assert!(shrunk["commands"].as_u64().unwrap() <= 3, "{shrunk:#}");
    assert!(shrunk["trace"].as_str().unwrap().contains("STATUS"));

    // The same seed replays the same exploration.
    let again = common::json_report(&test_run(
        &["--format", "json", "--seed", "2", "--explore", "30"],
        &program,
    ));
    assert_eq!(again["explored"], doc["explored"]);

    // Failing explored traces may cost points.
    let out = test_run(
        &[
            "--format",
            "json",
            "--seed",
            "2",
            "--explore",
            "30",
            "--explore-points",
            "1",
        ],
        &program,
    );
    assert_eq!(out.status.code(), Some(1));
    let doc = common::json_report(&out);
    assert!(doc["summary"]["points"].as_u64() < doc["summary"]["max_points"].as_u64());

    // What a student reads.
    let out = test_run(&["--seed", "2", "--explore", "30"], &program);
    let human = text(&out);
    assert!(
        human.contains("a bug the corpus does not reach")
            && human.contains("smallest trace where your program differs (1 command"),
        "{human}"
    );
}

#[test]
fn a_diagnosis_the_explored_traces_contradict_is_not_exact() {
    // A catalog mistake plus the bug the corpus misses: the corpus names the mistake exactly.
    let mut program = student("isr_of_four.sh");
    program.push("hw-not-on-shrink".into());
    let out = test_run(&["--format", "json", "--explore", "0"], &program);
    let doc = common::json_report(&out);
    assert_eq!(doc["diagnosis"]["exact"], true, "{:#}", doc["diagnosis"]);
    // Exploration shows it is not exactly that mistake, and where they differ.
    let out = test_run(
        &["--format", "json", "--seed", "2", "--explore", "30"],
        &program,
    );
    let d = &common::json_report(&out)["diagnosis"];
    assert_eq!(d["exact"], false, "{d:#}");
    let b = &d["beyond_corpus"];
    assert_eq!(b["mistakes"][0], "hw-not-on-shrink");
    assert!(b["shrunk"]["commands"].as_u64().unwrap() <= 3, "{b:#}");
    // The mistake alone is confirmed on the explored traces.
    let out = test_run(
        &["--format", "json", "--seed", "2", "--explore", "30"],
        &leader("hw-not-on-shrink"),
    );
    let d = &common::json_report(&out)["diagnosis"];
    assert_eq!(d["exact"], true);
    assert_eq!(d["confirmed_on"], 30);
}

#[test]
fn a_program_printing_the_isr_in_random_order_is_nondeterministic() {
    let out = test_run(
        &["--format", "json", "--explore", "0", "--filter", "03*"],
        &student("isr_random_order.sh"),
    );
    let doc = common::json_report(&out);
    // Cases 030 to 037 print many ISRs of two or more members: two runs of one of them cannot
    // all agree but by a chance far below one in a million.
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["verdict"] == "nondeterministic")
        .unwrap_or_else(|| panic!("{doc:#}"));
    let n = &case["nondeterminism"];
    assert_ne!(n["first"], n["second"]);
    assert!(n["cause"].as_str().unwrap().contains("HashSet"), "{n:#}");
    // The reference itself is not.
    let out = test_run(
        &["--format", "json", "--explore", "0"],
        &[grader_path(), "leader".into()],
    );
    assert_eq!(out.status.code(), Some(0));
}

/// Lines of the hidden cases' traces and expected outputs that no public case has (times of
/// 100 and more, so that a shrunk trace of a few commands cannot repeat them by chance).
fn hidden_only_lines() -> Vec<String> {
    let lines = |dir: &str, ext: &str| -> Vec<String> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == ext) {
                v.extend(
                    std::fs::read_to_string(&p)
                        .unwrap()
                        .lines()
                        .map(|l| l.trim().to_string()),
                );
            }
        }
        v
    };
    let public: std::collections::HashSet<String> = ["out", "trace"]
        .iter()
        .flat_map(|x| lines("cases/public", x))
        .collect();
    let mut hidden: Vec<String> = ["out", "trace"]
        .iter()
        .flat_map(|x| lines("cases/hidden", x))
        .filter(|l| {
            l.split_whitespace()
                .next()
                .and_then(|t| t.parse::<u64>().ok())
                .is_some_and(|t| t >= 100)
        })
        .filter(|l| !public.contains(l))
        .collect();
    hidden.sort();
    hidden.dedup();
    hidden
}

fn all_reports(dir: &Path, extra: &[&str]) -> String {
    let program = leader("hw-not-on-shrink");
    let junit = dir.join("junit.xml");
    let gs = dir.join("results.json");
    let mut args = vec!["--explore", "0"];
    args.extend_from_slice(extra);
    let json = text(&test_run(
        &[
            &args[..],
            &[
                "--format",
                "json",
                "--junit",
                junit.to_str().unwrap(),
                "--gradescope",
                gs.to_str().unwrap(),
            ],
        ]
        .concat(),
        &program,
    ));
    let human = text(&test_run(&[&args[..], &["--verbose"]].concat(), &program));
    format!(
        "{json}\n{human}\n{}\n{}",
        std::fs::read_to_string(junit).unwrap(),
        std::fs::read_to_string(gs).unwrap()
    )
}

#[test]
fn hidden_cases_stay_hidden_from_students_in_every_format() {
    let hidden = hidden_only_lines();
    assert!(hidden.len() > 100);
    let dir = tempfile::tempdir().unwrap();
    let student = all_reports(dir.path(), &[]);
    let leaked: Vec<&String> = hidden
        .iter()
        .filter(|l| student.contains(l.as_str()))
        .collect();
    assert!(
        leaked.is_empty(),
        "hidden lines in a student's report: {leaked:?}"
    );
    // Failing hidden cases still teach: a shrunk trace and the mistake's name.
    assert!(student.contains("a hidden case: its trace and expected output are not shown"));
    assert!(student.contains("hw-not-on-shrink"));
    // Instructors see everything (so the check above can fail).
    let instructor = all_reports(dir.path(), &["--show-hidden"]);
    assert!(hidden.iter().any(|l| instructor.contains(l.as_str())));
}

#[test]
fn a_program_that_did_not_run_gets_one_headline() {
    let py = root().join("tests/fixtures/students/python_syntax_error/main.py");
    let out = grader()
        .args(["test", "--"])
        .arg("python3")
        .arg(&py)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let human = text(&out);
    assert_eq!(
        human.matches("Your program did not run").count(),
        1,
        "{human}"
    );
    assert!(human.contains("SyntaxError") && human.contains("Python could not parse"));
    assert!(!human.contains("Closest known mistakes") && !human.contains("── 001"));

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("leader.py");
    std::fs::write(&script, "#!/usr/bin/env python3\r\nprint('hi')\r\n").unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    // A CRLF `#!` line is caught before anything runs (exit 2, said once, naming the cause).
    let out = grader().args(["test", "--"]).arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CRLF"));
}

#[test]
fn shrink_command_shrinks_and_saves_a_case() {
    let out = grader()
        .args(["shrink", "014-hw-not-on-shrink", "--"])
        .args(leader("hw-not-on-shrink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let human = text(&out);
    assert!(
        human.contains("smallest trace where your program differs"),
        "{human}"
    );

    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("cases/public/030-constant-load.trace");
    let out = grader()
        .arg("shrink")
        .arg(&trace)
        .arg("--save")
        .arg(dir.path())
        .arg("--")
        .args(leader("caught-up-equality-only"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let saved = dir.path().join("shrunk-030-constant-load.toml");
    let meta = std::fs::read_to_string(&saved).unwrap();
    assert!(
        meta.contains("kind = \"shrunk\"") && meta.contains("030-constant-load"),
        "{meta}"
    );
    // The saved case is a valid case: the reference passes it, the mistake fails it.
    let run = |program: Vec<String>| {
        grader()
            .args(["test", "--explore", "0", "--cases"])
            .arg(dir.path())
            .arg("--")
            .args(program)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(run(vec![grader_path(), "leader".into()]), Some(0));
    assert_eq!(run(leader("caught-up-equality-only")), Some(1));

    // Nothing to shrink when the program is right; a bad trace file is an error with its line.
    let out = grader()
        .arg("shrink")
        .arg(&trace)
        .arg("--")
        .args([grader_path(), "leader".into()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let bad = dir.path().join("bad.trace");
    std::fs::write(&bad, "REPLICAS 1 2\nLAG_MAX 5\nMIN_ISR 1\n0 FETCH 2 9\n").unwrap();
    let out = grader()
        .arg("shrink")
        .arg(&bad)
        .arg("--")
        .args([grader_path(), "leader".into()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.trace:4"));
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

/// For every catalog mistake, run as `isr-grader leader --fault ID`: the largest corpus case
/// that differs the way the catalog's witness does shrinks to at most one command more than that
/// witness (the exhaustive search's shortest).
#[test]
fn every_mistake_shrinks_through_the_cli_to_within_one_command_of_its_witness() {
    let mut traces: Vec<(PathBuf, Trace)> = Vec::new();
    for dir in ["cases/public", "cases/hidden"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "trace"))
            .collect();
        paths.sort();
        for p in paths {
            let t = Trace::parse("t", &std::fs::read_to_string(&p).unwrap()).unwrap();
            traces.push((p, t));
        }
    }
    let mut table = Vec::new();
    let mut failures = Vec::new();
    for info in CATALOG {
        let set = FaultSet::one(info.fault);
        let kind = |t: &Trace| {
            let expected = lines(&output(t, FaultSet::NONE));
            if expected.is_empty() {
                return None;
            }
            divergence_kind(&expected, &lines(&output(t, set))).map(|k| k.1)
        };
        let witness_kind = kind(&Trace::parse(info.id, info.witness).unwrap());
        let pick = |same: bool| {
            traces
                .iter()
                .filter(|(_, t)| kind(t).is_some() && (!same || kind(t) == witness_kind))
                .max_by_key(|(_, t)| t.steps.len())
        };
        let (path, start) = pick(true).or_else(|| pick(false)).unwrap();
        let out = grader()
            .arg("shrink")
            .arg(path)
            .arg("--")
            .args(leader(info.id))
            .output()
            .unwrap();
        let human = text(&out);
        let head = human
            .lines()
            .find(|l| l.starts_with("smallest trace where your program differs ("))
            .unwrap_or_else(|| panic!("{}: {human}", info.id));
        let n: usize = head["smallest trace where your program differs (".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let witness = catalog_witness_len(info.fault);
        table.push(format!(
            "{:<28} {:>5} -> {:>2} (witness {witness})",
            info.id,
            start.steps.len(),
            n
        ));
        if n > witness + 1 {
            failures.push(format!(
                "{}: {n} commands, witness {witness}\n{human}",
                info.id
            ));
        }
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
