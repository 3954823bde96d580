use isr_reference::search::*;
use isr_reference::*;
fn main() {
    let mut sets = vec![FaultSet::NONE];
    sets.extend(Fault::all().map(FaultSet::one));
    let mut pairs = vec![];
    for i in 1..sets.len() {
        pairs.push((0, i));
    }
    for i in 1..sets.len() {
        for j in i + 1..sets.len() {
            pairs.push((i, j));
        }
    }
    let t0 = std::time::Instant::now();
    let w = witnesses(&sets, &pairs, &Domain::default());
    eprintln!("{:?}", t0.elapsed());
    for ((a, b), w) in pairs.iter().zip(&w) {
        match w.trace() {
            Some(t) => {
                if *a == 0 {
                    println!(
                        "== {} vs {}: {} cmds\n{}",
                        sets[*a],
                        sets[*b],
                        t.steps.len(),
                        t.to_text()
                    );
                }
            }
            None => println!("!! {} vs {}: none", sets[*a], sets[*b]),
        }
    }
    let mut hist = std::collections::BTreeMap::new();
    for w in &w {
        *hist.entry(w.trace().map(|t| t.steps.len())).or_insert(0) += 1;
    }
    eprintln!("{hist:?}");
}
