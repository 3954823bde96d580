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
use std::sync::mpsc::sync_channel;

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Config, Item, LineParser, Step, TraceError};

/// The longest line accepted.
pub const MAX_LINE: usize = 1 << 20;

/// Commands per batch handed from the parser to the leader.
const BATCH: usize = 4096;

/// Input up to this size runs on one thread.
const SMALL: usize = 1 << 20;

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
    let finish = |result: Result<(), RunError>| match result {
        Ok(()) => Ok(()),
        Err(RunError::Invalid(line, m)) => Err(err(line, m)),
        Err(RunError::Io(e)) => Err(StreamError::Io(e)),
    };
    // A trace that fits in the first read (almost every graded case) runs on this thread: for
    // it, a second thread costs more than it saves.
    let mut first = vec![0u8; SMALL];
    let mut filled = 0;
    let mut input = input;
    let small = loop {
        match input.read(&mut first[filled..]) {
            Ok(0) => break true,
            Ok(n) => {
                filled += n;
                if filled == first.len() {
                    break false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(StreamError::Io(e)),
        }
    };
    first.truncate(filled);
    let input = io::Cursor::new(first).chain(input);
    if small {
        let mut msgs = std::collections::VecDeque::new();
        parse_stage(
            input,
            &mut |m| {
                msgs.push_back(m);
                true
            },
            &mut || None,
        );
        let result = run_stage(
            &mut || msgs.pop_front().unwrap_or(Msg::End),
            &mut |_| {},
            &mut output,
            faults,
        );
        return finish(result);
    }
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Msg>(4);
        let (recycle_tx, recycle_rx) = sync_channel::<Vec<Step>>(8);
        scope.spawn(move || {
            parse_stage(input, &mut |m| tx.send(m).is_ok(), &mut || {
                recycle_rx.try_recv().ok()
            })
        });
        let result = run_stage(
            &mut || rx.recv().unwrap_or(Msg::End),
            &mut |steps| {
                let _ = recycle_tx.try_send(steps);
            },
            &mut output,
            faults,
        );
        // Dropping the receiver stops the parser if the run stopped early.
        drop(rx);
        finish(result)
    })
}

/// [`run`] with its output to stdout (buffered): the reference leader as a program. A reader
/// that closes the pipe early (`| head`) is not an error.
pub fn run_to_stdout(
    name: &str,
    input: impl Read + Send,
    faults: FaultSet,
) -> Result<(), StreamError> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = run(name, input, &mut out, faults);
    match result {
        Err(StreamError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            let _ = out.flush();
            Err(e)
        }
        Ok(()) => Ok(()),
    }
}

enum RunError {
    Invalid(usize, String),
    Io(io::Error),
}

