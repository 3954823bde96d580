"""Tests of the trace reader. Run them in this folder: python3 -m unittest"""

import io
import random
import unittest

from output import Output
from trace import (
    Append,
    Fetch,
    Header,
    ParseError,
    Produce,
    Status,
    U64_MAX,
    parse_str,
    read_trace,
)

HEADER = "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n"


def commands(body: str):
    return parse_str(HEADER + body)[1]


class TraceTest(unittest.TestCase):
    def assert_error(self, text: str, line: int, needle: str) -> None:
        with self.assertRaises(ParseError) as caught:
            parse_str(text)
        self.assertEqual(caught.exception.line, line, str(caught.exception))
        self.assertIn(needle, caught.exception.message)

    def assert_body_error(self, body: str, line: int, needle: str) -> None:
        """Errors in the lines after HEADER (whose first line is line 4)."""
        self.assert_error(HEADER + body, line, needle)

    def test_worked_trace_of_the_lesson(self):
        text = (
            "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n0 APPEND 4\n100 FETCH 6 4\n"
            "120 FETCH 7 2\n130 STATUS\n400 FETCH 6 4\n550 STATUS\n600 FETCH 7 4\n601 STATUS\n"
        )
        header, cmds = parse_str(text)
        self.assertEqual(header, Header([5, 6, 7], 500, 2))
        self.assertEqual(len(cmds), 8)
        self.assertEqual(cmds[0], Append(0, 4))
        self.assertEqual(cmds[2], Fetch(120, 7, 2))
        self.assertEqual(cmds[7], Status(601))

    def test_each_verb(self):
        self.assertEqual(
            commands(f"1 APPEND 3\n2 PRODUCE {U64_MAX}\n3 FETCH 7 0\n3 STATUS\n"),
            [Append(1, 3), Produce(2, U64_MAX), Fetch(3, 7, 0), Status(3)],
        )

    def test_comments_and_blank_lines(self):
        text = (
            "# a trace\n\n   \nREPLICAS 1 2 # the leader is 1\n\t\nLAG_MAX 0#none\n"
            "MIN_ISR 1\n# nothing\n0 STATUS # check\n#0 APPEND 1\n  1   APPEND   2  \n"
        )
        header, cmds = parse_str(text)
        self.assertEqual(header, Header([1, 2], 0, 1))
        self.assertEqual(cmds, [Status(0), Append(1, 2)])

    def test_crlf_line_ends(self):
        text = "REPLICAS 5 6\r\nLAG_MAX 10\r\nMIN_ISR 1\r\n\r\n0 APPEND 1\r\n1 FETCH 6 1 # c\r\n2 STATUS"
        header, cmds = parse_str(text)
        self.assertEqual(header, Header([5, 6], 10, 1))
        self.assertEqual(cmds, [Append(0, 1), Fetch(1, 6, 1), Status(2)])

    def test_header_lines_in_any_order(self):
        self.assertEqual(parse_str("MIN_ISR 3\nREPLICAS 9 2 4\nLAG_MAX 7\n")[0], Header([9, 2, 4], 7, 3))
        header, cmds = parse_str("LAG_MAX 7\nMIN_ISR 10\nREPLICAS 0\n1 STATUS\n")
        self.assertEqual(header, Header([0], 7, 10))  # MIN_ISR may exceed the replica count
        self.assertEqual(cmds, [Status(1)])

    def test_header_only_and_same_millisecond_commands(self):
        self.assertEqual(parse_str(HEADER)[1], [])
        self.assertEqual(len(commands("5 STATUS\n5 APPEND 1\n5 STATUS\n")), 3)

    def test_reads_bytes_lazily(self):
        lines = io.BytesIO((HEADER + "0 STATUS\n0 BOOM\n").encode())
        header, cmds = read_trace(lines)
        self.assertEqual(header.replicas, [5, 6, 7])
        self.assertEqual(next(cmds), Status(0))
        with self.assertRaises(ParseError) as caught:
            next(cmds)
        self.assertEqual(caught.exception.line, 5)

    def test_header_errors(self):
        self.assert_error("", 1, "missing REPLICAS, LAG_MAX, MIN_ISR")
        self.assert_error("# only a comment\n", 2, "missing REPLICAS")
        self.assert_error("REPLICAS 1\nLAG_MAX 1\n0 STATUS\n", 3, "missing MIN_ISR")
        self.assert_error(
            "REPLICAS 1\nLAG_MAX 1\nMIN_ISR 1\nLAG_MAX 2\n", 4, "LAG_MAX given twice (first on line 2)"
        )
        self.assert_body_error("0 STATUS\nMIN_ISR 1\n", 5, "after the first timed")
        self.assert_error("REPLICAS\n", 1, "at least one replica")
        self.assert_error("REPLICAS 1 2 1\n", 1, "listed twice")
        self.assert_error("REPLICAS 1 x\n", 1, "expected a replica id, found `x`")
        self.assert_error("LAG_MAX\n", 1, "expected `LAG_MAX <number>`")
        self.assert_error("LAG_MAX 1 2\n", 1, "expected `LAG_MAX <number>`")
        self.assert_error("LAG_MAX -1\n", 1, "found `-1`")
        self.assert_error("MIN_ISR 0\n", 1, "at least 1")
        self.assert_error("replicas 1\n", 1, "found `replicas`")

    def test_command_errors(self):
        self.assert_body_error("0 STATUS\n\n0 BOOM\n", 6, "unknown command `BOOM`")
        self.assert_body_error("7\n", 4, "verb is missing")
        self.assert_body_error("0 APPEND\n", 4, "expected `<t> APPEND <n>`")
        self.assert_body_error("0 APPEND 0\n", 4, "at least 1")
        self.assert_body_error("0 PRODUCE 0\n", 4, "at least 1")
        self.assert_body_error("0 PRODUCE 1 2\n", 4, "expected `<t> PRODUCE <n>`")
        self.assert_body_error("0 FETCH 6\n", 4, "expected `<t> FETCH <id> <offset>`")
        self.assert_body_error("0 FETCH 5 0\n", 4, "the leader")
        self.assert_body_error("0 FETCH 8 0\n", 4, "not in REPLICAS")
        self.assert_body_error("0 FETCH 6 -1\n", 4, "expected an offset")
        self.assert_body_error("0 STATUS now\n", 4, "expected `<t> STATUS`")
        self.assert_body_error("9 STATUS\n8 STATUS\n", 5, "time goes backwards")
        self.assert_body_error("-1 STATUS\n", 4, "found `-1`")
        self.assert_body_error("+1 STATUS\n", 4, "found `+1`")
        self.assert_body_error("1.5 STATUS\n", 4, "found `1.5`")
        self.assert_body_error("\u0661 STATUS\n", 4, "found")  # an Arabic-Indic digit
        self.assert_body_error(f"{U64_MAX + 1} STATUS\n", 4, "too large")
        self.assert_body_error("1" * 5000 + " STATUS\n", 4, "too large")
        self.assert_body_error("0 status\n", 4, "unknown command `status`")

    def test_bytes_that_are_not_utf8(self):
        lines = io.BytesIO(HEADER.encode() + b"0 STATUS\n1 APPEND \xff\xfe\n")
        _, cmds = read_trace(lines)
        self.assertEqual(next(cmds), Status(0))
        with self.assertRaises(ParseError) as caught:
            next(cmds)
        self.assertEqual(caught.exception.line, 5)
        self.assertIn("UTF-8", caught.exception.message)

    def test_error_text_names_the_line(self):
        with self.assertRaises(ParseError) as caught:
            parse_str(HEADER + "0 FETCH 5 0\n")
        self.assertEqual(str(caught.exception), "line 4: FETCH from 5, the leader: only followers fetch")

    def test_garbage_raises_only_parse_errors(self):
        valid = b"REPLICAS 5 6 7\r\nLAG_MAX 500\nMIN_ISR 2 # c\n0 APPEND 4\n100 FETCH 6 4\n130 STATUS\n"
        alphabet = b"0123456789 #\r\n\tAPENDRODUCFTHSLGXMI_\xff\xc3\xa9"
        rng = random.Random(7)
        for round_ in range(3000):
            if round_ % 2 == 0:
                data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(80)))
            else:
                data = bytearray(valid)
                for _ in range(1 + rng.randrange(4)):
                    data[rng.randrange(len(data))] = rng.choice(alphabet)
                data = bytes(data)
            try:
                _, cmds = read_trace(io.BytesIO(data))
                for _ in cmds:
                    pass
            except ParseError as e:
                self.assertGreaterEqual(e.line, 1)


class OutputTest(unittest.TestCase):
    def test_formats_the_contract_lines(self):
        stream = io.StringIO()
        out = Output(stream)
        out.ack(7, 12)
        out.not_enough_replicas(8)
        out.status(130, [5, 6, 7], 2, 4, True)
        out.status(550, [5], 4, 9, False)
        out.flush()
        self.assertEqual(
            stream.getvalue(),
            "7 ACK 12\n"
            "8 NOT_ENOUGH_REPLICAS\n"
            "130 STATUS ISR=5,6,7 HW=2 LEO=4 WRITES=OK\n"
            "550 STATUS ISR=5 HW=4 LEO=9 WRITES=NOT_ENOUGH_REPLICAS\n",
        )


if __name__ == "__main__":
    unittest.main()
