//! The corpus and its commands: `audit` passes on the committed corpus, `bless --check` passes,
//! every generated case regenerates bit for bit, `gen` is deterministic and always writes valid
//! traces; and each of those checks fails when it should.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use isr_grader::cases::{self, CaseSource, Origin};
use isr_grader::corpus;
use isr_reference::r#gen::{self, Kind, Value};
use isr_reference::{Fault, FaultSet, Trace};
use proptest::prelude::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn grader() -> Command {
    let mut c = Command::cargo_bin("isr-grader").unwrap();
    c.current_dir(root());
    c
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn committed() -> Vec<cases::Case> {
    let sources: Vec<CaseSource> = corpus::DEFAULT_DIRS
        .iter()
        .map(|d| CaseSource::Dir(root().join(d)))
        .collect();
    cases::load(&sources).unwrap()
}

/// Copies every file of `from` (flat) into a new folder under `to`.
fn copy_dir(from: &Path, to: &Path) -> PathBuf {
    let dest = to.join(from.file_name().unwrap());
    std::fs::create_dir_all(&dest).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, dest.join(p.file_name().unwrap())).unwrap();
        }
    }
    dest
}

#[test]
fn audit_passes_on_the_committed_corpus() {
    let out = grader().arg("audit").output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Audit passed"), "{text}");
    insta::assert_snapshot!("audit_report", text);
}

#[test]
fn audit_json_has_every_mistake_caught_twice_and_no_ambiguity() {
    let out = grader().args(["audit", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["ok"], true);
    let kills = doc["kills"].as_array().unwrap();
    assert_eq!(kills.len(), isr_reference::CATALOG.len());
    for k in kills {
        assert!(k["cases"].as_array().unwrap().len() >= 2, "{k}");
        assert!(k["public"].as_u64().unwrap() >= 1, "{k}");
    }
    // Every group left is a recorded equivalence: the corpus tells every other pair apart.
    for g in doc["groups"].as_array().unwrap() {
        assert_eq!(g["kind"], "equivalent", "{g}");
    }
}

#[test]
fn public_and_hidden_sets_each_catch_and_tell_apart_every_mistake() {
    let cases = committed();
    for visibility in [cases::Visibility::Public, cases::Visibility::Hidden] {
        let part: Vec<cases::Case> = cases
            .iter()
            .filter(|c| c.meta.visibility == visibility)
            .cloned()
            .collect();
        let (report, _) = corpus::run_audit(&part);
        for k in &report.kills {
            assert!(
                k.cases.len() >= 2,
                "{visibility:?}: {} {:?}",
                k.fault,
                k.cases
            );
        }
        for g in &report.groups {
            assert_eq!(
                g.kind,
                isr_reference::audit::GroupKind::Equivalent,
                "{visibility:?}: {:?}",
                g.sets
                    .iter()
                    .map(|&s| report.sets[s].to_string())
                    .collect::<Vec<_>>()
            );
        }
    }
    // The hidden set is not a copy of the public one.
    let traces = |v| {
        cases
            .iter()
            .filter(|c| c.meta.visibility == v)
            .map(|c| c.trace.steps.clone())
            .collect::<Vec<_>>()
    };
    let public = traces(cases::Visibility::Public);
    for h in traces(cases::Visibility::Hidden) {
        assert!(!public.contains(&h));
    }
}

#[test]
fn audit_fails_on_a_corpus_that_misses_mistakes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("few");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["001-worked-trace", "006-shrink-inclusive"] {
        for ext in ["trace", "toml", "out"] {
            let f = format!("{name}.{ext}");
            std::fs::copy(root().join("cases/public").join(&f), dir.join(&f)).unwrap();
        }
    }
    let out = grader().arg("audit").arg(&dir).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Audit FAILED"), "{text}");
    assert!(
        text.contains("caught-up-equality-only is caught by no case"),
        "{text}"
    );
    assert!(
        text.contains("shrink-inclusive is caught by only one case"),
        "{text}"
    );
    assert!(text.contains("NOT TOLD APART (single mistakes)"), "{text}");
    assert!(
        text.contains("has no handwritten smallest case (NNN-rejoin-early)"),
        "{text}"
    );
}

#[test]
fn bless_check_passes_on_the_committed_corpus() {
    let out = grader().args(["bless", "--check"]).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("up to date"), "{text}");
}

