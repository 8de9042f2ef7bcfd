"""Which blocks read and wrote each element of the launch's argument arrays (``owners=True``).

    run = sim.simulate(fn, launch, owners=True)
    o = run.owners[1]            # argument 1's Ownership: per element, the lowest and highest
    o.read_lo, o.read_hi         # linear block index that read it (-1: none)
    o.write_lo, o.write_hi       # ... and the same for writes
    o.warp_lo, o.warp_hi         # the lowest and highest warp that wrote it (block * warps per block + warp)

A checker uses it to see every block's footprint in the launch it already ran (a block that moves
two tiles, two blocks that move one), where simulating a few blocks alone would let a kernel that
behaves only in those blocks pass; the writers' warps tell a grid-stride loop that spreads its work over
every warp from one in which a single warp of a block does it all. Loads, stores, atomics (their read and their write), cp.async
reads and bulk/TMA copies are all recorded, at the granularity of the array's element: an access
narrower than an element counts for the element it touches, a wider one for each element it
covers. Only arrays passed as arguments are tracked (a ``__device__`` variable is not). This
module judges nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

NOBODY = np.iinfo(np.int32).max     # the lower bound of an element no block touched, until result()


@dataclass
class Ownership:
    """One array's record: the argument's position and name, and four arrays over its elements."""
    argument: int
    name: str
    read_lo: np.ndarray
    read_hi: np.ndarray
    write_lo: np.ndarray
    write_hi: np.ndarray
    warp_lo: np.ndarray
    warp_hi: np.ndarray


class Owners:
    """The record of one launch, filled by ``access`` and ``tensor_ops`` through :meth:`note`."""

    def __init__(self, memory):
        self.memory = memory
        self.tables: dict[int, Ownership] = {}

    def _table(self, i) -> Ownership | None:
        if i in self.tables:
            return self.tables[i]
        buf = self.memory.buffers[i]
        m = re.match(r"argument (\d+)", buf.label)       # param_ops labels every argument array so
        if m is None:
            self.tables[i] = None
            return None
        n = max(1, buf.nbytes // max(1, buf.itemsize))
        full = lambda v: np.full(n, v, np.int32)     # block indices: a launch run whole has < 2^31 blocks
        self.tables[i] = Ownership(int(m[1]), buf.name, full(NOBODY), full(-1), full(NOBODY), full(-1),
                                   full(NOBODY), full(-1))
        return self.tables[i]

    def note(self, program, b, mask, which, offsets, width, is_load):
        """Record an access of the active threads (`mask`) of batch `b`: buffer index `which`
        (one, or one per thread) and byte `offsets` into it, `width` bytes each."""
        slots = b.slot if mask is None else np.flatnonzero(mask)
        blk = b.block_of[slots]
        lin = b.ids[blk] if b.ids is not None else b.first + blk
        # the launch's warp number of each writer (a block's slots are whole warps)
        warp = None if is_load else lin * (b.tp // 32) + b.tlin[slots] // 32
        for i in (np.unique(which) if np.ndim(which) else [which]):
            t = self._table(int(i))
            if t is None:
                continue
            sel = slice(None) if not np.ndim(which) else which == i
            size = self.memory.buffers[int(i)].itemsize
            first = offsets[sel].astype(np.int64) // size
            k = max(1, -(-width // size))
            e = (first[:, None] + np.arange(k)).ravel() if k > 1 else first
            who = (np.repeat(lin[sel], k) if k > 1 else np.asarray(lin[sel])).astype(np.int32)
            e = np.minimum(e, t.read_lo.size - 1)
            lo, hi = (t.read_lo, t.read_hi) if is_load else (t.write_lo, t.write_hi)
            np.minimum.at(lo, e, who)
            np.maximum.at(hi, e, who)
            if not is_load:
                w = (np.repeat(warp[sel], k) if k > 1 else np.asarray(warp[sel])).astype(np.int32)
                np.minimum.at(t.warp_lo, e, w)
                np.maximum.at(t.warp_hi, e, w)

    def result(self) -> dict[int, Ownership]:
        """{argument position: Ownership}, with "nobody" as -1 in the lower bounds too."""
        out = {}
        for t in self.tables.values():
            if t is not None:
                for lo in (t.read_lo, t.write_lo, t.warp_lo):
                    lo[lo == NOBODY] = -1
                out[t.argument] = t
        return out
