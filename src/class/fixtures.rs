//! Hand-made submissions for the class report's unit tests: small JSON documents read through
//! [`crate::report::json::parse`], as `class::load` reads real ones.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Outcome, Submission};
use crate::report::json::{DocumentV1, parse};

/// The cases every fixture report grades, in corpus order.
pub const CASES: [&str; 4] = ["001-worked", "002-load", "003-stall", "004-acks"];

/// A passing case.
pub fn pass(name: &str) -> Value {
    case(name, "pass", None, None, None)
}

/// A case with the verdict `verdict`, first difference `expected`/`actual`, shrunk with
/// `kind` when given.
pub fn case(
    name: &str,
    verdict: &str,
    expected: Option<&str>,
    actual: Option<&str>,
    kind: Option<&str>,
) -> Value {
    let failing = verdict != "pass";
    json!({
        "name": name,
        "title": format!("The case {name}"),
        "verdict": verdict,
        "signal": if verdict == "crash" { json!("SIGSEGV") } else { Value::Null },
        "exit_code": null,
        "time_limit_secs": null,
        "points": if failing { 0 } else { 1 },
        "max_points": 1,
        "hidden": false,
        "time_secs": 0.01,
        "first_diff_line": if failing && (expected.is_some() || actual.is_some()) { json!(1) } else { Value::Null },
        "expected_line": expected,
        "actual_line": actual,
        "origin": null,
        "stray_lines": [],
        "stray_lines_total": 0,
        "stderr_tail": "",
        "shrunk": kind.map(|k| json!({
            "commands": 2,
            "from_commands": 9,
            "runs": 12,
            "same_as": null,
            "kind": k,
            "trace": "REPLICAS 0 1\nLAG_MAX 0\nMIN_ISR 1\n0 APPEND 1\n1 STATUS\n",
            "expected": [expected.unwrap_or("1 STATUS ISR=0 HW=1 LEO=1 WRITES=OK")],
            "actual": [actual.unwrap_or("")],
            "first_diff": {"line": 1, "expected": expected, "actual": actual},
            "explanation": [],
        })),
        "nondeterminism": null,
    })
}

/// A wrong case whose STATUS's HW differs (shrunk).
pub fn wrong_hw(name: &str) -> Value {
    case(
        name,
        "wrong",
        Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
        Some("700 STATUS ISR=5,6 HW=4 LEO=4 WRITES=OK"),
        Some("STATUS HW"),
    )
}

/// A wrong case whose STATUS's ISR differs (not shrunk).
pub fn wrong_isr(name: &str) -> Value {
    case(
        name,
        "wrong",
        Some("700 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK"),
        Some("700 STATUS ISR=5 HW=4 LEO=4 WRITES=OK"),
        None,
    )
}

/// An exact diagnosis naming `ids`.
pub fn exact(ids: &[&str]) -> Value {
    json!({
        "exact": true,
        "mistakes": ids,
        "details": ids.iter().map(|id| json!({
            "id": id, "title": format!("title of {id}"), "section": "The in-sync set",
            "rule": format!("rule of {id}"), "explanation": "", "smallest_case": "002-load",
        })).collect::<Vec<_>>(),
        "alternatives": [], "closest": [], "slips": [], "beyond_corpus": null, "confirmed_on": 0,
    })
}

/// A diagnosis that is not exact; `closest` its candidate sets with how many failing cases each
/// explains.
pub fn inexact(closest: &[(&[&str], usize)]) -> Value {
    json!({
        "exact": false, "mistakes": [], "details": [], "alternatives": [],
        "closest": closest.iter().map(|(ids, n)| json!({"mistakes": ids, "explains": n, "failing": 3})).collect::<Vec<_>>(),
        "slips": [], "beyond_corpus": null, "confirmed_on": 0,
    })
}

