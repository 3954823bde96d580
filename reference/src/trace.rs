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

const ZEROS: u64 = 0x3030_3030_3030_3030;

/// For eight bytes loaded little-endian and xored with `ZEROS` (digits become 0..=9): the high
/// bit of every byte that is not a digit. Masking the high bits before adding keeps carries
/// inside their byte; `| x` catches bytes of 0x80 and above.
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    (((x & 0x7F7F_7F7F_7F7F_7F7F) + 0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080
}

/// The value of the digits in the top `len` bytes (1..=7) of `x`; the other bytes are ignored.
#[inline(always)]
fn swar_value(x: u64, len: usize) -> u64 {
    let v = x & (u64::MAX << (8 * (8 - len)));
    let v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// Reads a run of digits at the start of `b` as a u64: the value and the bytes used. None when
/// there is no digit, the value overflows, or `b` is shorter than 8 bytes (the general parser
/// then decides).
///
/// Runs of up to 7 digits (nearly every number in a trace) are read eight bytes at a time
/// (SWAR): one mask finds the first non-digit, three multiplications combine the digits.
#[inline(always)]
fn digits_front(b: &[u8]) -> Option<(u64, usize)> {
    let x = u64::from_le_bytes(*b.first_chunk::<8>()?) ^ ZEROS;
    match (non_digits(x).trailing_zeros() / 8) as usize {
        0 => None,
        8 => digits_slow(b),
        len => Some((swar_value(x << (8 * (8 - len)), len), len)),
    }
}

/// Reads the run of digits that ends `b`: the value and its length. None as for
/// [`digits_front`].
#[inline(always)]
fn digits_back(b: &[u8]) -> Option<(u64, usize)> {
    let x = u64::from_le_bytes(*b.last_chunk::<8>()?) ^ ZEROS;
    match (non_digits(x).leading_zeros() / 8) as usize {
        0 | 8 => None,
        len => Some((swar_value(x, len), len)),
    }
}

/// The number that ends `raw`, and what stands before it.
#[inline(always)]
fn last_number(raw: &[u8]) -> Option<(u64, &[u8])> {
    let (v, k) = digits_back(raw)?;
    Some((v, &raw[..raw.len() - k]))
}

/// Reads a run of digits at the start of `b` one byte at a time (up to 19 digits, which cannot
/// overflow a u64).
fn digits_slow(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut i = 0;
    while i < b.len() {
        let d = b[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (i > 0 && i < 20).then_some((v, i))
}

/// The fast path for the common shape of a timed command: single spaces, no comment, optional
/// `\r`, numbers of at most 7 digits after the time, at least 8 bytes. Anything else returns
/// None and goes through the general parser, which accepts the same lines and explains errors;
/// the two agree on every line the fast path accepts.
#[inline(always)]
fn fast_timed(raw: &[u8]) -> Option<(u64, Command)> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let (t, i) = digits_front(raw)?;
    let rest = raw.get(i..)?.strip_prefix(b" ")?;
    let cmd = match rest.first()? {
        b'F' => {
            let (offset, before) = last_number(raw)?;
            let before = before.strip_suffix(b" ")?;
            let (follower, k) = digits_back(before)?;
            // Exactly `<t> FETCH <follower> <offset>`.
            if before.len() - k != i + 7 || !rest.starts_with(b"FETCH ") {
                return None;
            }
            Command::Fetch { follower, offset }
        }
        b'A' | b'P' => {
            let (n, before) = last_number(raw)?;
            let verb = before.get(i + 1..)?;
            match verb {
                b"APPEND " if n > 0 => Command::Append(n),
                b"PRODUCE " if n > 0 => Command::Produce(n),
                _ => return None,
            }
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
        match self.parse_step(raw) {
            Some(r) => r.map(Item::Step),
            None => self.parse_general(raw),
        }
    }

    /// The fast path of [`LineParser::parse_line`] for a timed command of the common shape once
    /// the header is complete: `Some` with the step (or the error), or `None` when the line must
    /// go to [`LineParser::parse_line`] after all (without counting it twice: the line counter
    /// moves only on `Some`).
    #[inline]
    pub fn parse_step(&mut self, raw: &[u8]) -> Option<Result<Step, String>> {
        if !self.started {
            return None;
        }
        let (t, cmd) = fast_timed(raw)?;
        self.line += 1;
        Some(self.accept(t, cmd))
    }

    /// [`LineParser::parse_line`] without the fast path.
    fn parse_general(&mut self, raw: &[u8]) -> Result<Item, String> {
        self.line += 1;
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
    #[inline(always)]
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
    use proptest::prelude::*;

    fn started() -> LineParser {
        let mut p = LineParser::new();
        for h in ["REPLICAS 3 1 2", "LAG_MAX 5", "MIN_ISR 1", "0 STATUS"] {
            p.parse_line(h.as_bytes()).unwrap();
        }
        p
    }

    fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
        let num = prop_oneof![
            (0u64..10).prop_map(|n| n.to_string()),
            (0u64..100_000_000).prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            Just("007".to_string()),
            Just("".to_string()),
            Just("99999999999999999999".to_string()),
        ];
        let verb = prop_oneof![
            Just("FETCH"),
            Just("APPEND"),
            Just("PRODUCE"),
            Just("STATUS"),
            Just("FETCHX"),
            Just("APPEN")
        ];
        let sep = prop_oneof![8 => Just(" "), 1 => Just("  "), 1 => Just("\t"), 1 => Just("")];
        let end = prop_oneof![8 => Just(""), 1 => Just("\r"), 1 => Just(" # c"), 1 => Just(" "), 1 => Just("\u{e9}")];
        (
            num.clone(),
            sep.clone(),
            verb,
            sep.clone(),
            num.clone(),
            sep,
            num,
            0usize..4,
            end,
        )
            .prop_map(|(t, s1, v, s2, a, s3, b, nargs, e)| {
                let mut l = format!("{t}{s1}{v}");
                if nargs >= 1 {
                    l.push_str(&format!("{s2}{a}"));
                }
                if nargs >= 2 {
                    l.push_str(&format!("{s3}{b}"));
                }
                l.push_str(e);
                l.into_bytes()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]
        #[test]
        fn fast_path_agrees_with_the_general_parser(line in line_strategy()) {
            let mut fast = started();
            let mut general = started();
            let a = fast.parse_line(&line);
            let b = general.parse_general(&line);
            prop_assert_eq!(a, b, "{}", String::from_utf8_lossy(&line));
        }
    }

    #[test]
    fn swar_digits_agree_with_the_byte_loop() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for n in [0u64, 1, 9, 10, 99, 1234567, 12345678, 123456789, u64::MAX] {
            for tail in [
                &b""[..],
                b" ",
                b"x",
                b"\r",
                b" FETCH 1 2",
                b"\xff",
                b"/",
                b":",
            ] {
                let mut v = n.to_string().into_bytes();
                v.extend_from_slice(tail);
                cases.push(v);
            }
        }
        cases.extend([
            b"".to_vec(),
            b" 1".to_vec(),
            b"0000000000001".to_vec(),
            b"99999999999999999999".to_vec(),
        ]);
        // Every byte value right after a digit.
        for b in 0..=255u8 {
            cases.push(vec![b'7', b]);
            cases.push(vec![b'1', b'2', b'3', b]);
        }
        for c in &cases {
            let shown = String::from_utf8_lossy(c);
            let slow = digits_slow(c).filter(|&(_, n)| n < 8);
            // The front reader needs 8 bytes; pad so it sees the same run.
            let mut padded = c.clone();
            padded.extend_from_slice(b"########");
            assert_eq!(
                digits_front(&padded).filter(|&(_, n)| n < 8),
                slow,
                "{shown}"
            );
            // The back reader sees the run that ends the bytes.
            let run = c.iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let mut back = b"########".to_vec();
            back.extend_from_slice(c);
            let want = (run > 0 && run < 8).then(|| digits_slow(&c[c.len() - run..]).unwrap());
            assert_eq!(digits_back(&back), want, "{shown}");
        }
    }

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
