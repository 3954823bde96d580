"""Reads a trace on stdin, drives the leader, writes its output on stdout.

Run it as ``python3 main.py < some.trace``. This part is done for you: your
work is in ``leader.py``.
"""

import os
import sys

from leader import Leader
from output import Output
from trace import Append, Fetch, ParseError, Produce, Status, read_trace


def main() -> int:
    out = Output(sys.stdout)
    try:
        try:
            header, commands = read_trace(sys.stdin.buffer)
            leader = Leader(header, out)
            for command in commands:
                if isinstance(command, Fetch):
                    leader.fetch(command.t, command.follower, command.offset)
                elif isinstance(command, Status):
                    leader.status(command.t)
                elif isinstance(command, Append):
                    leader.append(command.t, command.n)
                elif isinstance(command, Produce):
                    leader.produce(command.t, command.n)
        finally:
            # Whatever happened, send the lines written so far.
            out.flush()
    except ParseError as e:
        print(f"isr-leader: <stdin> {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # stdout was closed: stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("isr-leader: cannot write the output: stdout is closed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
