//! Running a trace from a reader to a writer in bounded memory.
//!
//! Memory is bounded by the longest line, the number of replicas and the number of waiting
//! requests, not by the length of the trace. The correct leader always runs alongside, as the
//! validator: a trace that is invalid for it is rejected even when a faulty machine is asked for.

use std::io::{self, Read, Write};

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Item, LineParser, TraceError};

/// The longest line accepted.
pub const MAX_LINE: usize = 1 << 20;

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

struct Machines {
    correct: Leader,
    faulty: Option<Leader>,
}

/// Reads a trace from `input`, runs the leader with `faults` and writes its output to `output`.
/// `name` names the input in errors (a file name or `<stdin>`). Output already written before an
/// invalid line is found stays written.
pub fn run(
    name: &str,
    mut input: impl Read,
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
    let mut parser = LineParser::new();
    let mut machines: Option<Machines> = None;
    let mut buf = vec![0u8; 1 << 20];
    let mut filled = 0usize;
    let mut out = Vec::with_capacity(1 << 17);
    let mut scratch = Vec::new();
    let mut eof = false;
    loop {
        if !eof {
            if filled == buf.len() {
                if buf.len() >= MAX_LINE * 2 {
                    return Err(err(
                        parser.line() + 1,
                        format!("line longer than {MAX_LINE} bytes"),
                    ));
                }
                buf.resize(buf.len() * 2, 0);
            }
            let n = match input.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                eof = true;
            }
            filled += n;
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[..filled]) {
            let line = &buf[start..nl];
            start = nl + 1;
            process(
                line,
                &mut parser,
                &mut machines,
                &mut out,
                &mut scratch,
                faults,
            )
            .map_err(|m| err(parser.line(), m))?;
        }
        if eof {
            if start < filled {
                let line = &buf[start..filled];
                process(
                    line,
                    &mut parser,
                    &mut machines,
                    &mut out,
                    &mut scratch,
                    faults,
                )
                .map_err(|m| err(parser.line(), m))?;
            }
            break;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if out.len() >= 1 << 16 {
            output.write_all(&out)?;
            out.clear();
        }
    }
    parser.finish().map_err(|m| err(0, m))?;
    output.write_all(&out)?;
    output.flush()?;
    Ok(())
}

#[inline]
fn process(
    line: &[u8],
    parser: &mut LineParser,
    machines: &mut Option<Machines>,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    faults: FaultSet,
) -> Result<(), String> {
    let step = match parser.parse_line(line)? {
        Item::Nothing => return Ok(()),
        Item::Start(config, step) => {
            *machines = Some(Machines {
                correct: Leader::new(&config, FaultSet::NONE),
                faulty: (!faults.is_empty()).then(|| Leader::new(&config, faults)),
            });
            step
        }
        Item::Step(step) => step,
    };
    let Some(m) = machines.as_mut() else {
        return Ok(());
    };
    m.correct.validate(&step)?;
    match m.faulty.as_mut() {
        None => m.correct.step(&step, out),
        Some(f) => {
            scratch.clear();
            m.correct.step(&step, scratch);
            f.step(&step, out);
        }
    }
    Ok(())
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
    fn stream_errors_name_the_line() {
        let text = "REPLICAS 5 6\nLAG_MAX 1\nMIN_ISR 1\n0 FETCH 6 1\n";
        let e = run("f.trace", text.as_bytes(), Vec::new(), FaultSet::NONE).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.trace:4: FETCH 6 1 asks beyond the leader's LEO 0 at that moment"
        );
        let e = run("f.trace", &b""[..], Vec::new(), FaultSet::NONE).unwrap_err();
        assert!(e.to_string().starts_with("f.trace: header incomplete"));
    }
}
