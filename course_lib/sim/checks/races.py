"""Shared-memory race detection, in the spirit of compute-sanitizer's racecheck.

Between two barriers of a block, two different threads touching the same shared byte with at
least one write is a hazard: RAW (a thread reads what another wrote), WAR (a thread overwrites
what another read) or WAW (two threads write different values; equal values are benign and not
reported). Threads of different warps: an error. Threads of the same warp: a warning about
warp-synchronous programming, unless a ``__syncwarp()`` separates the two accesses. A read of
a granule no thread of the block has written yet is reported apart (``initialized``).

Mechanism. The exact check is ``shadow.Shadow``: per granule, the last writer and readers,
updated access by access. Most accesses touch a granule no other access has touched since the
block's last barrier; then only threads of that one instruction can race on it, and the shadow
just has to remember the access. :class:`RaceDetector` marks each granule read and written per
epoch (one gather and one scatter of a byte per access) and tells the shadow which accesses
touch a granule first: for those it only records the access (and settles threads of the one
instruction naming the granule twice); only granules met again are looked up. The same records,
counts and first examples as checking every access, at a fraction of the cost.

The order of accesses is the simulator's (lock-step by instruction), so a hazard's kind is the
one this schedule exposes; the set of racing instruction pairs does not depend on it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spaces.block_memory import row_bytes
from .shadow import UINT, Shadow

READ, WRITE = 1, 2       # a granule's marks since the block's last barrier


@dataclass
class Race:
    kind: str                 # 'RAW' | 'WAR' | 'WAW'
    lines: tuple              # (line of the earlier access, line of the later access)
    threads: tuple            # ((x, y, z) earlier, (x, y, z) later): one example pair
    block: tuple              # (x, y, z) of the example
    scope: str                # 'block' (different warps: an error) | 'warp' (same warp: warning)
    count: int = 1            # how many conflicting accesses were seen
    pcs: tuple = ()
    address: int = 0          # shared-space byte address of the example
    variable: str = ""

    @property
    def severity(self):
        return "error" if self.scope == "block" else "warning"

    @property
    def hint(self) -> str:
        first, second = self.lines
        sync = "__syncthreads()" if self.scope == "block" else "__syncwarp() (or __syncthreads())"
        if self.kind == "RAW" and first == second:
            return (f"the write and the read are line {first} in different iterations of a loop: put {sync} at "
                    f"the end of the loop body, outside any if, so every thread passes it each iteration")
        if self.kind == "RAW":
            return (f"put {sync} after the write (line {first}) and before the read (line {second}), where every "
                    f"thread of the block passes it")
        if self.kind == "WAR":
            return (f"the write at line {second} can overwrite data before another thread has read it at line "
                    f"{first}: put {sync} between them (in a loop: at the end of the loop body)")
        return f"two threads write different values to one element: give each thread its own element, or order the writes with {sync}"

    def __str__(self):
        first, second = self.lines
        what = {"RAW": "reads a value another thread wrote", "WAR": "overwrites a value another thread read",
                "WAW": "writes where another thread wrote a different value"}[self.kind]
        where = f"__shared__ '{self.variable}'" if self.variable else "shared memory"
        return (f"{self.kind} hazard ({self.severity}) on {where}: line {second} "
                f"(thread {self.threads[1]}) {what} at line {first} (thread {self.threads[0]}), "
                f"block {self.block}, with no barrier between — seen {self.count} time(s)\n  hint: {self.hint}")


class RaceDetector:
    """Races and reads of never-written memory in one batch's shared memory."""

    def __init__(self, max_blocks: int, size: int, granule: int, slots_per_block: int):
        self.granule = granule
        self.shift = granule.bit_length() - 1
        self.per_block = row_bytes(size) // granule
        self.slots_per_block = slots_per_block
        entries = max_blocks * self.per_block
        self.shadow = Shadow(entries, granule, max_blocks * slots_per_block // 32)
        self._initialized = np.empty(entries, np.bool_)
        self._marks = np.empty(entries, np.uint8)

    @staticmethod
    def bytes_per_entry(granule):
        """Bytes per granule of shared memory: the shadow's eight int32 fields and value, the
        written and touched flags."""
        return 8 * 4 + np.dtype(UINT[granule]).itemsize + 2

    def reset(self, nblocks: int) -> "RaceDetector":
        self.nblocks = nblocks
        entries = nblocks * self.per_block
        self.initialized = self._initialized[:entries]
        self.initialized.fill(False)
        self.marks = self._marks[:entries]
        self.marks.fill(0)
        self.shadow.reset(entries, nblocks * self.slots_per_block // 32)
        self.records = self.shadow.records
        return self

    def entries(self, flat, width):
        """Shadow entries (n, k) of `width`-byte accesses at byte offsets `flat` into the batch's
        shared memory (block-major, ``row_bytes`` per block)."""
        first = flat >> self.shift
        k = max(1, width // self.granule)
        return first[:, None] + np.arange(k) if k > 1 else first[:, None]

    def access(self, pc, slots, entries, is_write, values=None):
        """Check and record one instruction's shared accesses: thread `slots` (n,), `entries` and
        `values` (n, k) with one value per granule. Returns a mask of reads of never-written memory
        (per access), or None."""
        k = entries.shape[1]
        e = entries.reshape(-1)
        fresh = None
        if is_write:
            self.initialized[e] = True
        else:
            unset = ~self.initialized[e]
            if unset.any():
                fresh = unset.reshape(-1, k).any(axis=1)
        me = (slots if k == 1 else np.repeat(slots, k)).astype(np.int32, copy=False)
        values = None if values is None else values.reshape(-1)
        sync = self.shadow.epochs(me)
        before = self.marks.take(e)
        alone = before == 0                  # no access since the barrier touched the granule
        self.marks[e] = (before | WRITE) if is_write else (before | READ)
        self.shadow.access(pc, me, e, is_write, values, sync, alone)
        return fresh

    def syncwarp(self, slots):
        self.shadow.syncwarp(slots)

    def barrier_all(self):
        """Every block of the batch passed a barrier: its accesses so far can race no more."""
        self.barrier(None)

    def publish(self, block, slots):
        """Threads `slots` of `block` arrived on an mbarrier whose phase completed: their accesses so
        far are ordered before the accesses of the threads that wait on it (a producer's writes before
        its consumers' reads), so they can race no more."""
        rows = block * self.per_block + np.arange(self.per_block)
        self.shadow.forget(rows, slots)

    def barrier(self, blocks):
        """Blocks `blocks` (None: all) are released from a barrier: forget their accesses."""
        if blocks is None:
            self.shadow.clear()
            self.marks.fill(0)
            return
        rows = ((blocks.astype(np.int64) * self.per_block)[:, None] + np.arange(self.per_block)).reshape(-1)
        self.shadow.clear(rows)
        self.marks[rows] = 0