fn run_stage(
    next: &mut dyn FnMut() -> Msg,
    recycle: &mut dyn FnMut(Vec<Step>),
    output: &mut impl Write,
    faults: FaultSet,
) -> Result<(), RunError> {
    let mut correct: Option<Leader> = None;
    let mut faulty: Option<Leader> = None;
    let mut out = Vec::with_capacity(1 << 17);
    let mut scratch = Vec::new();
    loop {
        match next() {
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
                recycle(steps);
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

/// The parsing stage's way out: a batch being filled, and where batches and messages go.
struct Sink<'a> {
    batch: Vec<Step>,
    send: &'a mut dyn FnMut(Msg) -> bool,
    recycle: &'a mut dyn FnMut() -> Option<Vec<Step>>,
}

impl Sink<'_> {
    /// Sends the batch, if any, and starts a new one; false when the receiver is gone.
    fn flush(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let fresh = (self.recycle)()
            .map(|mut v| {
                v.clear();
                v
            })
            .unwrap_or_else(|| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, fresh);
        (self.send)(Msg::Steps(full))
    }

    /// Sends what is batched, then `msg`; false when the receiver is gone.
    fn send(&mut self, msg: Msg) -> bool {
        self.flush() && (self.send)(msg)
    }

    /// Parses one line into the batch; false when the stage must stop (an invalid line, already
    /// reported, or the receiver is gone).
    fn line(&mut self, line: &[u8], parser: &mut LineParser) -> bool {
        let parsed = match parser.parse_step(line) {
            Some(Ok(step)) => {
                self.batch.push(step);
                return self.batch.len() < BATCH || self.flush();
            }
            Some(Err(m)) => Err(m),
            // Not the common shape: the general parser decides (and explains).
            None => parser.parse_line(line),
        };
        match parsed {
            Ok(Item::Nothing) => true,
            Ok(Item::Step(step)) => {
                self.batch.push(step);
                self.batch.len() < BATCH || self.flush()
            }
            Ok(Item::Start(config, step)) => {
                if !self.send(Msg::Start(config)) {
                    return false;
                }
                self.batch.push(step);
                true
            }
            Err(m) => {
                self.send(Msg::Invalid(parser.line(), m));
                false
            }
        }
    }
}

/// Reads and parses `input`, sending batches of commands through `send` (which returns false
/// when the receiver is gone: the stage then stops quietly). `recycle` hands back used batches.
fn parse_stage(
    mut input: impl Read,
    send: &mut dyn FnMut(Msg) -> bool,
    recycle: &mut dyn FnMut() -> Option<Vec<Step>>,
) {
    let mut parser = LineParser::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut filled = 0usize;
    let mut sink = Sink {
        batch: Vec::with_capacity(BATCH),
        send,
        recycle,
    };
    let mut eof = false;
    loop {
        if !eof {
            if filled == buf.len() {
                if buf.len() >= MAX_LINE * 2 {
                    let line = parser.line() + 1;
                    sink.send(Msg::Invalid(
                        line,
                        format!("line longer than {MAX_LINE} bytes"),
                    ));
                    return;
                }
                buf.resize(buf.len() * 2, 0);
            }
            match input.read(&mut buf[filled..]) {
                Ok(0) => eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    sink.send(Msg::Io(e));
                    return;
                }
            }
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[..filled]) {
            if !sink.line(&buf[start..nl], &mut parser) {
                return;
            }
            start = nl + 1;
        }
        if eof && start < filled {
            // The last line may lack its line end.
            if !sink.line(&buf[start..filled], &mut parser) {
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
    match parser.finish() {
        Ok(None) => {
            sink.send(Msg::End);
        }
        Ok(Some(config)) => {
            // A header without commands: valid, prints nothing.
            if sink.send(Msg::Start(config)) {
                sink.send(Msg::End);
            }
        }
        Err(m) => {
            sink.send(Msg::Invalid(0, m));
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

    fn big_trace(commands: usize) -> String {
        let mut text = String::from("REPLICAS 5 6\nLAG_MAX 3\nMIN_ISR 1\n");
        let mut leo = 0;
        for i in 0..commands {
            let t = i / 3;
            match i % 4 {
                0 => {
                    text.push_str(&format!("{t} APPEND 2\n"));
                    leo += 2;
                }
                1 => text.push_str(&format!("{t} FETCH 6 {}\n", leo - 1)),
                2 => text.push_str(&format!("{t} PRODUCE 1\n")),
                _ => text.push_str(&format!("{t}   STATUS # the general parser\n")),
            }
            if i % 4 == 2 {
                leo += 1;
            }
        }
        text
    }

    #[test]
    fn a_large_trace_runs_in_two_stages_with_the_same_output() {
        let text = big_trace(120_000);
        assert!(
            text.len() > 2 * SMALL,
            "the test must exceed the one-thread size"
        );
        let t = crate::Trace::parse("big", &text).unwrap();
        for faults in [FaultSet::NONE, FaultSet::one(crate::Fault::HwNotOnShrink)] {
            let mut out = Vec::new();
            run("big", text.as_bytes(), &mut out, faults).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), crate::output(&t, faults));
        }
        // An invalid line far in: everything before it is written, the error names it.
        let mut bad = text.clone();
        bad.push_str("0 STATUS\n");
        let mut out = Vec::new();
        let e = run("big", bad.as_bytes(), &mut out, FaultSet::NONE).unwrap_err();
        let line = bad.lines().count();
        assert!(
            e.to_string()
                .starts_with(&format!("big:{line}: time 0 is before")),
            "{e}"
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            crate::output(&t, FaultSet::NONE)
        );
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
