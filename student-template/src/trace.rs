//! Reading a trace into typed commands. This part is done for you.
//!
//! The format (the contract in the grader's `reference/EXERCISE.md` is the authority):
//!
//! ```text
//! # a comment runs to the end of the line; blank lines are ignored
//! REPLICAS 5 6 7      # header lines: each exactly once, in any order,
//! LAG_MAX 500         # all before the first timed command
//! MIN_ISR 2
//! 0 APPEND 4          # <t> <VERB> <args>, t in ms, never decreasing
//! 0 PRODUCE 2
//! 100 FETCH 6 4
//! 130 STATUS
//! ```
//!
//! Line ends may be LF or CRLF. Every number fits in a `u64`.
//!
//! The traces you are graded on are always valid, so you never need to handle
//! errors yourself; still, garbage input gives an error with its line number,
//! never a panic. One rule needs the leader's state and is therefore not
//! checked here: a FETCH offset is at most the leader's LEO at that moment.

use std::fmt;
use std::io::BufRead;

/// The header of a trace: the partition's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The replica ids in the order the trace lists them. `replicas[0]` is
    /// the leader (the preferred leader); the others are its followers.
    pub replicas: Vec<u64>,
    /// `replica.lag.time.max.ms`, in milliseconds.
    pub lag_max: u64,
    /// `min.insync.replicas`: at least 1; it may exceed the number of replicas.
    pub min_isr: u64,
}

/// One timed command, without its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `APPEND n`: the leader appends `n >= 1` records (acks=1: never refused, prints nothing).
    Append { n: u64 },
    /// `PRODUCE n`: an acks=all produce request of `n >= 1` records.
    Produce { n: u64 },
    /// `FETCH follower offset`: a follower (never the leader) fetches from `offset`.
    Fetch { follower: u64, offset: u64 },
    /// `STATUS`: the periodic ISR check runs, then the leader reports.
    Status,
}

/// A command with the time `t` (in ms) at which it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    pub t: u64,
    pub command: Command,
}

/// Why a trace could not be read, and on which line (counting from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Reads the whole trace from a string (handy in tests).
pub fn parse_str(text: &str) -> Result<(Header, Vec<Timed>), ParseError> {
    let trace = Trace::read(text.as_bytes())?;
    let header = trace.header().clone();
    let commands = trace.collect::<Result<Vec<_>, _>>()?;
    Ok((header, commands))
}

/// A trace being read line by line: the header first (in [`Trace::read`]),
/// then the timed commands one at a time, as an iterator.
///
/// Memory does not grow with the length of the trace.
///
/// ```
/// use isr_leader::trace::{Command, Trace};
/// let mut trace = Trace::read("REPLICAS 1 2\nLAG_MAX 10\nMIN_ISR 1\n5 STATUS\n".as_bytes()).unwrap();
/// assert_eq!(trace.header().replicas, vec![1, 2]);
/// let first = trace.next().unwrap().unwrap();
/// assert_eq!((first.t, first.command), (5, Command::Status));
/// assert!(trace.next().is_none());
/// ```
pub struct Trace<R> {
    reader: R,
    buf: Vec<u8>,
    /// Number of the last line read (1-based; 0 before the first).
    line: usize,
    header: Header,
    /// The first timed command, read while looking for the end of the header.
    pending: Option<Timed>,
    last_t: u64,
    /// Set after the end of the input or an error: the iterator then stays empty.
    done: bool,
}

/// One meaningful line.
enum Line {
    Replicas(Vec<u64>),
    LagMax(u64),
    MinIsr(u64),
    Timed(u64, Verb),
}

/// A timed command as written, before the checks that need the header.
enum Verb {
    Append(u64),
    Produce(u64),
    Fetch(u64, u64),
    Status,
}

