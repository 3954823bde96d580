//! The trace format (contract v1): parsing and validation.
//!
//! A trace is UTF-8 text with LF or CRLF line ends. `#` starts a comment, blank lines are ignored.
//! Three header lines (`REPLICAS`, `LAG_MAX`, `MIN_ISR`) come first, each exactly once, in any
//! order; then timed commands `<t> <VERB> <args>` with non-decreasing `t`.
//!
//! Parsing is streaming: [`LineParser`] takes one line at a time and keeps only the header and the
//! last time, so memory does not grow with the trace. [`Trace::parse`] is the convenience that
//! parses a whole text and validates it against the correct leader (fetch offsets may not exceed
//! the leader's LEO, which depends on the whole history).

use std::fmt;

use crate::leader::Leader;

/// The header of a trace: the partition's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Replica ids in replica-list order; the first is the leader.
    pub replicas: Vec<u64>,
    /// replica.lag.time.max.ms.
    pub lag_max: u64,
    /// min.insync.replicas.
    pub min_isr: u64,
}

impl Config {
    /// The leader's id (the first replica).
    pub fn leader(&self) -> u64 {
        self.replicas[0]
    }

    /// The position of `id` in the replica list, if it is a replica.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.replicas.iter().position(|&r| r == id)
    }

    /// The header lines in canonical form.
    pub fn to_header(&self) -> String {
        let ids: Vec<String> = self.replicas.iter().map(u64::to_string).collect();
        format!(
            "REPLICAS {}\nLAG_MAX {}\nMIN_ISR {}\n",
            ids.join(" "),
            self.lag_max,
            self.min_isr
        )
    }
}

/// One timed command's verb and arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// `APPEND n`: the leader appends n records (acks=1).
    Append(u64),
    /// `PRODUCE n`: an acks=all produce request of n records.
    Produce(u64),
    /// `FETCH id offset`: follower `id` fetches from `offset`.
    Fetch {
        /// The follower's replica id.
        follower: u64,
        /// The fetch offset (the follower's LEO).
        offset: u64,
    },
    /// `STATUS`: the periodic ISR check runs, then the leader reports.
    Status,
}

/// A timed command with its time and the trace line it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Step {
    /// 1-based line number in the trace file.
    pub line: usize,
    /// Time in ms.
    pub t: u64,
    /// What happens at `t`.
    pub cmd: Command,
}

impl fmt::Display for Step {
    /// The command in canonical trace syntax, e.g. `100 FETCH 6 4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cmd {
            Command::Append(n) => write!(f, "{} APPEND {n}", self.t),
            Command::Produce(n) => write!(f, "{} PRODUCE {n}", self.t),
            Command::Fetch { follower, offset } => {
                write!(f, "{} FETCH {follower} {offset}", self.t)
            }
            Command::Status => write!(f, "{} STATUS", self.t),
        }
    }
}

/// An invalid trace: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The file name, or `<stdin>`.
    pub file: String,
    /// 1-based line number (0 when the problem is the trace as a whole, e.g. it is empty).
    pub line: usize,
    /// What is wrong, in plain words.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// What one line of a trace turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A blank or comment-only line, or a header line (the header is complete only when the first
    /// timed command arrives).
    Nothing,
    /// The first timed command completed the header: here is the configuration, then the step.
    Start(Config, Step),
    /// A timed command.
    Step(Step),
}

/// A streaming, line-at-a-time parser for the trace format.
#[derive(Debug, Default)]
pub struct LineParser {
    line: usize,
    replicas: Option<Vec<u64>>,
    lag_max: Option<u64>,
    min_isr: Option<u64>,
    started: bool,
    leader: u64,
    /// Followers for validation; kept small and searched linearly when few.
    followers: Vec<u64>,
    last_t: u64,
}

/// Splits a line into whitespace-separated tokens without allocating.
struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !is_space(*b))?;
        let rest = &self.rest[start..];
        let end = rest.iter().position(|b| is_space(*b)).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

#[inline]
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

