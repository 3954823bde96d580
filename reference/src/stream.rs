//! Running a trace from a reader to a writer in bounded memory.
//!
//! Memory is bounded by the longest line, the number of replicas, the number of waiting
//! requests and a few batches of parsed commands, not by the length of the trace. The correct
//! leader always runs alongside, as the validator: a trace that is invalid for it is rejected
//! even when a faulty machine is asked for.
//!
//! The work is a two-stage pipeline: one thread reads and parses lines into batches of
//! [`Step`]s, the calling thread validates them, runs the leader and writes the output. The
//! stages cost about the same, so on two cores a trace runs in about half the time. Errors keep
//! their order: everything before an invalid line is run and written first.

use std::io::{self, Read, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Config, Item, LineParser, Step, TraceError};

/// The longest line accepted.
pub const MAX_LINE: usize = 1 << 20;

/// Commands per batch handed from the parser to the leader.
const BATCH: usize = 4096;

/// Why a streamed run stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The trace is invalid.
    Trace(TraceError),
    /// Reading or writing failed.
    Io(io::Error),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Trace(e) => e.fmt(f),
            StreamError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for StreamError {}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

/// What the parsing stage hands to the running stage.
enum Msg {
    /// The header is complete.
    Start(Config),
    /// Commands in order.
    Steps(Vec<Step>),
    /// The input ended normally.
    End,
    /// The input is invalid at this line (0: the trace as a whole).
    Invalid(usize, String),
    /// Reading failed.
    Io(io::Error),
}

/// Reads a trace from `input`, runs the leader with `faults` and writes its output to `output`.
/// `name` names the input in errors (a file name or `<stdin>`). Output already written before an
/// invalid line is found stays written.
pub fn run(
    name: &str,
    input: impl Read + Send,
    mut output: impl Write,
    faults: FaultSet,
) -> Result<(), StreamError> {
    let err = |line: usize, message: String| {
        StreamError::Trace(TraceError {
            file: name.to_string(),
            line,
            message,
        })
    };
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Msg>(4);
        let (recycle_tx, recycle_rx) = sync_channel::<Vec<Step>>(8);
        scope.spawn(move || parse_stage(input, &tx, &recycle_rx));
        let result = run_stage(&rx, &recycle_tx, &mut output, faults);
        // Dropping the receiver stops the parser if the run stopped early.
        drop(rx);
        match result {
            Ok(()) => Ok(()),
            Err(RunError::Invalid(line, m)) => Err(err(line, m)),
            Err(RunError::Io(e)) => Err(StreamError::Io(e)),
        }
    })
}

enum RunError {
    Invalid(usize, String),
    Io(io::Error),
}

fn run_stage(
    rx: &Receiver<Msg>,
    recycle: &SyncSender<Vec<Step>>,
    output: &mut impl Write,
    faults: FaultSet,
) -> Result<(), RunError> {
    let mut correct: Option<Leader> = None;
    let mut faulty: Option<Leader> = None;
    let mut out = Vec::with_capacity(1 << 17);
    let mut scratch = Vec::new();
    loop {
        let msg = rx.recv().unwrap_or(Msg::End);
        match msg {
            Msg::Start(config) => {
                correct = Some(Leader::new(&config, FaultSet::NONE));
                faulty = (!faults.is_empty()).then(|| Leader::new(&config, faults));
            }
            Msg::Steps(steps) => {
                if let Some(c) = correct.as_mut() {
                    for step in &steps {
                        if let Err(m) = c.validate(step) {
                            output.write_all(&out).map_err(RunError::Io)?;
                            let _ = output.flush();
                            return Err(RunError::Invalid(step.line, m));
                        }
                        match faulty.as_mut() {
                            None => c.step(step, &mut out),
                            Some(f) => {
                                scratch.clear();
                                c.step(step, &mut scratch);
                                f.step(step, &mut out);
                            }
                        }
                    }
                }
                let _ = recycle.try_send(steps);
                if out.len() >= 1 << 16 {
                    output.write_all(&out).map_err(RunError::Io)?;
                    out.clear();
                }
            }
            Msg::End => {
                output.write_all(&out).map_err(RunError::Io)?;
                output.flush().map_err(RunError::Io)?;
                return Ok(());
            }
            Msg::Invalid(line, m) => {
                output.write_all(&out).map_err(RunError::Io)?;
                let _ = output.flush();
                return Err(RunError::Invalid(line, m));
            }
            Msg::Io(e) => {
                output.write_all(&out).map_err(RunError::Io)?;
                let _ = output.flush();
                return Err(RunError::Io(e));
            }
        }
    }
}