impl<R: BufRead> Trace<R> {
    /// Reads the header, up to and including the first timed command.
    pub fn read(reader: R) -> Result<Self, ParseError> {
        let mut trace = Trace {
            reader,
            buf: Vec::new(),
            line: 0,
            header: Header {
                replicas: Vec::new(),
                lag_max: 0,
                min_isr: 0,
            },
            pending: None,
            last_t: 0,
            done: false,
        };
        // The line where each header entry was seen, to report duplicates.
        let mut replicas_at = None;
        let mut lag_max_at = None;
        let mut min_isr_at = None;
        let first = loop {
            match trace.next_line()? {
                None => break None,
                Some(Line::Replicas(ids)) => {
                    trace.once("REPLICAS", &mut replicas_at)?;
                    trace.header.replicas = ids;
                }
                Some(Line::LagMax(ms)) => {
                    trace.once("LAG_MAX", &mut lag_max_at)?;
                    trace.header.lag_max = ms;
                }
                Some(Line::MinIsr(n)) => {
                    trace.once("MIN_ISR", &mut min_isr_at)?;
                    trace.header.min_isr = n;
                }
                Some(Line::Timed(t, verb)) => break Some((t, verb)),
            }
        };
        let missing: Vec<&str> = [
            ("REPLICAS", replicas_at),
            ("LAG_MAX", lag_max_at),
            ("MIN_ISR", min_isr_at),
        ]
        .iter()
        .filter(|(_, at)| at.is_none())
        .map(|(name, _)| *name)
        .collect();
        if !missing.is_empty() {
            let place = if first.is_some() {
                "before the first timed command"
            } else {
                "before the end of the trace"
            };
            return Err(trace.error(format!(
                "the header is incomplete {place}: missing {}",
                missing.join(", ")
            )));
        }
        match first {
            Some((t, verb)) => trace.pending = Some(trace.timed(t, verb)?),
            None => trace.done = true,
        }
        Ok(trace)
    }

    /// The partition's configuration.
    pub fn header(&self) -> &Header {
        &self.header
    }

    fn once(&self, name: &str, seen_at: &mut Option<usize>) -> Result<(), ParseError> {
        if let Some(first) = *seen_at {
            return Err(self.error(format!("{name} given twice (first on line {first})")));
        }
        *seen_at = Some(self.line);
        Ok(())
    }

    fn error(&self, message: String) -> ParseError {
        ParseError {
            line: self.line,
            message,
        }
    }

    /// Checks a timed command against the header and the previous time.
    fn timed(&mut self, t: u64, verb: Verb) -> Result<Timed, ParseError> {
        if t < self.last_t {
            return Err(self.error(format!(
                "time goes backwards: {t} comes after {}",
                self.last_t
            )));
        }
        let command = match verb {
            Verb::Append(n) | Verb::Produce(n) if n == 0 => {
                return Err(self.error("the number of records must be at least 1".into()));
            }
            Verb::Append(n) => Command::Append { n },
            Verb::Produce(n) => Command::Produce { n },
            Verb::Fetch(follower, offset) => {
                if self.header.replicas.first() == Some(&follower) {
                    return Err(self.error(format!(
                        "FETCH from {follower}, the leader: only followers fetch"
                    )));
                }
                if !self.header.replicas.contains(&follower) {
                    return Err(
                        self.error(format!("FETCH from {follower}, which is not in REPLICAS"))
                    );
                }
                Command::Fetch { follower, offset }
            }
            Verb::Status => Command::Status,
        };
        self.last_t = t;
        Ok(Timed { t, command })
    }

    /// The next line that is not blank or only a comment, or `None` at the end.
    fn next_line(&mut self) -> Result<Option<Line>, ParseError> {
        loop {
            self.buf.clear();
            let read = self.reader.read_until(b'\n', &mut self.buf);
            self.line += 1;
            match read {
                Ok(0) => return Ok(None),
                Ok(_) => {}
                Err(e) => return Err(self.error(format!("cannot read the trace: {e}"))),
            }
            let text = match std::str::from_utf8(&self.buf) {
                Ok(text) => text,
                Err(_) => return Err(self.error("the line is not valid UTF-8".into())),
            };
            let text = match text.find('#') {
                Some(comment) => &text[..comment],
                None => text,
            };
            // Splitting on ASCII whitespace also drops the '\r' of a CRLF line end.
            let words: Vec<&str> = text.split_ascii_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            return parse_words(&words).map(Some).map_err(|m| self.error(m));
        }
    }
}