/// Parses a decimal u64 (digits only), with overflow detection.
#[inline]
fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Reads a run of digits at the start of `b` as a u64: the value and the bytes used. None when
/// there is no digit or the value overflows (the general parser then explains).
#[inline(always)]
fn digits(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut i = 0;
    while i < b.len() {
        let d = b[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        // Up to 19 digits cannot overflow a u64; longer runs go to the general parser.
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (i > 0 && i < 20).then_some((v, i))
}

/// The fast path for the common shape of a timed command: single spaces, no comment, optional
/// `\r`. Anything else returns None and goes through the general parser, which accepts the same
/// lines and explains errors; the two agree on every line the fast path accepts.
#[inline(always)]
fn fast_timed(raw: &[u8]) -> Option<(u64, Command)> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let (t, i) = digits(raw)?;
    let rest = raw.get(i..)?.strip_prefix(b" ")?;
    let number_at_end = |b: &[u8]| -> Option<u64> {
        let (v, k) = digits(b)?;
        (k == b.len()).then_some(v)
    };
    let cmd = match rest.first()? {
        b'F' => {
            let args = rest.strip_prefix(b"FETCH ")?;
            let (follower, k) = digits(args)?;
            let offset = number_at_end(args.get(k..)?.strip_prefix(b" ")?)?;
            Command::Fetch { follower, offset }
        }
        b'A' => Command::Append(number_at_end(rest.strip_prefix(b"APPEND ")?).filter(|&n| n > 0)?),
        b'P' => {
            Command::Produce(number_at_end(rest.strip_prefix(b"PRODUCE ")?).filter(|&n| n > 0)?)
        }
        b'S' if rest == b"STATUS" => Command::Status,
        _ => return None,
    };
    Some((t, cmd))
}

fn show(tok: &[u8]) -> String {
    String::from_utf8_lossy(tok).into_owned()
}

fn number(tok: Option<&[u8]>, what: &str) -> Result<u64, String> {
    match tok {
        None => Err(format!("missing {what}")),
        Some(t) => parse_u64(t).ok_or_else(|| {
            if t.iter().all(u8::is_ascii_digit) {
                format!("{what} `{}` does not fit in u64", show(t))
            } else {
                format!("{what} must be a non-negative integer, found `{}`", show(t))
            }
        }),
    }
}

fn no_more(toks: &mut Tokens<'_>, what: &str) -> Result<(), String> {
    match toks.next() {
        None => Ok(()),
        Some(t) => Err(format!("unexpected `{}` after {what}", show(t))),
    }
}

impl LineParser {
    /// A parser at the start of a trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of lines consumed so far (the line number of the last line given).
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether the header has been completed by a timed command.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Parses the next line (without its `\n`; a trailing `\r` is accepted). Errors are messages
    /// about this line; the line number is [`LineParser::line`].
    pub fn parse_line(&mut self, raw: &[u8]) -> Result<Item, String> {
        self.line += 1;
        if self.started
            && let Some((t, cmd)) = fast_timed(raw)
        {
            return self.accept(t, cmd).map(Item::Step);
        }
        if !raw.is_ascii() && std::str::from_utf8(raw).is_err() {
            return Err("line is not valid UTF-8".into());
        }
        let content = match memchr::memchr(b'#', raw) {
            Some(i) => &raw[..i],
            None => raw,
        };
        let mut toks = Tokens { rest: content };
        let Some(first) = toks.next() else {
            return Ok(Item::Nothing);
        };
        if first.first().is_some_and(u8::is_ascii_digit) {
            return self.timed(first, &mut toks);
        }
        if self.started {
            return Err(format!(
                "expected `<t> <VERB> ...` after the first timed command, found `{}` (header lines come first)",
                show(first)
            ));
        }
        match first {
            b"REPLICAS" => {
                if self.replicas.is_some() {
                    return Err("REPLICAS given twice".into());
                }
                let mut ids = Vec::new();
                for t in toks.by_ref() {
                    let id = number(Some(t), "replica id")?;
                    if ids.contains(&id) {
                        return Err(format!("replica id {id} appears twice"));
                    }
                    ids.push(id);
                }
                if ids.is_empty() {
                    return Err("REPLICAS needs at least one replica id".into());
                }
                self.replicas = Some(ids);
            }
            b"LAG_MAX" => {
                if self.lag_max.is_some() {
                    return Err("LAG_MAX given twice".into());
                }
                let v = number(toks.next(), "LAG_MAX value")?;
                no_more(&mut toks, "LAG_MAX <ms>")?;
                self.lag_max = Some(v);
            }
            b"MIN_ISR" => {
                if self.min_isr.is_some() {
                    return Err("MIN_ISR given twice".into());
                }
                let v = number(toks.next(), "MIN_ISR value")?;
                if v == 0 {
                    return Err("MIN_ISR must be at least 1".into());
                }
                no_more(&mut toks, "MIN_ISR <n>")?;
                self.min_isr = Some(v);
            }
            other => {
                return Err(format!(
                    "unknown header `{}` (expected REPLICAS, LAG_MAX or MIN_ISR, or a timed command `<t> <VERB> ...`)",
                    show(other)
                ));
            }
        }
        Ok(Item::Nothing)
    }

    fn timed(&mut self, first: &[u8], toks: &mut Tokens<'_>) -> Result<Item, String> {
        let t = number(Some(first), "time")?;
        let verb = toks
            .next()
            .ok_or("missing verb after the time (APPEND, PRODUCE, FETCH or STATUS)")?;
        let cmd = match verb {
            b"APPEND" | b"PRODUCE" => {
                let n = number(toks.next(), "record count")?;
                if n == 0 {
                    return Err("record count must be at least 1".into());
                }
                no_more(toks, "the record count")?;
                if verb == b"APPEND" {
                    Command::Append(n)
                } else {
                    Command::Produce(n)
                }
            }
            b"FETCH" => {
                let follower = number(toks.next(), "follower id")?;
                let offset = number(toks.next(), "fetch offset")?;
                no_more(toks, "FETCH <id> <offset>")?;
                Command::Fetch { follower, offset }
            }
            b"STATUS" => {
                no_more(toks, "STATUS")?;
                Command::Status
            }
            other => {
                return Err(format!(
                    "unknown command `{}` (expected APPEND, PRODUCE, FETCH or STATUS)",
                    show(other)
                ));
            }
        };
        let config = if self.started {
            None
        } else {
            Some(self.start()?)
        };
        let step = self.accept(t, cmd)?;
        Ok(match config {
            Some(c) => Item::Start(c, step),
            None => Item::Step(step),
        })
    }

    /// The checks every timed command passes once the header is known.
    #[inline]
    fn accept(&mut self, t: u64, cmd: Command) -> Result<Step, String> {
        if t < self.last_t {
            return Err(format!(
                "time {t} is before the previous command's time {}",
                self.last_t
            ));
        }
        if let Command::Fetch { follower, .. } = cmd {
            if follower == self.leader {
                return Err(format!(
                    "FETCH from {follower}, the leader: only followers fetch"
                ));
            }
            if !self.followers.contains(&follower) {
                return Err(format!("FETCH from {follower}, which is not in REPLICAS"));
            }
        }
        self.last_t = t;
        Ok(Step {
            line: self.line,
            t,
            cmd,
        })
    }

    fn start(&mut self) -> Result<Config, String> {
        let mut missing = Vec::new();
        if self.replicas.is_none() {
            missing.push("REPLICAS");
        }
        if self.lag_max.is_none() {
            missing.push("LAG_MAX");
        }
        if self.min_isr.is_none() {
            missing.push("MIN_ISR");
        }
        if !missing.is_empty() {
            return Err(format!(
                "header incomplete before the first timed command: missing {}",
                missing.join(", ")
            ));
        }
        let replicas = self.replicas.take().unwrap_or_default();
        self.leader = replicas[0];
        self.followers = replicas[1..].to_vec();
        self.started = true;
        Ok(Config {
            replicas,
            lag_max: self.lag_max.unwrap_or_default(),
            min_isr: self.min_isr.unwrap_or_default(),
        })
    }

    /// Called at the end of the input: a trace must at least have its header.
    pub fn finish(&mut self) -> Result<Option<Config>, String> {
        if self.started {
            return Ok(None);
        }
        self.start().map(Some)
    }
}

/// A parsed and validated trace held in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The file name (or `<stdin>`), for messages.
    pub name: String,
    /// The header.
    pub config: Config,
    /// The timed commands in order.
    pub steps: Vec<Step>,
}

