"""Address spaces of a simulated launch, with exact bounds and alignment checks.

- **global**: each kernel argument array (and each module-level ``__device__``/``__constant__``
  variable) lives at its own fake device address, 4 KiB-aligned with a 1 MiB gap between
  buffers, so sector counts see the same alignment as ``cudaMalloc`` memory and any access
  that misses a buffer is caught. Loads and stores read and write the caller's numpy arrays
  in place.
- **shared**: one region per block of the batch. Shared-space addresses start at 1024, as on
  Hopper (the first KiB is reserved), so a null shared pointer is out of bounds. Unwritten
  bytes hold 0xFF (NaN for floats, -1 for ints), like the garbage a GPU would leave.
- **local**: one region per thread (``__local_depot``: arrays the compiler could not keep in
  registers, printf argument buffers).
- **generic**: addresses inside the shared or local window map to those spaces; the rest are
  global, like the hardware's generic addressing.

Errors are raised as :class:`~course_lib.errors.MemoryAccessError` by the executor, which
knows the instruction, thread and line; this module only answers *what* and *where*.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GLOBAL_BASE = 0x0000_0100_0000_0000
BUFFER_GAP = 1 << 20
SHARED_WINDOW = 0x0000_7F00_0000_0000
LOCAL_WINDOW = 0x0000_7E00_0000_0000
WINDOW_SIZE = 1 << 32
SHARED_START = 1024
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Buffer:
    name: str          # what the student called it: argument name, or the variable name
    label: str         # e.g. "argument 1 'in' (1000x1030 float32)"
    base: int
    data: np.ndarray   # uint8 view of the caller's memory
    itemsize: int
    writable: bool = True

    @property
    def nbytes(self):
        return self.data.size

    def view(self, width):
        n = self.data.size // width * width
        return self.data[:n].view(UINT[width])


@dataclass
class Fault:
    """Why an access failed; the executor turns it into a MemoryAccessError."""
    kind: str           # 'out of bounds' | 'misaligned' | 'read-only'
    position: int       # index into the instruction's active threads
    address: int
    detail: str


class GlobalMemory:
    def __init__(self):
        self.buffers: list[Buffer] = []
        self._next = GLOBAL_BASE
        self._bases = np.zeros(0, np.uint64)

    def add(self, name, array: np.ndarray, label=None, writable=True) -> int:
        base = self._next
        data = array.reshape(-1).view(np.uint8) if array.size else np.zeros(0, np.uint8)
        self.buffers.append(Buffer(name, label or name, base, data, array.itemsize, writable))
        self._next = (base + max(data.size, 1) + BUFFER_GAP + 4095) // 4096 * 4096
        self._bases = np.array([b.base for b in self.buffers], np.uint64)
        return base

    def locate(self, addr: np.ndarray, width: int):
        """Return (buffer index per address, byte offset per address) or a Fault."""
        lo, hi = int(addr.min()), int(addr.max())
        i = int(np.searchsorted(self._bases, np.uint64(lo), "right")) - 1
        if i >= 0:
            b = self.buffers[i]
            if lo >= b.base and hi + width <= b.base + b.nbytes:
                return i, addr - np.uint64(b.base)
        idx = np.searchsorted(self._bases, addr, "right").astype(np.int64) - 1
        ok = idx >= 0
        base = np.where(ok, self._bases[np.maximum(idx, 0)], 0)
        sizes = np.array([b.nbytes for b in self.buffers], np.uint64)
        end = np.where(ok, base + sizes[np.maximum(idx, 0)], 0)
        inside = ok & (addr >= base) & (addr + np.uint64(width) <= end)
        if not inside.all():
            pos = int(np.flatnonzero(~inside)[0])
            return self.fault(pos, int(addr[pos]), width)
        return idx, addr - base

    def fault(self, pos, address, width) -> Fault:
        if not self.buffers:
            return Fault("out of bounds", pos, address, "the kernel has no global buffers")
        # Name the buffer the address is nearest to: usually one just past its end.
        def distance(b):
            if address < b.base:
                return b.base - address
            return max(0, address + width - (b.base + b.nbytes))
        b = min(self.buffers, key=distance)
        off = address - b.base
        n = b.nbytes // max(b.itemsize, 1)
        if off < 0:
            where = f"{-off} bytes before its start"
        else:
            over = off + width - b.nbytes
            where = (f"byte offset {off} (element {off // b.itemsize} of {n}); "
                     f"the access ends {over} byte(s) past the end")
        return Fault("out of bounds", pos, address, f"{b.label}: {where}")


def check_alignment(addr: np.ndarray, width: int):
    if width > 1 and int(np.bitwise_or.reduce(addr)) & (width - 1):
        bad = (addr & np.uint64(width - 1)) != 0
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            return Fault("misaligned", pos, int(addr[pos]),
                         f"a {width}-byte access must start at a multiple of {width}; "
                         f"this address is {int(addr[pos]) % width} bytes past one")
    return None


def gather(view: np.ndarray, offsets: np.ndarray, width: int, count: int) -> np.ndarray:
    """Read `count` consecutive `width`-byte items at each byte offset -> (n, count)."""
    idx = (offsets // np.uint64(width)).astype(np.int64)
    if count == 1:
        return view[idx][:, None]
    return view[idx[:, None] + np.arange(count)]


def scatter(view: np.ndarray, offsets: np.ndarray, width: int, values: np.ndarray):
    idx = (offsets // np.uint64(width)).astype(np.int64)
    count = values.shape[1]
    if count == 1:
        view[idx] = values[:, 0]
    else:
        view[idx[:, None] + np.arange(count)] = values


class SharedMemory:
    """Shared memory of every block in a batch: bytes [SHARED_START, SHARED_START + size)."""

    def __init__(self, nblocks: int, size: int, variables: dict):
        self.size = size
        self.nblocks = nblocks
        self.data = np.full((nblocks, -(-max(size, 16) // 16) * 16), 0xFF, np.uint8)
        self.variables = variables  # name -> (offset, size) in shared space

    def flat_offsets(self, addr, block_of, width):
        """Offsets into the flattened per-block data, or a Fault for an address outside."""
        rel = addr.astype(np.int64) - SHARED_START
        if rel.size and (rel.min() < 0 or rel.max() + width > self.size):
            bad = (rel < 0) | (rel + width > self.size)
            pos = int(np.flatnonzero(bad)[0])
            return Fault("out of bounds", pos, int(addr[pos]), self.describe(int(addr[pos]), width))
        rel += block_of * self.data.shape[1]
        return rel

    def describe(self, address, width):
        decl = ", ".join(f"'{n}' at bytes {o - SHARED_START}..{o - SHARED_START + s - 1}"
                         for n, (o, s) in self.variables.items()) or "no shared variables"
        return (f"shared-memory byte {address - SHARED_START} (width {width}) is outside the "
                f"{self.size - 0} bytes this block has ({decl})")


class LocalMemory:
    def __init__(self, nthreads: int, size: int):
        self.size = size
        self.data = np.zeros((nthreads, max(size, 8)), np.uint8)

    def flat_offsets(self, addr, slots, width):
        rel = addr.astype(np.int64)
        bad = (rel < 0) | (rel + width > self.size)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            return Fault("out of bounds", pos, int(addr[pos]),
                         f"local-memory byte {int(addr[pos])} is outside this thread's {self.size}-byte stack frame")
        return slots.astype(np.int64) * self.data.shape[1] + rel