#[test]
fn bless_shows_and_fixes_a_stale_output_and_a_drifted_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_dir(&root().join("cases/public"), tmp.path());
    // A wrong expected output, a missing one, and a generated trace edited by hand.
    std::fs::write(
        dir.join("006-shrink-inclusive.out"),
        "500 STATUS ISR=5 HW=0\n",
    )
    .unwrap();
    std::fs::remove_file(dir.join("007-shrink-removes-leader.out")).unwrap();
    let generated = dir.join("030-constant-load.trace");
    let original = std::fs::read_to_string(&generated).unwrap();
    std::fs::write(&generated, original.replacen("APPEND", "PRODUCE", 1)).unwrap();

    let out = grader()
        .args(["bless", "--check"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let total = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "trace")
        })
        .count();
    assert!(
        text.contains(&format!("3 of {total} cases out of date")),
        "{text}"
    );
    assert!(text.contains("-500 STATUS ISR=5 HW=0"), "{text}");
    assert!(
        text.contains("+500 STATUS ISR=5,6,7 HW=0 LEO=0 WRITES=OK"),
        "{text}"
    );
    assert!(
        text.contains("does not regenerate bit for bit from its metadata"),
        "{text}"
    );
    // --check wrote nothing.
    assert!(!dir.join("007-shrink-removes-leader.out").exists());

    let out = grader().arg("bless").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(&generated).unwrap(), original);
    assert_eq!(
        std::fs::read(dir.join("006-shrink-inclusive.out")).unwrap(),
        std::fs::read(root().join("cases/public/006-shrink-inclusive.out")).unwrap()
    );
    let out = grader()
        .args(["bless", "--check"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn every_generated_case_regenerates_bit_for_bit() {
    let cases = committed();
    let mut generated = 0;
    for case in &cases {
        if let Some(regen) = corpus::regenerate(case) {
            generated += 1;
            assert_eq!(regen.unwrap(), case.trace_text, "{}", case.name);
        }
    }
    assert!(generated >= 20, "only {generated} generated cases");
    // And the check notices a change of seed.
    let mut case = cases
        .iter()
        .find(|c| matches!(c.meta.origin, Origin::Generated { .. }))
        .unwrap()
        .clone();
    if let Origin::Generated { seed, .. } = &mut case.meta.origin {
        *seed += 1;
    }
    assert_ne!(corpus::regenerate(&case).unwrap().unwrap(), case.trace_text);
}

#[test]
fn expected_outputs_are_the_references() {
    for case in committed() {
        assert_eq!(
            case.expected.as_deref(),
            Some(isr_reference::output(&case.trace, FaultSet::NONE).as_str()),
            "{}",
            case.name
        );
    }
}

#[test]
fn targets_are_caught_and_cases_are_in_the_lessons_order() {
    let cases = committed();
    assert_eq!(cases[0].name, "001-worked-trace");
    for case in &cases {
        let reference = isr_reference::output(&case.trace, FaultSet::NONE);
        for t in &case.meta.targets {
            let f = Fault::from_id(t).unwrap();
            assert_ne!(
                isr_reference::output(&case.trace, FaultSet::one(f)),
                reference,
                "{} does not catch its target {t}",
                case.name
            );
        }
    }
    // One handwritten smallest case per catalog mistake, named NNN-<id>.
    for info in isr_reference::CATALOG {
        let own: Vec<_> = cases
            .iter()
            .filter(|c| corpus::per_mistake(c) == Some(info.fault))
            .collect();
        assert_eq!(own.len(), 1, "{}", info.id);
        assert_eq!(
            own[0].meta.targets.first().map(String::as_str),
            Some(info.id)
        );
    }
}

#[test]
fn gen_is_deterministic() {
    let run = |seed: &str| {
        let out = grader()
            .args(["gen", "stall", "--seed", seed, "-p", "mode=both"])
            .output()
            .unwrap();
        assert!(out.status.success());
        stdout(&out)
    };
    let a = run("7");
    assert_eq!(a, run("7"));
    assert_ne!(a, run("8"));
    assert!(
        a.starts_with("# generated: isr-grader gen stall --seed 7 "),
        "{a}"
    );
    Trace::parse("stall", &a).unwrap();
}

#[test]
fn gen_rejects_bad_parameters() {
    let out = grader()
        .args(["gen", "rejoin", "-p", "at=sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("below|at|above|leo|all"), "{err}");
    let out = grader().args(["gen", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known scenarios"));
}

#[test]
fn gen_writes_a_whole_case_and_keeps_edited_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cases");
    let write = || {
        let out = grader()
            .args(["gen", "rejoin", "--seed", "3", "-p", "at=all", "--case-dir"])
            .arg(&dir)
            .args(["--name", "900-rejoin", "--visibility", "public"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    write();
    let loaded = cases::load(&[CaseSource::Dir(dir.clone())]).unwrap();
    let case = &loaded[0];
    assert_eq!(case.name, "900-rejoin");
    assert_eq!(case.meta.visibility, cases::Visibility::Public);
    assert_eq!(
        case.expected.as_deref(),
        Some(isr_reference::output(&case.trace, FaultSet::NONE).as_str())
    );
    assert_eq!(corpus::regenerate(case).unwrap().unwrap(), case.trace_text);
    assert!(!case.meta.targets.is_empty());
    // An instructor edits the title; regenerating keeps it.
    let meta = dir.join("900-rejoin.toml");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, text.replace("rejoin, seed 3", "Rejoins, my way")).unwrap();
    write();
    let again = cases::load(&[CaseSource::Dir(dir)]).unwrap();
    assert_eq!(again[0].meta.title, "Rejoins, my way");
    assert_eq!(again[0].trace_text, case.trace_text);
}

#[test]
fn gen_list_snapshot() {
    let out = grader().args(["gen", "--list"]).output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    for g in r#gen::registry() {
        assert!(text.contains(g.name));
    }
    insta::assert_snapshot!("gen_list", text);
}

/// A generator and parameters drawn from its own parameter specs (counts kept small).
fn generator_and_params() -> impl Strategy<Value = (usize, u64, Vec<(String, Value)>)> {
    let n = r#gen::registry().len();
    (
        0..n,
        any::<u64>(),
        proptest::collection::vec(any::<u64>(), 8),
    )
        .prop_map(|(g, seed, draws)| {
            let generator = &r#gen::registry()[g];
            let mut given = Vec::new();
            for (p, d) in generator.params.iter().zip(draws) {
                if d % 3 == 0 {
                    continue; // keep the seed's default
                }
                let v = match p.kind {
                    Kind::Int { min, max, .. } => {
                        let cap = if p.name == "lag_max" {
                            max
                        } else {
                            max.min(min + 60)
                        };
                        Value::Int(min + d % (cap - min + 1))
                    }
                    Kind::Word { words, .. } => Value::Word(words[d as usize % words.len()].into()),
                };
                given.push((p.name.to_string(), v));
            }
            (g, seed, given)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn generators_always_write_valid_reproducible_traces((g, seed, given) in generator_and_params()) {
        let generator = &r#gen::registry()[g];
        // The long generator's default is thousands of commands; keep it short here.
        let mut given = given;
        if generator.name == "mixed" && !given.iter().any(|(k, _)| k == "commands") {
            given.push(("commands".into(), Value::Int(300)));
        }
        let a = generator.generate(seed, &given).unwrap();
        let t = Trace::parse(generator.name, &a.text).map_err(|e| TestCaseError::fail(format!("{e}\n{}", a.text)))?;
        prop_assert_eq!(t.steps.len(), a.commands);
        prop_assert!(a.commands >= 1);
        prop_assert_eq!(&a, &generator.generate(seed, &given).unwrap());
        // The header comment names everything needed to regenerate it.
        let first = a.text.lines().next().unwrap();
        let prefix = format!("# generated: isr-grader gen {} --seed {seed}", generator.name);
        prop_assert!(first.starts_with(&prefix));
        for (k, v) in &a.params {
            let shown = format!(" -p {k}={v}");
            prop_assert!(first.contains(&shown));
        }
        // Replica ids: not sorted, and the leader is not the smallest.
        let ids = &t.config.replicas;
        if ids.len() >= 2 {
            prop_assert!(ids[0] != *ids.iter().min().unwrap(), "{:?}", ids);
        }
        // The correct leader never panics and every mistake set runs on it.
        for f in Fault::all() {
            let _ = isr_reference::output(&t, FaultSet::one(f));
        }
    }
}
