//! The ISR / high-watermark leader exercise as code.
//!
//! - [`trace`]: the trace format (contract v1), a streaming parser and a validator.
//! - [`leader`]: the leader state machine, the reference solution; no I/O.
//! - [`faults`]: the catalog of known mistakes, each a switch on the same machine.
//! - [`explain`]: the annotated trace, in the style of the lesson's worked trace.
//! - [`stream`]: run a trace from a reader to a writer in bounded memory (the binary's job).
//! - [`search`]: exhaustive search for the shortest trace that tells two machines apart.
//! - [`shrink`]: shrink a failing trace to a smallest one that still fails the same way.
//! - [`r#gen`]: scenario generators, reproducible traces aimed at the catalog's mistakes.
//! - [`audit`]: which cases catch which mistakes, and which mistakes the cases tell apart.
//!
//! ```
//! use isr_reference::{FaultSet, Trace, output};
//! let t = Trace::parse("t", "REPLICAS 5 6\nLAG_MAX 500\nMIN_ISR 1\n0 APPEND 4\n1 STATUS\n").unwrap();
//! assert_eq!(output(&t, FaultSet::NONE), "1 STATUS ISR=5,6 HW=0 LEO=4 WRITES=OK\n");
//! ```

pub mod audit;
pub mod diagnose;
pub mod explain;
pub mod faults;
pub mod r#gen;
pub mod leader;
pub mod search;
pub mod shrink;
pub mod stream;
pub mod trace;

pub use faults::{CATALOG, Fault, FaultInfo, FaultSet};
pub use leader::Leader;
pub use trace::{Command, Config, Step, Trace, TraceError};

/// The output of a leader with `faults` on `trace`, as text (LF line ends).
pub fn output(trace: &Trace, faults: FaultSet) -> String {
    let bytes = output_bytes(trace, faults);
    // The machine only writes ASCII.
    String::from_utf8(bytes).unwrap_or_default()
}

/// The output of a leader with `faults` on `trace`, as bytes.
pub fn output_bytes(trace: &Trace, faults: FaultSet) -> Vec<u8> {
    let mut leader = Leader::new(&trace.config, faults);
    let mut out = Vec::new();
    for step in &trace.steps {
        leader.step(step, &mut out);
    }
    out
}

/// One output line and the step that printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLine {
    /// The line, without its line end.
    pub text: String,
    /// Index into [`Trace::steps`] of the command that printed it.
    pub step: usize,
}

/// The output of a leader with `faults` on `trace`, line by line, each with its origin.
pub fn output_lines(trace: &Trace, faults: FaultSet) -> Vec<OutputLine> {
    let mut leader = Leader::new(&trace.config, faults);
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        out.clear();
        leader.step(step, &mut out);
        for l in String::from_utf8_lossy(&out).lines() {
            lines.push(OutputLine {
                text: l.to_string(),
                step: i,
            });
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn witnesses_differ_from_the_reference() {
        for info in CATALOG {
            let t = Trace::parse(info.id, info.witness).unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(
                output(&t, FaultSet::NONE),
                output(&t, FaultSet::one(info.fault)),
                "{}",
                info.id
            );
        }
    }
}
