"""Reading a trace into typed commands. This part is done for you.

The format (the contract in the grader's ``reference/EXERCISE.md`` is the authority)::

    # a comment runs to the end of the line; blank lines are ignored
    REPLICAS 5 6 7      # header lines: each exactly once, in any order,
    LAG_MAX 500         # all before the first timed command
    MIN_ISR 2
    0 APPEND 4          # <t> <VERB> <args>, t in ms, never decreasing
    0 PRODUCE 2
    100 FETCH 6 4
    130 STATUS

Line ends may be LF or CRLF. Every number fits in 64 unsigned bits.

The traces you are graded on are always valid, so you never need to handle
errors yourself; still, garbage input raises ``ParseError`` with its line
number, never another exception. One rule needs the leader's state and is
therefore not checked here: a FETCH offset is at most the leader's LEO at
that moment.
"""

from typing import Iterable, Iterator, List, NamedTuple, Tuple, Union

U64_MAX = 2**64 - 1


class Header(NamedTuple):
    """The partition's configuration."""

    replicas: List[int]
    """Replica ids in the trace's order; ``replicas[0]`` is the leader."""
    lag_max: int
    """replica.lag.time.max.ms, in milliseconds."""
    min_isr: int
    """min.insync.replicas: at least 1; it may exceed the number of replicas."""


class Append(NamedTuple):
    """``<t> APPEND <n>``: the leader appends n >= 1 records (acks=1)."""

    t: int
    n: int


class Produce(NamedTuple):
    """``<t> PRODUCE <n>``: an acks=all produce request of n >= 1 records."""

    t: int
    n: int


class Fetch(NamedTuple):
    """``<t> FETCH <follower> <offset>``: a follower (never the leader) fetches."""

    t: int
    follower: int
    offset: int


class Status(NamedTuple):
    """``<t> STATUS``: the periodic ISR check runs, then the leader reports."""

    t: int


Command = Union[Append, Produce, Fetch, Status]