impl<R: BufRead> Iterator for Trace<R> {
    type Item = Result<Timed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(first) = self.pending.take() {
            return Some(Ok(first));
        }
        if self.done {
            return None;
        }
        let result = match self.next_line() {
            Ok(None) => {
                self.done = true;
                return None;
            }
            Ok(Some(Line::Timed(t, verb))) => self.timed(t, verb),
            Ok(Some(_)) => Err(self.error(
                "a header line (REPLICAS, LAG_MAX, MIN_ISR) after the first timed command".into(),
            )),
            Err(e) => Err(e),
        };
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

/// Parses the words of one line; the error is a message without the line number.
fn parse_words(words: &[&str]) -> Result<Line, String> {
    let args = &words[1..];
    match words[0] {
        "REPLICAS" => {
            if args.is_empty() {
                return Err("REPLICAS needs at least one replica id".into());
            }
            let mut ids = Vec::with_capacity(args.len());
            for word in args {
                let id = number(word, "a replica id")?;
                if ids.contains(&id) {
                    return Err(format!("replica {id} is listed twice in REPLICAS"));
                }
                ids.push(id);
            }
            Ok(Line::Replicas(ids))
        }
        "LAG_MAX" => Ok(Line::LagMax(number(
            exactly_one("LAG_MAX", args)?,
            "LAG_MAX",
        )?)),
        "MIN_ISR" => {
            let n = number(exactly_one("MIN_ISR", args)?, "MIN_ISR")?;
            if n == 0 {
                return Err("MIN_ISR must be at least 1".into());
            }
            Ok(Line::MinIsr(n))
        }
        first => {
            let t = number(
                first,
                "a time or a header keyword (REPLICAS, LAG_MAX, MIN_ISR)",
            )?;
            let Some((&verb, args)) = args.split_first() else {
                return Err(format!("a verb is missing after the time {t}"));
            };
            let expect = |count: usize, usage: &str| {
                if args.len() == count {
                    Ok(())
                } else {
                    Err(format!("expected `<t> {usage}`"))
                }
            };
            let verb = match verb {
                "APPEND" => {
                    expect(1, "APPEND <n>")?;
                    Verb::Append(number(args[0], "a record count")?)
                }
                "PRODUCE" => {
                    expect(1, "PRODUCE <n>")?;
                    Verb::Produce(number(args[0], "a record count")?)
                }
                "FETCH" => {
                    expect(2, "FETCH <id> <offset>")?;
                    Verb::Fetch(
                        number(args[0], "a replica id")?,
                        number(args[1], "an offset")?,
                    )
                }
                "STATUS" => {
                    expect(0, "STATUS")?;
                    Verb::Status
                }
                other => {
                    return Err(format!(
                        "unknown command `{other}` (expected APPEND, PRODUCE, FETCH or STATUS)"
                    ));
                }
            };
            Ok(Line::Timed(t, verb))
        }
    }
}

fn exactly_one<'a>(keyword: &str, args: &[&'a str]) -> Result<&'a str, String> {
    match args {
        [one] => Ok(one),
        _ => Err(format!("expected `{keyword} <number>`")),
    }
}