/// A report of `cases` with `diagnosis`.
pub fn report(cases: Vec<Value>, diagnosis: Value) -> Value {
    let passed = cases.iter().filter(|c| c["verdict"] == "pass").count();
    json!({
        "schema_version": 1,
        "grader_version": "isr-grader 0.1.0 (rev 000000000000, cases 0123456789abcdef)",
        "program": "./leader",
        "case_sources": ["cases"],
        "sandbox": "off",
        "notes": [],
        "interrupted": false,
        "build": null,
        "summary": {
            "cases": cases.len(), "passed": passed, "failed": cases.len() - passed,
            "points": passed, "max_points": cases.len(), "not_run": 0,
        },
        "cases": cases,
        "diagnosis": diagnosis,
        "explored": null,
        "did_not_run": null,
    })
}

/// A report passing every fixture case.
pub fn passing() -> Value {
    report(CASES.iter().map(|c| pass(c)).collect(), exact(&[]))
}

/// The fixture cases with `failing` (case index → case document) in place of passes.
pub fn with_failures(failing: &[(usize, Value)]) -> Vec<Value> {
    CASES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            failing
                .iter()
                .find(|(j, _)| *j == i)
                .map_or_else(|| pass(name), |(_, c)| c.clone())
        })
        .collect()
}

/// A report whose build failed with `output`.
pub fn build_failed(output: &str) -> Value {
    let mut r = report(Vec::new(), Value::Null);
    r["build"] = json!({"command": "cargo build --release", "ok": false, "output_tail": output});
    r["summary"]["max_points"] = json!(4);
    r
}

/// A report of a program that did not run, ending every run with `line`.
pub fn did_not_run(line: &str) -> Value {
    let cases = CASES
        .iter()
        .map(|c| {
            case(
                c,
                "crash",
                Some("1 STATUS ISR=0 HW=0 LEO=0 WRITES=OK"),
                None,
                None,
            )
        })
        .collect();
    let mut r = report(cases, Value::Null);
    r["did_not_run"] = json!({"line": line, "cause": "the interpreter is missing"});
    r
}

/// A submission named `name` whose `report.json` is `doc`, in a folder that does not exist.
pub fn sub(name: &str, doc: &Value) -> Submission {
    let outcome = match parse(&doc.to_string()) {
        Ok(DocumentV1::Report(r)) => Outcome::Graded(r),
        Ok(DocumentV1::Error(e)) => Outcome::Error(e.error),
        Err(e) => panic!("fixture {name} is not a report: {e}"),
    };
    Submission {
        name: name.to_string(),
        dir: PathBuf::from("/nonexistent/submissions").join(name),
        outcome,
    }
}

/// A submission the grader could not grade.
pub fn error(name: &str, message: &str) -> Submission {
    Submission {
        name: name.to_string(),
        dir: PathBuf::from("/nonexistent/submissions").join(name),
        outcome: Outcome::Error(message.to_string()),
    }
}

/// A small class: two students with the same catalog mistake, one with another, one passing,
/// two unexplained alike and one unexplained otherwise, a build failure, a program that did not
/// run, a grading error.
pub fn small_class() -> Vec<Submission> {
    let eq_only = report(
        with_failures(&[(1, wrong_isr("002-load")), (2, wrong_isr("003-stall"))]),
        exact(&["caught-up-equality-only"]),
    );
    let ack = report(
        with_failures(&[(
            3,
            case(
                "004-acks",
                "wrong",
                Some("5 ACK 0"),
                None,
                Some("missing ACK"),
            ),
        )]),
        exact(&["ack-immediate"]),
    );
    let hw_plus_one = report(
        with_failures(&[(0, wrong_hw("001-worked")), (1, wrong_hw("002-load"))]),
        inexact(&[(&["hw-all-replicas"], 1)]),
    );
    let crashes = report(
        with_failures(&[(
            2,
            case("003-stall", "crash", None, None, Some("crash SIGSEGV")),
        )]),
        inexact(&[]),
    );
    vec![
        sub("alice", &eq_only),
        sub("bob", &passing()),
        sub("carol", &hw_plus_one),
        sub("dave", &eq_only),
        sub("erin", &ack),
        sub("frank", &hw_plus_one),
        sub("grace", &crashes),
        sub(
            "heidi",
            &build_failed("error[E0425]: cannot find value `x`\n --> src/main.rs:3:5\n"),
        ),
        sub("ivan", &did_not_run("python3: not found")),
        error(
            "judy",
            "submissions/judy/report.json: expected value at line 1 column 1",
        ),
    ]
}