impl Trace {
    /// Parses and validates a whole trace. `name` is used in error messages.
    ///
    /// Validation includes what only the correct leader can know: a fetch offset may not exceed
    /// the leader's LEO at that moment, and the leader's LEO must fit in u64.
    pub fn parse(name: &str, text: &str) -> Result<Trace, TraceError> {
        let err = |line: usize, message: String| TraceError {
            file: name.to_string(),
            line,
            message,
        };
        let mut parser = LineParser::new();
        let mut config = None;
        let mut steps = Vec::new();
        let mut check: Option<Leader> = None;
        for raw in text.as_bytes().split(|&b| b == b'\n') {
            let item = parser.parse_line(raw).map_err(|m| err(parser.line(), m))?;
            let step = match item {
                Item::Nothing => continue,
                Item::Start(c, s) => {
                    check = Some(Leader::new(&c, crate::FaultSet::NONE));
                    config = Some(c);
                    s
                }
                Item::Step(s) => s,
            };
            if let Some(leader) = check.as_mut() {
                leader.validate(&step).map_err(|m| err(step.line, m))?;
                leader.step(&step, &mut Vec::new());
            }
            steps.push(step);
        }
        if let Some(c) = parser.finish().map_err(|m| err(0, m))? {
            config = Some(c);
        }
        let config = config.ok_or_else(|| err(0, "empty trace".into()))?;
        Ok(Trace {
            name: name.to_string(),
            config,
            steps,
        })
    }

