"""mbarrier objects in shared memory: arrivals, expected transaction bytes, phases.

    bars = MBarriers(slots_per_block)
    bars.init(key, count)                          # mbarrier.init [addr], count   (key: (block, address))
    token = bars.arrive(key, slot, count=1, tx=0)  # mbarrier.arrive{.expect_tx}: returns the phase arrived in
    bars.expect_tx(key, tx); bars.complete_tx(key, nbytes)      # a TMA / bulk copy delivering bytes
    bars.test(key, slot, token=..., parity=...)    # try_wait / test_wait: has that phase completed?
    bars.stuck()                                   # barriers whose current phase cannot complete (for a hang's message)

A barrier counts down two things in each phase: arrivals (from ``count`` given at init) and
transaction bytes (``expect_tx`` adds, a copy's ``complete_tx`` subtracts; the count may go below
zero when the bytes land before they are announced). When both are zero the phase completes: the
phase number advances (its parity flips), the arrival count is reset to ``count``. ``try_wait``
with the token of an arrival is true once the phase of that arrival has completed; with
``.parity p`` once the phase whose parity is p has completed (the current phase's parity is not p).

The simulator keys barriers by (block, shared address), stores nothing in the 8 shared bytes (the
hardware's encoding is its own), and remembers per thread of the block which phase of each barrier it
has seen complete, so that reading bytes a copy delivered through a barrier before waiting on it is named
as a race (``has_seen``). Using a barrier before init, or init twice without inval, is an error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_COUNT = (1 << 20) - 1
MAX_TX = (1 << 20) - 1


class MBarrierError(Exception):
    """A misuse the executor turns into a BarrierError with the line and thread."""


@dataclass
class Barrier:
    count: int                 # arrivals per phase (init)
    pending: int               # arrivals still expected in this phase
    seen: np.ndarray           # per thread of the block: phases it has seen complete
    tx: int = 0                # transaction bytes still expected (may be negative)
    phase: int = 0             # number of completed phases


class MBarriers:
    """The mbarriers of a batch of blocks. Keys are (block, address); threads are batch slots, and
    slot s is thread s % slots_per_block of its block (a barrier is seen by its own block only)."""

    def __init__(self, slots_per_block: int):
        self.tp = slots_per_block
        self.bars: dict = {}
        self.completed = 0             # phases completed, all barriers together (a waiting thread's cue)

    def _get(self, key) -> Barrier:
        b = self.bars.get(key)
        if b is None:
            raise MBarrierError("this mbarrier was used before mbarrier.init (or after mbarrier.inval): "
                                "initialise it once, by one thread, then __syncthreads() before any other use")
        return b

    def init(self, key, count: int):
        if not 1 <= count <= MAX_COUNT:
            raise MBarrierError(f"mbarrier.init with count {count}: the count must be 1 to {MAX_COUNT}")
        if key in self.bars:
            raise MBarrierError("mbarrier.init on a barrier that is already initialised (mbarrier.inval it first)")
        self.bars[key] = Barrier(count=count, pending=count, seen=np.zeros(self.tp, np.int64))

    def inval(self, key):
        self._get(key)
        del self.bars[key]

    def arrive(self, key, count: int = 1, tx: int = 0) -> int:
        """Arrivals (and expected bytes, first): returns the phase they arrived in (the token)."""
        b = self._get(key)
        if tx:
            self.expect_tx(key, tx)
        if count > b.pending:
            raise MBarrierError(f"{count} arrival(s) on an mbarrier that expects {b.pending} more in this phase: "
                                f"more threads arrive than its init count ({b.count})")
        token = b.phase
        b.pending -= count
        self._complete_if_done(b)
        return token

    def expect_tx(self, key, nbytes: int):
        b = self._get(key)
        if not 0 <= nbytes <= MAX_TX:
            raise MBarrierError(f"expect_tx of {nbytes} bytes: at most {MAX_TX} per operation")
        b.tx += nbytes
        self._complete_if_done(b)      # bytes that landed before they were announced

    def complete_tx(self, key, nbytes: int):
        b = self._get(key)
        b.tx -= nbytes
        self._complete_if_done(b)

    def _complete_if_done(self, b: Barrier):
        if b.pending == 0 and b.tx == 0:
            b.phase += 1
            b.pending = b.count
            self.completed += 1

    def test(self, key, slots, token=None, parity=None) -> np.ndarray:
        """try_wait / test_wait for threads `slots`: True where the phase asked about has completed;
        those threads have now seen it (``has_seen``)."""
        b = self._get(key)
        slots = np.asarray(slots, np.int64)
        if parity is not None:
            par = np.broadcast_to(np.asarray(parity, np.int64) & 1, slots.shape)
            done = (b.phase & 1) != par
            seen = np.where(done, b.phase, 0)
        else:
            tok = np.broadcast_to(np.asarray(token, np.int64), slots.shape)
            done = tok < b.phase
            seen = np.where(done, b.phase, 0)
        np.maximum.at(b.seen, slots % self.tp, seen)
        return done

    def phase_of(self, key) -> int:
        return self._get(key).phase

    def has_seen(self, key, slots, phase) -> np.ndarray:
        """Whether threads `slots` have seen phase number `phase` of barrier `key` complete (`phase`: one
        number, or one per slot)."""
        b = self.bars.get(key)
        if b is None:
            return np.ones(len(slots), np.bool_)
        return b.seen[np.asarray(slots, np.int64) % self.tp] > phase

    def stuck(self) -> list:
        """(key, pending arrivals, tx bytes still expected) of every barrier in the middle of a phase."""
        return [(k, b.pending, b.tx) for k, b in self.bars.items() if b.pending != b.count or b.tx != 0]

    def token_bits(self, phase: int) -> int:
        """The 64-bit state an arrive returns to the program (opaque to it): the phase number."""
        return int(phase) & 0xFFFFFFFFFFFFFFFF


def describe_stuck(stuck, name_of) -> str:
    """Words for threads waiting forever on barriers that cannot complete."""
    parts = []
    for key, pending, tx in stuck:
        what = [f"{pending} arrival(s)"] if pending else []
        if tx > 0:
            what.append(f"{tx} byte(s) of copies")
        if tx < 0:
            what.append(f"an expect_tx of {-tx} byte(s) for copies that already landed")
        parts.append(f"{name_of(key)} still waits for " + " and ".join(what or ["nothing"]))
    return "; ".join(parts)
