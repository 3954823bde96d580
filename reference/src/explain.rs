//! The explained trace: every command with the decision taken and the numbers behind it, in the
//! style of the lesson's worked trace.

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Step, Trace};

/// One command with its explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// The command.
    pub step: Step,
    /// The decisions, one sentence each.
    pub notes: Vec<String>,
    /// The lines the command printed.
    pub output: Vec<String>,
}

/// Runs the leader with `faults` over `trace`, explaining every command.
pub fn explain_steps(trace: &Trace, faults: FaultSet) -> Vec<Explained> {
    let mut leader = Leader::new(&trace.config, faults);
    let mut out = Vec::new();
    trace
        .steps
        .iter()
        .map(|step| {
            out.clear();
            let mut notes = Vec::new();
            leader.step_explained(step, &mut out, &mut notes);
            Explained {
                step: *step,
                notes,
                output: String::from_utf8_lossy(&out)
                    .lines()
                    .map(str::to_string)
                    .collect(),
            }
        })
        .collect()
}

const CMD_WIDTH: usize = 18;

/// Formats one explained command: `line  t=T  COMMAND  note`, further notes aligned under the
/// first, and printed lines marked with `=>`.
pub fn format_explained(e: &Explained) -> String {
    let cmd = e.step.to_string();
    let verb = cmd.split_once(' ').map_or("", |(_, v)| v);
    let head = format!(
        "{:>4}  t={:<6} {:<w$}",
        e.step.line,
        e.step.t,
        verb,
        w = CMD_WIDTH
    );
    let pad = " ".repeat(head.chars().count());
    let mut s = String::new();
    for (k, n) in e.notes.iter().enumerate() {
        s.push_str(if k == 0 { &head } else { &pad });
        s.push(' ');
        s.push_str(n);
        s.push('\n');
    }
    if e.notes.is_empty() {
        s.push_str(head.trim_end());
        s.push('\n');
    }
    for o in &e.output {
        s.push_str(&pad);
        s.push_str(" => ");
        s.push_str(o);
        s.push('\n');
    }
    s
}

/// The whole explained trace as text: the header, the start state, then every command.
pub fn explain(trace: &Trace, faults: FaultSet) -> String {
    let c = &trace.config;
    let ids: Vec<String> = c.replicas.iter().map(u64::to_string).collect();
    let mut s = String::new();
    if !faults.is_empty() {
        s.push_str(&format!("# with the mistakes: {faults}\n"));
    }
    s.push_str(&format!(
        "REPLICAS {}   leader {}; followers {}\nLAG_MAX {}   a follower leaves the ISR when now - lastCaughtUp > {}\nMIN_ISR {}   acks=all writes need an ISR of at least {}\n",
        ids.join(" "),
        c.leader(),
        if ids.len() > 1 { ids[1..].join(", ") } else { "none".into() },
        c.lag_max,
        c.lag_max,
        c.min_isr,
        c.min_isr,
    ));
    s.push_str(&format!(
        "start: leader LEO 0, HW 0, ISR = {}; every follower LEO 0, lastCaughtUp 0, lastFetchTime 0, lastFetchLeaderLEO 0\n",
        ids.join(",")
    ));
    for e in explain_steps(trace, faults) {
        s.push_str(&format_explained(&e));
    }
    s
}
