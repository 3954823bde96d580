"""The output lines of the contract, formatted exactly. This part is done for you.

Your leader calls these methods through ``self.out``. Only protocol lines belong
on stdout: print debugging output to stderr (``print(..., file=sys.stderr)``),
or the grader sees it as a wrong answer.
"""

from typing import Sequence, TextIO


class Output:
    """Writes output lines to ``stream`` (``main.py`` calls ``flush()`` at the end)."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._add = stream.write

    def ack(self, t: int, base: int) -> None:
        """``<t> ACK <base>``: the acks=all produce request whose first record
        got offset ``base`` is answered at time ``t``."""
        self._add(f"{t} ACK {base}\n")

    def not_enough_replicas(self, t: int) -> None:
        """``<t> NOT_ENOUGH_REPLICAS``: the produce request at time ``t`` is refused."""
        self._add(f"{t} NOT_ENOUGH_REPLICAS\n")

    def status(self, t: int, isr: Sequence[int], hw: int, leo: int, writes_ok: bool) -> None:
        """``<t> STATUS ISR=<ids> HW=<hw> LEO=<leo> WRITES=<OK|NOT_ENOUGH_REPLICAS>``.

        ``isr`` lists the ids of the ISR members **in the order of the REPLICAS
        line** (the leader first); ``leo`` is the leader's LEO; ``writes_ok``
        says whether the ISR has at least MIN_ISR members.
        """
        ids = ",".join(map(str, isr))
        writes = "OK" if writes_ok else "NOT_ENOUGH_REPLICAS"
        self._add(f"{t} STATUS ISR={ids} HW={hw} LEO={leo} WRITES={writes}\n")

    def flush(self) -> None:
        """Flushes the stream: every line written so far reaches it."""
        self._stream.flush()
