"""Shared-memory race detection, in the spirit of compute-sanitizer's racecheck.

Between two barriers of a block, two different threads touching the same shared byte with at
least one write is a hazard: RAW (a thread reads what another wrote), WAR (a thread overwrites
what another read) or WAW (two threads write different values; equal values are benign and not
reported). Threads of different warps: an error. Threads of the same warp: a warning about
warp-synchronous programming, unless a ``__syncwarp()`` separates the two accesses. A read of
a granule no thread of the block has written yet is reported apart (``initialized``).

Mechanism. The exact check is ``shadow.Shadow``: per granule, the last writer and readers,
updated access by access. Most accesses never meet another thread's access to the same granule
before the next barrier, so :class:`RaceDetector` first only notes each instruction's accesses
(granules, threads, values, in buffers kept for the whole launch) and marks each granule read,
written, and *suspect* once a second access meets it with a write on either side (or one
instruction writes it twice). At the barrier (or the end of the batch) only the accesses to
suspect granules are replayed through the shadow, in their original order: the same records,
counts and first examples as checking every access, at a fraction of the cost — a correct
kernel has no suspect granule at all. An epoch with more accesses than ``PENDING_ACCESSES``
batches' worth switches to checking each access at once, so the buffers stay bounded.

The order of accesses is the simulator's (lock-step by instruction), so a hazard's kind is the
one this schedule exposes; the set of racing instruction pairs does not depend on it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .block_memory import row_bytes
from .shadow import UINT, Shadow

PENDING_ACCESSES = 4     # one batch's worth of accesses each: what an epoch may note before checking
READ, WRITE, SUSPECT = 1, 2, 4   # a granule's marks in the current epoch


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

    def __init__(self, max_blocks: int, size: int, granule: int, slots_per_block: int, per_access: int = 1):
        self.granule = granule
        self.shift = granule.bit_length() - 1
        self.per_block = row_bytes(size) // granule
        self.slots_per_block = slots_per_block
        max_slots, entries = max_blocks * slots_per_block, max_blocks * self.per_block
        self.shadow = Shadow(entries, granule, max_slots // 32)
        self._initialized = np.empty(entries, np.bool_)
        self._marks = np.empty(entries, np.uint8)
        self._owner = np.empty(entries, np.int32)
        self.limit = PENDING_ACCESSES * max_slots * per_access     # granules noted until the barrier
        self.noted_entry = np.empty(self.limit, np.int32)     # the epoch's accesses, in order
        self.noted_slot = np.empty(self.limit, np.int32)
        self.noted_value = np.empty(self.limit, UINT[granule])
        self.noted_sync = None                                # allocated at the first __syncwarp

    @staticmethod
    def bytes_per_entry(granule):
        """Shadow bytes per granule of shared memory: eight int32 fields, the value, two flags, and
        the int32 that finds one instruction writing a granule twice."""
        return 9 * 4 + np.dtype(UINT[granule]).itemsize + 2

    @staticmethod
    def bytes_per_slot(granule, per_access=1):
        """What the accesses noted until the next barrier take, per thread slot."""
        return PENDING_ACCESSES * per_access * (4 + 4 + np.dtype(UINT[granule]).itemsize)

    def reset(self, nblocks: int) -> "RaceDetector":
        self.nblocks = nblocks
        entries = nblocks * self.per_block
        self.initialized = self._initialized[:entries]
        self.initialized.fill(False)
        self.marks = self._marks[:entries]
        self.shadow.reset(entries, nblocks * self.slots_per_block // 32)
        self.records = self.shadow.records
        self._new_epoch()
        self.direct = False
        return self

    def entries(self, flat, width):
        """Shadow entries (n, k) of `width`-byte accesses at byte offsets `flat` into the batch's
        shared memory (block-major, ``row_bytes`` per block)."""
        first = flat >> self.shift
        k = max(1, width // self.granule)
        return first[:, None] + np.arange(k) if k > 1 else first[:, None]

    def access(self, pc, slots, entries, is_write, values=None):
        """Note one instruction's shared accesses: thread `slots` (n,), `entries` and `values`
        (n, k) with one value per granule. Returns a mask of reads of never-written memory (per
        access), or None."""
        k = entries.shape[1]
        e = entries.reshape(-1)
        fresh = None
        if is_write:
            self.initialized[e] = True
        else:
            unset = ~self.initialized[e]
            if unset.any():
                fresh = unset.reshape(-1, k).any(axis=1)
        me = slots if k == 1 else np.repeat(slots, k)
        values = None if values is None else values.reshape(-1)
        sync = self.shadow.epochs(me)
        if not self.direct and self.used + e.size > self.limit:
            self._replay_noted(None)          # too many to note: check this epoch access by access
            self.direct = True
        if self.direct:
            self.shadow.access(pc, me.astype(np.int32), e, is_write, values, sync)
        else:
            self._note(pc, me, e, is_write, values, sync)
        return fresh

    def _note(self, pc, me, e, is_write, values, sync):
        before = self.marks[e]
        meets = (before != 0) if is_write else (before & WRITE) != 0    # another access to the granule
        self.marks[e] = before | (WRITE if is_write else READ) | np.where(meets, SUSPECT, 0).astype(np.uint8)
        if is_write and e.size > 1 and not (e[1:] > e[:-1]).all():     # one instruction writing a granule twice?
            twice = self._written_twice(e)
            if twice is not None:
                self.marks[twice] |= SUSPECT
                self.suspect = True
        self.suspect = self.suspect or bool(meets.any())
        start, stop = self.used, self.used + e.size
        self.noted_entry[start:stop] = e
        self.noted_slot[start:stop] = me
        if is_write:
            self.noted_value[start:stop] = values
        if sync is not None:
            if self.noted_sync is None:
                self.noted_sync = np.zeros(self.limit, np.int32)
            self.noted_sync[start:stop] = sync
        self.noted.append((pc, is_write, start, stop, sync is not None))
        self.used = stop

    def _written_twice(self, e):
        """Granules that two threads of one instruction write: each writes its position, and the
        positions that did not stick lost to another thread on the same granule."""
        positions = np.arange(e.size, dtype=np.int32)
        self._owner[e] = positions
        lost = self._owner[e] != positions
        return e[lost] if lost.any() else None

    def syncwarp(self, slots):
        self.shadow.syncwarp(slots)

    def barrier_all(self):
        """Every block of the batch passed a barrier: its accesses so far can race no more."""
        self.barrier(None)

    def barrier(self, blocks):
        """Blocks `blocks` (None: all) are released from a barrier; every other block of the batch
        has left the kernel (the scheduler releases only when no thread can run)."""
        if not self.direct:
            self.finish()
            return
        rows = None
        if blocks is not None:
            rows = ((blocks.astype(np.int64) * self.per_block)[:, None] + np.arange(self.per_block)).reshape(-1)
        self.shadow.clear(rows)
        self.direct = False
        self._new_epoch()

    def finish(self):
        """Check the noted accesses; ``records`` is then complete up to here."""
        if self.suspect:
            self._replay_noted((self.marks & SUSPECT) != 0)
            self.shadow.clear()
        self._new_epoch()

    def _new_epoch(self):
        self.marks.fill(0)
        self.noted, self.used, self.suspect = [], 0, False

    def _replay_noted(self, suspects):
        """Run the noted accesses (those to `suspects` granules; all when None) through the shadow,
        in their order."""
        for pc, is_write, start, stop, synced in self.noted:
            e, me = self.noted_entry[start:stop], self.noted_slot[start:stop]
            values = self.noted_value[start:stop] if is_write else None
            sync = self.noted_sync[start:stop] if synced else None
            if suspects is not None:
                sel = suspects[e]
                if not sel.any():
                    continue
                e, me = e[sel], me[sel]
                values = None if values is None else values[sel]
                sync = None if sync is None else sync[sel]
            self.shadow.access(pc, me, e, is_write, values, sync)
        self.noted, self.used = [], 0