class ParseError(Exception):
    """Why a trace could not be read, and on which line (counting from 1)."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def parse_str(text: str) -> Tuple[Header, List[Command]]:
    """Reads a whole trace from a string (handy in tests)."""
    header, commands = read_trace(text.encode("utf-8").splitlines(keepends=True))
    return header, list(commands)


def read_trace(lines: Iterable[bytes]) -> Tuple[Header, Iterator[Command]]:
    """Reads the header from ``lines`` (byte strings, such as ``sys.stdin.buffer``)
    and returns it with an iterator over the timed commands, read lazily: memory
    does not grow with the length of the trace."""
    reader = _Reader(lines)
    seen = {}  # header keyword -> the line where it was seen
    values = {}
    first = None
    for line_no, words in reader:
        if words[0].isdigit():
            first = (line_no, words)
            break
        keyword, value = _header_line(line_no, words)
        if keyword in seen:
            raise ParseError(line_no, f"{keyword} given twice (first on line {seen[keyword]})")
        seen[keyword] = line_no
        values[keyword] = value
    missing = [k for k in ("REPLICAS", "LAG_MAX", "MIN_ISR") if k not in seen]
    if missing:
        place = "before the first timed command" if first else "before the end of the trace"
        # Without a timed command, the error is on the line after the last one.
        line = first[0] if first else reader.line_no + 1
        raise ParseError(line, f"the header is incomplete {place}: missing {', '.join(missing)}")
    header = Header(values["REPLICAS"], values["LAG_MAX"], values["MIN_ISR"])
    if first is None:
        return header, iter(())
    timed = _TimedParser(header)
    first_command = timed.parse(*first)
    return header, _commands(first_command, reader, timed)


def _commands(first: Command, reader: "_Reader", timed: "_TimedParser") -> Iterator[Command]:
    yield first
    parse = timed.parse
    for line_no, words in reader:
        yield parse(line_no, words)


class _Reader:
    """The meaningful lines as (line number, words as bytes); counts the lines read."""

    def __init__(self, lines: Iterable[bytes]):
        self._lines = iter(lines)
        self.line_no = 0

    def __iter__(self):
        return self

    def __next__(self) -> Tuple[int, List[bytes]]:
        lines = self._lines
        while True:
            raw = next(lines)  # StopIteration ends the trace
            self.line_no += 1
            if not raw.isascii():
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise ParseError(self.line_no, "the line is not valid UTF-8") from None
            comment = raw.find(b"#")
            if comment >= 0:
                raw = raw[:comment]
            # bytes.split() splits on ASCII whitespace only, '\r' of a CRLF included.
            words = raw.split()
            if words:
                return self.line_no, words


def _text(word: bytes) -> str:
    return word.decode("utf-8", "replace")


def _header_line(line_no: int, words: List[bytes]) -> Tuple[str, object]:
    """A line that does not start with a time: REPLICAS, LAG_MAX or MIN_ISR."""
    keyword, args = words[0], words[1:]
    if keyword == b"REPLICAS":
        if not args:
            raise ParseError(line_no, "REPLICAS needs at least one replica id")
        ids: List[int] = []
        for word in args:
            replica = _number(line_no, word, "a replica id")
            if replica in ids:
                raise ParseError(line_no, f"replica {replica} is listed twice in REPLICAS")
            ids.append(replica)
        return "REPLICAS", ids
    if keyword in (b"LAG_MAX", b"MIN_ISR"):
        name = keyword.decode()
        if len(args) != 1:
            raise ParseError(line_no, f"expected `{name} <number>`")
        value = _number(line_no, args[0], name)
        if name == "MIN_ISR" and value == 0:
            raise ParseError(line_no, "MIN_ISR must be at least 1")
        return name, value
    _number(line_no, keyword, "a time or a header keyword (REPLICAS, LAG_MAX, MIN_ISR)")
    raise AssertionError("unreachable: a line starting with digits is a timed command")


class _TimedParser:
    """Parses timed commands and checks them against the header and the previous time."""

    def __init__(self, header: Header):
        self.leader = header.replicas[0]
        self.followers = frozenset(header.replicas[1:])
        self.last_t = 0

    def parse(self, line_no: int, words: List[bytes]) -> Command:
        first = words[0]
        if not first.isdigit():
            _header_line(line_no, words)  # raises its own error if the line is malformed
            raise ParseError(
                line_no,
                "a header line (REPLICAS, LAG_MAX, MIN_ISR) after the first timed command",
            )
        t = int(first) if len(first) < 20 else _number(line_no, first, "a time")
        count = len(words)
        if count < 2:
            raise ParseError(line_no, f"a verb is missing after the time {t}")
        verb = words[1]
        if verb == b"FETCH":
            if count != 4:
                raise ParseError(line_no, "expected `<t> FETCH <id> <offset>`")
            follower = _number(line_no, words[2], "a replica id")
            offset = _number(line_no, words[3], "an offset")
            command: Command = Fetch(t, follower, offset)
        elif verb == b"STATUS":
            if count != 2:
                raise ParseError(line_no, "expected `<t> STATUS`")
            command = Status(t)
        elif verb == b"APPEND" or verb == b"PRODUCE":
            if count != 3:
                raise ParseError(line_no, f"expected `<t> {verb.decode()} <n>`")
            n = _number(line_no, words[2], "a record count")
            command = Append(t, n) if verb == b"APPEND" else Produce(t, n)
        else:
            raise ParseError(
                line_no,
                f"unknown command `{_text(verb)}` (expected APPEND, PRODUCE, FETCH or STATUS)",
            )
        if t < self.last_t:
            raise ParseError(line_no, f"time goes backwards: {t} comes after {self.last_t}")
        if verb == b"FETCH":
            if follower not in self.followers:
                if follower == self.leader:
                    message = f"FETCH from {follower}, the leader: only followers fetch"
                else:
                    message = f"FETCH from {follower}, which is not in REPLICAS"
                raise ParseError(line_no, message)
        elif verb != b"STATUS" and n == 0:
            raise ParseError(line_no, "the number of records must be at least 1")
        self.last_t = t
        return command


def _number(line_no: int, word: bytes, what: str) -> int:
    """A non-negative integer in plain decimal digits that fits in 64 unsigned bits."""
    if not word.isdigit():  # for bytes, only the ASCII digits count
        raise ParseError(line_no, f"expected {what}, found `{_text(word)}`")
    if len(word) < 20:  # at most 19 digits: always below 2**64
        return int(word)
    digits = word.lstrip(b"0") or b"0"
    if len(digits) > 20 or int(digits) > U64_MAX:
        raise ParseError(line_no, f"{_text(word)} is too large (the limit is {U64_MAX})")
    return int(digits)