/// Parses one line into the batch; false when the stage must stop (an invalid line, already
/// reported, or the receiver is gone).
fn handle(
    line: &[u8],
    parser: &mut LineParser,
    batch: &mut Vec<Step>,
    tx: &SyncSender<Msg>,
    flush: &impl Fn(&mut Vec<Step>) -> bool,
) -> bool {
    let parsed = match parser.parse_step(line) {
        Some(Ok(step)) => {
            batch.push(step);
            return batch.len() < BATCH || flush(batch);
        }
        Some(Err(m)) => Err(m),
        // Not the common shape: the general parser decides (and explains).
        None => parser.parse_line(line),
    };
    match parsed {
        Ok(Item::Nothing) => true,
        Ok(Item::Step(step)) => {
            batch.push(step);
            batch.len() < BATCH || flush(batch)
        }
        Ok(Item::Start(config, step)) => {
            if !flush(batch) || tx.send(Msg::Start(config)).is_err() {
                return false;
            }
            batch.push(step);
            true
        }
        Err(m) => {
            if flush(batch) {
                let _ = tx.send(Msg::Invalid(parser.line(), m));
            }
            false
        }
    }
}

/// Reads and parses `input`, sending batches of commands; stops quietly when the receiver is
/// gone.
fn parse_stage(mut input: impl Read, tx: &SyncSender<Msg>, recycle: &Receiver<Vec<Step>>) {
    let mut parser = LineParser::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut filled = 0usize;
    let mut batch: Vec<Step> = Vec::with_capacity(BATCH);
    let mut eof = false;
    // Sends the batch (if any) and starts a new one; false when the receiver is gone.
    let flush = |batch: &mut Vec<Step>| -> bool {
        if batch.is_empty() {
            return true;
        }
        let fresh = recycle
            .try_recv()
            .map(|mut v| {
                v.clear();
                v
            })
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        tx.send(Msg::Steps(std::mem::replace(batch, fresh))).is_ok()
    };
    loop {
        if !eof {
            if filled == buf.len() {
                if buf.len() >= MAX_LINE * 2 {
                    if flush(&mut batch) {
                        let _ = tx.send(Msg::Invalid(
                            parser.line() + 1,
                            format!("line longer than {MAX_LINE} bytes"),
                        ));
                    }
                    return;
                }
                buf.resize(buf.len() * 2, 0);
            }
            match input.read(&mut buf[filled..]) {
                Ok(0) => eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if flush(&mut batch) {
                        let _ = tx.send(Msg::Io(e));
                    }
                    return;
                }
            }
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[..filled]) {
            if !handle(&buf[start..nl], &mut parser, &mut batch, tx, &flush) {
                return;
            }
            start = nl + 1;
        }
        if eof && start < filled {
            // The last line may lack its line end.
            if !handle(&buf[start..filled], &mut parser, &mut batch, tx, &flush) {
                return;
            }
            start = filled;
        }
        if eof {
            break;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
    }
    if !flush(&mut batch) {
        return;
    }
    match parser.finish() {
        Ok(None) => {
            let _ = tx.send(Msg::End);
        }
        Ok(Some(config)) => {
            // A header without commands: valid, prints nothing.
            if tx.send(Msg::Start(config)).is_ok() {
                let _ = tx.send(Msg::End);
            }
        }
        Err(m) => {
            let _ = tx.send(Msg::Invalid(0, m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_matches_in_memory_and_handles_tiny_reads() {
        let text = "REPLICAS 5 6 7\r\nLAG_MAX 500\nMIN_ISR 2\n0 APPEND 4\n100 FETCH 6 4\n120 FETCH 7 2\n130 STATUS\n400 FETCH 6 4\n550 STATUS\n600 FETCH 7 4\n601 STATUS";
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() || b.is_empty() {
                    return Ok(0);
                }
                b[0] = self.0[0];
                self.0 = &self.0[1..];
                Ok(1)
            }
        }
        let mut out = Vec::new();
        run("x", Slow(text.as_bytes()), &mut out, FaultSet::NONE).unwrap();
        let t = crate::Trace::parse("x", text).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            crate::output(&t, FaultSet::NONE)
        );
    }

    #[test]
    fn stream_errors_name_the_line_after_writing_what_came_before() {
        let text = "REPLICAS 5 6\nLAG_MAX 1\nMIN_ISR 1\n0 STATUS\n0 FETCH 6 1\n";
        let mut out = Vec::new();
        let e = run("f.trace", text.as_bytes(), &mut out, FaultSet::NONE).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.trace:5: FETCH 6 1 asks beyond the leader's LEO 0 at that moment"
        );
        assert_eq!(out, b"0 STATUS ISR=5,6 HW=0 LEO=0 WRITES=OK\n");
        let mut out = Vec::new();
        let e = run(
            "f.trace",
            "REPLICAS 5 6\nLAG_MAX 1\nMIN_ISR 1\n0 STATUS\n0 JUMP\n".as_bytes(),
            &mut out,
            FaultSet::NONE,
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("f.trace:5: unknown command"),
            "{e}"
        );
        assert_eq!(out, b"0 STATUS ISR=5,6 HW=0 LEO=0 WRITES=OK\n");
        let e = run("f.trace", &b""[..], Vec::new(), FaultSet::NONE).unwrap_err();
        assert!(e.to_string().starts_with("f.trace: header incomplete"));
    }

    #[test]
    fn a_header_alone_prints_nothing() {
        let mut out = Vec::new();
        run(
            "h",
            &b"REPLICAS 1\nLAG_MAX 0\nMIN_ISR 1"[..],
            &mut out,
            FaultSet::NONE,
        )
        .unwrap();
        assert!(out.is_empty());
    }
}
