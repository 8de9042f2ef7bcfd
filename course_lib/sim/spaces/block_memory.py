"""Shared and local memory of one batch of blocks, with exact bounds checks.

- **shared**: one region per block of the batch. Shared-space addresses start at 1024, as on
  Hopper (the first KiB is reserved), so a null shared pointer is out of bounds. Unwritten
  bytes hold 0xFF (NaN for floats, -1 for ints), like the garbage a GPU would leave.
- **local**: one region per thread (``__local_depot``: arrays the compiler could not keep in
  registers, printf argument buffers), zeroed.

Both are allocated once per launch for its largest batch; ``reset`` readies the first rows
for the next batch. Errors come back as a :class:`~course_lib.sim.spaces.memory.Fault` that the
access code turns into a MemoryAccessError; this module only answers *what* and *where*.
"""
from __future__ import annotations

import numpy as np

from .memory import SHARED_START, Fault


def row_bytes(size: int) -> int:
    """Bytes one block's shared memory takes in the batch's array (whole 16-byte rows)."""
    return -(-max(size, 16) // 16) * 16


class SharedMemory:
    """Shared memory of every block in a batch: bytes [SHARED_START, SHARED_START + size)."""

    def __init__(self, max_blocks: int, size: int, variables: dict):
        self.size = size
        self.row_bytes = row_bytes(size)
        self._rows = np.empty((max_blocks, self.row_bytes), np.uint8)
        self.data = self._rows
        self.variables = variables  # name -> (offset, size) in shared space

    def reset(self, nblocks: int) -> "SharedMemory":
        """Ready the first `nblocks` rows for a new batch: every byte unwritten (0xFF)."""
        self.data = self._rows[:nblocks]
        self.data.fill(0xFF)
        return self

    def flat_offsets(self, addr, block_base, width):
        """Offsets into the flattened per-block data, or a Fault for an address outside. `block_base`
        is each thread's ``block * row_bytes - SHARED_START`` (``Batch.shared_base``)."""
        if addr.size and (int(addr.min()) < SHARED_START or int(addr.max()) + width > SHARED_START + self.size):
            rel = addr.astype(np.int64) - SHARED_START
            bad = (rel < 0) | (rel + width > self.size)
            pos = int(np.flatnonzero(bad)[0])
            empty = [v for v, (o, sz) in self.variables.items() if sz == 0 and o <= int(addr[pos])]
            if empty:   # extern __shared__ T s[]; launched without shared_mem=
                return Fault("out of bounds", pos, int(addr[pos]),
                             f"extern __shared__ array '{empty[-1]}' has 0 bytes: its size comes from the launch's "
                             f"shared_mem= argument, and this launch passed none (or 0)",
                             hint="pass the bytes the kernel uses, e.g. shared_mem=block_threads * 4 for one float "
                                  "per thread: fn.simulate(grid, block, args, shared_mem=...)")
            return Fault("out of bounds", pos, int(addr[pos]), self.describe(int(addr[pos]), width))
        return addr.view(np.int64) + block_base

    def describe(self, address, width):
        rel = address - SHARED_START
        if not self.variables:
            return f"shared-memory byte {rel}: this kernel declares no __shared__ memory"
        def distance(item):
            o, s = item[1][0] - SHARED_START, item[1][1]
            return o - rel if rel < o else max(0, rel + width - (o + s))
        name, (o, s) = min(self.variables.items(), key=distance)
        o -= SHARED_START
        n = s // width
        if rel < o:
            where = f"{o - rel} byte(s) before its start"
        else:
            where = f"element {(rel - o) // width}; the access ends {rel + width - o - s} byte(s) past its end"
        others = ""
        if len(self.variables) > 1:
            others = "; the block's shared memory: " + ", ".join(
                f"'{v}' bytes {vo - SHARED_START}..{vo - SHARED_START + vs - 1}" for v, (vo, vs) in self.variables.items())
        return (f"__shared__ array '{name}' ({s} bytes = {n} elements of {width} bytes): {where} "
                f"(valid: elements 0..{n - 1}{others})")


class LocalMemory:
    """Each thread's stack frame: bytes [0, size) of the local space."""

    def __init__(self, max_threads: int, size: int):
        self.size = size
        self._rows = np.empty((max_threads, max(size, 8)), np.uint8)
        self.data = self._rows

    def reset(self, nthreads: int) -> "LocalMemory":
        self.data = self._rows[:nthreads]
        self.data.fill(0)
        return self

    def flat_offsets(self, addr, slots, width):
        rel = addr.astype(np.int64)
        bad = (rel < 0) | (rel + width > self.size)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            return Fault("out of bounds", pos, int(addr[pos]),
                         f"local-memory byte {int(addr[pos])} is outside this thread's {self.size}-byte stack frame")
        return slots.astype(np.int64) * self.data.shape[1] + rel
