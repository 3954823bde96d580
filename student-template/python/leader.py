"""The leader of one partition: **this file is your work.**

Before you start, read the lesson ("Replication, the ISR and the High
Watermark") and the exercise contract (``reference/EXERCISE.md`` in the
grader's repository): the contract says exactly what to print and when.

``main.py`` reads the trace and calls one method of ``Leader`` per timed
command, in the order of the trace. Each method ends by calling
``_after_command``, where the rules that apply after *every* command live.
Write output only through ``self.out`` (the lines are formatted for you);
print debugging output to stderr, never to stdout.

As given, every method is empty: the program runs, prints nothing, and every
case of the grader fails. Fill in the places marked ``TODO(student)``.
"""

from output import Output
from trace import Header


class Leader:
    def __init__(self, header: Header, out: Output):
        # The replica ids in the order of the REPLICAS line. replicas[0] is
        # this leader; the others are its followers.
        self.replicas = list(header.replicas)
        # replica.lag.time.max.ms (LAG_MAX), in ms.
        self.lag_max = header.lag_max
        # min.insync.replicas (MIN_ISR).
        self.min_isr = header.min_isr
        # Your output: self.out.ack(..), self.out.not_enough_replicas(..),
        # self.out.status(..).
        self.out = out
        # -----------------------------------------------------------------
        # TODO(student): your state, with its starting values (the contract's
        # "State at the start"). The lesson's leader keeps track of:
        #   - its own LEO, and the HW;
        #   - which replicas are in the ISR (at the start: all of them);
        #   - for every follower: its LEO, the last time it was caught up, the
        #     time of its latest fetch, and what the leader's LEO was at that fetch;
        #   - the acks=all produce requests that still wait for their answer.
        # -----------------------------------------------------------------

    def fetch(self, t: int, follower: int, offset: int) -> None:
        """``<t> FETCH <follower> <offset>``: the follower (never the leader) asks
        for the records from ``offset`` on; it therefore has every record below it."""
        # TODO(student): the caught-up rule (lesson, "The in-sync set").
        #   This fetch may prove that the follower was caught up: now, when it
        #   asks for everything the leader has; or at its previous fetch, when
        #   it asks for at least what the leader had back then (the case that
        #   keeps a follower in sync under constant load, and the one most
        #   often missed). Move its last caught-up time forward to match, never
        #   back. Then record this fetch: the follower's LEO becomes `offset`,
        #   and remember the time and the leader's current LEO.
        # TODO(student): rejoining (lesson, "Expanding"). A follower that is
        #   out of the ISR comes back in once its LEO has reached the HW.
        self._after_command(t)

    def status(self, t: int) -> None:
        """``<t> STATUS``: the periodic ISR check runs, then the leader reports."""
        # TODO(student): the shrink check (lesson, "Shrinking"). A follower in
        #   the ISR whose last caught-up time is more than LAG_MAX ms before `t`
        #   leaves the ISR; one exactly LAG_MAX ms behind stays. The leader
        #   itself never leaves. This is the only place the check runs.
        self._after_command(t)
        # TODO(student): report, after the update above:
        #   self.out.status(t, isr_ids, hw, leader_leo, writes_ok)
        #   with the ISR's ids in the order of the REPLICAS line, and
        #   writes_ok when the ISR has at least MIN_ISR members.

    def append(self, t: int, n: int) -> None:
        """``<t> APPEND <n>``: the leader appends n >= 1 records (acks=1: never
        refused, never answered, prints nothing)."""
        # TODO(student): the leader's log grows by `n` records.
        self._after_command(t)

    def produce(self, t: int, n: int) -> None:
        """``<t> PRODUCE <n>``: an acks=all produce request of n >= 1 records."""
        # TODO(student): acks=all and min.insync.replicas (lesson, "Durability
        #   knobs"). With fewer ISR members than MIN_ISR the request is refused
        #   at once with self.out.not_enough_replicas(t), and nothing is
        #   appended. Otherwise its records are appended: the first one gets
        #   the leader's current LEO as its offset (the request's `base`), and
        #   the request waits for its answer.
        self._after_command(t)

    def _after_command(self, t: int) -> None:
        """What happens at the end of every command (each method above calls it)."""
        # TODO(student): the high watermark (lesson, "The high watermark is
        #   ..."). It becomes the smallest LEO among the ISR members, the
        #   leader's own LEO included, unless that is lower than the HW already
        #   is: the HW never goes down.
        # TODO(student): answer the waiting acks=all requests whose records are
        #   now all below the HW, oldest first, each with self.out.ack(t, base).
        pass
