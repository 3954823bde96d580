//! The reference leader against the lesson, the catalog and its invariants.

use std::process::Command as Proc;

use isr_reference::explain::explain;
use isr_reference::{CATALOG, Command, Config, Fault, FaultSet, Leader, Step, Trace, output};
use proptest::prelude::*;

const WORKED: &str = "REPLICAS 5 6 7
LAG_MAX 500
MIN_ISR 2
0 APPEND 4
100 FETCH 6 4
120 FETCH 7 2
130 STATUS
400 FETCH 6 4
550 STATUS
600 FETCH 7 4
601 STATUS
";

#[test]
fn worked_trace_output() {
    let t = Trace::parse("worked.trace", WORKED).unwrap();
    let out = output(&t, FaultSet::NONE);
    assert_eq!(
        out,
        "130 STATUS ISR=5,6,7 HW=2 LEO=4 WRITES=OK\n550 STATUS ISR=5,6 HW=4 LEO=4 WRITES=OK\n601 STATUS ISR=5,6,7 HW=4 LEO=4 WRITES=OK\n"
    );
    insta::assert_snapshot!("worked_output", out);
}

#[test]
fn worked_trace_explained() {
    let t = Trace::parse("worked.trace", WORKED).unwrap();
    insta::assert_snapshot!("worked_explain", explain(&t, FaultSet::NONE));
}

#[test]
fn every_catalog_witness_shows_its_mistake() {
    for info in CATALOG {
        let t = Trace::parse(info.id, info.witness).unwrap();
        let good = output(&t, FaultSet::NONE);
        let bad = output(&t, FaultSet::one(info.fault));
        assert_ne!(good, bad, "{}", info.id);
        assert!(
            !good.is_empty(),
            "{}: a program that prints nothing would pass",
            info.id
        );
        let shown = format!(
            "{}\n--- trace\n{}--- correct\n{}--- with the mistake\n{}--- explained with the mistake\n{}",
            info.title,
            info.witness,
            good,
            bad,
            explain(&t, FaultSet::one(info.fault))
        );
        insta::assert_snapshot!(format!("fault_{}", info.id), shown);
    }
}

#[test]
fn catalog_entries_are_complete() {
    for info in CATALOG {
        assert!(!info.title.is_empty() && !info.rule.is_empty() && !info.explanation.is_empty());
        assert!(
            [
                "Followers are consumers",
                "The in-sync set",
                "Durability knobs"
            ]
            .contains(&info.section)
                || info.section.starts_with("Your exercise"),
            "{}",
            info.id
        );
    }
    for id in [
        "caught-up-equality-only",
        "caught-up-uses-fetch-now",
        "caught-up-strict-previous",
        "caught-up-stale-leader-leo",
        "shrink-inclusive",
        "shrink-removes-leader",
        "shrink-by-fetch-time",
        "rejoin-early",
        "rejoin-needs-leader-leo",
        "rejoin-never",
        "hw-all-replicas",
        "hw-can-decrease",
        "hw-not-on-shrink",
        "hw-not-on-append",
        "min-isr-off-by-one",
        "min-isr-ignored",
        "ack-immediate",
        "ack-first-record",
        "ack-all-replicas",
        "refused-still-appends",
        "isr-order-sorted",
        "writes-off-by-one",
        "writes-counts-replicas",
    ] {
        assert!(
            Fault::from_id(id).is_some(),
            "{id} missing from the catalog"
        );
    }
}

/// Raw material for a valid trace: fetch offsets are fractions of the leader's LEO at that moment,
/// resolved by running the correct leader.
#[derive(Debug, Clone)]
enum Raw {
    Append(u64),
    Produce(u64),
    Fetch(usize, u16),
    Status,
}

fn raw_cmd() -> impl Strategy<Value = (u64, Raw)> {
    let dt = prop_oneof![Just(0u64), 0u64..3, 0u64..40];
    let cmd = prop_oneof![
        (1u64..4).prop_map(Raw::Append),
        (1u64..4).prop_map(Raw::Produce),
        (0usize..8, any::<u16>()).prop_map(|(f, o)| Raw::Fetch(f, o)),
        Just(Raw::Status),
    ];
    (dt, cmd)
}

