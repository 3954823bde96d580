//! The shrinker against the catalog: for every known mistake, the largest corpus case on which
//! it changes the output shrinks to at most one command more than the catalog's smallest witness
//! (found by the exhaustive search of `audit --witness`).

use isr_reference::shrink::{divergence_kind, shrink};
use isr_reference::{CATALOG, FaultSet, Trace, audit::catalog_witness_len, output};

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

fn corpus() -> Vec<Trace> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let mut traces = Vec::new();
    for dir in ["public", "hidden"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "trace"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap();
            traces.push(Trace::parse(&p.display().to_string(), &text).unwrap());
        }
    }
    traces
}

#[test]
fn every_mistake_shrinks_to_within_one_command_of_its_witness() {
    let corpus = corpus();
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
        // Like with like: the largest case that differs the way the witness does (the same
        // first-divergence kind), else the largest that differs at all.
        let witness_kind = kind(&Trace::parse(info.id, info.witness).unwrap());
        let largest = |same: bool| {
            corpus
                .iter()
                .filter(|t| kind(t).is_some() && (!same || kind(t) == witness_kind))
                .max_by_key(|t| t.steps.len())
        };
        let Some(start) = largest(true).or_else(|| largest(false)) else {
            panic!("{}: no corpus case shows it", info.id);
        };
        let want = kind(start);
        let s = shrink(start, 2, |cs| {
            Some(cs.iter().map(|c| kind(c) == want).collect())
        });
        assert_eq!(kind(&s.trace), want, "{}", info.id);
        let witness = catalog_witness_len(info.fault);
        table.push(format!(
            "{:<28} {:<14} {:>6} -> {:>2} commands ({} tests), witness {}",
            info.id,
            want.as_deref().unwrap_or(""),
            start.steps.len(),
            s.trace.steps.len(),
            s.tests,
            witness
        ));
        if s.trace.steps.len() > witness + 1 {
            failures.push(format!(
                "{}: shrunk to {} commands, witness has {}:\n{}",
                info.id,
                s.trace.steps.len(),
                witness,
                s.trace.to_text()
            ));
        }
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