/// A non-negative integer written in plain decimal digits that fits in a u64.
fn number(word: &str, what: &str) -> Result<u64, String> {
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected {what}, found `{word}`"));
    }
    word.parse()
        .map_err(|_| format!("{word} is too large (the limit is {})", u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n";

    fn ok(text: &str) -> (Header, Vec<Timed>) {
        match parse_str(text) {
            Ok(parsed) => parsed,
            Err(e) => panic!("unexpected error {e} for {text:?}"),
        }
    }

    fn commands(body: &str) -> Vec<(u64, Command)> {
        ok(&format!("{HEADER}{body}"))
            .1
            .into_iter()
            .map(|c| (c.t, c.command))
            .collect()
    }

    fn err(text: &str) -> ParseError {
        match parse_str(text) {
            Ok(parsed) => panic!("expected an error for {text:?}, got {parsed:?}"),
            Err(e) => e,
        }
    }

    /// The error for a header followed by `body` (whose first line is line 4).
    fn body_err(body: &str) -> ParseError {
        err(&format!("{HEADER}{body}"))
    }

    fn assert_err(e: ParseError, line: usize, needle: &str) {
        assert_eq!(e.line, line, "wrong line in {e}");
        assert!(
            e.message.contains(needle),
            "{e:?} should mention {needle:?}"
        );
    }

    #[test]
    fn worked_trace_of_the_lesson() {
        let text = "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n0 APPEND 4\n100 FETCH 6 4\n\
                    120 FETCH 7 2\n130 STATUS\n400 FETCH 6 4\n550 STATUS\n600 FETCH 7 4\n601 STATUS\n";
        let (header, cmds) = ok(text);
        assert_eq!(
            header,
            Header {
                replicas: vec![5, 6, 7],
                lag_max: 500,
                min_isr: 2
            }
        );
        assert_eq!(cmds.len(), 8);
        assert_eq!(
            cmds[0],
            Timed {
                t: 0,
                command: Command::Append { n: 4 }
            }
        );
        assert_eq!(
            cmds[2],
            Timed {
                t: 120,
                command: Command::Fetch {
                    follower: 7,
                    offset: 2
                }
            }
        );
        assert_eq!(
            cmds[7],
            Timed {
                t: 601,
                command: Command::Status
            }
        );
    }

    #[test]
    fn each_verb() {
        assert_eq!(
            commands("1 APPEND 3\n2 PRODUCE 18446744073709551615\n3 FETCH 7 0\n3 STATUS\n"),
            vec![
                (1, Command::Append { n: 3 }),
                (2, Command::Produce { n: u64::MAX }),
                (
                    3,
                    Command::Fetch {
                        follower: 7,
                        offset: 0
                    }
                ),
                (3, Command::Status),
            ]
        );
    }

    #[test]
    fn comments_and_blank_lines() {
        let text = "# a trace\n\n   \nREPLICAS 1 2 # the leader is 1\n\t\nLAG_MAX 0#none\n\
                    MIN_ISR 1\n# nothing\n0 STATUS # check\n#0 APPEND 1\n  1   APPEND   2  \n";
        let (header, cmds) = ok(text);
        assert_eq!(header.replicas, vec![1, 2]);
        assert_eq!(header.lag_max, 0);
        assert_eq!(
            cmds.iter().map(|c| c.command).collect::<Vec<_>>(),
            vec![Command::Status, Command::Append { n: 2 }]
        );
    }

    #[test]
    fn crlf_line_ends() {
        let text = "REPLICAS 5 6\r\nLAG_MAX 10\r\nMIN_ISR 1\r\n\r\n0 APPEND 1\r\n1 FETCH 6 1 # c\r\n2 STATUS";
        let (header, cmds) = ok(text);
        assert_eq!(header.min_isr, 1);
        assert_eq!(
            cmds.iter().map(|c| (c.t, c.command)).collect::<Vec<_>>(),
            vec![
                (0, Command::Append { n: 1 }),
                (
                    1,
                    Command::Fetch {
                        follower: 6,
                        offset: 1
                    }
                ),
                (2, Command::Status),
            ]
        );
    }

    #[test]
    fn header_lines_in_any_order() {
        let (header, _) = ok("MIN_ISR 3\nREPLICAS 9 2 4\nLAG_MAX 7\n");
        assert_eq!(
            header,
            Header {
                replicas: vec![9, 2, 4],
                lag_max: 7,
                min_isr: 3
            }
        );
        let (header, _) = ok("LAG_MAX 7\nMIN_ISR 10\nREPLICAS 0\n1 STATUS\n");
        assert_eq!(header.replicas, vec![0]);
        assert_eq!(
            header.min_isr, 10,
            "MIN_ISR may exceed the number of replicas"
        );
    }

    #[test]
    fn header_only_and_same_millisecond_commands() {
        assert!(ok(HEADER).1.is_empty());
        assert_eq!(commands("5 STATUS\n5 APPEND 1\n5 STATUS\n").len(), 3);
    }

    #[test]
    fn header_errors() {
        assert_err(err(""), 1, "missing REPLICAS, LAG_MAX, MIN_ISR");
        assert_err(err("# only a comment\n"), 2, "missing REPLICAS");
        assert_err(
            err("REPLICAS 1\nLAG_MAX 1\n0 STATUS\n"),
            3,
            "missing MIN_ISR",
        );
        assert_err(
            err("REPLICAS 1\nLAG_MAX 1\nMIN_ISR 1\nLAG_MAX 2\n"),
            4,
            "LAG_MAX given twice (first on line 2)",
        );
        assert_err(
            body_err("0 STATUS\nMIN_ISR 1\n"),
            5,
            "after the first timed",
        );
        assert_err(err("REPLICAS\n"), 1, "at least one replica");
        assert_err(err("REPLICAS 1 2 1\n"), 1, "listed twice");
        assert_err(err("REPLICAS 1 x\n"), 1, "expected a replica id, found `x`");
        assert_err(err("LAG_MAX\n"), 1, "expected `LAG_MAX <number>`");
        assert_err(err("LAG_MAX 1 2\n"), 1, "expected `LAG_MAX <number>`");
        assert_err(err("LAG_MAX -1\n"), 1, "found `-1`");
        assert_err(err("MIN_ISR 0\n"), 1, "at least 1");
        assert_err(err("replicas 1\n"), 1, "found `replicas`");
    }

    #[test]
    fn command_errors() {
        assert_err(
            body_err("0 STATUS\n\n0 BOOM\n"),
            6,
            "unknown command `BOOM`",
        );
        assert_err(body_err("7\n"), 4, "verb is missing");
        assert_err(body_err("0 APPEND\n"), 4, "expected `<t> APPEND <n>`");
        assert_err(body_err("0 APPEND 0\n"), 4, "at least 1");
        assert_err(body_err("0 PRODUCE 0\n"), 4, "at least 1");
        assert_err(body_err("0 PRODUCE 1 2\n"), 4, "expected `<t> PRODUCE <n>`");
        assert_err(
            body_err("0 FETCH 6\n"),
            4,
            "expected `<t> FETCH <id> <offset>`",
        );
        assert_err(body_err("0 FETCH 5 0\n"), 4, "the leader");
        assert_err(body_err("0 FETCH 8 0\n"), 4, "not in REPLICAS");
        assert_err(body_err("0 FETCH 6 -1\n"), 4, "expected an offset");
        assert_err(body_err("0 STATUS now\n"), 4, "expected `<t> STATUS`");
        assert_err(body_err("9 STATUS\n8 STATUS\n"), 5, "time goes backwards");
        assert_err(body_err("-1 STATUS\n"), 4, "found `-1`");
        assert_err(body_err("+1 STATUS\n"), 4, "found `+1`");
        assert_err(body_err("1.5 STATUS\n"), 4, "found `1.5`");
        assert_err(body_err("18446744073709551616 STATUS\n"), 4, "too large");
        assert_err(body_err("0 status\n"), 4, "unknown command `status`");
    }

    #[test]
    fn errors_on_bytes_that_are_not_utf8() {
        let mut bytes = HEADER.as_bytes().to_vec();
        bytes.extend_from_slice(b"0 STATUS\n1 APPEND \xff\xfe\n");
        let trace = Trace::read(&bytes[..]).unwrap();
        let results: Vec<_> = trace.collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_ok());
        assert_err(results[1].clone().unwrap_err(), 5, "UTF-8");
    }

    #[test]
    fn the_iterator_stops_after_an_error() {
        let text = format!("{HEADER}0 STATUS\n0 NOPE\n1 STATUS\n");
        let results: Vec<_> = Trace::read(text.as_bytes()).unwrap().collect();
        assert_eq!(results.len(), 2);
        assert!(results[1].is_err());
    }

    #[test]
    fn error_display_names_the_line() {
        assert_eq!(
            body_err("0 FETCH 5 0\n").to_string(),
            "line 4: FETCH from 5, the leader: only followers fetch"
        );
    }

    /// Random garbage, and random edits of a valid trace, never make the parser panic.
    #[test]
    fn garbage_never_panics() {
        let valid = b"REPLICAS 5 6 7\r\nLAG_MAX 500\nMIN_ISR 2 # c\n0 APPEND 4\n100 FETCH 6 4\n130 STATUS\n";
        let alphabet = b"0123456789 #\r\n\tAPENDRODUCFTHSLGXMI_\xff\xc3\xa9";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut random = move |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        for round in 0..5_000 {
            let bytes: Vec<u8> = if round % 2 == 0 {
                (0..random(80))
                    .map(|_| alphabet[random(alphabet.len())])
                    .collect()
            } else {
                let mut bytes = valid.to_vec();
                for _ in 0..1 + random(4) {
                    let at = random(bytes.len());
                    bytes[at] = alphabet[random(alphabet.len())];
                }
                bytes
            };
            if let Ok(trace) = Trace::read(&bytes[..]) {
                for item in trace {
                    if let Err(e) = item {
                        assert!(e.line >= 1);
                    }
                }
            }
        }
    }
}