fn valid_trace() -> impl Strategy<Value = Trace> {
    (
        1usize..5,
        prop_oneof![Just(0u64), 0u64..50],
        1u64..5,
        any::<u64>(),
        prop::collection::vec(raw_cmd(), 0..80),
    )
        .prop_map(|(n, lag_max, min_isr, salt, raws)| {
            // Ids unsorted and not starting at the leader's.
            let replicas: Vec<u64> = (0..n as u64)
                .map(|i| (i * 7 + salt % 5) % 11 + 3 * (i % 2))
                .collect();
            let mut replicas_unique = Vec::new();
            for r in replicas {
                if !replicas_unique.contains(&r) {
                    replicas_unique.push(r);
                }
            }
            let config = Config {
                replicas: replicas_unique,
                lag_max,
                min_isr,
            };
            let mut leader = Leader::new(&config, FaultSet::NONE);
            let mut t = 0;
            let mut steps = Vec::new();
            let mut sink = Vec::new();
            for (k, (dt, raw)) in raws.into_iter().enumerate() {
                t += dt;
                let cmd = match raw {
                    Raw::Append(n) => Command::Append(n),
                    Raw::Produce(n) => Command::Produce(n),
                    Raw::Status => Command::Status,
                    Raw::Fetch(f, o) => {
                        if config.replicas.len() < 2 {
                            Command::Status
                        } else {
                            let follower = config.replicas[1 + f % (config.replicas.len() - 1)];
                            let leo = leader.leo();
                            // Mostly near the LEO, sometimes anywhere.
                            let offset = if o % 3 == 0 {
                                leo.saturating_sub(u64::from(o % 5))
                            } else {
                                u64::from(o) % (leo + 1)
                            };
                            Command::Fetch { follower, offset }
                        }
                    }
                };
                let step = Step {
                    line: 4 + k,
                    t,
                    cmd,
                };
                leader.step(&step, &mut sink);
                steps.push(step);
            }
            Trace {
                name: "gen".into(),
                config,
                steps,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn invariants_of_the_correct_leader(trace in valid_trace()) {
        // The text form parses back to the same trace (it is valid).
        let reparsed = Trace::parse("gen", &trace.to_text()).unwrap();
        prop_assert_eq!(&reparsed.steps, &trace.steps);
        let mut leader = Leader::new(&trace.config, FaultSet::NONE);
        let leader_id = trace.config.leader();
        let mut pending: Vec<(u64, u64)> = Vec::new();
        let mut hw = 0;
        for step in &trace.steps {
            let before_leo = leader.leo();
            let mut out = Vec::new();
            leader.step(step, &mut out);
            prop_assert!(leader.hw() >= hw, "HW decreased");
            hw = leader.hw();
            prop_assert!(leader.hw() <= leader.leo(), "HW above the leader's LEO");
            prop_assert!(leader.isr().first() == Some(&leader_id), "leader not in the ISR");
            let text = String::from_utf8(out).unwrap();
            let refused = text.lines().any(|l| l.split(' ').nth(1) == Some("NOT_ENOUGH_REPLICAS"));
            match step.cmd {
                Command::Produce(n) if !refused => pending.push((before_leo, before_leo + n)),
                Command::Produce(_) => prop_assert_eq!(leader.leo(), before_leo, "refused produce appended"),
                _ => prop_assert!(!refused, "only PRODUCE is refused"),
            }
            for line in text.lines() {
                let parts: Vec<&str> = line.split(' ').collect();
                prop_assert_eq!(parts[0], step.t.to_string());
                match parts[1] {
                    "ACK" => {
                        let base: u64 = parts[2].parse().unwrap();
                        let i = pending.iter().position(|p| p.0 == base);
                        prop_assert!(i.is_some(), "ACK {} for no waiting request", base);
                        let (_, end) = pending.remove(i.unwrap());
                        prop_assert!(leader.hw() >= end, "ACK before the HW passed the request");
                    }
                    "NOT_ENOUGH_REPLICAS" => prop_assert!(matches!(step.cmd, Command::Produce(_))),
                    "STATUS" => prop_assert_eq!(step.cmd, Command::Status),
                    other => prop_assert!(false, "unexpected event {}", other),
                }
            }
            // Every waiting request is still below what the HW must reach.
            for (_, end) in &pending {
                prop_assert!(*end > leader.hw(), "a request was answerable but not answered");
            }
            prop_assert_eq!(leader.waiting(), pending.len());
        }
    }

    #[test]
    fn every_mistake_set_runs_without_panicking(trace in valid_trace(), pick in 0usize..1000) {
        let sets = FaultSet::singles_and_pairs();
        let set = sets[pick % sets.len()];
        let _ = output(&trace, set);
    }

    #[test]
    fn streaming_equals_in_memory(trace in valid_trace(), pick in 0usize..26) {
        let set = Fault::all().nth(pick).map_or(FaultSet::NONE, FaultSet::one);
        let text = trace.to_text();
        let mut out = Vec::new();
        isr_reference::stream::run("gen", text.as_bytes(), &mut out, set).unwrap();
        prop_assert_eq!(String::from_utf8(out).unwrap(), output(&trace, set));
    }
}

fn bin() -> Proc {
    Proc::new(env!("CARGO_BIN_EXE_isr-reference"))
}

#[test]
fn cli_reproduces_worked_trace_and_rejects_bad_input() {
    let dir = tempfile_dir();
    let path = dir.join("worked.trace");
    std::fs::write(&path, WORKED).unwrap();
    let out = bin().arg(&path).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "130 STATUS ISR=5,6,7 HW=2 LEO=4 WRITES=OK\n550 STATUS ISR=5,6 HW=4 LEO=4 WRITES=OK\n601 STATUS ISR=5,6,7 HW=4 LEO=4 WRITES=OK\n"
    );
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "REPLICAS 1 2\nLAG_MAX 1\nMIN_ISR 1\n0 FETCH 2 3\n").unwrap();
    let out = bin().arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.trace:4: FETCH 2 3 asks beyond the leader's LEO 0"),
        "{err}"
    );
    let out = bin().args(["--fault", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known faults: caught-up-equality-only"));
    let out = bin().arg(dir.join("missing.trace")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn cli_faults_and_catalog() {
    use std::io::Write;
    let mut child = bin()
        .args(["--fault", "hw-not-on-shrink"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(WORKED.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("550 STATUS ISR=5,6 HW=2 LEO=4"));
    let out = bin().arg("--list-faults").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for info in CATALOG {
        assert!(text.contains(info.id));
    }
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("isr-ref-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
