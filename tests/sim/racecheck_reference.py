"""The race detector as it was before any shortcut (course_lib 310166c, races.RaceDetector): every
shared access checked against the shadow as it comes. test_shortcuts_are_exact holds today's
detector to the records this one makes; it is kept apart so that a change to the shared code
cannot move both at once.
"""
from dataclasses import dataclass, field

import numpy as np

NONE = -1
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


@dataclass
class OriginalDetector:
    nblocks: int
    size: int                  # shared bytes per block
    granule: int
    slots_per_block: int
    records: dict = field(default_factory=dict)

    def __post_init__(self):
        self.per_block = -(-self.size // self.granule)
        n = self.nblocks * self.per_block
        self.writer = np.full(n, NONE, np.int32)
        self.writer_pc = np.zeros(n, np.int32)
        self.writer_sync = np.zeros(n, np.int32)
        self.value = np.zeros(n, UINT[self.granule])
        # up to two distinct readers since the last barrier are enough to name a partner
        self.reader_a = np.full(n, NONE, np.int32)
        self.reader_b = np.full(n, NONE, np.int32)
        self.reader_a_sync = np.zeros(n, np.int32)
        self.reader_b_sync = np.zeros(n, np.int32)
        self.reader_pc = np.zeros(n, np.int32)
        self.initialized = np.zeros(n, np.bool_)
        self.warp_sync = np.zeros(self.nblocks * self.slots_per_block // 32 + 1, np.int32)
        self.synced = False   # no __syncwarp yet: epochs are all zero, skip tracking them

    def entries(self, rel_addr, block, width):
        """Shadow indices (n, k) covered by accesses of `width` bytes at block-relative addresses."""
        k = max(1, width // self.granule)
        first = (block * self.per_block + rel_addr // self.granule).astype(np.int64)
        return first[:, None] + np.arange(k) if k > 1 else first[:, None]

    def access(self, pc, slots, entries, is_write, values=None):
        """Check and record one instruction's shared accesses: `slots` (n,), `entries` and
        `values` (n, k) with one value per granule. Returns a mask of reads of never-written
        memory (per access), or None."""
        k = entries.shape[1]
        e = entries.reshape(-1)
        me = slots.astype(np.int32) if k == 1 else np.repeat(slots.astype(np.int32), k)
        sync = self.warp_sync[me >> 5] if self.synced else None
        w = self.writer[e]
        near = (w >= 0) & (w != me)
        if not is_write:
            fresh = ~self.initialized[e]
            if near.any():
                i = np.flatnonzero(near)
                hit = self._unordered(w[i], self.writer_sync[e[i]], me[i], sync, i)
                self._record("RAW", i[hit], w, self.writer_pc[e], me, pc, e)
            self._add_reader(e, me, sync, pc)
            return fresh.reshape(-1, k).any(axis=1) if fresh.any() else None
        v = values.reshape(-1)
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
        self.writer[e] = me
        self.writer_pc[e] = pc
        self.value[e] = v
        self.initialized[e] = True
        if sync is not None:
            self.writer_sync[e] = sync
        winner = self.writer[e]
        clash = winner != me    # two threads of this instruction wrote one entry...
        if clash.any():
            i = np.flatnonzero(clash)
            i = i[self.value[e[i]] != v[i]]   # ...with two different values
            self._record("WAW", i, winner, np.full(e.size, pc, np.int32), me, pc, e)

    def _add_reader(self, e, me, sync, pc):
        first = self.reader_a[e] < 0
        if first.all():
            self.reader_a[e] = me
            if sync is not None:
                self.reader_a_sync[e] = sync
        elif first.any():
            self.reader_a[e[first]] = me[first]
            if sync is not None:
                self.reader_a_sync[e[first]] = sync[first]
        second = self.reader_a[e] != me
        if second.any():
            i = np.flatnonzero(second)
            i = i[self.reader_b[e[i]] < 0]
            self.reader_b[e[i]] = me[i]
            if sync is not None:
                self.reader_b_sync[e[i]] = sync[i]
        self.reader_pc[e] = pc

    def _unordered(self, other, other_sync, me, my_sync, idx):
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

    def barrier(self, blocks):
        """Blocks released from a barrier start a new epoch: forget their accesses."""
        rows = (blocks.astype(np.int64) * self.per_block)[:, None] + np.arange(self.per_block)
        rows = rows.reshape(-1)
        for arr in (self.writer, self.reader_a, self.reader_b):
            arr[rows] = NONE

    def barrier_all(self):
        for arr in (self.writer, self.reader_a, self.reader_b):
            arr.fill(NONE)

    def syncwarp(self, slots):
        self.synced = True
        self.warp_sync[np.unique(slots >> 5)] += 1