    /// The trace in canonical text form (header, then one command per line).
    pub fn to_text(&self) -> String {
        let mut s = self.config.to_header();
        for step in &self.steps {
            s.push_str(&step.to_string());
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Trace, TraceError> {
        Trace::parse("t.trace", text)
    }

    #[test]
    fn header_any_order_comments_crlf() {
        let t =
            parse("# hi\r\nMIN_ISR 2\r\n\r\nLAG_MAX 5 # ms\r\nREPLICAS 3 1 2\r\n0 APPEND 1\r\n")
                .unwrap();
        assert_eq!(t.config.replicas, vec![3, 1, 2]);
        assert_eq!(t.config.lag_max, 5);
        assert_eq!(t.config.min_isr, 2);
        assert_eq!(t.steps.len(), 1);
        assert_eq!(t.steps[0].line, 6);
    }

    #[test]
    fn header_only_is_valid() {
        let t = parse("REPLICAS 1\nLAG_MAX 0\nMIN_ISR 1\n").unwrap();
        assert!(t.steps.is_empty());
    }

    fn err_of(text: &str) -> (usize, String) {
        let e = parse(text).unwrap_err();
        (e.line, e.message)
    }

    #[test]
    fn errors_name_the_line() {
        let h = "REPLICAS 1 2\nLAG_MAX 10\nMIN_ISR 1\n";
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "missing REPLICAS, LAG_MAX, MIN_ISR"),
            ("REPLICAS\n", 1, "at least one"),
            ("REPLICAS 1 1\n", 1, "appears twice"),
            ("REPLICAS 1\nREPLICAS 2\n", 2, "twice"),
            ("LAG_MAX -1\n", 1, "non-negative integer"),
            ("MIN_ISR 0\n", 1, "at least 1"),
            ("MIN_ISR 1 2\n", 1, "unexpected `2`"),
            ("LAG_MAX 99999999999999999999999\n", 1, "does not fit"),
            ("FOO 1\n", 1, "unknown header"),
            ("REPLICAS 1\n0 APPEND 1\n", 2, "missing LAG_MAX, MIN_ISR"),
        ];
        for (text, line, msg) in cases {
            let (l, m) = err_of(text);
            assert_eq!(l, *line, "{text:?}: {m}");
            assert!(m.contains(msg), "{text:?}: {m}");
        }
        let timed: &[(&str, &str)] = &[
            ("0 APPEND 0\n", "at least 1"),
            ("0 PRODUCE\n", "missing record count"),
            ("0 JUMP 1\n", "unknown command"),
            ("0\n", "missing verb"),
            ("0 FETCH 1 0\n", "the leader"),
            ("0 FETCH 9 0\n", "not in REPLICAS"),
            ("0 FETCH 2 1\n", "leader's LEO"),
            ("0 FETCH 2\n", "missing fetch offset"),
            ("0 STATUS now\n", "unexpected `now`"),
            ("5 STATUS\n4 STATUS\n", "before the previous"),
            ("0 APPEND 18446744073709551615\n1 APPEND 1\n", "overflow"),
            ("0 STATUS\nLAG_MAX 3\n", "header lines come first"),
        ];
        for (body, msg) in timed {
            let text = format!("{h}{body}");
            let (l, m) = err_of(&text);
            let expected_line = 3 + body.lines().count();
            assert_eq!(l, expected_line, "{body:?}: {m}");
            assert!(m.contains(msg), "{body:?}: {m}");
        }
    }

    #[test]
    fn display_round_trips() {
        let text = "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n0 APPEND 4\n1 PRODUCE 2\n100 FETCH 6 4\n130 STATUS\n";
        let t = parse(text).unwrap();
        assert_eq!(t.to_text(), text);
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn fast_path_takes_the_common_shapes() {
        for (line, cmd) in [
            (
                &b"123 FETCH 1 5"[..],
                Command::Fetch {
                    follower: 1,
                    offset: 5,
                },
            ),
            (b"7 APPEND 3\r", Command::Append(3)),
            (b"7 PRODUCE 1", Command::Produce(1)),
            (b"0 STATUS", Command::Status),
        ] {
            assert_eq!(
                fast_timed(line).map(|(_, c)| c),
                Some(cmd),
                "{}",
                show(line)
            );
        }
        for line in [
            &b"1  STATUS"[..],
            b"1 STATUS # x",
            b"1 APPEND 0",
            b"1 FETCH 1",
        ] {
            assert_eq!(fast_timed(line), None, "{}", show(line));
        }
    }
}
