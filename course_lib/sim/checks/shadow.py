"""The race detector's shadow of shared memory: who last wrote and read each granule, in order.

A shadow entry per granule of shared memory per block (the granule is the smallest shared
access width in the kernel, so a byte-wise tile is tracked per byte and a float tile per word)
remembers the last writer (thread slot, instruction, value, warp-sync epoch) and the reader(s)
since the last barrier. :meth:`Shadow.access` checks one instruction's accesses against it with
a few vectorized gathers and scatters and records each hazard under (kind, earlier instruction,
later instruction, scope): the count and the first example. ``clear`` forgets released blocks'
accesses at a barrier.

The rules (compute-sanitizer's racecheck): between two barriers of a block, two different
threads touching the same byte with at least one write is a hazard — RAW, WAR, or WAW when
the two writes differ in value. Threads of different warps: scope 'block' (an error); of one
warp: scope 'warp' (a warning) unless a ``__syncwarp()`` separates the two accesses.

This module is the exact, order-by-order check; ``races.RaceDetector`` says which accesses touch
a granule first since the barrier, so that only the others are looked up.
"""
from __future__ import annotations

import numpy as np

NONE = -1
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}
_FIELDS = ("writer", "writer_pc", "writer_sync", "reader_a", "reader_b", "reader_a_sync", "reader_b_sync",
           "reader_pc")


