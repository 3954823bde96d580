//! Naming the mistake: which known mistakes (a set of catalog switches) reproduce what a program
//! printed.
//!
//! Every single mistake and every pair is replayed against the traces in-process, and compared
//! line by line with the program's (normalized) output as it is produced, so a set that differs
//! stops at its first different line. A set is an exact diagnosis only when it reproduces the
//! output of every case; otherwise the closest sets are ranked by how many failing cases each
//! reproduces, and nothing is claimed.

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::Trace;

/// What a program did on one case.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The case's trace.
    pub trace: &'a Trace,
    /// The program's output lines, normalized (trailing whitespace trimmed, blank lines dropped,
    /// lines that are not events removed); `None` when the program gave no comparable output
    /// (it crashed, timed out, or hit the output limit): no mistake set explains that.
    pub lines: Option<&'a [String]>,
    /// Whether the case failed.
    pub failing: bool,
}

/// A candidate and how much it explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The mistake set.
    pub set: FaultSet,
    /// Failing cases whose output it reproduces exactly.
    pub explains: usize,
    /// Passing cases whose output it reproduces (a good candidate keeps them passing).
    pub keeps_passing: usize,
}

/// The result of [`diagnose`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// The smallest mistake sets that reproduce every case (several only when the cases cannot
    /// tell them apart); empty when none does. A program that passes everything gets the empty
    /// set here (`FaultSet::NONE`).
    pub exact: Vec<FaultSet>,
    /// When nothing is exact: the closest sets, best first (at most 5).
    pub closest: Vec<Candidate>,
    /// Number of failing cases.
    pub failing: usize,
}

/// Whether the leader with `set` prints exactly `lines` on `trace`; stops at the first
/// difference.
pub fn reproduces(trace: &Trace, set: FaultSet, lines: &[String]) -> bool {
    let mut leader = Leader::new(&trace.config, set);
    let mut out = Vec::with_capacity(256);
    let mut k = 0;
    for step in &trace.steps {
        out.clear();
        leader.step(step, &mut out);
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match lines.get(k) {
                Some(l) if l.as_bytes() == line => k += 1,
                _ => return false,
            }
        }
    }
    k == lines.len()
}

/// Finds the mistake sets (the correct leader, every single mistake, every pair) that reproduce
/// the observed outputs.
pub fn diagnose(observed: &[Observed<'_>]) -> Diagnosis {
    let failing = observed.iter().filter(|o| o.failing).count();
    if failing == 0 {
        return Diagnosis {
            exact: vec![FaultSet::NONE],
            closest: Vec::new(),
            failing,
        };
    }
    // Failing cases first, smallest first: most sets are ruled out on the first one.
    let mut order: Vec<usize> = (0..observed.len()).collect();
    order.sort_by_key(|&i| (!observed[i].failing, observed[i].trace.steps.len()));
    let sets = FaultSet::singles_and_pairs();
    let all_comparable = observed.iter().all(|o| o.lines.is_some());
    let mut exact: Vec<FaultSet> = Vec::new();
    let mut candidates = Vec::new();
    for set in sets {
        if let Some(first) = exact.first()
            && set.len() > first.len()
        {
            break;
        }
        let mut explains = 0;
        let mut keeps_passing = 0;
        let mut all = all_comparable;
        for &i in &order {
            let o = &observed[i];
            let ok = o.lines.is_some_and(|l| reproduces(o.trace, set, l));
            match (ok, o.failing) {
                (true, true) => explains += 1,
                (true, false) => keeps_passing += 1,
                (false, _) => all = false,
            }
        }
        if all {
            exact.push(set);
        } else if explains > 0 {
            candidates.push(Candidate {
                set,
                explains,
                keeps_passing,
            });
        }
    }
    if !exact.is_empty() {
        // Sets that are the same program on every trace are one diagnosis, named by the first of
        // their equivalence class.
        let mut named: Vec<FaultSet> = Vec::new();
        for set in exact.into_iter().map(crate::audit::canonical) {
            if !named.contains(&set) {
                named.push(set);
            }
        }
        return Diagnosis {
            exact: named,
            closest: Vec::new(),
            failing,
        };
    }
    candidates.sort_by(|a, b| {
        b.explains
            .cmp(&a.explains)
            .then(a.set.len().cmp(&b.set.len()))
            .then(b.keeps_passing.cmp(&a.keeps_passing))
    });
    candidates.truncate(5);
    Diagnosis {
        exact: Vec::new(),
        closest: candidates,
        failing,
    }
}

/// Whether `line` is an event of the contract (`<t> ACK <base>`, `<t> NOT_ENOUGH_REPLICAS`,
/// `<t> STATUS ISR=<ids> HW=<n> LEO=<n> WRITES=<OK|NOT_ENOUGH_REPLICAS>`), as opposed to a debug
/// print. Surrounding whitespace is ignored.
pub fn is_event_line(line: &str) -> bool {
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = line.split_whitespace().collect();
    match parts.as_slice() {
        [t, "ACK", b] => num(t) && num(b),
        [t, "NOT_ENOUGH_REPLICAS"] => num(t),
        [t, "STATUS", isr, hw, leo, writes] => {
            num(t)
                && isr
                    .strip_prefix("ISR=")
                    .is_some_and(|ids| ids.is_empty() || ids.split(',').all(num))
                && hw.strip_prefix("HW=").is_some_and(num)
                && leo.strip_prefix("LEO=").is_some_and(num)
                && matches!(*writes, "WRITES=OK" | "WRITES=NOT_ENOUGH_REPLICAS")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fault, output};

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn names_a_single_mistake_and_refuses_to_guess() {
        let t = Trace::parse("w", Fault::HwNotOnShrink.info().witness).unwrap();
        let t2 = Trace::parse("x", Fault::ShrinkInclusive.info().witness).unwrap();
        let bad = FaultSet::one(Fault::HwNotOnShrink);
        let o1 = lines(&output(&t, bad));
        let o2 = lines(&output(&t2, bad));
        let d = diagnose(&[
            Observed {
                trace: &t,
                lines: Some(&o1),
                failing: true,
            },
            Observed {
                trace: &t2,
                lines: Some(&o2),
                failing: o2 != lines(&output(&t2, FaultSet::NONE)),
            },
        ]);
        assert!(d.exact.contains(&bad), "{d:?}");
        // Nonsense output: nothing exact.
        let junk = vec!["0 STATUS ISR=9 HW=0 LEO=0 WRITES=OK".to_string()];
        let d = diagnose(&[Observed {
            trace: &t,
            lines: Some(&junk),
            failing: true,
        }]);
        assert!(d.exact.is_empty());
    }

    #[test]
    fn event_lines() {
        assert!(is_event_line("12 ACK 0"));
        assert!(is_event_line("12 NOT_ENOUGH_REPLICAS  "));
        assert!(is_event_line("1 STATUS ISR=5,6 HW=4 LEO=4 WRITES=OK"));
        assert!(is_event_line(
            "1 STATUS ISR= HW=4 LEO=4 WRITES=NOT_ENOUGH_REPLICAS"
        ));
        assert!(!is_event_line("debug: hw=4"));
        assert!(!is_event_line("1 STATUS ISR=5,6 HW=4 LEO=4 WRITES=MAYBE"));
    }
}
