//! Reads a trace on stdin, drives the leader, writes its output on stdout.
//! This part is done for you: your work is in `leader.rs`.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use isr_leader::leader::Leader;
use isr_leader::trace::{Command, ParseError, Trace};

enum Failure {
    /// The trace is not valid (never the case for the grader's traces).
    Trace(ParseError),
    /// stdout is closed or broken.
    Write(io::Error),
}

fn main() -> ExitCode {
    let mut stdout = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let result = run(io::stdin().lock(), &mut stdout);
    // Whatever happened, send the lines written so far.
    let flushed = stdout.flush();
    match (result, flushed) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(Failure::Trace(e)), _) => {
            eprintln!("isr-leader: <stdin> {e}");
            ExitCode::from(2)
        }
        (Err(Failure::Write(e)), _) | (Ok(()), Err(e)) => {
            eprintln!("isr-leader: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: impl BufRead, stdout: &mut impl Write) -> Result<(), Failure> {
    let trace = Trace::read(input).map_err(Failure::Trace)?;
    let mut leader = Leader::new(trace.header());
    for timed in trace {
        let timed = timed.map_err(Failure::Trace)?;
        let t = timed.t;
        match timed.command {
            Command::Append { n } => leader.append(t, n),
            Command::Produce { n } => leader.produce(t, n),
            Command::Fetch { follower, offset } => leader.fetch(t, follower, offset),
            Command::Status => leader.status(t),
        }
        leader.out.send_to(stdout).map_err(Failure::Write)?;
    }
    Ok(())
}