class Shadow:
    """Last writer and readers of each granule of every block's shared memory in a batch."""

    def __init__(self, max_entries: int, granule: int, max_warps: int):
        self.granule = granule
        self._all = {name: np.empty(max_entries, np.int32) for name in _FIELDS}
        self._value = np.empty(max_entries, UINT[granule])
        self._warp_sync = np.zeros(max_warps + 1, np.int32)

    def reset(self, entries: int, warps: int):
        """A new batch: nothing written or read yet, no __syncwarp seen."""
        for name, arr in self._all.items():
            view = arr[:entries]
            view.fill(NONE if name in ("writer", "reader_a", "reader_b") else 0)
            setattr(self, name, view)
        self.value = self._value[:entries]
        self.warp_sync = self._warp_sync[:warps + 1]
        self.warp_sync.fill(0)
        self.synced = False       # no __syncwarp yet: epochs are all zero, skip tracking them
        self.records = {}

    # ------------------------------------------------------------------ barriers and warps
    def clear(self, rows=None):
        """Forget the accesses of shadow entries `rows` (all when None): a barrier released them."""
        for arr in (self.writer, self.reader_a, self.reader_b):
            if rows is None:
                arr.fill(NONE)
            else:
                arr[rows] = NONE

    def forget(self, rows, slots):
        """Forget what threads `slots` wrote and read in shadow entries `rows` (an mbarrier published it)."""
        for arr in (self.writer, self.reader_a, self.reader_b):
            held = arr[rows]
            arr[rows[np.isin(held, slots)]] = NONE

    def syncwarp(self, slots):
        self.synced = True
        self.warp_sync[np.unique(slots >> 5)] += 1

    def epochs(self, me):
        """Each accessing thread's warp-sync epoch now (None while no __syncwarp has run)."""
        return self.warp_sync[me >> 5] if self.synced else None

    # ------------------------------------------------------------------ one instruction
    def access(self, pc, me, e, is_write, values, sync, alone=None):
        """Check and record one instruction's accesses: thread slots `me` (int32), shadow entries
        `e`, `values` one per granule (writes), `sync` the threads' warp epochs or None. `alone`
        marks accesses to granules nothing touched since the barrier: their writer and readers
        are unset, so only the others are looked up (the records are the same)."""
        look = slice(None) if alone is None else np.flatnonzero(~alone)
        sub = lambda a: None if a is None else a[look]
        if alone is None or look.size:
            if is_write:
                self._check_write(pc, me[look], e[look], values[look], sub(sync))
            else:
                self._check_read(pc, me[look], e[look], sub(sync))
        if is_write:
            self._set_writer(pc, me, e, values, sync)
        else:
            self._add_reader(e, me, sync, pc, alone)

    def _check_read(self, pc, me, e, sync):
        w = self.writer[e]
        near = (w >= 0) & (w != me)
        if near.any():
            i = np.flatnonzero(near)
            hit = self._unordered(w[i], self.writer_sync[e[i]], me[i], sync, i)
            self._record("RAW", i[hit], w, self.writer_pc[e], me, pc, e)

    def _check_write(self, pc, me, e, v, sync):
        w = self.writer[e]
        near = (w >= 0) & (w != me)
        waw_at = np.zeros(0, np.int64)
        if near.any():
            i = np.flatnonzero(near)
            hit = self._unordered(w[i], self.writer_sync[e[i]], me[i], sync, i) & (self.value[e[i]] != v[i])
            waw_at = i[hit]
            self._record("WAW", waw_at, w, self.writer_pc[e], me, pc, e)
        ra, rb = self.reader_a[e], self.reader_b[e]
        use_a = (ra >= 0) & (ra != me)
        other = np.where(use_a, ra, rb)
        cand = other >= 0
        cand[waw_at] = False
        if cand.any():
            i = np.flatnonzero(cand)
            osync = np.where(use_a[i], self.reader_a_sync[e[i]], self.reader_b_sync[e[i]])
            hit = self._unordered(other[i], osync, me[i], sync, i)
            self._record("WAR", i[hit], other, self.reader_pc[e], me, pc, e)

    def _set_writer(self, pc, me, e, v, sync):
        self.writer[e] = me
        self.writer_pc[e] = pc
        self.value[e] = v
        if sync is not None:
            self.writer_sync[e] = sync
        winner = self.writer.take(e)
        clash = winner != me    # two threads of this instruction wrote one entry...
        if clash.any():
            i = np.flatnonzero(clash)
            i = i[self.value[e[i]] != v[i]]   # ...with two different values
            self._record("WAW", i, winner, np.full(e.size, pc, np.int32), me, pc, e)

    def _add_reader(self, e, me, sync, pc, alone=None):
        if alone is None:
            first = self.reader_a[e] < 0
        elif alone.all():
            first = alone
        else:
            first = alone.copy()
            look = np.flatnonzero(~alone)
            first[look] = self.reader_a[e[look]] < 0
        if first.all():
            self.reader_a[e] = me
            if sync is not None:
                self.reader_a_sync[e] = sync
        elif first.any():
            self.reader_a[e[first]] = me[first]
            if sync is not None:
                self.reader_a_sync[e[first]] = sync[first]
        second = self.reader_a.take(e) != me
        if second.any():
            i = np.flatnonzero(second)
            i = i[self.reader_b[e[i]] < 0]
            self.reader_b[e[i]] = me[i]
            if sync is not None:
                self.reader_b_sync[e[i]] = sync[i]
        self.reader_pc[e] = pc

    @staticmethod
    def _unordered(other, other_sync, me, my_sync, idx):
        """Different warps are unordered until a barrier; a warp's own threads until __syncwarp()."""
        if my_sync is None:
            return np.ones(len(idx), np.bool_)
        return ((other >> 5) != (me >> 5)) | (other_sync == my_sync[idx])

    def _record(self, kind, idx, other, other_pc, me, pc, e):
        if len(idx) == 0:
            return
        same_warp = (other[idx] >> 5) == (me[idx] >> 5)
        for scope, sel in (("block", idx[~same_warp]), ("warp", idx[same_warp])):
            if sel.size == 0:
                continue
            opcs = other_pc[sel]
            for opc in np.unique(opcs):
                pick = sel[opcs == opc]
                key = (kind, int(opc), int(pc), scope)
                rec = self.records.get(key)
                if rec is None:
                    i = int(pick[0])
                    self.records[key] = [int(pick.size), int(other[i]), int(me[i]), int(e[i])]
                else:
                    rec[0] += int(pick.size)
